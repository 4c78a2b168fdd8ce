"""Several bot processes on one database: which shards a process serves, and which games it
drives.

Discord splits a bot's servers into *shards* by ``(guild_id >> 22) % shard_count``; a process
started with ``--shards 0-3 --shard-count 8`` connects only shards 0 to 3 (discord.py's
``AutoShardedClient(shard_ids=..., shard_count=...)``) and so only hears about the servers in
them. Every process reads the same database, so each also filters what it takes from it: it
resumes and takes over only the games of servers in its own shards (`Shards.has`).

Within its shards, a process drives only the games whose lease it holds (`bot.service.lease`).
During
a rolling restart two processes serve the same shards and both receive every gateway event;
the one that does not hold a game stays silent about it: no answer to a click, no relayed
line, no post, no write (`Handover.claim` says False, and the event is dropped before any
handler runs). The other process's games are taken over as soon as nobody holds them:

- on an event for the game (a click, a slash command in its channel) that came after its
  driver let go: `claim` takes the lease there and then (an event that came while the other
  process still drove the game was that process's to answer, even if it stopped since);
- otherwise within `WATCH_SECONDS`: once `Handover.start` ran, `Handover.sweep` looks for
  open games of our shards that nobody holds (the old process released its leases on SIGTERM,
  or it was killed: its leases expire, at once when it ran on this machine).

Taking a game over is what a restart does for it: the room is rebuilt from the database, the
service replays the log and arms the phase deadline (only the holder ever arms it), and the
booths are read back from their watermark, so a line typed during the handover is relayed
once. A game opened during the overlap gets its lease when it is created, by whichever
process answered the ``/mafia new`` (Discord accepts only the first answer to an
interaction, so the other process's answer fails and it creates nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.discord.links import GameRow, LinkStore
from bot.service.port import GameService
from bot.table.links import OPEN

log = logging.getLogger(__name__)

#: how often a process looks for games of its shards that nobody drives (seconds)
WATCH_SECONDS = 2.0
#: the most shards a bot may be split into (far more than Discord ever asks for)
MAX_SHARDS = 65_536


def parse_shards(text: str, count: int | None) -> list[int]:
    """``"0-3"``, ``"5"`` or ``"0,2,4-6"`` -> the shard ids, ascending; a ValueError says in
    one line what is wrong (a reversed range, an id not below ``count``, no count at all)."""
    if count is None:
        raise ValueError("needs a shard count (--shard-count / MAFIABOT_DISCORD_SHARD_COUNT)")
    ids: set[int] = set()
    for part in text.replace(" ", "").split(","):
        first, dash, last = part.partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise ValueError(f"{part or text!r} is not a shard id or a range like 0-3")
        low, high = int(first), int(last) if dash else int(first)
        if low > high:
            raise ValueError(f"the range {part} runs backwards (write {high}-{low})")
        if high >= count:
            raise ValueError(
                f"shard {high} does not exist with a shard count of {count} "
                f"(shards are 0 to {count - 1})"
            )
        ids.update(range(low, high + 1))
    return sorted(ids)


def shard_of(guild_id: int, count: int) -> int:
    """The shard a server's events come through (Discord's formula)."""
    return (guild_id >> 22) % count


@dataclass(frozen=True)
class Shards:
    """The shards this process serves: ``ids`` None means all of them."""

    ids: tuple[int, ...] | None = None
    count: int | None = None

    def has(self, guild_id: int | str | None) -> bool:
        if self.ids is None or not self.count:
            return True
        try:
            return shard_of(int(guild_id or 0), self.count) in self.ids
        except ValueError:
            return False

    def describe(self) -> str:
        if self.ids is None:
            return "all shards" if not self.count else f"all {self.count} shards"
        return f"shards {','.join(map(str, self.ids))} of {self.count}"


#: takes a game over in this process: True once it drives it, False when another holds it
Take = Callable[[GameRow], Coroutine[Any, Any, bool]]


class Handover:
    """Which games this process drives; takes over those nobody drives."""

    def __init__(
        self,
        service: GameService,
        links: LinkStore,
        shards: Shards,
        take: Take,
        every: float = WATCH_SECONDS,
    ) -> None:
        self.service = service
        self.links = links
        self.shards = shards
        self.take = take
        self.every = every
        self._taking: dict[str, asyncio.Task[bool]] = {}
        self._watcher: asyncio.Task[None] | None = None

    async def claim(self, game_id: str, at: datetime | None = None) -> bool:
        """Whether this process should handle an event about ``game_id`` (that Discord took
        at ``at``): it drives the game (taking it over if nobody does), or the game is not
        open (any process may answer that it is over). False: another process drives it, or
        drove it when the event came (that process received the event too, and answered it
        before it let go), so stay silent."""
        if game_id in self.service.games:
            return True
        if self.service.closing:  # stopping: take nothing new on
            return False
        row = await self.links.game(game_id)
        if row is None or row.status not in OPEN:
            return True
        if not self.shards.has(row.guild_id):
            return False
        if at is not None:
            held = await self.links.lease_until(game_id)
            if held is not None and held[0] != self.service.ownership.holder.token and held[1] > at:
                return False  # (the watcher takes the game over once its driver lets go)
        return await self._take(row)

    async def _take(self, row: GameRow) -> bool:
        """One takeover per game at a time (a click and the watcher may ask together)."""
        task = self._taking.get(row.id)
        if task is None:
            task = asyncio.create_task(self.take(row), name=f"mafiabot:take {row.id}")
            self._taking[row.id] = task
            task.add_done_callback(lambda _: self._taking.pop(row.id, None))
        return await asyncio.shield(task)

    async def sweep(self) -> list[str]:
        """Take over every open game of our shards that nobody drives; their ids."""
        if self.service.closing:
            return []
        taken = []
        for row in await self.links.free_games(self.service.ownership.holder):
            if row.id in self.service.games or not self.shards.has(row.guild_id):
                continue
            if await self._take(row):
                taken.append(row.id)
        return taken

    def start(self) -> None:
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.create_task(self._watch(), name="mafiabot:handover")

    async def _watch(self) -> None:
        while not self.service.closing:
            await asyncio.sleep(self.every)
            try:
                taken = await self.sweep()
            except Exception as exc:  # the database away: try again next round
                log.warning("could not look for games to take over: %r", exc)
                continue
            if taken:
                log.info("took over %d game(s): %s", len(taken), ", ".join(taken))

    async def close(self) -> None:
        tasks = [t for t in (self._watcher, *self._taking.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
