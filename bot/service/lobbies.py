"""Idle lobbies close by themselves: a lobby nobody joined, left, reconfigured or started for
`bot.limits.LOBBY_IDLE_SECONDS` (an hour) is ended through the service, and its platform
shows it closed. Each adapter runs one `IdleLobbies` over its own games, with its own way of
showing a lobby closed (``close``). A lobby's idle time counts from its last change
(`LiveGame.active_at`), stamped in the database too (`bot.store.models.Game.lobby_active_at`),
so a lobby left idle across a restart closes on time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable

from bot.limits import LOBBY_IDLE_SECONDS
from bot.service.port import GameService

log = logging.getLogger(__name__)

#: what the lobby's players are told
REASON = "nobody started it for an hour"
#: seconds between two looks at the lobbies
EVERY = 60.0

Close = Callable[[str, str], Awaitable[None]]


class IdleLobbies:
    def __init__(
        self,
        service: GameService,
        games: Callable[[], Iterable[str]],
        close: Close,
        *,
        idle: float = LOBBY_IDLE_SECONDS,
        every: float = EVERY,
    ) -> None:
        self.service = service
        #: the ids of the games this adapter shows
        self.games = games
        #: ends a lobby on the platform: (game id, reason)
        self.close = close
        self.idle = idle
        self.every = every
        self._task: asyncio.Task[None] | None = None

    async def sweep(self, now: float | None = None) -> list[str]:
        """Close every lobby idle for `idle` seconds; returns their ids."""
        now = time.monotonic() if now is None else now
        closed = []
        for game_id in list(self.games()):
            game = self.service.games.get(game_id)
            if game is None or game.status != "lobby" or now - game.active_at < self.idle:
                continue
            try:
                await self.close(game_id, REASON)
            except Exception:
                log.exception("closing idle lobby %s failed", game_id)
                continue
            closed.append(game_id)
        return closed

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="idle-lobbies")

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            await self.sweep()

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
