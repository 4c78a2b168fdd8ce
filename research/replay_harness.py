"""Play a recorded game's human seats into the real GameService, with our agent in one seat.

Shared by ``mafiabot replay`` (research/replay.py) and the scheduler benchmark
(bench/scheduler_calls.py). The real service rather than a leaner stand-in, so the agent gets
exactly the events, ordering and timer behaviour it gets in production.

A script is a list of :class:`Cue`: a human line or vote, anchored to a *live* phase (kind and
number) and an offset in game seconds from that phase's start. Anchoring to live phases instead
of the recording's wall clock keeps each cue in its own phase however the live game's phases
drift from the recorded ones (the engine's timers end them, and a vote ends early once everybody
has voted). :class:`ScriptPlayer` plays cues strictly in order: it waits for the cue's phase to
start live, then for its offset, checks the live state, and acts; whatever cannot be played is
counted under a reason, never silently dropped.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from bot.protection.dataset.llmafia_model import LLMafiaGame
from bot.service.live import AgentFactory, LiveGame
from bot.service.port import GameService, ServiceError
from bot.service.timers import make_scheduler
from bot.store.db import make_engine
from bot.store.migrate import upgrade
from games.config import GameConfig
from games.errors import RuleError
from games.events import Event, GameOver, PhaseStarted, PlayerEliminated
from games.state import PhaseKind

__all__ = [
    "ORDER",
    "Cue",
    "PhaseWatch",
    "ScriptPlayer",
    "SeatTable",
    "recorded_table",
    "seat_recorded_game",
    "temporary_service",
]

#: live phases in game order within one number: day talk, day vote, night talk, night vote
ORDER: dict[PhaseKind, int] = {
    PhaseKind.DAY: 0,
    PhaseKind.VOTE: 1,
    PhaseKind.NIGHT: 2,
    PhaseKind.NIGHT_VOTE: 3,
}

# skip reasons a ScriptPlayer can give (the script builder adds its own)
GAME_OVER = "game_over"  # the live game had ended
PHASE_SKIPPED = "phase_skipped"  # the live game never had this phase (night talk, 1 mafia)
PHASE_OVER = "phase_over"  # the live game had left the cue's phase by its time
SPEAKER_DEAD = "speaker_dead"  # the speaker is out in the live game
VOTER_DEAD = "voter_dead"  # the voter is out in the live game
TARGET_DEAD = "target_dead"  # the vote's target is out in the live game
REFUSED = "refused"  # any other refusal by the rules (recorded in ``refusals``)


@dataclass(frozen=True)
class Cue:
    """One recorded human action, placed in the live game.

    ``kind``/``number`` name the live phase it belongs to (a vote cue: the vote phase itself; a
    line: the phase it was typed in, which it may overflow into the same day's or night's vote
    phase). ``ref`` is its position in the source recording, for reports and tests.
    """

    kind: PhaseKind
    number: int
    offset_s: float
    speaker: str
    action: Literal["say", "vote"]
    text: str  # the line, or the vote's target name
    ref: int = -1

    @property
    def position(self) -> tuple[int, int]:
        return (self.number, ORDER[self.kind])


@dataclass(frozen=True)
class SeatTable:
    """The recorded table: names in seat order, roles by seat, and the seat our agent takes."""

    names: list[str]
    deal: tuple[str, ...]
    agent_seat: int

    @property
    def agent_name(self) -> str:
        return self.names[self.agent_seat]


def recorded_table(game: LLMafiaGame) -> SeatTable:
    """Seats as recorded; our agent takes the (first) LLM player's seat."""
    if not game.llm_players:
        raise ValueError(f"game {game.game_id} has no LLM player to replace")
    names = [p.name for p in game.players]
    deal = tuple("mafia" if p.is_mafia else "bystander" for p in game.players)
    return SeatTable(names, deal, names.index(game.llm_players[0]))


@asynccontextmanager
async def temporary_service(factory: AgentFactory) -> AsyncIterator[GameService]:
    """A GameService on a throw-away SQLite file (migrated) and a started scheduler."""
    with tempfile.TemporaryDirectory(prefix="mafiabot-replay-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'replay.db'}"
        upgrade(url)
        engine = make_engine(url)
        scheduler = make_scheduler()
        scheduler.start()
        service = GameService(engine, scheduler, factory)
        try:
            yield service
        finally:
            await service.close()
            scheduler.shutdown(wait=False)
            engine.dispose()


async def seat_recorded_game(
    service: GameService,
    table: SeatTable,
    config: GameConfig,
    *,
    speed: float,
    seed: int | None = None,
    agent_kind: str | None = None,
) -> str:
    """Open a lobby with the recorded names and roles; our agent in its seat, the rest humans
    that only the script moves. Returns the game id (not started yet)."""
    game_id = await service.create_game(config, seed=seed, speed=speed, server_external_id="replay")
    for i, name in enumerate(table.names):
        agent = i == table.agent_seat
        await service.join(
            game_id,
            None if agent else f"replay-{i}",
            is_agent=agent,
            agent_kind=agent_kind if agent else None,
            name=name,
        )
    return game_id


@dataclass(frozen=True)
class LiveElimination:
    name: str
    role: str
    phase: str  # "day-N" (voted out) or "night-N" (killed)


class PhaseWatch:
    """A service listener for one game: when each live phase started, who went out when, and a
    wake-up for whoever waits on the game. Subscribe it before the game starts."""

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        self.starts: dict[tuple[PhaseKind, int], datetime] = {}
        self.position: tuple[int, int] = (0, -1)
        self.over = False
        self.winner: str | None = None
        self.eliminations: list[LiveElimination] = []
        self.changed = asyncio.Event()

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        if game.id != self.game_id:
            return
        for e in events:
            if isinstance(e, PhaseStarted):
                kind = PhaseKind(e.phase)
                if kind in ORDER:
                    self.starts[(kind, e.number)] = e.t
                    self.position = (e.number, ORDER[kind])
            elif isinstance(e, PlayerEliminated):
                family = "night" if e.cause == "night" else "day"
                self.eliminations.append(
                    LiveElimination(e.name, e.role, f"{family}-{self.position[0]}")
                )
            elif isinstance(e, GameOver):
                self.over = True
                self.winner = e.winner
        self.changed.set()

    async def wait_until(self, position: tuple[int, int]) -> None:
        """Until the live game has reached ``position`` (number, ORDER) or ended."""
        while not self.over and self.position < position:
            self.changed.clear()
            await self.changed.wait()

    async def wait_past(self, position: tuple[int, int]) -> None:
        """Until the live game has left ``position`` or ended."""
        while not self.over and self.position <= position:
            self.changed.clear()
            await self.changed.wait()


@dataclass
class CueResult:
    cue: Cue
    outcome: str  # "played" or a skip reason


@dataclass
class ScriptPlayer:
    """Plays cues into one running game, in order, at their times (see the module doc)."""

    service: GameService
    game_id: str
    watch: PhaseWatch
    results: list[CueResult] = field(default_factory=list)
    refusals: Counter[str] = field(default_factory=Counter)

    @property
    def live(self) -> LiveGame:
        return self.service.games[self.game_id]

    async def play(self, cues: Sequence[Cue]) -> list[CueResult]:
        seat_of = {s.name: s.index for s in self.live.seats}
        for cue in cues:
            self.results.append(await self._one(cue, seat_of[cue.speaker]))
        return self.results

    def counts(self, action: str | None = None) -> Counter[str]:
        return Counter(r.outcome for r in self.results if action in (None, r.cue.action))

    async def _one(self, cue: Cue, seat: int) -> CueResult:
        await self.watch.wait_until(cue.position)
        if self.watch.over:
            return CueResult(cue, GAME_OVER)
        start = self.watch.starts.get((cue.kind, cue.number))
        if start is None:
            return CueResult(cue, PHASE_SKIPPED)
        live = self.live
        await asyncio.sleep(live.clock.real_delay_until(start + timedelta(seconds=cue.offset_s)))
        state = live.state
        if state is None or state.over:
            return CueResult(cue, GAME_OVER)
        phase = state.phase
        if cue.action == "say":
            same = phase.number == cue.number and phase.kind.is_day == cue.kind.is_day
        else:
            same = phase.number == cue.number and phase.kind is cue.kind
        if not same:
            return CueResult(cue, PHASE_OVER)
        if not state.seats[seat].alive:
            return CueResult(cue, SPEAKER_DEAD if cue.action == "say" else VOTER_DEAD)
        try:
            if cue.action == "say":
                await self.service.say(self.game_id, seat, cue.text)
            else:
                target = next((s for s in state.seats if s.name == cue.text), None)
                if target is not None and not target.alive:
                    return CueResult(cue, TARGET_DEAD)
                await self.service.vote(self.game_id, seat, cue.text)
        except (RuleError, ServiceError) as e:
            self.refusals[str(e)] += 1
            return CueResult(cue, REFUSED)
        return CueResult(cue, "played")
