"""Outages are symmetric on Slack (`bot.service.outages`): after a restart in the middle of a day
with
people typing through it, the backlog is released at the pace it was typed with the agents
speaking inside it, and no line reaches the stage after its phase was announced over."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.protection.consent import record_consent
from bot.slack.app import watch_reconnects
from bot.store.db import make_engine
from bot.store.models import Message as StoredMessage
from bot.store.models import Seat
from tests.bot.ops.slack_people import People
from tests.bot.ops.test_run_stop_slack import slack_bot
from tests.bot.slack.conftest import SlackHarness
from tests.fakes.slack import FakeChannel, FakeSlack, FakeUser

#: the stage announcements that open a phase
OPENS = ("Now it's Daytime", "Voting is open", "Now it's Nighttime")


def after_their_phase(
    engine: Engine, game_id: str, fake: FakeSlack, stage: FakeChannel
) -> list[str]:
    """The stage lines posted after their phase was announced over: each character line must
    come while its phase (the stored message's) is the last one announced."""
    with Session(engine) as s:
        rows = s.exec(
            select(StoredMessage).where(
                StoredMessage.game_id == game_id, col(StoredMessage.seat_index).is_not(None)
            )
        ).all()
    phase_of = {r.text: r.phase_seq for r in rows}
    announced, late = 0, []
    for m in fake.messages_in(stage):
        if any(o in m.text for o in OPENS) and not m.username:
            announced += 1
        elif m.username and phase_of.get(m.text, announced) != announced:
            late.append(m.text)
    return late


async def test_restart_mid_day_the_agents_speak_inside_the_released_backlog(
    harness: SlackHarness,
) -> None:
    """Fails on the code before `bot.service.outages`: the resumed game closes the day at once (its
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

    assert harness.engine is not None and harness.channel is not None
    assert after_their_phase(harness.engine, game_id, fake, harness.channel) == []


async def test_a_socket_gap_pauses_the_agents_and_gives_the_day_its_time_back(
    harness: SlackHarness,
) -> None:
    """The Socket Mode client (the SDK's own, on the fake's websocket) loses its socket: the
    game's agents and clock wait until it is back, then the day gets the gap back and what
    people typed meanwhile is read back and released. Fails on the code before
    `bot.service.outages`: the agents go on talking while the socket is down, and the day ends on
    its
    old deadline."""
    fake = harness.fake
    users = harness.people(5)
    game_id, _ = await harness.running_game_of(
        users, "day=60 vote=600 night=600 night_vote=600 agents=2 speed=10"
    )
    game = harness.live(game_id)
    agents = [s.name for s in game.seats if s.is_agent]
    assert game.state is not None and game.state.phase.deadline is not None
    deadline = game.state.phase.deadline
    assert harness.adapter is not None and harness.app is not None
    handler = AsyncSocketModeHandler(harness.app, fake.app_token)
    await handler.connect_async()  # type: ignore[no-untyped-call]
    await fake.wait_socket_connected()
    watch_reconnects(handler.client, harness.adapter)
    try:
        await harness.wait_stage(
            lambda: any(n in agents for n, _ in harness.persona_lines()), what="an agent line"
        )
        await fake.hub.hold()
        assert harness.service is not None
        outages = harness.service.outages
        await fake.wait_until(lambda: outages.is_down(game_id), what="the input down")
        down = time.monotonic()
        seen = len(harness.stage())
        typed = []
        for i in range(5):
            u = users[i % len(users)]
            text = f"typed in the gap {i}"
            fake.workspace.post(fake.dm(u), user=u.id, text=text, source="user")
            typed.append(text)
            await asyncio.sleep(0.4)
        # on to two real seconds past the day's old deadline (a wait for the game's clock)
        await asyncio.sleep(game.clock.real_delay_until(deadline + timedelta(seconds=20)))
        gap_posts = [m.text for m in harness.stage()[seen:]]
        assert gap_posts == [], f"posted while the socket was down: {gap_posts}"
        assert game.state.phase.kind.value == "day"
        fake.hub.release()
        await fake.wait_socket_connected()
        gap = time.monotonic() - down
        await harness.wait_stage(
            lambda: [t for _, t in harness.persona_lines() if t in typed] == typed,
            within=20,
            what="the backlog",
        )
        assert game.state.phase.kind.value == "day"  # still the day, after its old deadline
        extended = (game.state.phase.deadline - deadline).total_seconds()
        assert abs(extended - gap * 10.0) < 15.0
        assert any("stood still" in m.text for m in harness.stage())
    finally:
        await handler.close_async()  # type: ignore[no-untyped-call]


def has_card(people: People, user: FakeUser) -> Callable[[], bool]:
    return lambda: any("You are" in t for t in people.dm_texts(user))


async def _started_game(
    fake: FakeSlack, people: People, url: str, *, day: int
) -> tuple[Engine, str]:
    """Everyone consents, a game with two agents (a day of ``day`` game seconds, the other
    phases long) is opened, joined by all and started, and every role card is in; the store's
    engine and the reply to `/mafia new`."""
    engine = make_engine(url)  # migrated by the bot at its start
    for u in people.users:
        record_consent(engine, "slack", fake.team_id, u.id, True)
    reply = await people.slash(
        people.users[0], f"new day={day} vote=600 night=600 night_vote=600 agents=2"
    )
    for u in people.users:
        before = len(fake.responses)
        await fake.click(fake.socket, user=u, action_id="mafia_join", channel=people.channel)
        await fake.wait_for_responses(before + 1, within=15)
    assert "has started" in await people.slash(people.users[0], "start"), reply
    for u in people.users:
        await fake.wait_until(has_card(people, u), 15, "role card")
    return engine, reply


async def test_kill_9_mid_day_on_slack_the_agents_speak_inside_the_released_backlog(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    """`mafiabot run --slack` (Socket Mode) in a process of its own, killed with SIGKILL in
    the middle of a day while people keep typing through the restart. Fails on the code
    before `bot.service.outages`: the backlog is relayed in one burst with no agent line inside."""
    fake = fake_slack
    url = f"sqlite:///{tmp_path / 'db' / 'mafiabot.db'}"
    people = People(fake)
    async with slack_bot(fake, url, tmp_path, "first") as first:
        engine, reply = await _started_game(fake, people, url, day=20)
        game_id = reply.split("`")[1]
        await people.say(people.users[1], "before the crash")
        await people.wait_line("before the crash")
        first.proc.kill()  # SIGKILL: no shutdown code runs
        await first.proc.wait()
    with Session(engine) as s:
        seats = s.exec(select(Seat).where(Seat.game_id == game_id)).all()
    agents = [seat.character_name for seat in seats if seat.is_agent]
    assert len(agents) == 2

    typed = []
    for i in range(12):  # through the restart, past the day's deadline
        text = f"{agents[i % 2]}, what do you make of it? ({i})"
        people.typed_offline(people.users[i % len(people.users)], text)
        typed.append(text)
        await asyncio.sleep(1.5)

    async with slack_bot(fake, url, tmp_path, "second"):
        await fake.wait_until(
            lambda: any("Voting is open" in m.text for m in fake.messages_in(people.channel)),
            60,
            "the vote",
        )
    lines = [(m.username, m.text) for m in fake.messages_in(people.channel) if m.username]
    texts = [t for _, t in lines]
    assert [t for t in texts if t in typed] == typed  # once each, in order
    first_at, last_at = texts.index(typed[0]), texts.index(typed[-1])
    inside = [t for n, t in lines[first_at + 1 : last_at] if n in agents]
    assert inside, f"no agent line inside the released backlog: {texts[first_at : last_at + 1]}"
    assert after_their_phase(engine, game_id, fake, people.channel) == []


async def test_kill_9_on_slack_nothing_typed_through_the_restart_is_lost(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    """People type on at a steady pace through a SIGKILL and the restart (a line is an event
    while the app's socket is connected, as Slack sends it, else only a line in the booth's
    history): every line reaches the stage once, the backlog in the order typed. Fails on
    the code before `Relay.read_gap`: the restarted app read the booths back, then connected
    its socket only once the backlog's release was over; what was typed in between came as
    no event and was never read back. (People's live lines are not held up behind the whole
    backlog, only behind their own.)"""
    fake = fake_slack
    url = f"sqlite:///{tmp_path / 'db' / 'mafiabot.db'}"
    people = People(fake)
    async with slack_bot(fake, url, tmp_path, "first") as first:
        await _started_game(fake, people, url, day=600)
        first.proc.kill()  # SIGKILL: no shutdown code runs
        await first.proc.wait()

    typed: list[str] = []
    stop = asyncio.Event()

    async def typist() -> None:
        while not stop.is_set():
            user = people.users[len(typed) % len(people.users)]
            text = f"still here, line {len(typed)}"
            if fake.hub.connected:
                with contextlib.suppress(Exception):  # (stored first: read back if it fails)
                    await people.say(user, text)
            else:
                people.typed_offline(user, text)
            typed.append(text)
            await asyncio.sleep(0.6)

    task = asyncio.create_task(typist())
    try:
        await asyncio.sleep(4.0)  # a backlog released over about four seconds
        backlog = len(typed)
        async with slack_bot(fake, url, tmp_path, "second"):
            await fake.wait_socket_connected(within=30)
            await asyncio.sleep(2.0)  # typing on while it is connected
            stop.set()
            await task
            await fake.wait_until(
                lambda: set(typed) <= set(people.stage_lines()), 30, "every line typed"
            )
    finally:
        stop.set()
        await asyncio.gather(task, return_exceptions=True)
    shown = [t for t in people.stage_lines() if t in typed]
    assert sorted(shown) == sorted(typed)  # once each
    assert [t for t in shown if t in typed[:backlog]] == typed[:backlog]  # in the order typed
    n = len(people.users)
    for k in range(n):  # and each person's lines in the order they typed them
        theirs = typed[k::n]
        assert [t for t in shown if t in theirs] == theirs
