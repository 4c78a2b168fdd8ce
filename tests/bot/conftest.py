"""Fixtures for the service's tests (a module may define its own ``service`` instead)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from bot.service.port import GameService
from bot.service.timers import make_scheduler


@pytest.fixture
async def scheduler() -> AsyncIterator[Any]:
    """A running scheduler (the service's timers), shut down after the test."""
    sched = make_scheduler()
    sched.start()
    yield sched
    sched.shutdown(wait=False)


@pytest.fixture
async def service(engine: Engine) -> AsyncIterator[GameService]:
    """A service on a fresh database, with a running scheduler; closed after the test."""
    scheduler = make_scheduler()
    scheduler.start()
    svc = GameService(engine, scheduler)
    yield svc
    await svc.close()
    scheduler.shutdown(wait=False)
