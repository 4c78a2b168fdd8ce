"""Outages are symmetric on Slack (`bot.outages`): after a restart in the middle of a day with
people typing through it, the backlog is released at the pace it was typed with the agents
speaking inside it, and no line reaches the stage after its phase was announced over."""

from __future__ import annotations

import asyncio

from sqlmodel import Session, col, select

from bot.store.models import Message as StoredMessage
from tests.bot.slack.conftest import SlackHarness

#: the stage announcements that open a phase
OPENS = ("Now it's Daytime", "Voting is open", "Now it's Nighttime")


async def test_restart_mid_day_the_agents_speak_inside_the_released_backlog(
    harness: SlackHarness,
) -> None:
    """Fails on the code before `bot.outages`: the resumed game closes the day at once (its
    deadline passed while the app was down), so the day's backlog is posted after "Voting is
    open", in one burst with no agent line inside it."""
    fake = harness.fake
    users = harness.people(5)
    game_id, _ = await harness.running_game_of(
        users, "day=20 vote=600 night=600 night_vote=600 agents=2"
    )
    game = harness.live(game_id)
    name = {u.id: harness.character(game_id, u) for u in users}
    agents = [s.name for s in game.seats if s.is_agent]
    assert len(agents) == 2
    bob = users[1]
    await fake.message_event(user=bob, text="before the crash")
    await harness.wait_stage(lambda: (name[bob.id], "before the crash") in harness.persona_lines())

    await harness.shutdown()  # the process dies; Slack keeps taking messages
    typed = []
    for i in range(12):  # through the restart, past the day's deadline
        u = users[i % len(users)]
        text = f"{agents[i % 2]}, what do you make of it? ({i})"
        fake.workspace.post(fake.dm(u), user=u.id, text=text, source="user")
        typed.append(text)
        await asyncio.sleep(1.5)

    adapter = await harness.boot()  # restart: resume + booth catch-up
    await harness.wait_stage(
        lambda: any("Voting is open" in m.text for m in harness.stage()),
        within=60,
        what="the vote",
    )
    await adapter.drain()

    lines = harness.persona_lines()
    texts = [t for _, t in lines]
    assert [t for t in texts if t in typed] == typed  # once each, in order
    first, last = texts.index(typed[0]), texts.index(typed[-1])
    inside = [t for n, t in lines[first + 1 : last] if n in agents]
    assert inside, f"no agent line inside the released backlog: {texts[first : last + 1]}"

    with Session(harness.engine) as s:
        rows = s.exec(
            select(StoredMessage).where(
                StoredMessage.game_id == game_id, col(StoredMessage.seat_index).is_not(None)
            )
        ).all()
    phase_of = {r.text: r.phase_seq for r in rows}
    announced, late = 0, []
    assert harness.channel is not None
    for m in fake.messages_in(harness.channel):
        if any(o in m.text for o in OPENS) and not m.username:
            announced += 1
        elif m.username and phase_of.get(m.text, announced) != announced:
            late.append(m.text)
    assert late == [], "posted after their phase was announced over"
