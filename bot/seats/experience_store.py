"""The LLM agent's experience pool and strategy notes, in the database.

What may feed the pool. Experiences and lessons come from a game only when it finished with a
winner, its server has research logging on, and every human at the table may be used for
research (`bot.protection.consent.research_seats`: consent in force at the game's end, nobody
withdrawn).
Games without humans (agent-only simulations) may feed it too: nobody's words are in them,
and self-play is how the pool gets started before people play. The check runs again inside the
transaction that writes, so a withdrawal that lands during the end-of-game debrief still wins.

Scope. ``MAFIABOT_EXPERIENCE_SCOPE=server`` (the default) keeps each server's pool and notes
to itself: what the agent learnt from one community's games is not used in another's.
``global`` pools everything.

Withdrawal. Importing this module registers two withdrawal hooks (`bot.protection.privacy`): every
experience of the game goes (any agent's reflection there was formed from everything said at
the table, the withdrawn person's lines included), and so does the agents' memory of that game
on disk (it holds their lines verbatim). Strategy notes stay: they are rewritten from lessons
that are forced to name nobody and quote nobody (see `agent.experience`), like a habit learnt
rather than a record kept.

The agent side only knows the `agent.experience.ExperiencePool` protocol; `GamePool` is that
protocol for one game, running each database call in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from agent.experience import Experience, GameDebrief, Rewrite, rank_similar
from bot.protection.consent import research_seats
from bot.protection.privacy import WITHDRAWAL_FILE_HOOKS, WITHDRAWAL_HOOKS
from bot.store.db import session_scope
from bot.store.models import Experience as ExperienceRow
from bot.store.models import Game, Seat, StrategyNote

__all__ = [
    "MEMORY_ROOTS",
    "ExperienceStore",
    "GamePool",
    "Scope",
    "experiences_for_game",
    "forget_game_experiences",
    "forget_game_memories",
    "latest_strategy_note",
    "load_candidates",
    "may_feed_pool",
    "record_experiences",
    "register_memory_root",
    "save_strategy_note",
    "scope_key",
    "strategy_history",
]

log = logging.getLogger(__name__)

Scope = Literal["server", "global"]
#: most recent experiences of a side compared per game (bounds memory and time)
MAX_CANDIDATES = 5000


def scope_key(scope: Scope, server_id: int | None) -> str:
    """The scope a strategy note is kept under: "global", or "server:<id>"."""
    return "global" if scope == "global" else f"server:{server_id}"


# --- consent --------------------------------------------------------------------------------------


def may_feed_pool(session: Session, game_id: str) -> bool:
    """May this game's experiences and lessons enter the pool (see the module docstring)?"""
    game = session.get(Game, game_id)
    if game is None or game.status != "finished" or game.winner is None:
        return False
    seats = session.exec(select(Seat).where(Seat.game_id == game_id)).all()
    if not seats or any(s.withdrawn for s in seats):
        return False
    allowed = research_seats(session, game_id)
    if not any(allowed.values()):
        return False  # logging off, or no server: nothing of this game is for research
    return all(allowed.get(s.index, False) for s in seats if not s.is_agent)


# --- experiences ----------------------------------------------------------------------------------


def record_experiences(engine: Engine, debrief: GameDebrief, server_id: int | None) -> int:
    """Store a seat's (reflection, response, score) rows; 0 when the game may not feed the pool.
    Idempotent: a phase already stored for that seat is skipped."""
    if debrief.vectors is None or not debrief.steps:
        return 0
    vectors = np.asarray(debrief.vectors, dtype=np.float32)
    if vectors.shape[0] != len(debrief.steps):
        raise ValueError("one vector per step is needed")
    with session_scope(engine) as session:
        if not may_feed_pool(session, debrief.game_id):
            return 0
        done = set(
            session.exec(
                select(ExperienceRow.phase_seq).where(
                    ExperienceRow.game_id == debrief.game_id,
                    ExperienceRow.seat_index == debrief.seat,
                )
            ).all()
        )
        stored = 0
        for step, vector in zip(debrief.steps, vectors, strict=True):
            if step.phase_seq in done:
                continue
            session.add(
                ExperienceRow(
                    game_id=debrief.game_id,
                    server_id=server_id,
                    seat_index=debrief.seat,
                    phase_seq=step.phase_seq,
                    role=debrief.role,
                    team=debrief.team,
                    won=debrief.won,
                    days=debrief.days,
                    score=debrief.score,
                    reflection=step.reflection,
                    response=step.response,
                    embedder=debrief.embedder,
                    dim=int(vector.shape[0]),
                    vector=vector.tobytes(),
                )
            )
            stored += 1
    return stored


Candidate = tuple[int | None, str, str, str, float]


def load_candidates(
    engine: Engine,
    team: str | None,
    embedder: str,
    server_id: int | None,
    *,
    global_scope: bool,
) -> tuple[list[Candidate], npt.NDArray[np.float32]]:
    """The most recent experiences from ``embedder`` in scope (of ``team``'s seats, or all),
    with their vectors as a matrix (one row each)."""
    query = (
        select(ExperienceRow)
        .where(ExperienceRow.embedder == embedder)
        .order_by(col(ExperienceRow.id).desc())
        .limit(MAX_CANDIDATES)
    )
    if team is not None:
        query = query.where(ExperienceRow.team == team)
    if not global_scope:
        query = query.where(ExperienceRow.server_id == server_id)
    with Session(engine) as session:
        rows = session.exec(query).all()
    rows = [r for r in rows if len(r.vector) == 4 * r.dim]
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32)
    dims = {r.dim for r in rows}
    dim = max(dims, key=lambda d: sum(1 for r in rows if r.dim == d))
    rows = [r for r in rows if r.dim == dim]
    matrix = np.stack([np.frombuffer(r.vector, dtype=np.float32) for r in rows])
    meta: list[Candidate] = [(r.id, r.role, r.reflection, r.response, r.score) for r in rows]
    return meta, matrix


def experiences_for_game(engine: Engine, game_id: str) -> list[ExperienceRow]:
    with Session(engine) as session:
        return list(
            session.exec(
                select(ExperienceRow)
                .where(ExperienceRow.game_id == game_id)
                .order_by(col(ExperienceRow.seat_index), col(ExperienceRow.phase_seq))
            ).all()
        )


# --- strategy notes -------------------------------------------------------------------------------


def latest_strategy_note(engine: Engine, scope: str, role: str) -> StrategyNote | None:
    with Session(engine) as session:
        return session.exec(
            select(StrategyNote)
            .where(StrategyNote.scope == scope, StrategyNote.role == role)
            .order_by(col(StrategyNote.version).desc())
        ).first()


def strategy_history(engine: Engine, scope: str, role: str) -> list[StrategyNote]:
    with Session(engine) as session:
        return list(
            session.exec(
                select(StrategyNote)
                .where(StrategyNote.scope == scope, StrategyNote.role == role)
                .order_by(col(StrategyNote.version))
            ).all()
        )


def save_strategy_note(
    engine: Engine, scope: str, role: str, note: str, lessons: Sequence[str], game_id: str
) -> StrategyNote | None:
    """Append the next version of the role's note; None when the game may not feed the pool."""
    with session_scope(engine) as session:
        if not may_feed_pool(session, game_id):
            return None
        latest = session.exec(
            select(sa.func.max(StrategyNote.version)).where(
                StrategyNote.scope == scope, StrategyNote.role == role
            )
        ).first()
        row = StrategyNote(
            scope=scope,
            role=role,
            version=int(latest or 0) + 1,
            note=note,
            lessons=list(lessons),
            game_id=game_id,
        )
        session.add(row)
        session.flush()
        session.refresh(row)
        session.expunge(row)
        return row


# --- withdrawal -----------------------------------------------------------------------------------

#: folders holding agents' memories (``<root>/<game id>/<seat>``), registered by the factory
MEMORY_ROOTS: set[Path] = set()


def register_memory_root(root: Path) -> None:
    MEMORY_ROOTS.add(Path(root).resolve())


def forget_game_experiences(session: Session, game_id: str, seat_index: int) -> int:
    """Withdrawal hook: every experience row of the game (see the module docstring)."""
    result = session.execute(sa.delete(ExperienceRow).where(col(ExperienceRow.game_id) == game_id))
    return int(getattr(result, "rowcount", 0) or 0)


def _memory_roots() -> list[Path]:
    roots = set(MEMORY_ROOTS)
    try:  # the configured data dir, for processes that never built an agent (the CLI)
        from bot.settings import settings

        roots.add((settings().data_dir / "memory").resolve())
    except Exception:
        log.debug("no settings: only registered memory roots are cleaned", exc_info=True)
    return sorted(roots)


def forget_game_memories(game_id: str, seat_index: int) -> int:
    """Withdrawal file hook: the agents' memory folders of the game, under every known root
    (run outside the withdrawal's transaction)."""
    removed = 0
    for root in _memory_roots():
        folder = root / game_id
        if folder.is_dir() and folder.resolve().parent == root:
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


if forget_game_experiences not in WITHDRAWAL_HOOKS:
    WITHDRAWAL_HOOKS.append(forget_game_experiences)
if forget_game_memories not in WITHDRAWAL_FILE_HOOKS:
    WITHDRAWAL_FILE_HOOKS.append(forget_game_memories)


# --- the pool as one game sees it -----------------------------------------------------------------


@dataclass
class ExperienceStore:
    """The pool for a whole process: per-game views, one rewrite at a time per note."""

    engine: Engine
    scope: Scope = "server"
    _locks: dict[tuple[str, str], asyncio.Lock] = field(default_factory=dict)

    def for_game(self, game_id: str, server_id: int | None) -> GamePool:
        return GamePool(self, game_id, server_id)

    def lock(self, scope: str, role: str) -> asyncio.Lock:
        return self._locks.setdefault((scope, role), asyncio.Lock())


class GamePool:
    """:class:`agent.experience.ExperiencePool` for one game."""

    def __init__(self, store: ExperienceStore, game_id: str, server_id: int | None) -> None:
        self.store = store
        self.game_id = game_id
        self.server_id = server_id
        self.scope = scope_key(store.scope, server_id)
        self._candidates: dict[
            tuple[str | None, str], tuple[list[Candidate], npt.NDArray[np.float32]]
        ] = {}
        self._loading: dict[tuple[str | None, str], asyncio.Lock] = {}

    async def accepts(self) -> bool:
        def check() -> bool:
            with Session(self.store.engine) as session:
                return may_feed_pool(session, self.game_id)

        return await asyncio.to_thread(check)

    async def similar(
        self,
        team: str | None,
        vector: npt.NDArray[np.float32],
        embedder: str,
        threshold: float,
        limit: int,
    ) -> list[Experience]:
        key = (team, embedder)
        lock = self._loading.setdefault(key, asyncio.Lock())
        async with lock:  # the seats of a game share one load
            if key not in self._candidates:
                self._candidates[key] = await asyncio.to_thread(
                    load_candidates,
                    self.store.engine,
                    team,
                    embedder,
                    self.server_id,
                    global_scope=self.store.scope == "global",
                )
        rows, matrix = self._candidates[key]
        if not rows or matrix.shape[1] != np.asarray(vector).shape[-1]:
            return []
        return rank_similar(rows, matrix, vector, threshold, limit)

    async def record(self, debrief: GameDebrief) -> int:
        return await asyncio.to_thread(
            record_experiences, self.store.engine, debrief, self.server_id
        )

    async def strategy_note(self, role: str) -> str | None:
        row = await asyncio.to_thread(latest_strategy_note, self.store.engine, self.scope, role)
        return None if row is None else row.note

    async def update_strategy(
        self, role: str, rewrite: Rewrite, lessons: Sequence[str]
    ) -> str | None:
        async with self.store.lock(self.scope, role):
            current = await self.strategy_note(role)
            if not await self.accepts():
                return current
            new = await rewrite(current)
            if new is None or new == current:
                return current
            saved = await asyncio.to_thread(
                save_strategy_note,
                self.store.engine,
                self.scope,
                role,
                new,
                lessons,
                self.game_id,
            )
            return current if saved is None else saved.note
