"""Ordered, never-dropping delivery to Discord, one queue per destination.

Everything the bot posts goes through an :class:`Outbox` under a *key* (the stage of a game,
one booth, the graveyard...). Jobs under one key are sent strictly one after another, in the order
they were queued; different keys run concurrently, so a slow or rate-limited booth never holds
up the stage of another game.

Rate limits and Discord outages never drop a message: discord.py already waits out 429s, and
whatever still fails with a 429, a 5xx or a network error is retried here with a capped
backoff until it goes through. Only permanent failures (a deleted channel, a missing
permission) leave the queue, through the fault handler, which reports them.

Consecutive Game-Manager lines for the same place are merged into one message when they pile
up (``merge=True``): during a busy vote this turns a burst of "X voted for Y" lines into one
post instead of eating the channel's rate limit, and costs nothing when the queue is empty.
Only jobs of the same ``group`` merge: a booth queue carries both the booth's own notes and
the den's lines, which are sent by different rules (a den line is dropped once the seat has
changed hands), so a note must never ride along inside a den job.

Where players' lines share a queue with the Game-Manager's posts (the stage; a booth that
carries den talk), the queue is a `bot.limits.FairQueue`: the Game-Manager's posts go before
any player's line, and players' lines are taken one seat at a time in turn (``lane``: the
speaking seat), so a flooding seat's backlog delays another seat's line by one post at most.

A worker task exists only while its queue is non-empty, so thousands of idle booths cost no
tasks at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field

import aiohttp
import discord

from bot.discord.sanitize import MAX_CONTENT
from bot.limits import STAGE_INTERVAL, FairQueue

log = logging.getLogger(__name__)


@dataclass
class Job:
    """One post. ``send`` receives the text to post (``text``, or several merged lines)."""

    send: Callable[[str], Awaitable[object]]
    text: str = ""
    merge: bool = False
    #: jobs merge only with neighbours of the same group (see the module docstring)
    group: str = ""
    #: for fault reports: which game and which place ("stage", "booth", "graveyard", ...)
    game_id: str | None = None
    place: str = ""
    seat: int | None = None
    #: a player's line: the speaking seat (taken round-robin); None: the Game-Manager's post,
    #: which goes before any player's line
    lane: Hashable | None = None
    queued_at: float = field(default_factory=time.perf_counter)
    #: called after the job (and anything merged into it) went out, or was given up
    on_done: list[Callable[[], None]] = field(default_factory=list)


FaultHandler = Callable[[Job, BaseException], Awaitable[None]]


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, discord.HTTPException):
        return exc.status == 429 or exc.status >= 500
    return isinstance(exc, aiohttp.ClientError | OSError | asyncio.TimeoutError)


class Outbox:
    def __init__(
        self,
        on_fault: FaultHandler,
        *,
        max_backoff: float = 30.0,
        base_backoff: float = 0.5,
        lane_interval: float = STAGE_INTERVAL,
    ) -> None:
        self._on_fault = on_fault
        #: players' lines under one key are spaced this far apart (the webhook's rate limit)
        self.lane_interval = lane_interval
        self._lane_sent: dict[str, float] = {}
        self._queues: dict[str, FairQueue[Job]] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self.max_backoff = max_backoff
        self.base_backoff = base_backoff
        self.sent = 0
        self.retried = 0
        self.failed = 0
        self._closed = False

    def put(self, key: str, job: Job) -> None:
        if self._closed:
            return
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = FairQueue()
        queue.append(job, job.lane)
        if key not in self._tasks:
            self._tasks[key] = asyncio.create_task(self._run(key, queue), name=f"outbox:{key}")

    def pending(self, key: str | None = None) -> int:
        if key is not None:
            return len(self._queues.get(key, ()))
        return sum(len(q) for q in self._queues.values())

    async def _run(self, key: str, queue: FairQueue[Job]) -> None:
        try:
            while queue:
                job = queue.popleft()
                if job.merge:
                    while (
                        (head := queue.peek_same()) is not None
                        and head.merge
                        and head.group == job.group
                        and len(job.text) + 1 + len(head.text) <= MAX_CONTENT
                    ):
                        nxt = queue.pop_same()
                        job.text = f"{job.text}\n{nxt.text}"
                        job.on_done.extend(nxt.on_done)
                if job.lane is not None and self.lane_interval > 0:
                    last = self._lane_sent.get(key)
                    wait = 0.0 if last is None else last + self.lane_interval - time.monotonic()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    self._lane_sent[key] = time.monotonic()
                await self._deliver(job)
        finally:
            # No await between the loop's last check and here: nothing can have been queued.
            self._tasks.pop(key, None)
            if not queue and self._queues.get(key) is queue:
                del self._queues[key]
                self._lane_sent.pop(key, None)

    async def _deliver(self, job: Job) -> None:
        attempt = 0
        try:
            while True:
                try:
                    await job.send(job.text)
                    self.sent += 1
                    return
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    if is_transient(exc) and not self._closed:
                        attempt += 1
                        self.retried += 1
                        delay = min(self.max_backoff, self.base_backoff * 2 ** min(attempt, 10))
                        log.warning(
                            "retrying a %s post of game %s in %.1fs (%s)",
                            job.place,
                            job.game_id,
                            delay,
                            exc,
                        )
                        await asyncio.sleep(delay * (0.75 + random.random() / 2))
                        continue
                    self.failed += 1
                    try:
                        await self._on_fault(job, exc)
                    except Exception:
                        log.exception("fault handler failed")
                    return
        finally:
            for callback in job.on_done:
                try:
                    callback()
                except Exception:
                    log.exception("outbox callback failed")

    async def drain(self, key: str | None = None) -> None:
        """Wait until the queue (one key, or all) is empty and its posts are out."""
        while True:
            tasks = (
                [self._tasks[key]]
                if key is not None and key in self._tasks
                else list(self._tasks.values())
                if key is None
                else []
            )
            if not tasks:
                return
            await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self) -> None:
        self._closed = True
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._queues.clear()
