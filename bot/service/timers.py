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

import asyncio
import contextlib
import itertools
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.service.clock import GameClock, utcnow

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


#: how long (real seconds) a deadline of a game of agents only waits for its agents' work
#: in flight (`SchedulerTimers.call_at` with ``after_holds``) before it fires regardless
HOLD_WAIT_LIMIT_S = 30.0


class SchedulerTimers:
    """The :class:`agent.base.Timers` port for one game clock, on a shared scheduler.

    ``holding``: the timers of an agent's seat in a game whose clock may be held (a game of
    agents only, asked when each one fires): a callback holds the game's time while it runs
    (`GameClock.hold`), so the agent's action is in before game time moves on."""

    def __init__(
        self,
        scheduler: AsyncIOScheduler,
        clock: GameClock,
        holding: Callable[[], bool] | None = None,
    ) -> None:
        self.scheduler = scheduler
        self.clock = clock
        self._holding = holding

    def call_at(
        self,
        when: datetime,
        callback: Callable[[], Awaitable[None]],
        *,
        after_holds: bool = False,
    ) -> TimerHandle:
        """Run ``callback`` at game time ``when``. ``after_holds`` (a phase's deadline in a
        game of agents only): game time stops at ``when`` (`GameClock.pin`); when it comes
        due, first wait until the clock is no longer held (every agent's work in flight is
        in; at most `HOLD_WAIT_LIMIT_S` real seconds), and if holds kept game time short of
        ``when`` meanwhile, wait on to ``when``."""
        if not after_holds:
            return self.call_later(self.clock.real_delay_until(when), callback)
        self.clock.pin(when)
        handle = TimerHandle(self.scheduler, f"t{next(_ids)}")

        async def due() -> None:
            try:
                await asyncio.wait_for(self.clock.unheld(), HOLD_WAIT_LIMIT_S)
            except TimeoutError:
                log.warning("an agent's work held the game's clock for %.0f s", HOLD_WAIT_LIMIT_S)
            if handle.cancelled:
                return
            left = self.clock.real_delay_until(when)
            if left > 0:  # the clock was held after this was armed: game time is short of it
                handle.job_id = f"t{next(_ids)}"
                self._add(handle, due, left, mark=False)
                return
            handle.cancelled = True  # ran: a later cancel() is a no-op
            await callback()

        self._add(handle, due, self.clock.real_delay_until(when), mark=False)
        return handle

    def call_later(self, delay: float, callback: Callable[[], Awaitable[None]]) -> TimerHandle:
        """Run ``callback`` after ``delay`` *real* seconds (retries wait in real time: an
        outage lasts as long at any game speed)."""
        handle = TimerHandle(self.scheduler, f"t{next(_ids)}")
        self._add(handle, callback, delay)
        return handle

    def _add(
        self,
        handle: TimerHandle,
        callback: Callable[[], Awaitable[None]],
        delay: float,
        *,
        mark: bool = True,
    ) -> None:
        """Arm ``handle``'s job; ``mark``: the job marks the handle as run when it starts
        (else ``callback`` does, when it really runs)."""
        holding = self._holding

        async def run() -> None:
            if handle.cancelled:
                return
            if mark:
                handle.cancelled = True  # ran: a later cancel() is a no-op
            release = self.clock.hold() if holding is not None and holding() else None
            try:
                await callback()
            except Exception:
                log.exception("timer callback failed")
            finally:
                if release is not None:
                    release()

        self.scheduler.add_job(
            run,
            trigger="date",
            run_date=utcnow() + timedelta(seconds=delay),
            id=handle.job_id,
            misfire_grace_time=None,
        )


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
