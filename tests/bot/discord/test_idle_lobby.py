"""An idle Discord lobby closes by itself and shows it (issue 21)."""

from __future__ import annotations

import time
from pathlib import Path

from bot.limits import LOBBY_IDLE_SECONDS
from tests.bot.discord.harness import Table, bot_stack, db_url_in
from tests.bot.idle import idle_since
from tests.fakes.discord import FakeDiscord


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

        await fake_discord.wait_until(closed, 20.0)


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
        idle_since(bot.service.engine, game_id, 40)
    async with bot_stack(fake_discord, url) as bot:
        assert bot.service.games[game_id].status == "lobby"
        assert await bot.idle_lobbies.sweep() == []  # 40 minutes idle: not yet
        later = time.monotonic() + 21 * 60
        assert await bot.idle_lobbies.sweep(now=later) == [game_id]
        assert bot.service.games[game_id].status == "aborted"

        def closed() -> bool:
            msg = fake_discord.messages.get(int(lobby["id"]))
            return msg is not None and "nobody started it" in str(msg)

        await fake_discord.wait_until(closed, 20.0)
