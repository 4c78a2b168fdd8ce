"""Ordered, never-dropping delivery to Discord, one queue per destination: Discord's policy
over `bot.service.lanes`.

Everything the bot posts goes through an :class:`Delivery` under a *key* (the stage of a game,
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
carries den talk), the lane is fair (`bot.service.lanes`): the Game-Manager's posts go before any
player's line, and players' lines are taken one seat at a time in turn (``lane``: the
speaking seat), so a flooding seat's backlog delays another seat's line by one post at most.
Players' lines under one key are spaced `bot.limits.STAGE_INTERVAL` apart (the webhook's
rate limit); the Game-Manager's posts are not held by that spacing.

A worker task exists only while its queue is non-empty, so thousands of idle booths cost no
tasks at all.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field

import aiohttp
import discord

from bot.discord.sanitize import MAX_CONTENT
from bot.limits import STAGE_INTERVAL
from bot.service.lanes import Lanes, Pace, Policy

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


class DiscordPolicy(Policy[Job]):
    """Players' lines under one key are spaced ``lane_interval`` apart (the webhook's rate
    limit; the Game-Manager's posts are not held by it); a transient failure is tried again
    after a capped, jittered backoff, for as long as it takes."""

    def __init__(self, lane_interval: float, base_backoff: float, max_backoff: float) -> None:
        self.lane_interval = lane_interval
        self.base_backoff = base_backoff
        self.max_backoff = max_backoff
        self._pace: Pace | None = None

    def _spacing(self, job: Job) -> Pace | None:
        if job.lane is None or self.lane_interval <= 0:
            return None
        if self._pace is None or self._pace.rate != 1.0 / self.lane_interval:
            self._pace = Pace(1, 1.0 / self.lane_interval)
        return self._pace

    def wait(self, key: Hashable, job: Job, now: float, behind: int) -> float:
        pace = self._spacing(job)
        return 0.0 if pace is None else pace.wait(key, now)

    def forget(self, key: Hashable) -> None:
        # spacing holds within a backlog: a line reaching an idle stage goes at once (as the
        # queue before the lanes did; the flood tests model the webhook's 429)
        if self._pace is not None:
            self._pace.forget(key)

    def spend(self, key: Hashable, job: Job, now: float) -> None:
        pace = self._spacing(job)
        if pace is not None:
            pace.spend(key, now)

    def retry_in(self, job: Job, exc: Exception, attempt: int) -> float | None:
        if not is_transient(exc):
            return None
        delay = float(min(self.max_backoff, self.base_backoff * 2 ** min(attempt, 10)))
        log.warning(
            "retrying a %s post of game %s in %.1fs (%s)", job.place, job.game_id, delay, exc
        )
        return delay * (0.75 + random.random() / 2)


class Delivery(Lanes[str, Job]):
    """The adapter's `bot.service.lanes.Lanes`: a job goes out as ``job.send(job.text)``; a job
    given up goes to ``on_fault``; ``job.on_done`` runs once it is out, given up or cut
    off."""

    def __init__(
        self,
        on_fault: FaultHandler,
        *,
        max_backoff: float = 30.0,
        base_backoff: float = 0.5,
        lane_interval: float = STAGE_INTERVAL,
    ) -> None:
        self._on_fault = on_fault
        self.rules = DiscordPolicy(lane_interval, base_backoff, max_backoff)
        super().__init__(
            self._send_job,
            policy=self.rules,
            on_error=self._given_up,
            on_drop=_finished,
            merge=_merge,
            name="delivery",
        )

    # the policy's figures, settable here as before (tests shorten the backoff)
    @property
    def base_backoff(self) -> float:
        return self.rules.base_backoff

    @base_backoff.setter
    def base_backoff(self, value: float) -> None:
        self.rules.base_backoff = value

    @property
    def lane_interval(self) -> float:
        return self.rules.lane_interval

    @lane_interval.setter
    def lane_interval(self, value: float) -> None:
        self.rules.lane_interval = value

    def put(self, key: str, job: Job, lane: Hashable | None = None) -> bool:
        """Queue ``job`` behind everything else under ``key`` (a player's line in its seat's
        turn: ``job.lane``)."""
        return super().put(key, job, job.lane if lane is None else lane)

    async def _send_job(self, job: Job) -> None:
        await job.send(job.text)
        _finished(job)

    async def _given_up(self, job: Job, exc: Exception) -> None:
        try:
            await self._on_fault(job, exc)
        except Exception:
            log.exception("fault handler failed")
        finally:
            _finished(job)


def _merge(job: Job, head: Job) -> bool:
    """Consecutive Game-Manager lines of one group merge while they fit in one message."""
    if not (
        job.merge
        and head.merge
        and head.group == job.group
        and len(job.text) + 1 + len(head.text) <= MAX_CONTENT
    ):
        return False
    job.text = f"{job.text}\n{head.text}"
    job.on_done.extend(head.on_done)
    return True


def _finished(job: Job) -> None:
    for callback in job.on_done:
        try:
            callback()
        except Exception:
            log.exception("delivery callback failed")
