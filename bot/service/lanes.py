"""Ordered delivery, one lane per destination: the one delivery queue of the bot.

A `Lanes` holds one queue per *key* (a destination: a subscriber of the service, the stage of
a Discord game, one Slack conversation...). Jobs under one key are sent strictly one after
another by that key's worker; different keys run concurrently, so a slow or rate-limited
destination never holds up another. A worker task exists only while its key has work, so
thousands of idle destinations cost no tasks at all.

Each key's queue is a `bot.limits.FairQueue`: a job put with ``lane`` None (the
Game-Manager's announcements and menus, anything of the bot's own) goes before every
player's line; players' lines (``lane``: the speaking seat) are taken one seat at a time in
turn, each seat's in its order. So a flooding seat's backlog delays another seat's line by
one post at most, and never delays the Game-Manager.

What differs between destinations is a `Policy`, passed in:

- *pacing*: how many posts a destination takes how fast (`Pace`: a token bucket per key for
  the jobs it applies to). The worker waits for the pace *before* it chooses the next job,
  so whatever arrives during the wait (an announcement, another seat's first line) is
  chosen at the moment the post can go out, not behind the one that happened to be first;
- *retries*: after a failed send, how long to wait before the same job is tried again, or
  None to give it up (`Policy.retry_in`). A retried job keeps its place: nothing overtakes
  it, nothing is dropped while the policy says to wait.

A job given up goes to ``on_error``; a job cut off by `close` (in flight or still queued)
goes to ``on_drop``. Optionally ``merge`` joins queued neighbours of one seat (or of the
Game-Manager) into the job just taken (Discord merges piled-up Game-Manager lines).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from bot.limits import FairQueue

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)
J = TypeVar("J")


class Policy(Generic[J]):
    """Pacing and retries for one kind of destination. This base paces nothing and retries
    nothing (a failed job is given up at once)."""

    def wait(self, key: Hashable, job: J, now: float, behind: int) -> float:
        """Seconds ``job`` must still wait before it may go to ``key`` (0: it may go now).
        ``behind``: how many more lines of the same seat are queued after it (a backlog)."""
        return 0.0

    def spend(self, key: Hashable, job: J, now: float) -> None:
        """``job`` is sent (or tried again) to ``key`` now."""

    def forget(self, key: Hashable) -> None:
        """``key``'s queue is empty and its worker gone."""

    def retry_in(self, job: J, exc: Exception, attempt: int) -> float | None:
        """After the ``attempt``-th failure of ``job``: seconds to wait before trying it
        again, or None to give it up."""
        return None


class Pace:
    """A token bucket per key: ``burst`` posts at once, then one every ``1 / rate`` seconds.
    ``burst`` 1 spaces posts evenly. A key whose lane was forgotten starts full again only
    once the bucket would have refilled anyway (the time of its last post is kept)."""

    def __init__(self, burst: float, rate: float) -> None:
        if burst < 1 or rate <= 0:
            raise ValueError("a pace needs a burst of at least 1 and a positive rate")
        self.burst = float(burst)
        self.rate = float(rate)
        #: key -> (tokens, when they were counted)
        self._buckets: dict[Hashable, tuple[float, float]] = {}

    def _tokens(self, key: Hashable, now: float) -> float:
        tokens, at = self._buckets.get(key, (self.burst, now))
        return min(self.burst, tokens + (now - at) * self.rate)

    def wait(self, key: Hashable, now: float, reserve: float = 0.0) -> float:
        """Seconds until a post may go, keeping ``reserve`` posts of the burst back (for
        whoever has no backlog)."""
        need = min(self.burst, 1.0 + reserve)
        tokens = self._tokens(key, now)
        return 0.0 if tokens >= need else (need - tokens) / self.rate

    def forget(self, key: Hashable) -> None:
        """``key`` starts full again (its lane went idle)."""
        self._buckets.pop(key, None)

    def spend(self, key: Hashable, now: float) -> None:
        self._buckets[key] = (self._tokens(key, now) - 1.0, now)
        if len(self._buckets) > 4096:
            # full buckets carry nothing: drop them so the map stays small
            for k in [k for k in self._buckets if self._tokens(k, now) >= self.burst]:
                del self._buckets[k]


@dataclass(slots=True)
class _Entry(Generic[J]):
    job: J
    lane: Hashable | None


class Lanes(Generic[K, J]):
    """One ordered, fair queue and (while it has work) one worker per key.

    ``send`` delivers one job (raising on failure); ``policy`` paces and retries;
    ``on_error(job, exc)`` hears of a job given up (default: logged); ``on_drop(job)`` of a
    job never sent because the lanes were closed; ``merge(job, head)`` may absorb ``head``,
    the next job of the same seat, into ``job`` (True: it did, ``head`` leaves the queue)."""

    def __init__(
        self,
        send: Callable[[J], Awaitable[object]],
        *,
        policy: Policy[J] | None = None,
        on_error: Callable[[J, Exception], Awaitable[None]] | None = None,
        on_drop: Callable[[J], None] | None = None,
        merge: Callable[[J, J], bool] | None = None,
        name: str = "lane",
    ) -> None:
        self._send = send
        self.policy: Policy[J] = policy if policy is not None else Policy()
        #: the policy never holds a job back (the base `Policy.wait`): nothing to ask, and no
        #: count of each seat's jobs to keep for it
        self._unpaced = type(self.policy).wait is Policy.wait
        #: the policy keeps no account of what is sent (the base `Policy.spend`)
        self._spends = type(self.policy).spend is not Policy.spend
        self._on_error = on_error
        self._on_drop = on_drop
        self._merge = merge
        self.name = name
        self._queues: dict[K, FairQueue[_Entry[J]]] = {}
        #: (key, seat) -> that seat's jobs queued under key
        self._counts: dict[tuple[K, Hashable], int] = {}
        self._tasks: dict[K, asyncio.Task[None]] = {}
        #: set when something is queued for a key whose worker may be waiting for its pace
        self._news: dict[K, asyncio.Event] = {}
        self.closed = False
        self.sent = 0
        self.retried = 0
        self.failed = 0

    def put(self, key: K, job: J, lane: Hashable | None = None) -> bool:
        """Queue ``job`` for ``key`` (``lane``: the speaking seat of a player's line, None:
        the bot's own post, which goes first). False when the lanes are closed (nothing is
        queued)."""
        if self.closed:
            return False
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = FairQueue()
        queue.append(_Entry(job, lane), lane)
        if not self._unpaced:  # (what `_paced` looks at)
            if lane is not None:
                self._counts[(key, lane)] = self._counts.get((key, lane), 0) + 1
            news = self._news.get(key)
            if news is not None:
                news.set()
        if key not in self._tasks:
            self._tasks[key] = asyncio.create_task(self._run(key, queue), name=f"{self.name}:{key}")
        return True

    def pending(self, key: K | None = None) -> int:
        """Jobs queued and not yet taken (for ``key``, or everywhere)."""
        if key is not None:
            queue = self._queues.get(key)
            return len(queue) if queue is not None else 0
        return sum(len(q) for q in self._queues.values())

    def busy(self) -> bool:
        return bool(self._tasks)

    def _take(self, key: K, entry: _Entry[J]) -> J:
        if entry.lane is not None and not self._unpaced:
            left = self._counts.pop((key, entry.lane), 1) - 1
            if left > 0:
                self._counts[(key, entry.lane)] = left
        return entry.job

    async def _paced(self, key: K, queue: FairQueue[_Entry[J]]) -> None:
        """Wait until the job at the head of ``key``'s queue may go out. The head is looked
        at again whenever something new is queued (it may be a post that goes first)."""
        while True:
            head = queue.peek()
            behind = self._counts.get((key, head.lane), 1) - 1 if head.lane is not None else 0
            wait = self.policy.wait(key, head.job, time.monotonic(), behind)
            if wait <= 0:
                return
            news = self._news[key] = asyncio.Event()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(news.wait(), wait)

    async def _run(self, key: K, queue: FairQueue[_Entry[J]]) -> None:
        job: J | None = None
        try:
            while queue:
                if not self._unpaced:  # (no coroutine to make for a policy that never waits)
                    await self._paced(key, queue)
                job = self._take(key, queue.popleft())
                if self._merge is not None:
                    while (head := queue.peek_same()) is not None and self._merge(job, head.job):
                        self._take(key, queue.pop_same())
                if self._spends:
                    self.policy.spend(key, job, time.monotonic())
                try:
                    await self._send(job)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    await self._retry(key, job, exc)
                else:
                    self.sent += 1
                job = None
        except asyncio.CancelledError:
            if job is not None:
                self._drop(job)
            raise
        finally:
            # No await between the loop's last check and here: nothing can have been queued.
            self._tasks.pop(key, None)
            self._news.pop(key, None)
            if not queue and self._queues.get(key) is queue:
                del self._queues[key]
                self.policy.forget(key)

    async def _retry(self, key: K, job: J, exc: Exception) -> None:
        """``job`` failed with ``exc``: tried again as the policy says, or given up."""
        attempt = 1
        while True:
            delay = None if self.closed else self.policy.retry_in(job, exc, attempt)
            if delay is None:
                self.failed += 1
                try:
                    if self._on_error is None:
                        log.error("%s: a delivery to %s failed", self.name, key, exc_info=exc)
                    else:
                        await self._on_error(job, exc)
                except Exception:
                    log.exception("%s: the error handler failed", self.name)
                return
            self.retried += 1
            await asyncio.sleep(delay)
            if self._spends:
                self.policy.spend(key, job, time.monotonic())
            try:
                await self._send(job)
            except asyncio.CancelledError:
                raise
            except Exception as again:
                exc, attempt = again, attempt + 1
                continue
            self.sent += 1
            return

    def _drop(self, job: J) -> None:
        if self._on_drop is not None:
            try:
                self._on_drop(job)
            except Exception:
                log.exception("%s: the drop handler failed", self.name)

    async def drain(self, key: K | None = None) -> None:
        """Wait until everything queued (for ``key``, or anywhere) is out or given up,
        including what is queued meanwhile. Cancelling the wait leaves the workers alone."""
        while True:
            if key is None:
                tasks = list(self._tasks.values())
            else:
                task = self._tasks.get(key)
                tasks = [task] if task is not None else []
            if not tasks:
                return
            await asyncio.wait(tasks)

    async def close(self, grace: float | None = 0.0) -> None:
        """Send what is queued (and what is queued meanwhile) for at most ``grace`` seconds
        (None: until it is all out), then stop taking jobs and stop the workers. Unsent jobs
        go to ``on_drop``."""
        if grace is None:
            await self.drain()
        elif grace > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.drain(), grace)
        self.closed = True
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for queue in self._queues.values():
            while queue:
                self._drop(queue.popleft().job)
        self._queues.clear()
        self._counts.clear()


class Line:
    """One destination's lane on its own: ordered, asynchronous delivery of items to one
    subscriber, so a slow or re-entrant subscriber (an agent that speaks while being told
    something) never reorders or blocks whoever puts. A failed delivery is logged and the
    next item goes on; `close` hands over everything queued first."""

    def __init__(self, deliver: Callable[[Any], Awaitable[object]], name: str) -> None:
        self._lanes: Lanes[str, Any] = Lanes(deliver, on_error=_logged, name=f"outbox:{name}")

    def put(self, item: Any) -> None:
        self._lanes.put("", item)

    async def drain(self) -> None:
        await self._lanes.drain()

    async def close(self) -> None:
        await self._lanes.close(grace=None)


async def _logged(item: object, exc: Exception) -> None:
    log.error("event delivery failed", exc_info=exc)
