from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.ops.metrics import Metrics
from bot.ops.serve import Ops, operations
from bot.runtime import running_service
from bot.settings import Settings


def settings_in(tmp_path: Path) -> Settings:
    return Settings(  # type: ignore[call-arg]
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
