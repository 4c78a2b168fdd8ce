"""`mafiabot run --discord` in a process of its own against the fake Discord: /healthz and
/metrics scraped during a game, JSON logs, then SIGTERM: exit 0 within 10 s, the posts on
their way delivered, and the next start carries the game on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from sqlmodel import Session, select

from bot.store.db import make_engine
from bot.store.models import Game
from tests.bot.discord.harness import Table, db_url_in
from tests.bot.ops.process import Bot, bot_process, stop, until_down, until_healthy
from tests.bot.ops.scrape import metrics, value
from tests.fakes.discord import FakeDiscord

pytestmark = pytest.mark.slow


@asynccontextmanager
async def discord_bot(fake: FakeDiscord, url: str, tmp_path: Path, name: str) -> AsyncIterator[Bot]:
    env = {
        "FAKE_DISCORD_API": fake.api_base,
        "FAKE_DISCORD_WS": fake.ws_url,
        "MAFIABOT_DATABASE_URL": url,
        "MAFIABOT_DISCORD_TOKEN": fake.token,
        "MAFIABOT_DISCORD_AFK_REMINDER_MINUTES": "0",
    }
    async with bot_process(["--discord"], env, tmp_path, name) as bot:
        yield bot


async def test_health_metrics_during_a_game_then_sigterm_and_resume(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    table = Table.build(fake)
    url = db_url_in(tmp_path)
    alice, bob = table.humans[0], table.humans[1]

    async with discord_bot(fake, url, tmp_path, "first") as first:
        before = await metrics(first.base)
        game_id = await table.play(day_minutes=30.0)
        fake.rate_limit("POST /webhooks/{webhook_id}/{webhook_token}", retry_after=0.2)
        await table.say(alice, "a line under a rate limit")
        await table.wait_post("a line under a rate limit", within=15)
        await table.say(bob, "and another one")
        await table.wait_post("and another one", within=15)

        during = await metrics(first.base)
        assert value(during, "mafiabot_games", status="running") == 1
        assert value(during, "mafiabot_players", kind="human") == 5
        assert value(during, "mafiabot_players", kind="agent") == 1
        assert value(during, "mafiabot_lines_total", place="stage") >= 2
        assert value(during, "mafiabot_relay_seconds_count", platform="discord") >= 2
        assert value(during, "mafiabot_rate_limit_waits_total", platform="discord") == 1
        assert value(during, "mafiabot_rate_limit_wait_seconds_total", platform="discord") >= 0.2
        assert value(during, "mafiabot_db_write_seconds_count") > value(
            before, "mafiabot_db_write_seconds_count"
        )
        assert value(during, "mafiabot_event_loop_lag_seconds_count") > 0

        # Discord's gateway goes away: not ready until the bot has resumed its session
        await fake.hold_gateway()
        await until_down(first, ["discord"], 10)
        fake.release_gateway()
        await until_healthy(first, 120)

        # a line typed as the stop begins: it is relayed once, by this process or the next
        await table.say(alice, "said as the bot stops")
        took = await stop(first)
    assert first.proc.returncode == 0, first.log.read_text()
    assert took < 10.0
    await fake.wait_until(lambda: not fake.connections, 5)  # the gateway was closed
    logged = first.lines()  # every line is one JSON object
    assert all({"time", "level", "logger", "message"} <= set(line) for line in logged)
    assert any("stopping" in str(line["message"]) for line in logged)
    assert fake.token not in first.log.read_text()
    with Session(make_engine(url)) as session:
        assert session.exec(select(Game.status).where(Game.id == game_id)).one() == "running"

    async with discord_bot(fake, url, tmp_path, "second") as second:
        assert value(await metrics(second.base), "mafiabot_games", status="running") == 1
        await table.say(bob, "after the restart")
        await table.wait_post("after the restart", within=15)
        await table.wait_post("said as the bot stops", within=15)
        took = await stop(second)
    assert second.proc.returncode == 0, second.log.read_text()
    assert took < 10.0
    posted = [e.content for e in table.stage_posts() if e.username in table.names.values()]
    for text in ("a line under a rate limit", "said as the bot stops", "after the restart"):
        assert posted.count(text) == 1, posted
