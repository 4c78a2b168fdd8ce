from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bot.ops.metrics import Metrics
from bot.ops.serve import Ops, operations
from bot.runtime import running_service
from bot.settings import Settings
from bot.slack.app import SlackRunner
from tests.fakes.slack import FakeSlack


def settings_in(tmp_path: Path) -> Settings:
    return Settings(
        _env_file=None,
        database_url=f"sqlite:///{tmp_path / 'db' / 'mafiabot.db'}",
        http_addr="127.0.0.1:0",
    )


@pytest.fixture
async def ops(tmp_path: Path) -> AsyncIterator[Ops]:
    """What `mafiabot run` builds around its adapters: a migrated SQLite database, the service
    (baseline agents) measured into a `Metrics`, and /healthz and /metrics on a free port
    (``base_url(ops)``)."""
    settings = settings_in(tmp_path)
    meter = Metrics()
    async with (
        running_service(settings, metrics=meter) as service,
        operations(settings, service, meter) as running,
    ):
        yield running


def base_url(ops: Ops) -> str:
    assert ops.server is not None
    return f"http://127.0.0.1:{ops.server.port}"


@asynccontextmanager
async def ops_on(db_url: str, **settings: Any) -> AsyncIterator[Ops]:
    """What `mafiabot run` builds around its adapters, on ``db_url``."""
    config = Settings(_env_file=None, database_url=db_url, http_addr="127.0.0.1:0", **settings)
    meter = Metrics()
    async with (
        running_service(config, metrics=meter) as service,
        operations(config, service, meter) as ops,
    ):
        yield ops


@asynccontextmanager
async def slack_serving(
    ops: Ops, fake: FakeSlack, *, http_port: int | None = None
) -> AsyncIterator[SlackRunner]:
    runner = SlackRunner(ops.settings, ops.service, base_url=fake.base_url)
    ops.watch_slack(runner)
    await runner.prepare()
    task = asyncio.create_task(runner.serve(http_port=http_port, host="127.0.0.1"))
    try:
        yield runner
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await runner.close()
