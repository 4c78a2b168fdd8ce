"""Ageing a lobby in the store, for the idle-lobby tests of both platforms."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa


def idle_since(engine: Any, game_id: str, minutes: float) -> None:
    """Date every change of lobby ``game_id`` ``minutes`` back, as if that long had passed
    (with the bot stopped for some of it)."""
    past = datetime.now(UTC) - timedelta(minutes=minutes)
    games = sa.table("games", sa.column("id"), sa.column("created_at"))
    seats = sa.table("seats", sa.column("game_id"), sa.column("joined_at"))
    names = {c["name"] for c in sa.inspect(engine).get_columns("games")}
    with engine.begin() as conn:
        conn.execute(sa.update(games).where(games.c.id == game_id).values(created_at=past))
        conn.execute(sa.update(seats).where(seats.c.game_id == game_id).values(joined_at=past))
        if "lobby_active_at" in names:
            conn.execute(
                sa.text("UPDATE games SET lobby_active_at = :t WHERE id = :g"),
                {"t": past.replace(tzinfo=None), "g": game_id},
            )
