"""A game's seats read back from the store, for a game no longer held in memory."""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.service.live import SeatInfo
from bot.store.models import Seat


def seat_infos(engine: Engine, game_id: str) -> list[SeatInfo]:
    """A game's seats from the store, in seat order (the survey after a restart, for
    instance)."""
    with Session(engine) as session:
        rows = session.exec(
            select(Seat).where(Seat.game_id == game_id).order_by(col(Seat.index))
        ).all()
    return [
        SeatInfo(r.index, r.character_name, r.user_id, r.is_agent, r.agent_kind, r.persona)
        for r in rows
    ]
