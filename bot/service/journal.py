"""The event journal: the rows the service writes for each thing that happens to a game.

Every function here runs inside one service transaction (the caller's `Session`, on the
database thread) and only writes or reads rows; the caller changes its `LiveGame` once the
transaction committed. An action's row (``actions``: the authoritative log a resumed game
replays) goes out with every event it caused (``events``) and the rows derived from them
(``messages``, ``votes``, ``phases``, deaths and the outcome) in the same transaction, so
nothing is shown before all of it is stored. Plain rows (`bot.store.rows`) are written with
every other call's of a group commit, one statement a table. `run` is how the service runs
such a transaction: on the database thread, group-committed, fenced with the leases it holds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlmodel import Session, col, select

from bot.errors import ServiceError, StoreUnavailable, db_reason
from bot.service.live import LiveGame, SeatInfo
from bot.service.ownership import FENCE, Ownership
from bot.store import models as m
from bot.store import rows
from bot.store.writer import GroupWriter
from games.actions import Action, action_kind, action_to_dict
from games.config import GameConfig
from games.events import (
    Event,
    GameOver,
    MessageAccepted,
    PhaseEnded,
    PhaseStarted,
    PlayerEliminated,
    VoteCast,
    event_to_dict,
)
from games.narration import MANAGER, manager_line
from games.state import GameState

T = TypeVar("T")
_GAMES, _SEATS, _PHASES = m.Game.__table__, m.Seat.__table__, m.Phase.__table__  # type: ignore[attr-defined]
_ACTIONS, _EVENTS = m.Action.__table__, m.Event.__table__  # type: ignore[attr-defined]
_MESSAGES, _VOTES = m.Message.__table__, m.Vote.__table__  # type: ignore[attr-defined]


async def run(
    writer: GroupWriter,
    ownership: Ownership,
    fn: Callable[[Session], T],
    on_db_call: Callable[[float], None] | None = None,
) -> T:
    """Run ``fn`` in a transaction on the database thread, shared with the calls that
    arrive at the same moment (group commit, `bot.store.writer`); return once it committed.
    Writes to the games ``ownership`` holds are fenced (`bot.service.ownership`). A dropped
    connection
    is retried once; what the database refuses becomes `StoreUnavailable` (nothing of this
    call was committed). ``on_db_call`` is told how long the call took, waiting included."""

    def call(session: Session) -> T:
        session.info[FENCE] = ownership
        session.info[rows.WRITING] = ownership.fence_games
        return fn(session)

    asked = time.perf_counter()
    try:
        # (a dropped connection is retried by the writer)
        return await writer.run(call)
    except sa.exc.DBAPIError as exc:
        if isinstance(exc, sa.exc.IntegrityError):
            raise
        raise StoreUnavailable(db_reason(exc)) from exc
    finally:
        if on_db_call is not None:
            on_db_call(time.perf_counter() - asked)


# --- the lobby ----------------------------------------------------------------------------


def open_game(
    session: Session,
    game_id: str,
    config: GameConfig,
    seed: int,
    *,
    platform: str,
    server_external_id: str,
    server_name: str | None,
    channel_id: str | None,
    host_user_id: str | None,
    speed: float,
) -> int:
    """A new lobby's row (and its server's, the first time); returns the server's row id."""
    server = session.exec(
        select(m.Server).where(
            m.Server.platform == platform, m.Server.external_id == server_external_id
        )
    ).first()
    if server is None:
        server = m.Server(platform=platform, external_id=server_external_id)
        server.name = server_name
        session.add(server)
        session.flush()
    assert server.id is not None
    session.add(
        m.Game(
            id=game_id,
            server_id=server.id,
            channel_id=channel_id,
            status="lobby",
            config=config.to_dict(),
            seed=seed,
            host_user_id=host_user_id,
            clock_speed=speed,
        )
    )
    session.flush()
    return server.id


def _seat_row(game_id: str, info: SeatInfo) -> m.Seat:
    return m.Seat(
        game_id=game_id,
        index=info.index,
        character_name=info.name,
        user_id=info.user_id,
        is_agent=info.is_agent,
        agent_kind=info.agent_kind,
        persona=info.persona,
    )


def lobby_changed(session: Session, game_id: str) -> None:
    """Stamp a lobby's last change (`bot.service.lobbies`: its idle time counts from it)."""
    session.execute(
        sa.update(m.Game).where(col(m.Game.id) == game_id).values(lobby_active_at=m.utcnow())
    )


def add_seat(session: Session, game_id: str, info: SeatInfo) -> None:
    session.add(_seat_row(game_id, info))
    lobby_changed(session, game_id)


def set_config(session: Session, game_id: str, config: GameConfig) -> None:
    row = session.get(m.Game, game_id)
    assert row is not None
    row.config = config.to_dict()
    row.lobby_active_at = m.utcnow()


def replace_seats(session: Session, game_id: str, seats: Sequence[SeatInfo]) -> None:
    """The lobby's seats are ``seats`` now (someone left: the indices stay dense)."""
    old = session.exec(
        select(m.Seat).where(m.Seat.game_id == game_id).order_by(col(m.Seat.index))
    ).all()
    for row in old:
        session.delete(row)
    session.flush()
    for s in seats:
        session.add(_seat_row(game_id, s))
    lobby_changed(session, game_id)


def begin(
    session: Session,
    game: LiveGame,
    order: Sequence[int],
    state: GameState,
    events: Sequence[Event],
    t: datetime,
) -> None:
    """The game starts: it is running, every seat gets its final index (``order[i]`` is the
    lobby seat that takes seat ``i``) and its role, and the first events are written."""
    row = session.get(m.Game, game.id)
    assert row is not None
    row.status = "running"
    row.started_at = t
    seat_rows = {
        r.index: r for r in session.exec(select(m.Seat).where(m.Seat.game_id == game.id)).all()
    }
    if sorted(seat_rows) != list(range(len(order))):
        raise ServiceError("The seats changed while the game was starting; try again.")
    # (game_id, index) is unique and checked row by row (SQLite and PostgreSQL
    # alike): park every seat on a negative index first, then give the final ones
    for lobby, r in seat_rows.items():
        r.index = -1 - lobby
    session.flush()
    for index, lobby in enumerate(order):
        seat_rows[lobby].index = index
        seat_rows[lobby].role = state.seats[index].role
    session.flush()
    write_events(session, game, None, events)


def abort_lobby(session: Session, game_id: str, reason: str) -> None:
    row = session.get(m.Game, game_id)
    assert row is not None
    row.status = "aborted"
    row.end_reason = reason


def hand_over_seat(
    session: Session, game_id: str, info: SeatInfo, story: dict[str, Any] | None = None
) -> None:
    """A running seat now belongs to ``info``'s person or agent (name and role stay);
    ``story`` (`bot.players.seat_story.handover`) is added to the seat's hand-overs."""
    row = session.exec(
        select(m.Seat).where(m.Seat.game_id == game_id, m.Seat.index == info.index)
    ).one()
    if story is not None:
        row.handovers = [*(row.handovers or []), story]
    row.user_id = info.user_id
    row.is_agent = info.is_agent
    row.agent_kind = info.agent_kind


# --- play ---------------------------------------------------------------------------------


def write_action(
    session: Session,
    game: LiveGame,
    seq: int,
    action: Action,
    events: Sequence[Event],
    platform_id: str | None,
) -> None:
    """Action number ``seq`` of the game's log, every event it caused and their rows."""
    rows.insert(
        session,
        _ACTIONS,
        {
            "game_id": game.id,
            "seq": seq,
            "kind": action_kind(action),
            "payload": action_to_dict(action),
            "t": action.t,
            "client_id": platform_id,
        },
    )
    write_events(session, game, seq, events, platform_id)
    rows.update(session, _GAMES, {"id": game.id}, {"last_seq": seq})


def write_events(
    session: Session,
    game: LiveGame,
    action_seq: int | None,
    events: Sequence[Event],
    client_id: str | None = None,
) -> None:
    """The rows of ``events``: the event log, and the messages, votes, phases, deaths and
    outcome read by exports and reports. Plain rows (`bot.store.rows`): they go out with
    the rest of the group commit, one statement a table."""
    seq = game.event_seq
    phase_seq = game.state.phase.seq if game.state is not None else 1
    for event in events:
        seq += 1
        rows.insert(
            session,
            _EVENTS,
            {
                "game_id": game.id,
                "seq": seq,
                "kind": event.kind,
                "payload": event_to_dict(event),
                "t": event.t,
                "visible_to": None if event.visible_to is None else sorted(event.visible_to),
            },
        )
        if isinstance(event, MessageAccepted):
            _message(
                session, game, event.phase_seq, event.place, event.seat, event.name,
                event.text, event.t, action_seq, client_id,
            )  # fmt: skip
            continue
        if isinstance(event, VoteCast):
            rows.insert(
                session,
                _VOTES,
                {
                    "game_id": game.id,
                    "phase_seq": event.phase_seq,
                    "kind": "night" if event.night else "day",
                    "voter_index": event.voter,
                    "target_index": event.target,
                    "t": event.t,
                    "action_seq": action_seq,
                },
            )
        elif isinstance(event, PhaseStarted):
            phase_seq = event.seq
            rows.insert(
                session,
                _PHASES,
                {
                    "game_id": game.id,
                    "seq": event.seq,
                    "kind": event.phase,
                    "number": event.number,
                    "started_at": event.t,
                    "deadline": event.deadline,
                    "ended_at": None,
                },
            )
        elif isinstance(event, PhaseEnded):
            key = {"game_id": game.id, "seq": event.seq}
            rows.update(session, _PHASES, key, {"ended_at": event.t})
        elif isinstance(event, PlayerEliminated):
            key = {"game_id": game.id, "index": event.seat}
            rows.update(session, _SEATS, key, {"alive": False})
        elif isinstance(event, GameOver):
            outcome = {
                "status": "finished" if event.played_out else "aborted",
                "winner": event.winner,
                "ended_at": event.t,
                "end_reason": event.reason,
            }
            rows.update(session, _GAMES, {"id": game.id}, outcome)
        line = manager_line(event)
        if line is not None and event.place != "booth":
            _message(
                session, game, phase_seq, event.place, None, MANAGER, line, event.t,
                action_seq, None,
            )  # fmt: skip


def _message(
    session: Session,
    game: LiveGame,
    phase_seq: int | None,
    place: str,
    seat: int | None,
    speaker: str,
    text: str,
    t: datetime,
    action_seq: int | None,
    client_id: str | None,
) -> None:
    rows.insert(
        session,
        _MESSAGES,
        {
            "game_id": game.id,
            "phase_seq": phase_seq,
            "place": place,
            "seat_index": seat,
            "speaker": speaker,
            "text": text,
            "t": t,
            "action_seq": action_seq,
            "client_id": client_id,
        },
    )


def history(session: Session, game_id: str) -> list[dict[str, Any]]:
    """Every stored event of a game, as dicts, in order."""
    found = session.exec(
        select(m.Event).where(m.Event.game_id == game_id).order_by(col(m.Event.seq))
    ).all()
    return [dict(r.payload) for r in found]
