"""Readiness: ``/healthz`` answers 200 when the database and every platform connection are
up, else 503 with the names of what is down.

A check is a plain callable (sync or async) returning True when its part is up; raising or
taking longer than `CHECK_SECONDS` counts as down. Several checks may share a name (the
Discord connection and the task running it); all must pass.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import sqlalchemy as sa

log = logging.getLogger(__name__)

Check = Callable[[], bool | Awaitable[bool]]
CHECK_SECONDS = 3.0


class Health:
    def __init__(self) -> None:
        self._checks: list[tuple[str, Check]] = []
        #: set when the process is shutting down: no longer ready, whatever the checks say
        self.stopping = False

    def add(self, name: str, check: Check) -> None:
        self._checks.append((name, check))

    async def down(self) -> list[str]:
        """The names of what is down, in the order they were added (empty: ready)."""
        checks = list(self._checks)  # a check added meanwhile (a platform starting) waits
        results = await asyncio.gather(*(self._passes(name, c) for name, c in checks))
        failed = [name for (name, _), ok in zip(checks, results, strict=True) if not ok]
        down = list(dict.fromkeys(failed))
        if self.stopping:
            down.insert(0, "shutting down")
        return down

    @staticmethod
    async def _passes(name: str, check: Check) -> bool:
        try:
            result = check()
            if inspect.isawaitable(result):
                result = await asyncio.wait_for(result, CHECK_SECONDS)
            return bool(result)
        except Exception as exc:
            log.debug("health check %s failed: %r", name, exc)
            return False


def database_check(engine: sa.Engine) -> Check:
    """Up when the database answers ``SELECT 1`` (in a thread: the loop never waits on it)."""

    def ping() -> bool:
        with engine.connect() as conn:
            return conn.execute(sa.text("SELECT 1")).scalar() == 1

    async def check() -> bool:
        return await asyncio.to_thread(ping)

    return check


def writes_check(service: Any) -> Check:
    """Up unless the database is refusing a game's writes right now: a phase's end that could
    not be stored is retried until it is (`GameService._tick`). A ping only reads, and a full
    disk, or a lock another program holds, refuses writes alone."""

    def check() -> bool:
        return not any(
            game.tick_failures and game.state is not None and not game.state.over
            for game in list(service.games.values())
        )

    return check


def discord_check(bot: Any) -> Check:
    """Up when the bot is connected on every shard and has caught up after its start."""

    def check() -> bool:
        shards = getattr(bot, "shards", {})
        return (
            bot.caught_up.is_set()
            and not bot.is_closed()
            and bool(shards)
            and all(not shard.is_closed() for shard in shards.values())
        )

    return check


def task_check(task: asyncio.Task[Any]) -> Check:
    """Up while ``task`` (a platform's transport) is still running."""
    return lambda: not task.done()
