"""Timers on APScheduler's AsyncIOScheduler: one-shot jobs at a game time, converted to real
time by the game's clock. No polling: the scheduler sleeps until its next job.

Jobs live in memory. What must survive a crash is the *deadline*, which is in the database;
on start-up the service re-arms every running game's deadline from there.

A callback that fails is the caller's to retry: `Backoff` gives the delays (real seconds,
growing, capped, with jitter so games sharing one locked database do not retry in step) and
`call_later` arms the retry. `TimerHandle.pending` tells whether a timer is still armed, so the
service never mistakes a timer that already ran (and failed) for one that will still run.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.clock import GameClock, utcnow

log = logging.getLogger(__name__)
_ids = itertools.count(1)


class TimerHandle:
    def __init__(self, scheduler: AsyncIOScheduler, job_id: str) -> None:
        self._scheduler = scheduler
        self.job_id = job_id
        #: cancelled, or already run: either way it will not run (again)
        self.cancelled = False

    @property
    def pending(self) -> bool:
        """Still armed: it will run unless cancelled."""
        return not self.cancelled

    def cancel(self) -> None:
        if self.cancelled:
            return
        self.cancelled = True
        with contextlib.suppress(JobLookupError):  # already ran
            self._scheduler.remove_job(self.job_id)


class SchedulerTimers:
    """The :class:`agent.base.Timers` port for one game clock, on a shared scheduler."""

    def __init__(self, scheduler: AsyncIOScheduler, clock: GameClock) -> None:
        self.scheduler = scheduler
        self.clock = clock

    def call_at(self, when: datetime, callback: Callable[[], Awaitable[None]]) -> TimerHandle:
        return self.call_later(self.clock.real_delay_until(when), callback)

    def call_later(self, delay: float, callback: Callable[[], Awaitable[None]]) -> TimerHandle:
        """Run ``callback`` after ``delay`` *real* seconds (retries wait in real time: an
        outage lasts as long at any game speed)."""
        job_id = f"t{next(_ids)}"
        handle = TimerHandle(self.scheduler, job_id)

        async def run() -> None:
            if handle.cancelled:
                return
            handle.cancelled = True  # ran: a later cancel() is a no-op
            try:
                await callback()
            except Exception:
                log.exception("timer callback failed")

        self.scheduler.add_job(
            run,
            trigger="date",
            run_date=utcnow() + timedelta(seconds=delay),
            id=job_id,
            misfire_grace_time=None,
        )
        return handle


@dataclass(frozen=True)
class Backoff:
    """Delays between attempts: ``first``, then ×``factor`` each time, at most ``cap``; each
    one drawn from its upper half (jitter)."""

    first: float = 0.25
    factor: float = 2.0
    cap: float = 15.0

    def delay(self, attempt: int) -> float:
        """The wait before retry number ``attempt`` (0 = the first retry)."""
        top = min(self.cap, self.first * self.factor ** min(attempt, 32))
        return random.uniform(top / 2, top)


def make_scheduler() -> AsyncIOScheduler:
    """A started-on-demand scheduler; jobs that run late still run (never dropped)."""
    return AsyncIOScheduler(
        timezone="UTC", job_defaults={"misfire_grace_time": None, "coalesce": False}
    )
