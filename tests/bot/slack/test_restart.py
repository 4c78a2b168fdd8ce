"""A restart mid-day: a new app and service on the same database pick the game up, relay the
booth lines typed while they were down (once, in the order typed), and run the timers on."""

from __future__ import annotations

from sqlmodel import Session, col, select

from bot.store.models import Message as StoredMessage
from tests.bot.slack.conftest import SlackHarness


async def test_restart_relays_outage_lines_once_in_order(harness: SlackHarness) -> None:
    fake = harness.fake
    users = harness.people(5)
    harness.consent_all(users)
    game_id = await harness.new_game(
        users[0], "day=40 vote=600 night=600 night_vote=600 speed=10 seed=11"
    )
    await harness.join_all(users)
    assert "has started" in await harness.slash(users[0], "start")
    name = {u.id: harness.character(game_id, u) for u in users}
    bob, carol = users[1], users[2]
    for u in (bob, carol):
        await fake.wait_until(lambda u=u: any("You are" in t for t in harness.dm_texts(u)))
    await fake.message_event(user=bob, text="before the crash")
    await harness.wait_stage(lambda: (name[bob.id], "before the crash") in harness.persona_lines())

    await harness.shutdown()  # the process dies; Slack keeps taking messages
    typed = [(bob, "first while down"), (carol, "carol while down"), (bob, "second while down")]
    stamps = {}
    for u, text in typed:
        stamps[text] = fake.workspace.post(fake.dm(u), user=u.id, text=text, source="user").ts
    calls_before = len(fake.calls("chat.postMessage"))

    adapter = await harness.boot()  # restart: resume_all + booth catch-up
    game = harness.live(game_id)
    assert game.state is not None and game.state.phase.kind.value == "day"
    expected = [(name[u.id], text) for u, text in typed]
    await harness.wait_stage(
        lambda: [x for x in harness.persona_lines() if x in expected] == expected,
        what="the outage lines",
    )
    assert fake.calls("conversations.history")  # fetched, not guessed
    assert len(fake.calls("chat.postMessage")) > calls_before

    # Slack redelivers one of them late (the event was queued during the outage): no double.
    dm = fake.dm(bob)
    await fake.event(
        event={
            "type": "message",
            "channel": dm.id,
            "channel_type": "im",
            "user": bob.id,
            "text": "second while down",
            "ts": stamps["second while down"],
            "event_ts": stamps["second while down"],
        },
        retry_num=1,
    )
    await fake.message_event(user=carol, text="after the restart")
    await harness.wait_stage(
        lambda: (name[carol.id], "after the restart") in harness.persona_lines(),
        what="a live line",
    )
    await adapter.drain()
    lines = [t for n, t in harness.persona_lines() if n in name.values()]
    for text in ("before the crash", "first while down", "carol while down", "second while down"):
        assert lines.count(text) == 1, (text, lines)
    with Session(harness.engine) as s:
        stored = s.exec(
            select(StoredMessage.text)
            .where(StoredMessage.game_id == game_id, col(StoredMessage.seat_index).is_not(None))
            .order_by(col(StoredMessage.id))
        ).all()
    human = [t for t in stored if t in {x for _, x in typed} | {"before the crash"}]
    assert human == ["before the crash", *(t for _, t in typed)]

    # The resumed timer still ends the day: vote menus reach the booths from the new app.
    await fake.wait_until(
        lambda: any(
            "vote:" in str(m.blocks) and "mafia_vote" in str(m.blocks)
            for m in fake.messages_in(fake.dm(carol))
        ),
        within=10,
        what="the vote after the restart",
    )
