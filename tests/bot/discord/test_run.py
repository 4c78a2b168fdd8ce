"""`run_discord`: what ``mafiabot run --discord`` runs, against the fake Discord."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from bot.discord.app import run_discord
from bot.settings import Settings, SettingsError
from tests.bot.discord.harness import Table, db_url_in
from tests.fakes.discord import FakeDiscord


def settings_for(tmp_path: Path, token: str | None) -> Settings:
    return Settings(_env_file=None, database_url=db_url_in(tmp_path), discord_token=token)


async def test_run_discord_serves_commands_until_cancelled(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    task = asyncio.create_task(run_discord(settings_for(tmp_path, fake_discord.token)))
    try:
        await fake_discord.wait_ready(within=60)
        await fake_discord.wait_until(lambda: fake_discord.global_commands, 15)
        assert [c["name"] for c in fake_discord.global_commands] == ["mafia"]
        await asyncio.sleep(2.5)  # discord.py waits for the guilds before on_ready
        assert "every permission" in await table.setup()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert (tmp_path / "db" / "mafiabot.db").exists()


async def test_run_discord_explains_a_missing_or_wrong_token(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    with pytest.raises(SettingsError, match="MAFIABOT_DISCORD_TOKEN is not set"):
        await run_discord(settings_for(tmp_path, None))
    with pytest.raises(SettingsError, match="refused MAFIABOT_DISCORD_TOKEN"):
        await run_discord(settings_for(tmp_path, "not-the-token"))
