"""`mafiabot run --discord` in a process of its own against the fake Discord: /healthz and
/metrics scraped during a game, JSON logs, then SIGTERM: exit 0 within 10 s, the posts on
their way delivered, and the next start carries the game on."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from sqlmodel import Session, select

from bot.store.db import make_engine
from bot.store.models import Game
from tests.bot.discord.harness import Table, db_url_in, run_env
from tests.bot.ops.scrape import healthz, metrics, value
from tests.fakes.discord import FakeDiscord

ROOT = Path(__file__).resolve().parents[3]
LISTENING = re.compile(r"health and metrics on http://127\.0\.0\.1:(\d+)/healthz")

pytestmark = pytest.mark.slow


class Bot:
    """One `mafiabot run --discord` process and its log (JSON lines)."""

    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc = proc
        self.log = log
        self.base = ""

    def lines(self) -> list[dict[str, object]]:
        text = self.log.read_text(errors="replace")
        return [json.loads(line) for line in text.splitlines() if line.strip()]


@asynccontextmanager
async def bot_process(fake: FakeDiscord, url: str, tmp_path: Path, name: str) -> AsyncIterator[Bot]:
    """A healthy `mafiabot run --discord` process; killed on the way out if still running."""
    log = tmp_path / f"{name}.log"
    env = run_env(fake, url, MAFIABOT_HTTP_ADDR="127.0.0.1:0", MAFIABOT_LOG_FORMAT="json")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "tests" / "bot" / "ops" / "runproc.py"),
        "run",
        "--discord",
        cwd=tmp_path,  # no .env of the repository
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=log.open("wb"),
    )
    bot = Bot(proc, log)
    try:
        port = await fake.wait_until(lambda: LISTENING.search(log.read_text(errors="replace")), 30)
        bot.base = f"http://127.0.0.1:{port[1]}"
        await until_healthy(bot, 30)
    except BaseException:
        proc.kill()
        await proc.wait()
        raise AssertionError(f"{name} never got healthy:\n{log.read_text()}") from None
    try:
        yield bot
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def until_healthy(bot: Bot, within: float) -> None:
    deadline = time.monotonic() + within
    while True:
        assert bot.proc.returncode is None, "the bot exited"
        status, body = await healthz(bot.base)
        if status == 200:
            assert body == {"status": "ok"}
            return
        assert status == 503 and body["status"] == "down", body
        if time.monotonic() > deadline:
            raise TimeoutError(body)
        await asyncio.sleep(0.05)


async def stop(bot: Bot) -> float:
    """SIGTERM; the seconds until the process was gone."""
    started = time.monotonic()
    bot.proc.send_signal(signal.SIGTERM)
    await asyncio.wait_for(bot.proc.wait(), 15)
    return time.monotonic() - started


async def test_health_metrics_during_a_game_then_sigterm_and_resume(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    table = Table.build(fake)
    url = db_url_in(tmp_path)
    alice, bob = table.humans[0], table.humans[1]

    async with bot_process(fake, url, tmp_path, "first") as first:
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

        # a line typed as the stop begins: it is relayed once, by this process or the next
        await table.say(alice, "said as the bot stops")
        took = await stop(first)
    assert first.proc.returncode == 0, first.log.read_text()
    assert took < 10.0
    logged = first.lines()  # every line is one JSON object
    assert all({"time", "level", "logger", "message"} <= set(line) for line in logged)
    assert any("stopping" in str(line["message"]) for line in logged)
    assert fake.token not in first.log.read_text()
    with Session(make_engine(url)) as session:
        assert session.exec(select(Game.status).where(Game.id == game_id)).one() == "running"

    async with bot_process(fake, url, tmp_path, "second") as second:
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
