"""`mafiabot run --slack` (Socket Mode) in a process of its own against the fake Slack:
/healthz and /metrics scraped during a game, then SIGTERM: exit 0 within 10 s, and the next
start carries the game on, relaying what was typed while the bot was stopping."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

import pytest
from sqlmodel import Session, select

from bot.protection.consent import record_consent
from bot.store.db import make_engine
from bot.store.models import Game
from tests.bot.ops.process import Bot, bot_process, stop, until_down, until_healthy
from tests.bot.ops.scrape import metrics, value
from tests.bot.ops.slack_people import People
from tests.fakes.slack import FakeSlack

pytestmark = pytest.mark.slow

T = TypeVar("T")


@asynccontextmanager
async def slack_bot(fake: FakeSlack, url: str, tmp_path: Path, name: str) -> AsyncIterator[Bot]:
    env = {
        "MAFIABOT_DATABASE_URL": url,
        "MAFIABOT_SLACK_BOT_TOKEN": fake.bot_token,
        "MAFIABOT_SLACK_APP_TOKEN": fake.app_token,
        "MAFIABOT_SLACK_API_URL": fake.base_url,
    }
    async with bot_process(["--slack"], env, tmp_path, name) as bot:
        yield bot


async def eventually(probe: Callable[[], Awaitable[T | None]], within: float) -> T:
    deadline = time.monotonic() + within
    while (found := await probe()) is None:
        assert time.monotonic() < deadline, "never happened"
        await asyncio.sleep(0.05)
    return found


async def test_slack_health_metrics_during_a_game_then_sigterm_and_resume(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    fake = fake_slack
    url = f"sqlite:///{tmp_path / 'db' / 'mafiabot.db'}"
    people = People(fake)
    alice, bob = people.users[0], people.users[1]

    async with slack_bot(fake, url, tmp_path, "first") as first:
        engine = make_engine(url)  # migrated by the bot at its start
        for u in people.users:
            record_consent(engine, "slack", fake.team_id, u.id, True)
        before = await metrics(first.base)
        game_id = await people.play()
        fake.rate_limit("chat.postMessage", retry_after=1)  # Slack's Retry-After: 1 s
        await people.say(alice, "a line under a rate limit")
        await people.wait_line("a line under a rate limit")
        await people.say(bob, "and another one")
        await people.wait_line("and another one")

        # the fake holds a line as soon as it is posted; the bot sees Slack's answer a moment
        # later, which is when the line's relay time is taken
        async def relayed() -> dict[tuple[str, tuple[tuple[str, str], ...]], float] | None:
            found = await metrics(first.base)
            timed = value(found, "mafiabot_relay_seconds_count", platform="slack")
            return found if timed >= 2 else None

        during = await eventually(relayed, 10)
        assert value(during, "mafiabot_games", status="running") == 1
        assert value(during, "mafiabot_players", kind="human") == 5
        assert value(during, "mafiabot_players", kind="agent") == 1
        assert value(during, "mafiabot_lines_total", place="stage") >= 2
        assert value(during, "mafiabot_relay_seconds_count", platform="slack") >= 2
        # the line that waited out the rate limit took at least that second to go out
        assert value(during, "mafiabot_relay_seconds_sum", platform="slack") >= 1.0
        assert value(during, "mafiabot_rate_limit_waits_total", platform="slack") >= 1
        assert value(during, "mafiabot_rate_limit_wait_seconds_total", platform="slack") >= 0.9
        assert value(during, "mafiabot_db_write_seconds_count") > value(
            before, "mafiabot_db_write_seconds_count"
        )
        assert value(during, "mafiabot_event_loop_lag_seconds_count") > 0

        # Slack's websocket goes away: not ready until the bot is connected again
        await fake.hub.hold()
        await until_down(first, ["slack"], 10)
        fake.hub.release()
        await until_healthy(first, 120)

        took = await stop(first)
        # typed while no bot is connected: only in the booth's history (Slack has nobody to
        # deliver the event to), read back from there at the next start
        people.typed_offline(alice, "said while the bot was stopped")
    assert first.proc.returncode == 0, first.log.read_text()
    assert took < 10.0
    assert not fake.hub.connected  # the websocket was closed
    logged = first.lines()  # every line is one JSON object
    assert all({"time", "level", "logger", "message"} <= set(line) for line in logged)
    assert any("stopping" in str(line["message"]) for line in logged)
    text = first.log.read_text()
    assert fake.bot_token not in text and fake.app_token not in text
    with Session(engine) as session:
        assert session.exec(select(Game.status).where(Game.id == game_id)).one() == "running"

    async with slack_bot(fake, url, tmp_path, "second") as second:
        assert value(await metrics(second.base), "mafiabot_games", status="running") == 1
        await people.wait_line("said while the bot was stopped")
        await people.say(bob, "after the restart")
        await people.wait_line("after the restart")
        took = await stop(second)
    assert second.proc.returncode == 0, second.log.read_text()
    assert took < 10.0
    posted = people.stage_lines()
    for line in (
        "a line under a rate limit",
        "said while the bot was stopped",
        "after the restart",
    ):
        assert posted.count(line) == 1, posted
    engine.dispose()
