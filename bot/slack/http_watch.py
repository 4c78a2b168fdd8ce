"""Outages in HTTP mode: Slack can't reach the app's public endpoint.

In Socket Mode the SDK says when its socket drops (`bot.slack.app.watch_reconnects`). In
HTTP mode nothing drops: Slack simply stops reaching the endpoint (a proxy, DNS or TLS
failure, a network split) and tries each event again later (after about a minute, then five),
while the app, which posts through the Web API, goes on working. Unwatched, the agents talk
on and people's lines wait for Slack's retries: the stage would show only agents. So the
watch reads the endpoint's health from what arrives (and fails to):

- **An echo that does not come.** Slack sends the app a ``message`` event for each of its
  own posts in a conversation it listens to (a stage, a booth). Once a conversation has
  echoed, a post to it that is not followed by *any* request within ``echo_wait_s`` means the
  endpoint is unreachable: the input is down since that post. (A conversation that never
  echoed, say an app whose manifest lacks the message events, is never expected to.)
- **Slack's retries.** A request carrying ``X-Slack-Retry-Num`` is an event Slack failed to
  deliver before: if the input was not known to be down, it was, since that event happened
  (its ``event_time``).
- **app_rate_limited.** Slack drops the workspace's events for the rest of the minute named:
  the input is down from that minute's start to its end.

Down is handled as for a dropped socket (`bot.service.outages`): the adapter pauses the running
games' agents and clocks (`SlackAdapter.input_lost`); the next request that arrives means
the endpoint is reachable again (`SlackAdapter.input_regained`): what people typed meanwhile
is read back from the booths and released at the pace it was typed, and each phase gets the
time back.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from aiohttp import web

log = logging.getLogger(__name__)

#: real seconds within which Slack echoes a post (it hands events over within a second or
#: two; it gives the endpoint three seconds to answer before it counts a failure)
ECHO_WAIT_S = 10.0
#: a rate-limited minute ends this many seconds after it began
RATE_LIMIT_MINUTE_S = 60.0


class InputSink(Protocol):
    """What the watch tells (`bot.slack.adapter.SlackAdapter`)."""

    def input_lost(self, since: datetime | None = None) -> None: ...

    def input_regained(self) -> None: ...


class HttpWatch:
    """The health of the HTTP endpoint, from the requests that reach it (`seen`) and the
    posts that should echo (`posted`)."""

    def __init__(
        self,
        sink: InputSink,
        *,
        echo_wait_s: float = ECHO_WAIT_S,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sink = sink
        self.echo_wait_s = echo_wait_s
        self._monotonic = monotonic
        #: conversations whose posts have come back as events
        self.echoing: set[str] = set()
        #: the first post (monotonic, wall clock) not followed by any request yet
        self._waiting: tuple[float, datetime] | None = None
        self._down = False
        self._limited_until: float | None = None
        self._timer: asyncio.TimerHandle | None = None

    @property
    def down(self) -> bool:
        return self._down

    def posted(self, channel: str) -> None:
        """The app posted in ``channel``: an echo is expected if it echoed before."""
        if channel not in self.echoing or self._down or self._waiting is not None:
            return
        self._waiting = (self._monotonic(), datetime.now(UTC))
        self._arm(self.echo_wait_s)

    def seen(self, headers: Mapping[str, str], body: bytes | str) -> None:
        """A request reached the endpoint (before it is verified and dispatched: a request
        that fails its signature still shows the endpoint is reachable; it is not read)."""
        payload = _json(body)
        now = self._monotonic()
        if payload.get("type") == "app_rate_limited":
            self._rate_limited(payload)
            return
        retry = _int(headers.get("X-Slack-Retry-Num") or headers.get("x-slack-retry-num"))
        self._waiting = None
        if self._limited_until is not None and now < self._limited_until:
            return  # Slack still drops this minute's events; the timer ends it
        if retry and not self._down:
            # Slack failed to hand this event over before: the endpoint was unreachable
            # from when it happened until now, unseen (nothing was posted meanwhile)
            since = _event_time(payload) or datetime.now(UTC)
            log.warning("Slack: a retried event (attempt %s): the endpoint was unreachable", retry)
            self._lose(since)
        if self._down:
            self._regain()
        event = payload.get("event")
        if isinstance(event, dict) and event.get("bot_id") and event.get("channel"):
            self.echoing.add(str(event["channel"]))

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # --- inside ---------------------------------------------------------------------------

    def _arm(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(max(0.0, delay), self._check)

    def _check(self) -> None:
        self._timer = None
        now = self._monotonic()
        if self._limited_until is not None:
            if now >= self._limited_until:
                self._limited_until = None
                if self._down:
                    self._regain()
            else:
                self._arm(self._limited_until - now)
            return
        if self._waiting is None or self._down:
            return
        at, since = self._waiting
        if now - at < self.echo_wait_s:
            self._arm(at + self.echo_wait_s - now)
            return
        log.warning(
            "Slack: no request reached the endpoint for %.0f s after a post that echoes",
            now - at,
        )
        self._waiting = None
        self._lose(since)

    def _rate_limited(self, payload: Mapping[str, Any]) -> None:
        started = _int(payload.get("minute_rate_limited"))
        since = datetime.fromtimestamp(started, UTC) if started else datetime.now(UTC)
        left = RATE_LIMIT_MINUTE_S - max(0.0, (datetime.now(UTC) - since).total_seconds())
        log.warning("Slack: app_rate_limited; events dropped for %.0f s more", left)
        self._limited_until = self._monotonic() + max(0.0, left)
        self._waiting = None
        if not self._down:
            self._lose(since)
        self._arm(max(0.0, left))

    def _lose(self, since: datetime) -> None:
        self._down = True
        self.sink.input_lost(since)

    def _regain(self) -> None:
        self._down = False
        self.sink.input_regained()


def _json(body: bytes | str) -> dict[str, Any]:
    """The request's JSON body (an event), or {} (a form: a command, an action)."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    if not text.lstrip().startswith("{"):
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _event_time(payload: Mapping[str, Any]) -> datetime | None:
    seconds = _int(payload.get("event_time"))
    return datetime.fromtimestamp(seconds, UTC) if seconds > 0 else None


def watch_http(adapter: Any, echo_wait_s: float = ECHO_WAIT_S) -> HttpWatch:
    """A watch telling ``adapter`` (a `SlackAdapter`) of its endpoint's outages, told of
    each message the adapter posts."""
    watch = HttpWatch(adapter, echo_wait_s=echo_wait_s)
    adapter.out.delivery.on_posted = watch.posted
    return watch


def events_handler(app: Any, watch: HttpWatch, signing_secret: str) -> Any:
    """The aiohttp handler of ``/slack/events``: each request with a good signature is shown
    to ``watch`` first (so an outage it ends is marked before its event is applied), then
    dispatched to the Bolt ``app`` (which checks the signature again and answers)."""
    from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
    from slack_sdk.signature import SignatureVerifier

    verifier = SignatureVerifier(signing_secret)

    async def handle(request: web.Request) -> web.Response:
        body = await request.read()
        if verifier.is_valid_request(body, dict(request.headers)):
            watch.seen(request.headers, body)
        bolt_request = await to_bolt_request(request)
        return await to_aiohttp_response(await app.async_dispatch(bolt_request))

    return handle
