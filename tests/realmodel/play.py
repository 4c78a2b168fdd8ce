"""Whole games on the real tiny model, and what a person at the table would notice in them.

Shared by the real-model test tier (tests/realmodel) and ``bench/realmodel.py``:

- :func:`simulate` plays ``mafiabot simulate --agent llm`` in this process (the function the
  command runs, on settings read from the environment), with a :class:`LoopLag` sampler beside it;
- :func:`read_game` reads a finished game back from its database (events, seats, the agents'
  decision records) into a :class:`GameReport`, which answers: did the game end, did every LLM
  seat speak on every day it was alive, was every vote of an LLM seat legal and cast either by
  the model or by a logged fallback, how fast were the calls.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, cast

from rich.console import Console
from sqlmodel import Session, col, select

from agent.decisions import DecisionRecord
from agent.memory.embeddings import default_minilm
from bot.settings import Settings
from bot.store import models as m
from bot.store.db import make_engine
from bot.store.decisions import records_for_game


class LoopLag:
    """How late a short sleep wakes up on the running event loop, sampled every
    ``interval`` seconds while the context is open: a call that blocks the loop (model I/O,
    embedding, a search, building a long prompt) shows up as lag."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.samples: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            start = loop.time()
            await asyncio.sleep(self.interval)
            self.samples.append(max(0.0, loop.time() - start - self.interval))

    async def __aenter__(self) -> LoopLag:
        # REALMODEL_SLOW_CALLBACKS_MS: asyncio debug mode, logging (logger "asyncio") every
        # callback that held the loop longer than that, to find what a lag spike was
        slow_ms = float(os.environ.get("REALMODEL_SLOW_CALLBACKS_MS") or 0)
        if slow_ms > 0:
            loop = asyncio.get_running_loop()
            loop.set_debug(True)
            loop.slow_callback_duration = slow_ms / 1000
        self._task = asyncio.create_task(self._run(), name="loop-lag")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    def quantile(self, q: float) -> float:
        return quantile(self.samples, q)

    @property
    def worst(self) -> float:
        return max(self.samples, default=0.0)


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of ``values``; 0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


@dataclass(frozen=True)
class CastVote:
    """A vote (day vote or mafia kill vote) or a night action, as the engine took it."""

    seat: int
    name: str
    target: str | None
    kind: str  # "vote" (day or night vote) or "night_action"
    phase_seq: int
    t: datetime
    legal: bool  # among the targets the seat was offered in that phase
    #: "model" (a valid answer of the model), "fallback" (a logged fallback decision),
    #: "baseline" (the seat had degraded to the baseline, logged) or "" (nobody logged it)
    by: str = ""


@dataclass
class GameReport:
    game_id: str
    winner: str | None
    over_reason: str | None
    names: dict[int, str]
    llm_seats: list[int]
    #: (seat, day number) -> stage lines that seat wrote in that day's discussion and vote
    lines: Counter[tuple[int, int]]
    #: seat -> the day numbers it was alive at the start of
    days_alive: dict[int, list[int]]
    votes: list[CastVote]
    records: list[DecisionRecord]
    #: (seat, phase seq) -> the verb a seat was offered then ("vote", "kill", "protect", ...)
    offered: dict[tuple[int, int], str] = field(default_factory=dict)
    transcript: list[str] = field(default_factory=list)

    # --- what a person notices -----------------------------------------------------------

    @property
    def ended(self) -> bool:
        return self.winner in ("mafia", "bystanders")

    def silent_days(self) -> list[tuple[str, int]]:
        """(name, day) for every day an LLM seat was alive and said nothing on the stage."""
        return [
            (self.names[s], d)
            for s in self.llm_seats
            for d in self.days_alive.get(s, [])
            if self.lines[(s, d)] == 0
        ]

    def llm_votes(self) -> list[CastVote]:
        return [v for v in self.votes if v.seat in self.llm_seats]

    def unvoted(self) -> list[tuple[str, int]]:
        """(name, phase seq) for every day vote and mafia kill vote an LLM seat was offered
        and cast nothing in."""
        cast = {(v.seat, v.phase_seq) for v in self.votes if v.kind == "vote"}
        return [
            (self.names[seat], seq)
            for (seat, seq), verb in sorted(self.offered.items())
            if seat in self.llm_seats and verb in ("vote", "kill") and (seat, seq) not in cast
        ]

    def bad_votes(self) -> list[CastVote]:
        """LLM seats' votes that were illegal or that neither the model nor a logged
        fallback made."""
        return [v for v in self.llm_votes() if not v.legal or not v.by]

    # --- figures ---------------------------------------------------------------------------

    def calls(self, kind: str | None = None) -> list[DecisionRecord]:
        return [r for r in self.records if r.called and (kind is None or r.kind == kind)]

    def valid_rate(self, kind: str) -> tuple[int, int]:
        """(valid answers, answers) of the model for ``kind`` (fallbacks are not answers)."""
        answered = [r for r in self.calls(kind) if r.answered]
        return sum(r.valid for r in answered), len(answered)

    def by_model(self, kind: str) -> tuple[int, int]:
        """(decisions the model itself made, decisions) of ``kind``: the issue's "valid from
        the model itself (fallbacks not counted)". A decision the baseline took in the model's
        place (its call failed, was cut off at the phase's end, or answered unusably) counts
        against the model, not out of the total.

        Scheduler: each consultation is one decision, made by a valid answer or by a logged
        fallback. Votes and night actions: each one an LLM seat owed (offered, cast or not),
        made by the model when the vote that stood at the end was the model's."""
        if kind in ("vote", "night_action"):
            last: dict[tuple[int, int], CastVote] = {}
            for v in self.llm_votes():
                if v.kind == kind:
                    last[(v.seat, v.phase_seq)] = v  # a later cast replaces an earlier one
            owed = set(last)
            if kind == "vote":
                owed |= {
                    (seat, seq)
                    for (seat, seq), verb in self.offered.items()
                    if seat in self.llm_seats and verb in ("vote", "kill")
                }
            model = sum(1 for v in last.values() if v.by == "model")
            return model, len(owed)
        valid = sum(1 for r in self.calls(kind) if r.answered and r.valid)
        return valid, valid + self.fallbacks(kind)

    def fallbacks(self, kind: str | None = None) -> int:
        return sum(1 for r in self.records if r.fallback and (kind is None or r.kind == kind))

    def latencies(self) -> list[float]:
        return [r.latency_s for r in self.calls()]

    def lines_per_day(self, seats: Iterable[int]) -> list[int]:
        """One number per (seat, day alive): that seat's stage lines that day."""
        return [self.lines[(s, d)] for s in seats for d in self.days_alive.get(s, [])]

    def describe(self) -> str:
        """For assertion messages: the facts and the end of the transcript."""
        by = Counter(v.by or "unlogged" for v in self.llm_votes())
        return (
            f"game {self.game_id}: winner {self.winner} ({self.over_reason}); LLM seats "
            f"{[self.names[s] for s in self.llm_seats]}; days alive {self.days_alive}; "
            f"lines {dict(self.lines)}; votes by {dict(by)}; "
            f"calls {Counter(r.kind for r in self.calls())}\n" + "\n".join(self.transcript[-60:])
        )


def read_game(url: str, game_id: str) -> GameReport:
    """The finished game ``game_id`` from the database at ``url``."""
    engine = make_engine(url)
    try:
        with Session(engine) as session:
            events = [
                dict(e.payload)
                for e in session.exec(
                    select(m.Event).where(m.Event.game_id == game_id).order_by(col(m.Event.seq))
                ).all()
            ]
            seats = session.exec(select(m.Seat).where(m.Seat.game_id == game_id)).all()
            names = {s.index: s.character_name for s in seats}
            llm = sorted(s.index for s in seats if s.is_agent and s.agent_kind == "llm")
        records = records_for_game(engine, game_id)
    finally:
        engine.dispose()
    return analyse(game_id, events, names, llm, records)


def analyse(
    game_id: str,
    events: Sequence[dict[str, Any]],
    names: dict[int, str],
    llm_seats: list[int],
    records: list[DecisionRecord],
) -> GameReport:
    alive = set(names)
    phase_of: dict[int, tuple[str, int]] = {}
    offered: dict[tuple[int, int], set[str]] = defaultdict(set)
    verbs: dict[tuple[int, int], str] = {}
    lines: Counter[tuple[int, int]] = Counter()
    days_alive: dict[int, list[int]] = defaultdict(list)
    raw_votes: list[tuple[int, str, str | None, str, int, datetime]] = []
    winner = reason = None
    text: list[str] = []
    phase_seq = 0
    for e in events:
        kind = e["kind"]
        raw_t = e.get("t")
        t = datetime.fromisoformat(raw_t) if isinstance(raw_t, str) else cast(datetime, raw_t)
        if kind == "phase_started":
            phase_seq = e["seq"]
            phase_of[phase_seq] = (e["phase"], e["number"])
            text.append(f"--- {e['phase']} {e['number']}")
            if e["phase"] == "day":
                for s in sorted(alive):
                    days_alive[s].append(e["number"])
        elif kind == "player_eliminated":
            alive.discard(e["seat"])
            text.append(f"    {e['name']} ({e['role']}) out by {e['cause']}")
        elif kind == "choices_offered":
            offered[(e["seat"], e["phase_seq"])].update(e["target_names"])
            verbs[(e["seat"], e["phase_seq"])] = e["verb"]
        elif kind == "message":
            phase, number = phase_of.get(e["phase_seq"], ("?", 0))
            if e.get("place", "stage") == "stage" and phase in ("day", "vote"):
                lines[(e["seat"], number)] += 1
            text.append(f"  [{e.get('place', 'stage')}] {e['name']}: {e['text']}")
        elif kind == "vote_cast":
            raw_votes.append(
                (e["voter"], e["voter_name"], e["target_name"], "vote", e["phase_seq"], t)
            )
            text.append(f"  {e['voter_name']} votes {e['target_name']}")
        elif kind == "night_action":
            raw_votes.append(
                (e["seat"], names[e["seat"]], e["target_name"], "night_action", phase_seq, t)
            )
        elif kind == "game_over":
            winner, reason = e.get("winner"), e.get("reason")
            text.append(f"=== over: {winner} ({reason})")
    votes = []
    for seat, name, target, kind, seq, t in raw_votes:
        # a night action's choices were offered at the night's first phase, valid till dawn
        choices = offered.get((seat, seq)) or set().union(
            *(v for (s, q), v in offered.items() if s == seat and q <= seq)
        )
        legal = target is None or target in choices
        by = attribute(records, seat, kind, target, t) if seat in llm_seats else ""
        votes.append(CastVote(seat, name, target, kind, seq, t, legal, by))
    return GameReport(
        game_id,
        winner,
        reason,
        names,
        llm_seats,
        lines,
        dict(days_alive),
        votes,
        records,
        verbs,
        text,
    )


def attribute(
    records: Sequence[DecisionRecord], seat: int, kind: str, target: str | None, t: datetime
) -> str:
    """Who made the vote ``seat`` cast for ``target`` at ``t``, by the decision log."""
    if target is None:
        return ""
    named = re.compile(rf"(^|\W){re.escape(target)}($|\W)", re.IGNORECASE)
    mine = [r for r in records if r.seat == seat and r.t <= t + timedelta(seconds=1)]
    for r in reversed(mine):
        if r.kind == kind and named.search(r.decision or ""):
            if r.called and r.valid:
                return "model"
            if r.fallback:
                return "fallback"
    if any(r.kind == "other" and r.fallback and "degrade" in (r.decision or "") for r in mine):
        return "baseline"
    return ""


# --- playing a game --------------------------------------------------------------------------


@dataclass(frozen=True)
class Phases:
    day: float = 90.0
    vote: float = 30.0
    night: float = 30.0
    night_vote: float = 20.0


@dataclass
class Played:
    report: GameReport
    lag: LoopLag
    wall_s: float
    output: str


async def simulate(
    data_dir: Path,
    *,
    players: int = 5,
    seed: int = 7,
    speed: float = 1.0,
    phases: Phases = Phases(),
    llm_seats: int | None = None,
) -> Played:
    """``mafiabot simulate --players N --agent llm`` with settings from the environment
    (MAFIABOT_LLM, OPENAI_BASE_URL, ...), on a fresh SQLite database in ``data_dir``. With
    ``llm_seats`` only that many seats are LLM seats and the rest the baseline agent."""
    from bot.local.simulate import run_simulation
    from games.config import GameConfig

    await asyncio.to_thread(data_dir.mkdir, parents=True, exist_ok=True)
    url = f"sqlite:///{data_dir / 'mafiabot.db'}"
    settings = Settings(_env_file=None, data_dir=data_dir, database_url=url)
    config = GameConfig(
        day_seconds=phases.day,
        vote_seconds=phases.vote,
        night_seconds=phases.night,
        night_vote_seconds=phases.night_vote,
    )
    config.validate(players)
    out = io.StringIO()
    console = Console(file=out, width=160, color_system=None)
    # the service loads the agents' embedding model when it starts, before any game (see
    # bot.seats.llm_agents.AgentLearning.warm_up); done here first, once per process, so the lag
    # figure is the games' and not the start-up's
    await asyncio.to_thread(default_minilm().warm_up)
    started = time.monotonic()
    async with LoopLag() as lag:
        if llm_seats is None:
            result = await run_simulation(
                settings,
                console,
                config=config,
                players=players,
                seed=seed,
                speed=speed,
                agent="llm",
                db_url=url,
                resume=None,
            )
            game_id = result["game_id"]
        else:
            game_id = await _mixed_table(settings, url, config, players, llm_seats, seed, speed)
    wall = time.monotonic() - started
    report = await asyncio.to_thread(read_game, url, game_id)
    return Played(report, lag, wall, out.getvalue())


async def _mixed_table(
    settings: Settings, url: str, config: Any, players: int, llm: int, seed: int, speed: float
) -> str:
    """A simulated game with ``llm`` LLM seats among baseline ones (the baseline's timing and
    line counts are calibrated on people: the table an LLM seat must not stand out from)."""
    from bot.runtime import running_service

    async with running_service(settings, url, "baseline") as service:
        game_id = await service.create_game(
            config, seed=seed, speed=speed, server_external_id="simulate"
        )
        kinds = ["llm"] * llm + ["baseline"] * (players - llm)
        for kind in kinds:
            await service.join(game_id, None, is_agent=True, agent_kind=kind)
        await service.start(game_id)
        await service.wait_finished(game_id)
        await service.drain(game_id)
    return game_id


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0
