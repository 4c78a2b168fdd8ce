"""Restarts: a new app and service on the same database pick the game up, relay the booth
lines typed while they were down (once, in the order typed), and run the timers on; by day and
by night (the den relayed between the mafia's booths, the night vote from a booth)."""

from __future__ import annotations

from sqlmodel import Session, col, select

from bot.store.db import session_scope
from bot.store.models import Message as StoredMessage
from bot.store.models import PlatformLink
from tests.bot.slack.conftest import (
    SlackHarness,
    agent_role,
    line_posts,
    roles_of,
    seed_where,
    start,
    vote_out_a_bystander,
)


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
        await fake.wait_until(lambda u=u: any("You are" in t for t in harness.dm_texts(u)))  # type: ignore[misc]
    await fake.message_event(user=bob, text="before the crash")
    await harness.wait_stage(lambda: (name[bob.id], "before the crash") in harness.persona_lines())

    await harness.shutdown()  # the process dies; Slack keeps taking messages
    typed = [(bob, "first while down"), (carol, "carol while down"), (bob, "second while down")]
    stamps = {}
    for u, text in typed:
        stamps[text] = fake.workspace.post(fake.dm(u), user=u.id, text=text, source="user").ts
    calls_before = len(fake.calls("chat.postMessage"))

    adapter = await harness.boot()  # restart: its Slack games resumed + booth catch-up
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


async def test_restart_mid_night_keeps_the_den_in_the_booths(harness: SlackHarness) -> None:
    fake = harness.fake
    seed = seed_where(lambda s: agent_role(s) == "bystander")
    game_id, users = await start(
        harness, f"day=10 vote=30 night=50 night_vote=600 mafia=2 speed=10 seed={seed}"
    )
    role = roles_of(harness, game_id, users)
    ann, ben = [u for u in users if role[u.id] == "mafia"]
    town = [u for u in users if role[u.id] != "mafia"]
    name = {u.id: harness.character(game_id, u) for u in users}
    agent = next(s for s in harness.live(game_id).seats if s.is_agent)
    # A game from before the den moved into the booths: its den channel is still on record.
    old_den = fake.add_channel(f"mafia-den-{game_id}", private=True, members=[ann, ben])
    with session_scope(harness.engine) as s:  # type: ignore[arg-type]
        s.add(PlatformLink(game_id=game_id, platform="slack", kind="den", external_id=old_den.id))
    await vote_out_a_bystander(harness, game_id, users, role)

    await harness.shutdown()  # mid-night; Ann keeps typing in her booth
    fake.workspace.post(fake.dm(ann), user=ann.id, text="typed while you slept", source="user")

    adapter = await harness.boot()
    game = harness.live(game_id)
    assert game.state is not None and game.state.phase.kind.value == "night"
    assert adapter.games.by_id[game_id].den == old_den.id  # read back without trouble
    await fake.wait_until(
        lambda: (name[ann.id], "typed while you slept") in harness.persona_lines(fake.dm(ben)),
        what="the outage line in the partner's booth",
    )
    # typed at night while the app was down: still the night (the clock stood still), never
    # the day vote before it, so never on the stage
    assert all(t != "typed while you slept" for _, t in harness.persona_lines())
    await fake.message_event(user=ben, text="welcome back")
    await fake.wait_until(
        lambda: (name[ben.id], "welcome back") in harness.persona_lines(fake.dm(ann)),
        what="a live den line after the restart",
    )

    # The resumed timer ends the talk; the night vote menus reach the booths and work there.
    for u in (ann, ben):
        await fake.wait_until(
            lambda u=u: any(  # type: ignore[misc]
                "who do the mafia kill" in str(m.blocks) for m in fake.messages_in(fake.dm(u))
            ),
            within=15,
            what="the night vote after the restart",
        )
        await fake.select(user=u, action_id="mafia_vote", value=agent.name, channel=fake.dm(u))
    await harness.wait_stage(
        lambda: any("Mafia wins!" in m.text for m in harness.stage()), within=15, what="the end"
    )
    await adapter.drain()
    for u, partner in ((ann, ben), (ben, ann)):
        lines = harness.persona_lines(fake.dm(u))
        assert all(n == name[partner.id] for n, _ in lines)  # nobody hears themselves
        assert any(f"{name[u.id]} voted for {agent.name}" in t for t in harness.dm_texts(partner))
    assert harness.persona_lines(fake.dm(ben)).count((name[ann.id], "typed while you slept")) == 1
    for u in town:
        assert not line_posts(harness, fake.dm(u))
    # The old den heard nothing of this game and is archived at its end, as before.
    assert [m.text for m in fake.messages_in(old_den) if m.source != "user"] == [
        "The game is over; this den is now archived."
    ]
    await fake.wait_until(lambda: old_den.is_archived, what="the old den archived")
