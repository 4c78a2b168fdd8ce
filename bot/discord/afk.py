"""Noticing humans who went quiet: a reminder in their booth, then (optionally) an agent.

Silence is counted in game time and only while the seat could act: by day for every living
player, at night only for the mafia (bystanders have nothing to do at night, so a night never
makes anyone "away"). Anything the person does resets it: a line, a vote, a night action.

Missed votes need nothing here: the engine counts a living player who did not vote as an
abstention. With automatic takeover on (``afk_takeover_minutes`` > 0, per server), a seat
silent that long is handed to an agent through `GameService.replace_seat`, which emits no
event: the table is not told.

One task checks every game each ``afk_tick_seconds``; the check is a few dictionary lookups per
human seat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime
from typing import TYPE_CHECKING

from bot.discord.rooms import Room
from games.roles import get_role
from games.state import PhaseKind

if TYPE_CHECKING:
    from bot.discord.app import MafiaBot

log = logging.getLogger(__name__)


class AfkWatch:
    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot
        self.silent: dict[tuple[str, int], float] = {}
        self.reminded: set[tuple[str, int]] = set()
        self._last: dict[str, datetime] = {}
        self._task: asyncio.Task[None] | None = None

    def touch(self, game_id: str, seat: int) -> None:
        key = (game_id, seat)
        if key in self.silent:
            self.silent[key] = 0.0
        self.reminded.discard(key)

    def forget(self, game_id: str) -> None:
        for key in [k for k in self.silent if k[0] == game_id]:
            del self.silent[key]
            self.reminded.discard(key)
        self._last.pop(game_id, None)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="mafiabot-afk")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.bot.options.afk_tick_seconds)
            try:
                await self.tick()
            except Exception:
                log.exception("AFK check failed")

    async def tick(self) -> None:
        for room in list(self.bot.rooms.rooms.values()):
            if room.started and not room.ended:
                await self._check(room)

    async def _check(self, room: Room) -> None:
        game = self.bot.service.games.get(room.game_id)
        if game is None or game.state is None or game.state.over:
            return
        state = game.state
        now = game.clock.now()
        last = self._last.get(room.game_id, now)
        self._last[room.game_id] = now
        elapsed = max(0.0, (now - last).total_seconds())
        remind = 60.0 * room.afk.get("reminder_minutes", self.bot.options.afk_reminder_minutes)
        takeover = 60.0 * room.afk.get("takeover_minutes", self.bot.options.afk_takeover_minutes)
        kind = state.phase.kind
        for seat in sorted(room.humans):
            key = (room.game_id, seat)
            if seat not in room.alive:
                self.silent.pop(key, None)
                continue
            mafia = get_role(room.roles.get(seat, "bystander")).team == "mafia"
            counts = kind.is_day or (kind in (PhaseKind.NIGHT, PhaseKind.NIGHT_VOTE) and mafia)
            silent = self.silent.get(key, 0.0) + (elapsed if counts else 0.0)
            self.silent[key] = silent
            if takeover > 0 and silent >= takeover:
                self.silent.pop(key, None)
                self.reminded.discard(key)
                await self.bot.actions.takeover(room, seat, why="afk")
            elif remind > 0 and silent >= remind and key not in self.reminded:
                self.reminded.add(key)
                minutes = round(silent / 60)
                extra = (
                    f" If you stay away, an agent takes over your seat after {takeover / 60:g} "
                    "minutes."
                    if takeover > 0
                    else ""
                )
                self.bot.renderer.booth(
                    room,
                    seat,
                    f"Still there? You've been quiet for about {max(1, minutes)} minute(s). "
                    f"Type here to talk; if you don't vote, you abstain.{extra}",
                )
