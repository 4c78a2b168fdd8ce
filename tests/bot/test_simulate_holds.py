"""A game of agents only waits for its agents (issue 33, item 1): at `--speed 10000` a phase
lasts milliseconds, less than the agents' own work (telling them of events, storing their
actions) or a stall of a loaded machine. The clock of such a game is held while an agent's
work is in flight, and a phase's deadline waits for it, so the votes are in on time and
players are voted out (old: every vote came late, nobody was voted out, and the game ended
in a draw after 3 quiet days)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from bot.seats.agents import make_agent_factory
from bot.service.clock import GameClock
from bot.service.live import LiveGame
from bot.service.port import GameService
from bot.service.timers import SchedulerTimers
from games.config import GameConfig
from games.events import Event, PhaseStarted

#: the game's clock in these tests: `simulate`'s fastest
SPEED = 10000.0
#: how long the process stalls (the event loop blocked) in every vote
STALL_S = 2.0


class Stalls:
    """Blocks the event loop for `STALL_S` part-way into every vote (a day's or a night's),
    as a loaded machine or a slow agent does: at this clock, 20,000 game seconds."""

    def __init__(self) -> None:
        self.count = 0
        self.loop = asyncio.get_running_loop()

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        for e in events:
            if isinstance(e, PhaseStarted) and e.phase in ("vote", "night_vote"):
                self.count += 1
                self.loop.call_later(0.4 * e.seconds / SPEED, time.sleep, STALL_S)


async def test_a_stall_in_every_vote_leaves_the_votes_in_time(
    engine: Engine, scheduler: Any
) -> None:
    stalls = Stalls()
    service = GameService(engine, scheduler, make_agent_factory())
    service.subscribe(stalls)
    game_id = await service.create_game(GameConfig(), seed=5, speed=SPEED)
    for _ in range(5):
        await service.join(game_id, None, is_agent=True)
    await service.start(game_id)
    try:
        await asyncio.wait_for(service.wait_finished(game_id), 120)
        await service.drain(game_id)
        history = await service.history(game_id)
    finally:
        await service.close()
    assert stalls.count >= 2
    votes = [e for e in history if e["kind"] == "vote_cast"]
    out = [e for e in history if e["kind"] == "player_eliminated" and e["cause"] == "vote"]
    over = history[-1]
    assert over["kind"] == "game_over"
    assert over["winner"] in ("mafia", "bystanders"), over  # not a draw by quiet days
    assert out, "nobody was voted out"
    # every vote phase got its votes: each day vote and night vote has at least one vote cast
    vote_phases = [e["seq"] for e in history if e["kind"] == "phase_started"
                   and e["phase"] in ("vote", "night_vote")]  # fmt: skip
    voted = {e["phase_seq"] for e in votes}
    assert set(vote_phases) <= voted, (vote_phases, voted)


async def test_a_held_clock_stands_still_and_a_deadline_waits_for_it(scheduler: Any) -> None:
    """The game's time does not move while held; a deadline that comes due meanwhile runs
    once the hold is released, and not before game time reaches it."""
    clock = GameClock(SPEED)
    timers = SchedulerTimers(scheduler, clock)
    release = clock.hold()
    frozen = clock.now()
    fired = asyncio.Event()
    seen: list[bool] = []

    async def deadline() -> None:
        seen.append(clock.held)
        fired.set()

    handle = timers.call_at(frozen + timedelta(seconds=5), deadline, after_holds=True)
    await asyncio.sleep(0.05)  # 500 game seconds if the clock ran
    assert clock.now() == frozen
    assert not fired.is_set() and handle.pending
    release()
    await asyncio.wait_for(fired.wait(), 5)
    assert seen == [False]
    assert clock.now() >= frozen + timedelta(seconds=5)
    assert not handle.pending


class HeldWhenTold:
    """Notes, as each batch of events is handed out, whether the game's clock is held."""

    def __init__(self) -> None:
        self.held: list[bool] = []

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        self.held.append(game.clock.held)


@pytest.mark.parametrize("people", [0, 2])
async def test_only_a_game_of_agents_holds_its_clock(
    engine: Engine, scheduler: Any, people: int
) -> None:
    """A game of agents only holds its clock while its agents are told of the game's start
    (the renderers are told in the same moment); a game with people in it never does."""
    noted = HeldWhenTold()
    service = GameService(engine, scheduler, make_agent_factory())
    service.subscribe(noted)
    game_id = await service.create_game(GameConfig(), seed=5, speed=SPEED)
    for i in range(people):
        await service.join(game_id, f"u{i}")
    for _ in range(5 - people):
        await service.join(game_id, None, is_agent=True)
    try:
        await service.start(game_id)
        await service.drain(game_id)
    finally:
        await service.close()
    assert noted.held and noted.held[0] is (people == 0)
