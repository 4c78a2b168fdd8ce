"""Recovery: a game rebuilt from the database, after a restart or to be read back.

The ``actions`` table is a game's authoritative log and the engine is deterministic, so a game
is rebuilt by replaying its log from the start (`read`): the same state, the same events, and
the platform ids and moments that bound the next actions (`bot.service.moments.note_applied`). The
service then carries it on (`GameService.resume`: it takes the game's lease, attaches the
agents and re-arms the deadline) or only shows it (`GameService.replay`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import sqlalchemy as sa
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from sqlmodel import Session, col, select

from bot.errors import ServiceError
from bot.service.clock import GameClock, utcnow
from bot.service.live import LiveGame, SeatInfo
from bot.service.moments import latest_moment, note_applied
from bot.service.outages import down_since_restart
from bot.service.ownership import RunDb
from bot.service.timers import SchedulerTimers
from bot.store import models as m
from games.actions import action_from_dict
from games.config import GameConfig
from games.engine import apply, new_game
from games.events import Event


@dataclass
class Stored:
    """A game's rows as stored: the game, its seats, its action log, its last event's time."""

    game: m.Game
    seats: list[m.Seat]
    actions: list[m.Action]
    last_t: datetime | None


def load(session: Session, game_id: str) -> Stored:
    row = session.get(m.Game, game_id)
    if row is None:
        raise ServiceError(f"There is no game {game_id!r} in the database.")
    seats = list(
        session.exec(
            select(m.Seat).where(m.Seat.game_id == game_id).order_by(col(m.Seat.index))
        ).all()
    )
    actions = list(
        session.exec(
            select(m.Action).where(m.Action.game_id == game_id).order_by(col(m.Action.seq))
        ).all()
    )
    last_t = session.exec(select(sa.func.max(m.Event.t)).where(m.Event.game_id == game_id)).first()
    return Stored(row, seats, actions, last_t)


def lobby_active_at(row: m.Game, seats: list[m.Seat]) -> float:
    """A lobby's last change (`m.Game.lobby_active_at`; on rows from before it was stamped,
    its creation or latest seat) as a `time.monotonic` moment, for `bot.service.lobbies`."""
    stamps = [row.lobby_active_at or row.created_at, *(s.joined_at for s in seats)]
    moments = [t if t.tzinfo is not None else t.replace(tzinfo=UTC) for t in stamps if t]
    if not moments:
        return time.monotonic()
    idle = (utcnow() - max(moments)).total_seconds()
    return time.monotonic() - max(0.0, idle)


def rebuild(stored: Stored, scheduler: AsyncIOScheduler, paused: bool) -> LiveGame:
    """The `LiveGame` of ``stored``, its action log replayed through the engine (nothing is
    armed, attached or taken over)."""
    row, seat_rows, action_rows = stored.game, stored.seats, stored.actions
    config = GameConfig.from_dict(dict(row.config))
    # Real-time games keep the wall clock (downtime counts); accelerated simulations carry
    # on from the last recorded moment, so the remaining phase time is preserved.
    last_t = latest_moment(stored.last_t, action_rows)
    start = None if row.clock_speed == 1.0 and not paused else (last_t or row.started_at)
    clock = GameClock(row.clock_speed, start, resumed=True)
    game = LiveGame(
        id=row.id,
        config=config,
        seed=int(row.seed),
        status=row.status,
        clock=clock,
        timers=SchedulerTimers(scheduler, clock),
        seats=[
            SeatInfo(s.index, s.character_name, s.user_id, s.is_agent, s.agent_kind, s.persona)
            for s in seat_rows
        ],
        server_id=row.server_id,
        channel_id=row.channel_id,
        host_user_id=row.host_user_id,
    )
    if row.started_at is None:
        if row.status == "lobby":  # its idle time goes on from its last change
            game.active_at = lobby_active_at(row, seat_rows)
        return game
    assert row.started_at is not None
    state, events = new_game(config, [s.name for s in game.seats], game.seed, row.started_at)
    history: list[Event] = list(events)
    game.last_t = row.started_at  # nothing is stamped before the game began
    for a in action_rows:
        action = action_from_dict(dict(a.payload))
        state, more = apply(state, action)
        history.extend(more)
        note_applied(game, action, a.client_id)
    game.state = state
    game.action_seq = action_rows[-1].seq if action_rows else 0
    game.event_seq = len(history)
    game.replayed = tuple(history)
    return game


async def read(
    run_db: RunDb, scheduler: AsyncIOScheduler, game_id: str, paused: bool, resume: bool = False
) -> LiveGame:
    """The game rebuilt from the database (`load`, then `rebuild`). ``resume``: refuse a game
    that has ended (between taking its lease and now): there is nothing to resume."""
    stored = await run_db(lambda session: load(session, game_id))
    game = rebuild(stored, scheduler, paused)
    if resume and game.status not in ("lobby", "running"):
        raise ServiceError(f"Game {game_id} is {game.status}; there is nothing to resume.")
    return game


def down_since(game: LiveGame, previous_expiry: datetime | None, lease_seconds: float) -> datetime:
    """When a resumed game's input went down: when the process that drove it was last
    known alive (its lease renewed, its last action)."""
    return down_since_restart(game.clock, game.last_t, previous_expiry, lease_seconds, utcnow())


def unfinished(
    session: Session, platforms: Sequence[str] | None, servers: Sequence[str] | None
) -> list[str]:
    """Running games, newest first (only those on ``platforms``, and of the servers with
    the external ids ``servers``, when given)."""
    stmt = select(m.Game.id).where(col(m.Game.status).in_(["running"]))
    if platforms is not None or servers is not None:
        stmt = stmt.join(m.Server, col(m.Game.server_id) == col(m.Server.id))
    if platforms is not None:
        stmt = stmt.where(col(m.Server.platform).in_(list(platforms)))
    if servers is not None:
        stmt = stmt.where(col(m.Server.external_id).in_(list(servers)))
    return list(session.exec(stmt.order_by(col(m.Game.created_at).desc())).all())
