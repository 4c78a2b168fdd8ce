"""Alerts: a problem a person must act on (a deadline the database refuses to store), said once,
in one line, to the game's host (a DM on Discord and Slack, stderr in the terminal) and to the
log; and the service's other work that nobody waits for (stopping a lost game's agents).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Protocol

from bot.service.live import LiveGame

log = logging.getLogger("bot.service.port")
#: problems someone must act on, one line each (the CLI prints this logger on stderr)
alert_log = logging.getLogger("bot.service.alerts")


class AlertSink(Protocol):
    """Where a problem a person must act on goes (the game's host): called once per problem,
    with one line of text (without the game's id: ``game`` says which)."""

    async def on_alert(self, game: LiveGame, message: str) -> None: ...


class Alerts:
    """The alert sinks, and the tasks started in the background (cancelled by `cancel`)."""

    def __init__(self) -> None:
        self._sinks: list[AlertSink] = []
        self._tasks: set[asyncio.Task[None]] = set()

    def add(self, sink: AlertSink) -> None:
        self._sinks.append(sink)

    def alert(self, game: LiveGame, message: str) -> None:
        alert_log.error("Game %s: %s", game.id, message)
        for sink in self._sinks:
            self.background(sink.on_alert(game, message), "alert")

    def background(self, work: Awaitable[None], what: str) -> None:
        """Run ``work`` without waiting for it; a failure is logged."""

        async def run() -> None:
            try:
                await work
            except Exception:
                log.exception("%s failed", what)

        task = asyncio.create_task(run(), name=f"mafiabot:{what}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def cancel(self) -> None:
        for task in list(self._tasks):
            task.cancel()
