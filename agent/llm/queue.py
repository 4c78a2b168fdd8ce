"""One queue per model server: at most ``limit`` requests in flight, the game's calls first.

A local server often answers one request at a time (the ``llama-cpp-python`` server, one
``llama-server`` slot). Sent to it at once, every seat's requests wait inside the server in no
particular order: a vote due in ten seconds waits behind a reflection, every attempt's timeout
runs while it waits, and a request the client gave up on is still computed (a non-streamed
completion is not interrupted), so the server falls further behind with every time-out.

:class:`QueuedClient` keeps the waiting on our side, where it can be ordered:

- at most ``limit`` requests are sent at once (0: no limit);
- waiting requests go by priority, then first come: votes and night actions, then lines and
  when-to-talk answers, then background work (reflection, suspicion, lessons, summaries);
- each attempt's timeout starts when the request is sent, not while it waits its turn, and is
  derived from the service times measured so far (:meth:`ServiceTimes.timeout_for`): shorter
  than the configured one on a fast server, longer on a server slower than it;
- a background request that could not be sent and answered before its own deadline (its
  ``timeout_s``: the end of its phase) is skipped (:class:`LLMSkipped`), not sent; so is one
  in a phase that would take the server longer than the usual gap between the game's own
  requests (every seat's, on this server): it would hold one of them back;
- a request given up on while in flight keeps its place for the rest of the time it was
  expected to take (the server is still computing it), so the next one is not sent into a busy
  server to time out in its turn; with ``limit`` 1 a timed-out attempt is not retried.
"""

from __future__ import annotations

import asyncio
import dataclasses
import heapq
import itertools
import logging
import statistics
import time
from collections import deque
from collections.abc import Callable, Mapping
from urllib.parse import urlparse

from agent.llm.base import (
    CALL_PROGRESS,
    LLMClient,
    LLMError,
    LLMRequest,
    LLMResponse,
    LLMTimeout,
    aclose_client,
)

__all__ = [
    "BACKGROUND",
    "LLMSkipped",
    "QueuedClient",
    "ServiceTimes",
    "Slots",
    "concurrency_for",
    "parse_concurrency",
    "priority_of",
]

log = logging.getLogger(__name__)

#: priority of a request by its kind (lower goes first); anything else is background work
PRIORITIES: Mapping[str, int] = {"vote": 0, "night_action": 0, "generator": 1, "scheduler": 1}
BACKGROUND = 2
#: a request given up on in flight is taken to occupy the server this many times its kind's
#: slow service time from when it was sent
HOLD_FACTOR = 1.25

#: how far back the game's own requests are counted to tell how often they come
CRITICAL_WINDOW_S = 60.0

#: hosts that serve many requests at once: no limit under "auto"
HOSTED = ("api.openai.com", "api.anthropic.com")


def priority_of(kind: str) -> int:
    return PRIORITIES.get(kind, BACKGROUND)


class LLMSkipped(LLMError):
    """A background request was not sent: it could not have come back before its deadline
    without delaying the game's own calls."""

    retryable = False


class ServiceTimes:
    """Seconds the server took per request (from sending to the answer), by kind, over the
    last ``window`` requests of each kind."""

    #: an attempt may take this many times the slow service time of its kind ...
    TIMEOUT_FACTOR = 3.0
    #: ... and never less than this
    MIN_TIMEOUT_S = 2.0
    #: samples of a kind before its timeout is derived from them
    MIN_SAMPLES = 3
    #: derived timeouts stay within this many times the configured one
    MAX_FACTOR = 5.0

    def __init__(self, window: int = 20) -> None:
        self.window = max(1, window)
        self._by_kind: dict[str, deque[float]] = {}

    def add(self, kind: str, seconds: float) -> None:
        bucket = self._by_kind.setdefault(kind, deque(maxlen=self.window))
        bucket.append(max(seconds, 0.0))

    def samples(self, kind: str) -> int:
        return len(self._by_kind.get(kind, ()))

    def typical(self, kind: str | None = None) -> float | None:
        """Median service time of ``kind`` (of every kind when None or unmeasured)."""
        xs = list(self._by_kind.get(kind, ())) if kind is not None else []
        if not xs:
            xs = [x for b in self._by_kind.values() for x in b]
        return statistics.median(xs) if xs else None

    def slow(self, kind: str) -> float | None:
        """A high quantile (the 90th) of ``kind``'s service times, None before any."""
        xs = sorted(self._by_kind.get(kind, ()))
        return xs[min(len(xs) - 1, int(0.9 * len(xs)))] if xs else None

    def slow_pooled(self) -> float | None:
        xs = sorted(x for b in self._by_kind.values() for x in b)
        return xs[min(len(xs) - 1, int(0.9 * len(xs)))] if xs else None

    def timeout_for(self, kind: str, configured: float | None) -> float | None:
        """An attempt's timeout for ``kind``: ``TIMEOUT_FACTOR`` times its slow service time
        once it has ``MIN_SAMPLES`` (else the slow time of every kind, once they have), at
        least ``MIN_TIMEOUT_S``, at most ``MAX_FACTOR`` times the configured timeout; None
        while unmeasured (the configured one applies). Timed-out attempts count as samples
        of the time they were given, so a server slower than the configured timeout gets
        longer ones rather than never answering in time."""
        if self.samples(kind) >= self.MIN_SAMPLES:
            slow = self.slow(kind)
        elif sum(len(b) for b in self._by_kind.values()) >= self.MIN_SAMPLES:
            slow = self.slow_pooled()
        else:
            return None
        assert slow is not None
        derived = max(self.MIN_TIMEOUT_S, self.TIMEOUT_FACTOR * slow)
        return min(derived, self.MAX_FACTOR * configured) if configured is not None else derived


@dataclasses.dataclass(order=True)
class _Waiter:
    priority: int
    seq: int
    future: asyncio.Future[None] = dataclasses.field(compare=False)
    kind: str = dataclasses.field(compare=False, default="")


class Slots:
    """The places of one model server: requests in flight, their expected ends, and who waits
    for a place. Clients of different models served by the same server share one."""

    def __init__(self) -> None:
        self.in_flight = 0
        #: expected end (clock) of each request in flight, or still computed after its
        #: client gave up on it
        self.busy_until: dict[int, float] = {}
        self.waiting: list[_Waiter] = []
        self.seq = itertools.count()
        self.max_seen = 0
        #: when the game's own (critical) requests arrived, every seat's, recent ones only
        self.critical_arrivals: deque[float] = deque()


class QueuedClient:
    """``inner`` with at most ``limit`` requests in flight, ordered by priority (see the
    module docstring). ``timeout`` is the configured per-attempt timeout: derived timeouts
    stay within `ServiceTimes.MAX_FACTOR` times it. ``limit`` 0 passes every request straight
    through (still measured)."""

    def __init__(
        self,
        inner: LLMClient,
        limit: int,
        *,
        timeout: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        slots: Slots | None = None,
    ) -> None:
        if limit < 0:
            raise ValueError(f"the in-flight limit must be 0 (none) or more, got {limit}")
        self.inner = inner
        self.limit = limit
        self.timeout = timeout
        self.name = inner.name
        self.times = ServiceTimes()
        self._clock = clock
        #: the server's places: shared by every client of models on the same server
        self.slots = slots if slots is not None else Slots()
        self._s = self.slots
        self.skipped = 0

    # --- introspection ------------------------------------------------------------------------

    @property
    def max_in_flight_seen(self) -> int:
        return self._s.max_seen

    @property
    def in_flight(self) -> int:
        return self._s.in_flight

    @property
    def waiting(self) -> int:
        return sum(1 for w in self._s.waiting if not w.future.done())

    def expected_wait(self, priority: int) -> float:
        """Seconds a request of ``priority`` would wait for its turn now, by the measured
        service times: the rest of what is in flight (when every place is taken) and every
        request queued ahead of it, shared among the ``limit`` places."""
        if self.limit <= 0:
            return 0.0
        now = self._clock()
        ahead = [w for w in self._s.waiting if not w.future.done() and w.priority <= priority]
        queued = sum(self.times.typical(w.kind) or 0.0 for w in ahead)
        if self._s.in_flight < self.limit and not ahead:
            return 0.0
        rest = min((max(0.0, end - now) for end in self._s.busy_until.values()), default=0.0)
        return rest + queued / self.limit

    # --- the LLMClient protocol ---------------------------------------------------------------

    async def complete(self, req: LLMRequest) -> LLMResponse:
        priority = priority_of(req.kind)
        arrived = self._clock()
        progress = CALL_PROGRESS.get()
        if progress is not None:
            progress.held = True  # until it leaves the queue (cut short before: never sent)
        if priority < BACKGROUND:
            self._critical_arrived(arrived)
        if priority == BACKGROUND and req.timeout_s is not None and self.limit > 0:
            delays = self._delays_the_game(req.kind, arrived)
            if delays is not None:
                self.skipped += 1
                raise LLMSkipped(f"{self.name} [{req.kind}]: skipped, {delays}", attempts=0)
            expected = self.expected_wait(priority) + (self.times.typical(req.kind) or 0.0)
            if expected > req.timeout_s:
                self.skipped += 1
                raise LLMSkipped(
                    f"{self.name} [{req.kind}]: skipped, it would come back in about "
                    f"{expected:.1f} s, after its deadline ({req.timeout_s:.1f} s)",
                    attempts=0,
                )
        ticket = await self._acquire(priority, req.kind)
        waited = self._clock() - arrived
        if priority == BACKGROUND and req.timeout_s is not None and self.limit > 0:
            # overtaken while it waited (the game's calls go first): its answer must still
            # be able to come back before its deadline, or it is not sent at all
            typical = self.times.typical(req.kind) or 0.0
            if waited + typical > req.timeout_s:
                self._release(ticket, 0.0)
                self.skipped += 1
                raise LLMSkipped(
                    f"{self.name} [{req.kind}]: skipped after waiting {waited:.1f} s, its "
                    f"answer would come after its deadline ({req.timeout_s:.1f} s)",
                    attempts=0,
                )
        req = self._shaped(req, waited)
        started = self._clock()
        if progress is not None:
            progress.held = False
        expected = self.times.slow(req.kind) or self.times.typical(req.kind) or 0.0
        self._s.busy_until[ticket] = started + HOLD_FACTOR * expected
        hold = 0.0
        try:
            resp = await self.inner.complete(req)
        except asyncio.CancelledError:
            hold = self._left_of(ticket)
            raise
        except LLMTimeout:
            hold = self._left_of(ticket)  # the server may still be computing it
            # at least this long, and no shorter than it usually takes: an attempt cut short
            # (a sliver of time left before its deadline) says nothing of the server's speed
            took = self._clock() - started
            self.times.add(req.kind, max(took, self.times.typical(req.kind) or 0.0))
            raise
        except LLMError:
            raise  # (an error answer is no measure of how long an answer takes)
        else:
            self.times.add(req.kind, self._clock() - started)
            return resp
        finally:
            self._release(ticket, hold)

    async def aclose(self) -> None:
        await aclose_client(self.inner)

    # --- the game's calls, every seat's ---------------------------------------------------------

    def _critical_arrived(self, now: float) -> None:
        arrivals = self._s.critical_arrivals
        arrivals.append(now)
        while arrivals and now - arrivals[0] > CRITICAL_WINDOW_S:
            arrivals.popleft()

    def critical_gap(self, now: float) -> float | None:
        """Seconds between the game's own requests (every seat's votes, lines, when-to-talk
        answers) on this server lately: ``CRITICAL_WINDOW_S`` over how many came in that
        long; None with fewer than two."""
        recent = sum(1 for t in self._s.critical_arrivals if now - t <= CRITICAL_WINDOW_S)
        return CRITICAL_WINDOW_S / recent if recent >= 2 else None

    def _delays_the_game(self, kind: str, now: float) -> str | None:
        """Why a background request of ``kind`` in a phase would hold the game's calls back,
        or None. Once sent, a request keeps the server until it is done (a non-streamed
        completion is computed to its end even when its caller gives up), and the game's
        calls of every seat on the server wait behind it: background work longer than the
        usual gap between them would delay one. Its length is its kind's measured time, or,
        unmeasured, a slow call of any kind (a background answer is no shorter)."""
        gap = self.critical_gap(now)
        if gap is None:
            return None
        measured = self.times.samples(kind) > 0
        took = self.times.typical(kind) if measured else self.times.slow_pooled()
        if took is None or took <= gap:
            return None
        return (
            f"it would take about {took:.1f} s of the server, and the game's own calls come "
            f"every {gap:.1f} s: it would delay one"
        )

    # --- the queue ----------------------------------------------------------------------------

    def _shaped(self, req: LLMRequest, waited: float) -> LLMRequest:
        """The request as sent: its deadline less the time it waited; the attempt's timeout
        from the measured service times; no retry of a timed-out attempt on a one-at-a-time
        server."""
        changes: dict[str, object] = {}
        derived = self.times.timeout_for(req.kind, self.timeout)
        timeout = req.timeout_s
        if timeout is not None:
            timeout = max(timeout - waited, 0.05)
        if derived is not None:
            timeout = derived if timeout is None else min(timeout, derived)
        if timeout is not None and timeout != req.timeout_s:
            changes["timeout_s"] = timeout
        if self.limit == 1 and req.retry_timeouts is None:
            changes["retry_timeouts"] = False
        return dataclasses.replace(req, **changes) if changes else req  # type: ignore[arg-type]

    async def _acquire(self, priority: int, kind: str) -> int:
        ticket = next(self._s.seq)
        if self.limit <= 0 or (self._s.in_flight < self.limit and not self._live_waiters()):
            self._take()
            return ticket
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._s.waiting, _Waiter(priority, ticket, future, kind))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                # handed the place just as it was cancelled: pass it on
                self._s.in_flight -= 1
                self._wake()
            raise
        return ticket

    def _live_waiters(self) -> bool:
        while self._s.waiting and self._s.waiting[0].future.done():
            heapq.heappop(self._s.waiting)
        return bool(self._s.waiting)

    def _take(self) -> None:
        self._s.in_flight += 1
        self._s.max_seen = max(self._s.max_seen, self._s.in_flight)

    def _left_of(self, ticket: int) -> float:
        end = self._s.busy_until.get(ticket)
        return max(0.0, end - self._clock()) if end is not None else 0.0

    def _release(self, ticket: int, hold: float) -> None:
        if self.limit <= 0:
            self._s.in_flight -= 1
            self._s.busy_until.pop(ticket, None)
            return
        if hold > 0:
            log.info(
                "%s: a request given up on is still being computed; next one in %.1f s",
                self.name,
                hold,
            )
            asyncio.get_running_loop().call_later(hold, self._release, ticket, 0.0)
            return
        self._s.busy_until.pop(ticket, None)
        self._s.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._s.in_flight < self.limit and self._live_waiters():
            waiter = heapq.heappop(self._s.waiting)
            self._take()
            waiter.future.set_result(None)


# --- the setting --------------------------------------------------------------------------------


def parse_concurrency(value: str) -> dict[str, int | None]:
    """``MAFIABOT_LLM_CONCURRENCY``: requests in flight per model server, "auto" or a number
    (0: no limit), then optional per-model overrides ``SPEC=N`` ("auto,openai:qwen=4"). The
    default is under the key ""; None stands for "auto". Raises ValueError on anything else."""
    limits: dict[str, int | None] = {"": None}
    for raw in value.split(","):
        item = raw.strip()
        if not item:
            continue
        spec, sep, number = item.rpartition("=")
        if sep and not spec.strip():
            raise ValueError(f"concurrency override {item!r} needs a model before '='")
        word = number.strip().lower()
        if word == "auto":
            limits[spec.strip()] = None
            continue
        try:
            n = int(word)
        except ValueError:
            raise ValueError(
                f"concurrency must be 'auto' or a number of requests (0: no limit), got {item!r}"
            ) from None
        if not 0 <= n <= 1000:
            raise ValueError(f"concurrency must be within 0-1000, got {n}")
        limits[spec.strip()] = n
    return limits


def concurrency_for(limits: Mapping[str, int | None], spec: str, base_url: str | None) -> int:
    """The in-flight limit for the model ``spec`` served at ``base_url`` (None: the provider's
    own API). "auto": no limit on the providers' hosted APIs, one request at a time on any
    other server (a local one), which is right for the llama-cpp-python server and a
    one-slot llama-server, and safe (slower) for servers that batch."""
    chosen = limits.get(spec.strip(), limits.get(""))
    if chosen is not None:
        return chosen
    if not base_url:
        return 0
    host = urlparse(base_url).hostname or ""
    return 0 if host in HOSTED else 1
