"""Outages are symmetric (`bot.service.outages`): while a game's platform input is down its agents
are paused and its clock stands still; when it is back the phase gets the time back and the
backlog is released at the pace it was typed, with the agents answering inside it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timedelta

import pytest
from sqlalchemy.engine import Engine

from bot.seats.agents import make_agent_factory
from bot.service.clock import utcnow
from bot.service.live import LiveGame
from bot.service.moments import grace
from bot.service.outages import ReleaseWindow
from bot.service.port import GameService
from bot.service.timers import make_scheduler
from games.config import GameConfig
from games.events import Event, MessageAccepted, PhaseEnded, PhaseExtended, PhaseStarted
from games.state import PhaseKind

SPEED = 20.0
#: day 1 lasts 4 real seconds; the rest is long
CONFIG = GameConfig(day_seconds=80, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600)


class Stage:
    """Every event, with the real (monotonic) time it was dispatched."""

    def __init__(self) -> None:
        self.events: list[tuple[float, Event]] = []
        self.changed = asyncio.Event()

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        now = time.monotonic()
        self.events.extend((now, e) for e in events)
        self.changed.set()

    async def wait(self, test: object, within: float = 15.0) -> None:
        async def loop() -> None:
            while not test():  # type: ignore[operator]
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(loop(), within)

    def lines(self) -> list[tuple[float, MessageAccepted]]:
        return [(t, e) for t, e in self.events if isinstance(e, MessageAccepted)]


def announced_in_order(events: Sequence[Event]) -> list[str]:
    """Every stage line that came after its phase was announced over (should be none)."""
    current = 0
    wrong = []
    for e in events:
        if isinstance(e, PhaseStarted):
            current = e.seq
        elif isinstance(e, MessageAccepted) and e.place == "stage" and e.phase_seq != current:
            wrong.append(e.text)
    return wrong


@pytest.fixture
async def svc(engine: Engine) -> AsyncIterator[GameService]:
    scheduler = make_scheduler()
    scheduler.start()
    service = GameService(engine, scheduler, make_agent_factory())
    yield service
    await service.close()
    scheduler.shutdown(wait=False)


async def table(svc: GameService) -> LiveGame:
    """Five people and two baseline agents, at 20x."""
    game_id = await svc.create_game(CONFIG, seed=5, speed=SPEED)
    for i in range(5):
        await svc.join(game_id, f"user{i}")
    for _ in range(2):
        await svc.join(game_id, None, is_agent=True, agent_kind="baseline")
    await svc.start(game_id)
    return svc.games[game_id]


async def test_gateway_gap_pauses_agents_stops_the_clock_and_releases_the_backlog(
    svc: GameService,
) -> None:
    stage = Stage()
    svc.subscribe(stage)
    game = await table(svc)
    state = game.state
    assert state is not None and state.phase.deadline is not None
    deadline = state.phase.deadline
    agents = {s.index for s in game.seats if s.is_agent}
    people = [s.index for s in game.seats if not s.is_agent]
    # the agents talk while the input is up
    await stage.wait(lambda: any(e.seat in agents for _, e in stage.lines()))

    svc.input_down([game.id])
    down_at = time.monotonic()
    n_down = len(stage.events)
    # People type through the gap, which outlasts the day's deadline (and its grace).
    typed: list[tuple[int, str, datetime]] = []
    for i in range(8):
        seat = people[i % len(people)]
        typed.append((seat, f"typed in the gap {i}", utcnow()))
        await asyncio.sleep(0.25)
    past = deadline + grace(game) + timedelta(seconds=SPEED)  # a real second after the grace
    await asyncio.sleep(game.clock.real_delay_until(past))  # (a wait for the game's clock)
    await svc.drain(game.id)
    gap_events = stage.events[n_down:]
    assert gap_events == [], f"something happened while the input was down: {gap_events}"
    assert game.state is not None and game.state.phase.kind is PhaseKind.DAY

    await svc.input_back([game.id])
    gap = time.monotonic() - down_at
    for seat, text, at in typed:  # what the adapter hands over, oldest first
        await svc.say(game.id, seat, text, at=at)
    released_at = time.monotonic()
    await svc.drain(game.id)

    extended = [e for _, e in stage.events if isinstance(e, PhaseExtended)]
    assert len(extended) == 1
    assert extended[0].seconds == pytest.approx(gap * SPEED, abs=0.5 * SPEED)
    assert game.state.phase.deadline == deadline + timedelta(seconds=extended[0].seconds)
    assert game.state.phase.kind is PhaseKind.DAY  # the day goes on after its old deadline

    lines = stage.lines()
    backlog = [(t, e) for t, e in lines if e.text.startswith("typed in the gap")]
    assert [e.text for _, e in backlog] == [text for _, text, _ in typed]  # in typed order
    # paced as typed (0.25 s apart), not one burst
    typed_span = (typed[-1][2] - typed[0][2]).total_seconds()
    assert backlog[-1][0] - backlog[0][0] >= 0.7 * typed_span
    assert released_at - backlog[0][0] < typed_span + 1.0
    # the agents speak inside the release, between people's lines
    first, last = backlog[0][0], backlog[-1][0]
    inside = [e for t, e in lines if first < t < last and e.seat in agents]
    assert inside, "no agent line inside the released backlog"

    # the day then ends at its extended deadline, and no line came after its phase ended
    await stage.wait(lambda: any(isinstance(e, PhaseEnded) for _, e in stage.events))
    assert announced_in_order([e for _, e in stage.events]) == []


async def test_an_agent_acting_while_the_input_is_down_waits_for_the_release(
    svc: GameService,
) -> None:
    """An agent whose timer fires in the gap is held: nothing reaches the stage until the
    input is back, and then it goes out at its moment's place among people's lines."""
    stage = Stage()
    svc.subscribe(stage)
    game = await table(svc)
    agent = next(s.index for s in game.seats if s.is_agent)
    person = next(s.index for s in game.seats if not s.is_agent)
    svc.input_down([game.id])
    before = utcnow()
    held = asyncio.create_task(svc.agent_gate(game.id))
    await asyncio.sleep(0.3)
    assert not held.done()
    after = utcnow()
    await svc.input_back([game.id])
    window = svc.outages._windows[game.id]
    await svc.say(game.id, person, "typed before the agent acted", at=before)
    await held
    await svc.say(game.id, agent, "the agent's line")  # (what its port does after the gate)
    await svc.say(game.id, person, "typed after the agent acted", at=after)
    await svc.drain(game.id)
    mine = {"typed before the agent acted", "the agent's line", "typed after the agent acted"}
    texts = [e.text for _, e in stage.lines() if e.text in mine]
    assert texts == [
        "typed before the agent acted",
        "the agent's line",
        "typed after the agent acted",
    ]
    assert isinstance(window, ReleaseWindow)


async def test_an_agent_line_due_in_a_restart_is_planned_again_not_released(
    svc: GameService,
) -> None:
    """After a restart (the input down since the process died) an agent's line that comes
    due before the input is back is not typed: once the phase has its time back the port
    says `Deferred` and the agent plans it again from then (released at the end of the
    backlog, every agent's overdue line came out together just after the catch-up). In an
    outage of a running process the line still waits for its place in the release."""
    from agent.base import Deferred

    game = await table(svc)
    svc.outages.mark_down(game.id, game.clock, utcnow(), restart=True)
    held = asyncio.create_task(svc.agent_gate(game.id, line=True))
    vote = asyncio.create_task(svc.agent_gate(game.id))
    await asyncio.sleep(0.3)
    assert not held.done() and not vote.done()
    await svc.input_back([game.id])
    with pytest.raises(Deferred):
        await held
    await vote  # a vote is not a line on the stage: it is released as before
    svc.input_down([game.id])  # an outage of this process: the line waits, then goes out
    live = asyncio.create_task(svc.agent_gate(game.id, line=True))
    await asyncio.sleep(0.2)
    assert not live.done()
    await svc.input_back([game.id])
    await live


def test_a_long_outage_is_released_faster_in_its_proportions() -> None:
    from bot.service.clock import GameClock
    from bot.service.outages import Outages

    outages = Outages(release_seconds=30.0)
    clock = GameClock(1.0)
    since = utcnow() - timedelta(seconds=120)
    assert outages.mark_down("g", clock, since)
    assert not outages.mark_down("g", clock, utcnow())  # the earlier start stands
    first = since + timedelta(seconds=60)  # nothing was typed in the first minute
    back = outages.mark_back("g", clock, first)
    assert back is not None
    extension, window = back
    assert extension == pytest.approx(120, abs=1)  # the phase gets the whole outage back
    assert window.factor == pytest.approx(0.5, rel=0.01)  # 60 s typed, 30 s to release
    assert window.slot(first) == window.start
    assert window.slot(since) == window.start  # before the first line: at once
    middle = window.slot(first + timedelta(seconds=30)) - window.start
    assert middle == pytest.approx(15, rel=0.01)
    assert window.ends - window.start == pytest.approx(30, rel=0.01)
    assert outages.mark_back("g", clock) is None  # not down any more


def test_when_a_restarted_game_went_down() -> None:
    from bot.service.clock import GameClock
    from bot.service.outages import down_since_restart

    now = utcnow()
    wall = GameClock(1.0)
    renewed = now - timedelta(seconds=50)
    expiry = renewed + timedelta(seconds=30)
    acted = now - timedelta(seconds=55)
    assert down_since_restart(wall, acted, expiry, 30.0, now) == renewed
    assert down_since_restart(wall, now - timedelta(seconds=45), expiry, 30.0, now) == (
        now - timedelta(seconds=45)
    )
    assert down_since_restart(wall, None, None, 30.0, now) == now  # nothing known
    fast = GameClock(10.0, now - timedelta(days=1), resumed=True)  # game time is not wall time
    assert down_since_restart(fast, now, expiry, 30.0, now) == renewed
