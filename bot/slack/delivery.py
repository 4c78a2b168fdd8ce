"""Ordered delivery to Slack: one queue and one worker per conversation (Slack's policy over
`bot.service.lanes`).

Slack allows about one ``chat.postMessage`` a second per conversation (a short burst
tolerated): posts are paced to that allowance (`SlackPolicy`), so a busy stage is spaced out
rather than refused. Slack rate-limits per method and per channel and answers HTTP 429 with
Retry-After. The
client's `AsyncRateLimitErrorRetryHandler` retries a few times; if Slack is still saying no,
the worker here waits and tries the *same* call again. Because each conversation has exactly
one worker taking calls in the order they were queued, a rate limit delays the queue but can
never drop a line or let a later one overtake it. Other conversations are not held up.

Players' lines (``speaker``: the seat) share a conversation's queue with the Game-Manager's
posts fairly (`bot.service.lanes`): the Game-Manager's calls go before any player's line, and
players' lines are taken one seat at a time in turn, so a flooding seat delays another
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
import logging
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError

from bot.service.lanes import Lanes, Pace, Policy
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
#: Slack's chat.postMessage allowance per conversation: about one message a second, a short
#: burst tolerated. Posts are paced to it (`SlackPolicy`) so a busy stage is never refused.
POST_BURST = 3
POST_RATE = 1.0


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
    #: the policy's count of rate-limit waits and of transient failures so far
    waits: int = 0
    errors: int = 0
    #: the installation was read again once after Slack refused the token
    reread: bool = False
    #: the lane it went into (set as it is tried)
    key: Hashable | None = None


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


class SlackPolicy(Policy[Job]):
    """Slack's pacing and retries. Posts into one conversation (``chat.postMessage``) take
    a token each from that conversation's bucket (`POST_BURST` at once, then `POST_RATE` a
    second: Slack's per-channel allowance), so a busy stage is spaced out before Slack has to
    say no. A 429 is waited out for as long as its ``Retry-After`` says, and the conversation's
    bucket is emptied for that long too; a 5xx, timeout or dropped connection is tried again
    with a growing pause, at most `MAX_TRANSIENT_RETRIES` times."""

    def __init__(self, burst: float = POST_BURST, rate: float = POST_RATE) -> None:
        self.pace: Pace | None = Pace(burst, rate) if rate > 0 else None
        #: first pause after a transient failure (tests shorten it)
        self.backoff = TRANSIENT_BACKOFF
        #: told each rate-limit wait, in seconds, as it begins (metrics; bot.ops)
        self.on_rate_limit: Callable[[float], None] | None = None
        #: conversation -> until when Slack said to wait (monotonic)
        self._held: dict[Hashable, float] = {}

    def wait(self, key: Hashable, job: Job, now: float, behind: int) -> float:
        if job.method != "chat.postMessage" or self.pace is None:
            return 0.0
        held = self._held.get(key, 0.0) - now
        # a seat with a backlog leaves one post of the burst to whoever has none: another
        # seat's first line (or the Game-Manager's post) then goes out at once, not a pace
        # later
        reserve = 1.0 if job.lane is not None and behind > 0 else 0.0
        return max(held, self.pace.wait(key, now, reserve))

    def spend(self, key: Hashable, job: Job, now: float) -> None:
        if job.method == "chat.postMessage" and self.pace is not None:
            self.pace.spend(key, now)
        job.key = key

    def forget(self, key: Hashable) -> None:
        self._held.pop(key, None)

    def retry_in(self, job: Job, exc: Exception, attempt: int) -> float | None:
        if isinstance(exc, SlackApiError):
            if _is_rate_limit(exc) and job.waits < MAX_RATE_LIMIT_WAITS:
                job.waits += 1
                delay = _retry_after(exc)
                log.info("Slack rate limit on %s; waiting %.0fs", job.method, delay)
                if self.on_rate_limit is not None:
                    self.on_rate_limit(delay)
                if job.key is not None:
                    self._held[job.key] = time.monotonic() + delay
                return delay
            if is_transient(exc) and job.errors < MAX_TRANSIENT_RETRIES:
                job.errors += 1
                log.info("Slack %s failed (%s); trying again", job.method, error_fields(exc)[0])
                return self._pause(job.errors)
            return None
        if isinstance(exc, aiohttp.ClientError | TimeoutError | OSError | TokenRefreshFailed):
            job.errors += 1
            return None if job.errors > MAX_TRANSIENT_RETRIES else self._pause(job.errors)
        return None

    def _pause(self, attempt: int) -> float:
        return float(min(MAX_BACKOFF, self.backoff * 2 ** (attempt - 1)))


class Delivery:
    def __init__(
        self,
        workspaces: Workspaces,
        on_failure: OnFailure | None = None,
        *,
        policy: SlackPolicy | None = None,
    ) -> None:
        self.workspaces = workspaces
        self.on_failure = on_failure
        self.policy = policy if policy is not None else SlackPolicy()
        #: one lane per (workspace, conversation)
        self.lanes: Lanes[tuple[str | None, str], Job] = Lanes(
            self._send,
            policy=self.policy,
            on_error=self._given_up,
            on_drop=_cancel,
            name="slack-lane",
        )
        #: workspaces where Slack said chat:write.customize is missing: post plainly there
        #: until it is re-granted
        self.plain: set[str | None] = set()
        #: set by the adapter: what to do when a workspace turns out to have removed the app
        self.on_gone: OnGone | None = None
        #: set in HTTP mode: told the conversation of each message posted (Slack echoes it
        #: back as an event, `bot.slack.http_watch`)
        self.on_posted: Callable[[str], None] | None = None

    # the policy's knobs, settable here as before
    @property
    def backoff(self) -> float:
        return self.policy.backoff

    @backoff.setter
    def backoff(self, value: float) -> None:
        self.policy.backoff = value

    @property
    def on_rate_limit(self) -> Callable[[float], None] | None:
        return self.policy.on_rate_limit

    @on_rate_limit.setter
    def on_rate_limit(self, value: Callable[[float], None] | None) -> None:
        self.policy.on_rate_limit = value

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
        if self.lanes.closed:
            raise RuntimeError("Slack's delivery is closed")
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_consume)
        job = Job(method, kwargs, future, what, game_id, report, plain, team, speaker)
        self.lanes.put((team, lane_key), job, speaker)
        return future

    async def call(
        self, lane_key: str, method: str, /, *, team: str | None, **kwargs: Any
    ) -> dict[str, Any] | None:
        """`submit` and wait; None when the call failed (it has been reported)."""
        try:
            return await self.submit(lane_key, method, team=team, **kwargs)
        except (SlackApiError, WorkspaceGone):
            return None

    async def _send(self, job: Job) -> None:
        """One try of ``job`` (a refused token is read again, and a post refused only for
        its custom name and picture goes again plainly, at once); what the policy may try
        again later is raised."""
        while True:
            kwargs = job.plain if job.plain is not None and job.team in self.plain else job.kwargs
            token: str | None = None
            try:
                # asked each time: a token may be refreshed (or revoked) while a job waits
                client = await self.workspaces.client(job.team)
                token = client.token
                response = await getattr(client, job.method.replace(".", "_"))(**kwargs)
            except SlackApiError as err:
                if _is_rate_limit(err):
                    raise
                error, needed = error_fields(err)
                if error in STALE_TOKEN and not job.reread:
                    job.reread = True
                    if await self.workspaces.stale(job.team, token):
                        continue  # the installation read again: a newer token, or gone
                if (
                    error == "missing_scope"
                    and "chat:write.customize" in needed
                    and job.plain is not None
                    and kwargs is not job.plain
                ):
                    self.plain.add(job.team)
                    await self._fail(job, error, needed, recovered=True)
                    continue
                raise
            except TokenRefreshFailed:
                raise  # not gone: the refresh failed just now (the policy tries again)
            except WorkspaceGone:
                if job.team and self.on_gone is not None:
                    self.on_gone(job.team)  # uninstalled (maybe seen by another process)
                raise
            data = dict(response.data) if isinstance(response.data, dict) else {}
            if job.method == "chat.postMessage" and self.on_posted is not None:
                self.on_posted(str(data.get("channel") or kwargs.get("channel") or ""))
            if not job.future.done():
                job.future.set_result(data)
            return

    async def _given_up(self, job: Job, err: Exception) -> None:
        if isinstance(err, SlackApiError):
            await self._fail(job, *error_fields(err))
        elif isinstance(err, TokenRefreshFailed):
            await self._fail(job, f"token refresh failed ({err.error})", "")
        elif isinstance(err, aiohttp.ClientError | TimeoutError | OSError):
            await self._fail(job, f"connection failed ({type(err).__name__})", "")
        if not job.future.done():
            job.future.set_exception(err)

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
        await self.lanes.drain()

    async def close(self, grace: float = 10.0) -> None:
        """Send what is queued (for at most ``grace`` seconds), then stop."""
        await self.lanes.close(grace)


def _cancel(job: Job) -> None:
    if not job.future.done():
        job.future.cancel()


def _consume(future: asyncio.Future[Any]) -> None:
    """Nobody may be waiting for a post: mark its error as seen (it has been reported)."""
    if not future.cancelled():
        future.exception()
