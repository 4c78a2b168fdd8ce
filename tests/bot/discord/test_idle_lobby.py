"""An idle Discord lobby closes by itself and shows it (issue 21)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from bot.limits import LOBBY_IDLE_SECONDS
from tests.bot.discord.harness import Table, bot_stack, db_url_in
from tests.fakes.discord import FakeDiscord


def _idle_since(engine: Any, game_id: str, minutes: float) -> None:
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


async def test_an_idle_lobby_closes_by_itself(fake_discord: FakeDiscord, tmp_path: Path) -> None:
    table = Table.build(fake_discord)
    async with bot_stack(fake_discord, db_url_in(tmp_path)) as bot:
        await table.setup()
        lobby = await table.open()
        game_id = table.game_id(lobby)
        await table.join(table.humans[1], lobby)
        assert await bot.idle_lobbies.sweep() == []
        later = time.monotonic() + LOBBY_IDLE_SECONDS + 1
        assert await bot.idle_lobbies.sweep(now=later) == [game_id]
        assert bot.service.games[game_id].status == "aborted"

        def closed() -> bool:
            msg = fake_discord.messages.get(int(lobby["id"]))
            return msg is not None and "nobody started it" in str(msg)

        await fake_discord.wait_until(closed, 5.0)


async def test_a_lobby_idle_across_a_restart_closes(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    """The idle hour is not given again at each start: a bot restarted more often than
    hourly would otherwise keep every forgotten lobby open for ever."""
    table = Table.build(fake_discord)
    url = db_url_in(tmp_path)
    async with bot_stack(fake_discord, url) as bot:
        await table.setup()
        lobby = await table.open()
        game_id = table.game_id(lobby)
        await table.join(table.humans[1], lobby)
        _idle_since(bot.service.engine, game_id, 40)
    async with bot_stack(fake_discord, url) as bot:
        assert bot.service.games[game_id].status == "lobby"
        assert await bot.idle_lobbies.sweep() == []  # 40 minutes idle: not yet
        later = time.monotonic() + 21 * 60
        assert await bot.idle_lobbies.sweep(now=later) == [game_id]
        assert bot.service.games[game_id].status == "aborted"

        def closed() -> bool:
            msg = fake_discord.messages.get(int(lobby["id"]))
            return msg is not None and "nobody started it" in str(msg)

        await fake_discord.wait_until(closed, 5.0)
