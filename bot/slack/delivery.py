"""Ordered delivery to Slack: one queue and one worker per conversation.

Slack rate-limits per method and per channel and answers HTTP 429 with Retry-After. The
client's `AsyncRateLimitErrorRetryHandler` retries a few times; if Slack is still saying no,
the worker here waits and tries the *same* call again. Because each conversation has exactly
one worker taking calls in the order they were queued, a rate limit delays the queue but can
never drop a line or let a later one overtake it. Other conversations are not held up.

Players' lines (``speaker``: the seat) share a conversation's queue with the Game-Manager's
posts through a `bot.limits.FairQueue`: the Game-Manager's calls go before any player's line,
and players' lines are taken one seat at a time in turn, so a flooding seat delays another
seat's line by one post at most (each seat's own lines keep their order).

Slack's transient failures are waited out the same way: an HTTP 5xx (whose body may be
Slack's JSON or a load balancer's ``text/plain`` page), a timeout or a dropped connection is
retried with a growing pause, in place, so nothing is lost and nothing overtakes it; only a
line finally given up (`MAX_TRANSIENT_RETRIES` tries, about a minute and a half) is reported.

A call that fails for good (channel deleted, permission missing) is reported through
``on_failure`` and then skipped, so one broken conversation never blocks the rest. A line
refused only because ``chat:write.customize`` is missing is posted again without the
character's picture, the name written in front instead, so the game goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError

from bot.limits import FairQueue
from bot.slack.problems import STALE_TOKEN, TRANSIENT
from bot.slack.workspaces import TokenRefreshFailed, WorkspaceGone, Workspaces

log = logging.getLogger(__name__)

MAX_RATE_LIMIT_WAITS = 30
#: tries after a 5xx, timeout or connection error before a call is given up
MAX_TRANSIENT_RETRIES = 8
#: first pause after a transient failure (doubled each time, at most `MAX_BACKOFF`)
TRANSIENT_BACKOFF = 0.5
MAX_BACKOFF = 30.0
MAX_RETRY_AFTER = 60.0


@dataclass
class Failure:
    """A call Slack refused for good."""

    method: str
    channel: str | None
    error: str
    needed: str
    what: str
    game_id: str | None
    #: True when the call went through after all, in a reduced form (no custom name/icon)
    recovered: bool = False


@dataclass
class Job:
    method: str
    kwargs: dict[str, Any]
    future: asyncio.Future[dict[str, Any]]
    what: str
    game_id: str | None
    report: bool
    #: the same call without username/icon, for a workspace without chat:write.customize
    plain: dict[str, Any] | None = None
    #: the workspace whose bot token makes the call
    team: str | None = None
    #: a player's line: the speaking seat; None: the Game-Manager's call (goes first)
    lane: int | None = None


OnFailure = Callable[[Failure], Awaitable[None]]
#: told (not awaited) that a workspace's installation is gone
OnGone = Callable[[str], None]


def _retry_after(err: SlackApiError) -> float:
    headers = getattr(err.response, "headers", None) or {}
    for key, value in dict(headers).items():
        if str(key).lower() == "retry-after":
            try:
                return min(MAX_RETRY_AFTER, max(0.0, float(value)))
            except ValueError:
                break
    return 1.0


def error_fields(err: SlackApiError) -> tuple[str, str]:
    """(error, needed) of a refused call. Slack answers JSON, but a proxy or Slack's own edge
    may answer a 5xx with a ``text/plain`` page: then the error is named by its status."""
    data = getattr(err.response, "data", None)
    if isinstance(data, dict):
        return str(data.get("error") or "unknown_error"), str(data.get("needed") or "")
    status = getattr(err.response, "status_code", None)
    return (f"http_{status}" if status else "unknown_error"), ""


def why(err: Exception) -> str:
    """A failed direct call in one word for the log: Slack's error, or why nothing was sent."""
    return error_fields(err)[0] if isinstance(err, SlackApiError) else str(err)


def _status(err: SlackApiError) -> int:
    status = getattr(err.response, "status_code", 200)
    return status if isinstance(status, int) else 200


def _is_rate_limit(err: SlackApiError) -> bool:
    return _status(err) == 429 or error_fields(err)[0] == "ratelimited"


def is_transient(err: SlackApiError) -> bool:
    """Slack (or what stands before it) failed, not the call: the same call may work later."""
    return _status(err) >= 500 or error_fields(err)[0] in TRANSIENT


@dataclass
class _Lane:
    queue: FairQueue[Job] = field(default_factory=FairQueue)
    task: asyncio.Task[None] | None = None


class Poster:
    def __init__(self, workspaces: Workspaces, on_failure: OnFailure | None = None) -> None:
        self.workspaces = workspaces
        self.on_failure = on_failure
        self._lanes: dict[tuple[str | None, str], _Lane] = {}
        self._closed = False
        #: workspaces where Slack said chat:write.customize is missing: post plainly there
        #: until it is re-granted
        self.plain: set[str | None] = set()
        #: first pause after a transient failure (tests shorten it)
        self.backoff = TRANSIENT_BACKOFF
        #: set by the adapter: what to do when a workspace turns out to have removed the app
        self.on_gone: OnGone | None = None
        #: told each rate-limit wait, in seconds, as it begins (metrics; bot.ops)
        self.on_rate_limit: Callable[[float], None] | None = None

    def submit(
        self,
        lane_key: str,
        method: str,
        /,
        *,
        team: str | None,
        what: str = "post a message",
        game_id: str | None = None,
        report: bool = True,
        plain: dict[str, Any] | None = None,
        speaker: int | None = None,
        **kwargs: Any,
    ) -> asyncio.Future[dict[str, Any]]:
        """Queue ``client.<method>(**kwargs)``, with workspace ``team``'s token, behind
        everything already queued for ``lane_key`` (the conversation id) there. The future
        resolves to the response data, or fails with the SlackApiError (already reported) or
        `WorkspaceGone` (the app was removed there: nothing to report to). Nobody has to
        await it."""
        if self._closed:
            raise RuntimeError("the Slack poster is closed")
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_consume)
        lane = self._lanes.get((team, lane_key))
        if lane is None:
            lane = self._lanes[(team, lane_key)] = _Lane()
        job = Job(method, kwargs, future, what, game_id, report, plain, team, speaker)
        lane.queue.append(job, speaker)
        if lane.task is None or lane.task.done():
            lane.task = asyncio.create_task(self._work(lane), name=f"slack-lane:{lane_key}")
        return future

    async def call(
        self, lane_key: str, method: str, /, *, team: str | None, **kwargs: Any
    ) -> dict[str, Any] | None:
        """`submit` and wait; None when the call failed (it has been reported)."""
        try:
            return await self.submit(lane_key, method, team=team, **kwargs)
        except (SlackApiError, WorkspaceGone):
            return None

    async def _work(self, lane: _Lane) -> None:
        while True:
            if not lane.queue:
                return  # the next submit starts a new worker
            job = lane.queue.popleft()
            try:
                job.future.set_result(await self._perform(job))
            except asyncio.CancelledError:
                if not job.future.done():
                    job.future.cancel()
                raise
            except Exception as err:
                if not job.future.done():
                    job.future.set_exception(err)

    async def _perform(self, job: Job) -> dict[str, Any]:
        kwargs = job.plain if job.plain is not None and job.team in self.plain else job.kwargs
        waits = errors = 0
        reread = False
        while True:
            try:
                # asked each time: a token may be refreshed (or revoked) while a job waits
                client = await self.workspaces.client(job.team)
                token = client.token
                response = await getattr(client, job.method.replace(".", "_"))(**kwargs)
                return dict(response.data) if isinstance(response.data, dict) else {}
            except SlackApiError as err:
                if _is_rate_limit(err) and waits < MAX_RATE_LIMIT_WAITS:
                    waits += 1
                    delay = _retry_after(err)
                    log.info("Slack rate limit on %s; waiting %.0fs", job.method, delay)
                    if self.on_rate_limit is not None:
                        self.on_rate_limit(delay)
                    await asyncio.sleep(delay)
                    continue
                error, needed = error_fields(err)
                if error in STALE_TOKEN and not reread:
                    reread = True
                    if await self.workspaces.stale(job.team, token):
                        continue  # the installation read again: a newer token, or gone
                if is_transient(err) and errors < MAX_TRANSIENT_RETRIES:
                    errors += 1
                    log.info("Slack %s failed (%s); trying again", job.method, error)
                    await asyncio.sleep(self._pause(errors))
                    continue
                if (
                    error == "missing_scope"
                    and "chat:write.customize" in needed
                    and job.plain is not None
                    and kwargs is not job.plain
                ):
                    self.plain.add(job.team)
                    await self._fail(job, error, needed, recovered=True)
                    kwargs = job.plain
                    continue
                await self._fail(job, error, needed)
                raise
            except (aiohttp.ClientError, TimeoutError, OSError, TokenRefreshFailed) as err:
                errors += 1
                if errors > MAX_TRANSIENT_RETRIES:
                    why = (
                        f"token refresh failed ({err.error})"
                        if isinstance(err, TokenRefreshFailed)
                        else f"connection failed ({type(err).__name__})"
                    )
                    await self._fail(job, why, "")
                    raise
                await asyncio.sleep(self._pause(errors))
            except WorkspaceGone:
                if job.team and self.on_gone is not None:
                    self.on_gone(job.team)  # uninstalled (maybe seen by another process)
                raise

    def _pause(self, attempt: int) -> float:
        return float(min(MAX_BACKOFF, self.backoff * 2 ** (attempt - 1)))

    async def _fail(self, job: Job, error: str, needed: str, *, recovered: bool = False) -> None:
        channel = job.kwargs.get("channel")
        log.warning("Slack %s failed: %s %s", job.method, error, needed)
        if not job.report or self.on_failure is None:
            return
        failure = Failure(
            job.method,
            str(channel) if channel else None,
            error,
            needed,
            job.what,
            job.game_id,
            recovered,
        )
        try:
            await self.on_failure(failure)
        except Exception:
            log.exception("reporting a Slack failure failed")

    async def drain(self) -> None:
        """Wait until everything queued so far has been sent (or has failed)."""
        while True:
            pending = [
                lane
                for lane in self._lanes.values()
                if lane.queue or (lane.task is not None and not lane.task.done())
            ]
            if not pending:
                return
            for lane in pending:
                if lane.task is not None and not lane.task.done():
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await asyncio.shield(lane.task)
            await asyncio.sleep(0)

    async def close(self, grace: float = 10.0) -> None:
        """Send what is queued (for at most ``grace`` seconds), then stop."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.drain(), grace)
        self._closed = True
        tasks = [lane.task for lane in self._lanes.values() if lane.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def _consume(future: asyncio.Future[Any]) -> None:
    """Nobody may be waiting for a post: mark its error as seen (it has been reported)."""
    if not future.cancelled():
        future.exception()
