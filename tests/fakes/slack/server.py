"""`FakeSlack`: the loopback server and the Python API tests drive it with.

See the package docstring (`tests/fakes/slack/__init__.py`) for a walkthrough.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import secrets
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, Self, TypedDict, TypeVar, Unpack

import aiohttp
from aiohttp import web

from tests.fakes.slack import web_api
from tests.fakes.slack.inbound import Builder, Delivery, ResponseUrl, signature, signed_headers
from tests.fakes.slack.model import (
    DEFAULT_BOT_SCOPES,
    JSON,
    ApiCall,
    Ephemeral,
    FakeChannel,
    FakeUser,
    FakeView,
    InboundResult,
    Message,
    ResponseUrlPost,
    SocketAck,
    decode_json_arg,
    normalize_blocks,
)
from tests.fakes.slack.socket_mode import SocketModeHub
from tests.fakes.slack.workspace import TRIGGER_TTL_S, ChannelRef, UserRef, Workspace

T = TypeVar("T")

# Args whose form-encoded form is a JSON string; decoded before recording so tests compare
# dicts whichever encoding the SDK picked for the method.
JSON_ARGS = ("blocks", "attachments", "view", "metadata")
RESPONSE_URL_MAX_USES = 5


class Dispatcher(Protocol):
    """Anything with Bolt's `async_dispatch(AsyncBoltRequest) -> BoltResponse` (an AsyncApp)."""

    async def async_dispatch(self, req: Any) -> Any: ...


class SocketModeTarget:
    """Deliver over the Socket Mode websocket instead of HTTP; use `fake.socket`."""

    def __repr__(self) -> str:
        return "<socket mode>"


Target = str | Dispatcher | SocketModeTarget


class SendOptions(TypedDict, total=False):
    """Per-delivery knobs every inbound helper accepts.

    forge: sign with a wrong secret (the app must answer 401 and run no handler).
    timestamp: X-Slack-Request-Timestamp to sign with (e.g. 10 minutes old: replay).
    headers: extra request headers.
    timeout: seconds to wait for the HTTP response / Socket Mode ack (default 10 / 3).
    """

    forge: bool
    timestamp: int
    headers: dict[str, str]
    timeout: float


@dataclass
class _Fault:
    kind: str  # "rate_limit" | "error" | "http" | "stall"
    times: int
    after: int
    retry_after: int = 1
    error: str = ""
    extra: JSON = field(default_factory=dict)
    status: int = 503
    body: str = ""
    content_type: str = "text/plain"
    delay: float = 0.0
    #: only calls into this conversation (None: every call of the method)
    channel: str | None = None


class FakeSlack:
    """A fake Slack workspace + Web API + inbound request sender on 127.0.0.1."""

    def __init__(
        self,
        signing_secret: str = "fake-signing-secret",
        *,
        scopes: Iterable[str] = DEFAULT_BOT_SCOPES,
        bot_name: str = "mafiabot",
        team_domain: str = "fakemafia",
        trigger_ttl: float | None = TRIGGER_TTL_S,
        strict_customize: bool = True,
        id_offset: int = 0,
        enterprise: bool = False,
    ) -> None:
        self.signing_secret = signing_secret
        self.verification_token = secrets.token_hex(12)
        self.workspace = Workspace(
            team_domain=team_domain,
            bot_name=bot_name,
            scopes=scopes,
            trigger_ttl=trigger_ttl,
            id_offset=id_offset,
            enterprise=enterprise,
        )
        self.workspace.strict_customize = strict_customize
        self.builder = Builder(self.workspace, self.verification_token)
        self.socket = SocketModeTarget()
        self.hub = SocketModeHub(self.workspace, self._touch)
        self.target: Target | None = None
        self.api_calls: list[ApiCall] = []
        self.responses: list[ResponseUrlPost] = []
        self.deliveries: list[tuple[Delivery, InboundResult]] = []
        self._faults: dict[str, deque[_Fault]] = {}
        #: Slack's chat.postMessage allowance per channel, (burst, messages a second), or None
        #: (no limit). Over it, a post is refused with HTTP 429, ``Retry-After: <whole
        #: seconds until one more would be taken>`` and ``{"ok": false, "error":
        #: "ratelimited"}``; nothing is posted. A refused post costs nothing.
        self.post_limit: tuple[float, float] | None = None
        self._post_buckets: dict[str, tuple[float, float]] = {}
        self._denied: dict[str, str] = {}
        self._tick = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._app_runners: list[web.AppRunner] = []
        self._session: aiohttp.ClientSession | None = None
        self._port: int | None = None

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> Self:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._handle_api)
        app.router.add_post("/response/{kind}/{team}/{key}", self._handle_response_url)
        app.router.add_get("/link/", self.hub.handle)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        self._runner = runner
        self._port = int(runner.addresses[0][1])
        self.builder.origin = self.origin
        self._session = aiohttp.ClientSession()
        return self

    async def close(self) -> None:
        for runner in self._app_runners:
            await runner.cleanup()
        self._app_runners.clear()
        await self.hub.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def origin(self) -> str:
        if self._port is None:
            raise RuntimeError("FakeSlack not started")
        return f"http://127.0.0.1:{self._port}"

    @property
    def base_url(self) -> str:
        """For `AsyncWebClient(base_url=...)`; ends in `/` as slack_sdk joins method names."""
        return f"{self.origin}/api/"

    # -- workspace shortcuts ---------------------------------------------------------------

    @property
    def bot_token(self) -> str:
        return self.workspace.bot_token

    @property
    def app_token(self) -> str:
        return self.workspace.app_token

    @property
    def bot(self) -> FakeUser:
        return self.workspace.bot

    @property
    def team_id(self) -> str:
        return self.workspace.team_id

    def add_user(self, name: str, **kwargs: Any) -> FakeUser:
        """A person (joins #general).  kwargs: id, real_name, display_name, is_bot, is_admin."""
        return self.workspace.add_user(name, **kwargs)

    def add_channel(self, name: str, **kwargs: Any) -> FakeChannel:
        """kwargs: id, private, members (users), bot_member=True, creator."""
        return self.workspace.add_channel(name, **kwargs)

    def dm(self, user: UserRef) -> FakeChannel:
        """The bot's DM conversation with `user` (opened if needed)."""
        return self.workspace.dm(user)

    def channel(self, channel: ChannelRef) -> FakeChannel:
        return self.workspace.channel(channel)

    def archive(self, channel: ChannelRef) -> FakeChannel:
        """Archive as a person would in the UI (no event is sent)."""
        return self.workspace.archive(channel)

    def delete_channel(self, channel: ChannelRef) -> FakeChannel:
        """Delete without telling the app; `channel_deleted()` also sends the event."""
        return self.workspace.delete_channel(channel)

    def add_view(self, user: UserRef, view: JSON) -> FakeView:
        """Register an open modal for `user` as if the app had opened it (for submit_view)."""
        stored = FakeView(
            id=self.workspace.ids.new("V"),
            user=self.workspace.user_id(user),
            view={**view, "blocks": normalize_blocks(view.get("blocks", []))},
            team_id=self.team_id,
            app_id=self.workspace.app_id,
            bot_id=self.workspace.bot_id,
            hash=f"{int(time.time())}.{secrets.token_hex(4)}",
        )
        self.workspace.views[stored.id] = stored
        return stored

    # -- recordings ------------------------------------------------------------------------

    def calls(self, method: str | None = None, *, ok: bool | None = None) -> list[ApiCall]:
        """Web API calls in arrival order, including 429s and errors unless `ok` filters."""
        return [
            c
            for c in self.api_calls
            if (method is None or c.method == method) and (ok is None or c.ok == ok)
        ]

    def messages_in(self, channel: ChannelRef, *, replies: bool = True) -> list[Message]:
        """Messages currently in a conversation (deleted ones gone, edits applied), oldest
        first; thread replies included unless `replies=False`."""
        cid = self.workspace.channel_id(channel)
        found = self.workspace.channels.get(cid) or self.workspace.deleted_channels.get(cid)
        if found is None:
            found = self.workspace.channel(channel)
        return [m for m in found.messages if replies or not m.is_reply]

    def ephemerals(
        self, user: UserRef | None = None, channel: ChannelRef | None = None
    ) -> list[Ephemeral]:
        uid = None if user is None else self.workspace.user_id(user)
        cid = None if channel is None else self.workspace.channel_id(channel)
        return [
            e
            for e in self.workspace.ephemerals
            if (uid is None or e.user == uid) and (cid is None or e.channel == cid)
        ]

    def open_views(self, user: UserRef | None = None) -> list[FakeView]:
        uid = None if user is None else self.workspace.user_id(user)
        return [
            v
            for v in self.workspace.views.values()
            if not v.closed and v.type == "modal" and (uid is None or v.user == uid)
        ]

    def home_view(self, user: UserRef) -> FakeView | None:
        return self.workspace.home_views.get(self.workspace.user_id(user))

    @property
    def socket_acks(self) -> list[SocketAck]:
        return self.hub.acks

    # -- fault injection -------------------------------------------------------------------

    def rate_limit(self, method: str, times: int = 1, retry_after: int = 1, after: int = 0) -> None:
        """Answer the next `times` calls of `method` (after letting `after` through) with
        HTTP 429, `Retry-After: <retry_after>` and `{"ok": false, "error": "ratelimited"}`.

        slack_sdk's AsyncRateLimitErrorRetryHandler sleeps int(Retry-After) + random()
        seconds and retries at most `max_retry_count` (default 1) times."""
        if not isinstance(retry_after, int):
            raise TypeError("Retry-After is whole seconds; slack_sdk parses it with int()")
        self._faults.setdefault(method, deque()).append(
            _Fault("rate_limit", times, after, retry_after=retry_after)
        )

    def fail(self, method: str, error: str, times: int = 1, after: int = 0, **extra: Any) -> None:
        """Answer the next `times` calls of `method` with `{"ok": false, "error": error}`."""
        self._faults.setdefault(method, deque()).append(
            _Fault("error", times, after, error=error, extra=extra)
        )

    def server_error(
        self,
        method: str,
        status: int = 503,
        times: int = 1,
        after: int = 0,
        body: str = "upstream connect error or disconnect/reset before headers",
        content_type: str = "text/plain",
        channel: ChannelRef | None = None,
    ) -> None:
        """Answer the next `times` calls of `method` (into `channel`, if given) with HTTP
        `status` and a non-JSON body, as Slack's edge or a proxy in front of it does when
        Slack is having trouble. Nothing is done (no message is posted)."""
        self._faults.setdefault(method, deque()).append(
            _Fault(
                "http",
                times,
                after,
                status=status,
                body=body,
                content_type=content_type,
                channel=None if channel is None else self.channel(channel).id,
            )
        )

    def stall(self, method: str, seconds: float, times: int = 1, after: int = 0) -> None:
        """Hold the next `times` calls of `method` for `seconds` (longer than the client's
        timeout: it gives up), then answer 504 without doing anything."""
        self._faults.setdefault(method, deque()).append(
            _Fault("stall", times, after, status=504, body="gateway timeout", delay=seconds)
        )

    def deny_scope(self, method: str, scope: str) -> None:
        """Every call of `method` fails with missing_scope, needed=`scope`, until cleared."""
        self._denied[method] = scope

    def revoke_scope(self, scope: str) -> None:
        """Take `scope` off the bot token; methods needing it fail with missing_scope."""
        self.workspace.bot_scopes().discard(scope)

    def grant_scope(self, scope: str) -> None:
        self.workspace.bot_scopes().add(scope)

    def clear_faults(self) -> None:
        self._faults.clear()
        self._denied.clear()

    def rate_limited_posts(self) -> int:
        """chat.postMessage calls refused with a 429 so far (the faults' and the limit's)."""
        return sum(1 for c in self.api_calls if c.method == "chat.postMessage" and c.status == 429)

    def _take_post(self, channel: str) -> float:
        """Take one post from ``channel``'s bucket: 0 when allowed, else seconds until it
        would be."""
        assert self.post_limit is not None
        burst, rate = self.post_limit
        now = time.monotonic()
        tokens, at = self._post_buckets.get(channel, (burst, now))
        tokens = min(burst, tokens + (now - at) * rate)
        if tokens < 1.0:
            self._post_buckets[channel] = (tokens, now)
            return (1.0 - tokens) / rate
        self._post_buckets[channel] = (tokens - 1.0, now)
        return 0.0

    def _next_fault(self, method: str, args: JSON) -> _Fault | None:
        queue = self._faults.get(method)
        if not queue:
            return None
        fault = queue[0]
        if fault.channel is not None and args.get("channel") != fault.channel:
            return None
        if fault.after > 0:
            fault.after -= 1
            return None
        fault.times -= 1
        if fault.times <= 0:
            queue.popleft()
        return fault

    # -- waiting ---------------------------------------------------------------------------

    def _touch(self) -> None:
        tick, self._tick = self._tick, asyncio.Event()
        tick.set()

    async def wait_until(
        self, predicate: Callable[[], T], within: float = 20.0, what: str = "condition"
    ) -> T:
        """Poll `predicate` on every change the fake sees; return its first truthy value.

        Bolt runs listeners as background tasks after ack(), so the HTTP response to an
        inbound request comes back before the handler's API calls; wait for those."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while True:
            result = predicate()
            if result:
                return result
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"FakeSlack: timed out after {within}s waiting for {what}")
            tick = self._tick
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(tick.wait(), min(remaining, 0.25))

    async def wait_for_calls(
        self, method: str, count: int = 1, *, within: float = 20.0, ok: bool | None = True
    ) -> list[ApiCall]:
        await self.wait_until(
            lambda: len(self.calls(method, ok=ok)) >= count, within, f"{count} {method} call(s)"
        )
        return self.calls(method, ok=ok)

    async def wait_for_messages(
        self, channel: ChannelRef, count: int = 1, *, within: float = 20.0
    ) -> list[Message]:
        """Wait until the app has `count` messages in `channel`; returns the app's messages
        (posted via the API or an in_channel response_url), not users' injected ones."""

        def enough() -> bool:
            bot = [m for m in self.messages_in(channel) if m.source != "user"]
            return len(bot) >= count

        await self.wait_until(enough, within, f"{count} message(s) in {channel}")
        return [m for m in self.messages_in(channel) if m.source != "user"]

    async def wait_for_responses(
        self, count: int = 1, *, within: float = 20.0
    ) -> list[ResponseUrlPost]:
        await self.wait_until(
            lambda: len(self.responses) >= count, within, f"{count} response_url post(s)"
        )
        return list(self.responses)

    async def wait_socket_connected(self, within: float = 20.0) -> None:
        await self.wait_until(lambda: self.hub.connected, within, "a Socket Mode connection")

    async def socket_disconnect(self, reason: str = "refresh_requested") -> None:
        """Send Slack's `disconnect` message; the SDK reconnects via apps.connections.open."""
        await self.hub.disconnect(reason)

    # -- hosting the app under test --------------------------------------------------------

    async def serve(self, app: Dispatcher, path: str = "/slack/events") -> str:
        """Serve a Bolt AsyncApp over HTTP on loopback through bolt's aiohttp adapter; the URL
        becomes the default target if none is set."""
        from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request

        async def handle(request: web.Request) -> web.Response:
            bolt_request = await to_bolt_request(request)
            return await to_aiohttp_response(await app.async_dispatch(bolt_request))

        web_app = web.Application()
        web_app.router.add_post(path, handle)
        runner = web.AppRunner(web_app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        self._app_runners.append(runner)
        url = f"http://127.0.0.1:{runner.addresses[0][1]}{path}"
        if self.target is None:
            self.target = url
        return url

    # -- inbound: signing and sending ------------------------------------------------------

    def sign(self, body: str, timestamp: int | None = None) -> dict[str, str]:
        """The two headers Slack adds to every HTTP request to the app."""
        return signed_headers(self.signing_secret, body, timestamp)

    async def send(
        self, target: Target | None, delivery: Delivery, **opts: Unpack[SendOptions]
    ) -> InboundResult:
        """Deliver one built request to `target` (URL, AsyncApp, or `fake.socket`)."""
        target = target if target is not None else self.target
        if target is None:
            raise ValueError("no target: pass a URL / AsyncApp / fake.socket or call serve()")
        if isinstance(target, SocketModeTarget):
            result = await self._send_socket(delivery, opts)
        else:
            result = await self._send_http(target, delivery, opts)
        self.deliveries.append((delivery, result))
        if delivery.view is not None and result.status == 200:
            self._apply_view_response(delivery.view, result)
        self._touch()
        return result

    async def _send_socket(self, delivery: Delivery, opts: SendOptions) -> InboundResult:
        if delivery.envelope_type is None:
            raise ValueError(f"{delivery.kind} has no Socket Mode form")
        retry = int(delivery.headers.get("X-Slack-Retry-Num", "0"))
        return await self.hub.send(
            delivery.envelope_type,
            delivery.payload,
            accepts_response_payload=delivery.accepts_response_payload,
            ack_within=opts.get("timeout", 3.0),
            retry_attempt=retry,
            retry_reason=delivery.headers.get("X-Slack-Retry-Reason", ""),
        )

    async def _send_http(
        self, target: str | Dispatcher, delivery: Delivery, opts: SendOptions
    ) -> InboundResult:
        timestamp = opts.get("timestamp", int(time.time()))
        headers = {
            "Content-Type": delivery.content_type,
            "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
            **self.sign(delivery.body, timestamp),
            **delivery.headers,
            **opts.get("headers", {}),
        }
        if opts.get("forge"):
            forged = signature("not-" + self.signing_secret, timestamp, delivery.body)
            headers["X-Slack-Signature"] = forged
        started = time.monotonic()
        timeout = opts.get("timeout", 10.0)
        if isinstance(target, str):
            assert self._session is not None, "FakeSlack not started"
            async with self._session.post(
                target,
                data=delivery.body.encode(),
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=timeout),
            ) as resp:
                body = await resp.text()
                return InboundResult(
                    resp.status, body, dict(resp.headers), time.monotonic() - started
                )
        from slack_bolt.request.async_request import AsyncBoltRequest

        request = AsyncBoltRequest(body=delivery.body, headers=dict(headers.items()))
        response = await asyncio.wait_for(target.async_dispatch(request), timeout)
        return InboundResult(
            int(response.status),
            str(response.body or ""),
            dict(response.first_headers()),
            time.monotonic() - started,
        )

    def _apply_view_response(self, view: FakeView, result: InboundResult) -> None:
        """What Slack does with a view_submission's ack: close, show errors, update, push."""
        try:
            body = result.json() if result.body.strip().startswith("{") else None
        except ValueError:
            body = None
        action = body.get("response_action") if isinstance(body, dict) else None
        if action is None:
            self._close_view_stack(view)
        elif action == "update" and isinstance(body, dict):
            view.view = web_api.validate_view(body.get("view"), home=False)
            view.hash = f"{int(time.time())}.{secrets.token_hex(4)}"
        elif action == "push" and isinstance(body, dict):
            pushed = self.add_view(view.user, web_api.validate_view(body.get("view"), home=False))
            pushed.previous_view_id = view.id
            pushed.root_view_id = view.root_view_id or view.id
        elif action == "clear":
            for other in self.open_views(view.user):
                other.closed = True
        # "errors": the modal stays open with the messages shown

    def _close_view_stack(self, view: FakeView) -> None:
        view.closed = True
        if view.previous_view_id is None:
            for other in self.workspace.views.values():
                if other.root_view_id == view.id:
                    other.closed = True

    # -- inbound: what users do ------------------------------------------------------------

    async def slash(
        self,
        target: Target | None = None,
        /,
        *,
        user: UserRef,
        channel: ChannelRef | None = None,
        command: str = "/mafia",
        text: str = "",
        **opts: Unpack[SendOptions],
    ) -> InboundResult:
        """`user` types `/command text` in `channel` (default: their DM with the bot)."""
        delivery = self.builder.slash(user=user, channel=channel, command=command, text=text)
        return await self.send(target, delivery, **opts)

    async def click(
        self,
        target: Target | None = None,
        /,
        *,
        user: UserRef,
        action_id: str,
        value: str | None = None,
        message: Message | Ephemeral | str | None = None,
        channel: ChannelRef | None = None,
        view: FakeView | str | None = None,
        **opts: Unpack[SendOptions],
    ) -> InboundResult:
        """`user` clicks the button `action_id` on the newest message / ephemeral / modal
        they can see that has it (or on `message` / in `channel` / in `view`).  `value`
        defaults to the button's own value."""
        delivery = self.builder.block_action(
            user=user,
            action_id=action_id,
            value=value,
            message=message,
            channel=channel,
            view=view,
            expect={"button"},
        )
        return await self.send(target, delivery, **opts)

    async def select(
        self,
        target: Target | None = None,
        /,
        *,
        user: UserRef,
        action_id: str,
        value: Any,
        message: Message | Ephemeral | str | None = None,
        channel: ChannelRef | None = None,
        view: FakeView | str | None = None,
        **opts: Unpack[SendOptions],
    ) -> InboundResult:
        """`user` picks `value` in a select menu (static_select: an option value that the
        menu must offer; users_select: a user id; ...).  Located like `click`."""
        delivery = self.builder.block_action(
            user=user,
            action_id=action_id,
            value=value,
            message=message,
            channel=channel,
            view=view,
        )
        if delivery.payload["actions"][0]["type"] == "button":
            raise ValueError(f"{action_id!r} is a button; use click()")
        return await self.send(target, delivery, **opts)

    async def submit_view(
        self,
        target: Target | None = None,
        /,
        *,
        user: UserRef,
        view: FakeView | str | None = None,
        callback_id: str | None = None,
        values: JSON | None = None,
        **opts: Unpack[SendOptions],
    ) -> InboundResult:
        """`user` fills in and submits a modal: `view`, else their newest open modal (with
        `callback_id` if given).  `values`: {block_id: {action_id: v}} or {action_id: v}.
        The fake then closes / updates / pushes the modal as the app's ack asks."""
        uid = self.workspace.user_id(user)
        if isinstance(view, str):
            found = self.workspace.views[view]
        elif view is None:
            candidates = [
                v
                for v in self.open_views(uid)
                if callback_id is None or v.callback_id == callback_id
            ]
            if not candidates:
                raise LookupError(
                    f"{uid} has no open modal"
                    + (f" with callback_id {callback_id!r}" if callback_id else "")
                )
            found = candidates[-1]
        else:
            found = view
        if found.closed:
            raise ValueError(f"view {found.id} is closed")
        delivery = self.builder.view_submission(user=uid, view=found, values=values)
        return await self.send(target, delivery, **opts)

    async def close_view(
        self,
        target: Target | None = None,
        /,
        *,
        user: UserRef,
        view: FakeView | str | None = None,
        **opts: Unpack[SendOptions],
    ) -> InboundResult | None:
        """`user` dismisses a modal; `view_closed` is sent only if it set notify_on_close."""
        found = self.workspace.views[view] if isinstance(view, str) else view
        if found is None:
            open_ = self.open_views(user)
            if not open_:
                raise LookupError("no open modal to close")
            found = open_[-1]
        self._close_view_stack(found)
        if not found.view.get("notify_on_close"):
            self._touch()
            return None
        return await self.send(target, self.builder.view_closed(user=user, view=found), **opts)

    async def event(
        self,
        target: Target | None = None,
        /,
        event: JSON | None = None,
        *,
        event_id: str | None = None,
        retry_num: int | None = None,
        retry_reason: str = "http_timeout",
        **opts: Unpack[SendOptions],
    ) -> InboundResult:
        """Send any Events API `event` in an `event_callback` envelope.  `retry_num` marks
        it as Slack's redelivery (X-Slack-Retry-Num / retry_attempt) to test dedupe."""
        if event is None:
            raise ValueError("event is required")
        delivery = self.builder.event(event, event_id=event_id)
        if retry_num is not None:
            delivery.headers = {
                "X-Slack-Retry-Num": str(retry_num),
                "X-Slack-Retry-Reason": retry_reason,
            }
        return await self.send(target, delivery, **opts)

    async def message_event(
        self,
        target: Target | None = None,
        /,
        *,
        user: UserRef,
        text: str,
        channel: ChannelRef | None = None,
        thread_ts: str | None = None,
        subtype: str | None = None,
        event_id: str | None = None,
        **opts: Unpack[SendOptions],
    ) -> InboundResult:
        """`user` writes `text` in `channel` (default: their DM with the bot, channel_type
        "im").  The message is stored in the conversation's history too."""
        event, _ = self.builder.user_message(
            event_type="message",
            user=user,
            text=text,
            channel=channel,
            thread_ts=thread_ts,
            subtype=subtype,
        )
        return await self.event(target, event, event_id=event_id, **opts)

    async def app_mention(
        self,
        target: Target | None = None,
        /,
        *,
        user: UserRef,
        text: str,
        channel: ChannelRef,
        thread_ts: str | None = None,
        **opts: Unpack[SendOptions],
    ) -> InboundResult:
        """`user` mentions the bot; `<@BOT>` is prepended unless `text` already has it."""
        mention = f"<@{self.bot.id}>"
        text = text if mention in text else f"{mention} {text}"
        event, _ = self.builder.user_message(
            event_type="app_mention",
            user=user,
            text=text,
            channel=channel,
            thread_ts=thread_ts,
        )
        return await self.event(target, event, **opts)

    async def member_joined(
        self,
        target: Target | None = None,
        /,
        *,
        user: UserRef,
        channel: ChannelRef,
        inviter: UserRef | None = None,
        **opts: Unpack[SendOptions],
    ) -> InboundResult:
        """`user` joins `channel` (added to its members) and `member_joined_channel` is sent."""
        event = self.builder.member_joined(user=user, channel=channel, inviter=inviter)
        return await self.event(target, event, **opts)

    async def channel_deleted(
        self,
        target: Target | None = None,
        /,
        *,
        channel: ChannelRef,
        actor: UserRef | None = None,
        **opts: Unpack[SendOptions],
    ) -> InboundResult:
        """Delete `channel`; sends `channel_deleted`, or `group_deleted` for a private one."""
        event = self.builder.channel_deleted(channel=channel, actor=actor)
        return await self.event(target, event, **opts)

    async def url_verification(
        self,
        target: Target | None = None,
        /,
        challenge: str | None = None,
        **opts: Unpack[SendOptions],
    ) -> InboundResult:
        delivery = self.builder.url_verification(challenge or secrets.token_urlsafe(24))
        return await self.send(target, delivery, **opts)

    # -- Web API endpoint ------------------------------------------------------------------

    async def _handle_api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args: JSON = dict(request.query)
        raw = await request.read()
        content_type = request.content_type
        if raw:
            if content_type == "application/json":
                try:
                    body = json.loads(raw)
                except ValueError:
                    return self._respond(
                        method,
                        args,
                        None,
                        request,
                        200,
                        {"ok": False, "error": "invalid_json"},
                        set(),
                    )
                if isinstance(body, dict):
                    args.update(body)
            elif content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
                form = await request.post()
                args.update({k: v for k, v in form.items() if isinstance(v, str)})
        token = args.pop("token", None)
        auth = request.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            token = auth.removeprefix("Bearer ").strip()
        for key in JSON_ARGS:
            if isinstance(args.get(key), str):
                with contextlib.suppress(ValueError):
                    args[key] = decode_json_arg(args[key])

        fault = self._next_fault(method, args)
        if fault is not None and fault.kind == "rate_limit":
            headers = {"Retry-After": str(fault.retry_after)}
            return self._respond(
                method,
                args,
                token,
                request,
                429,
                {"ok": False, "error": "ratelimited"},
                set(),
                headers,
            )
        if method == "chat.postMessage" and self.post_limit is not None:
            wait = self._take_post(str(args.get("channel") or ""))
            if wait > 0:
                return self._respond(
                    method,
                    args,
                    token,
                    request,
                    429,
                    {"ok": False, "error": "ratelimited"},
                    set(),
                    {"Retry-After": str(max(1, math.ceil(wait)))},
                )
        if fault is not None and fault.kind in ("http", "stall"):
            if fault.delay:
                await asyncio.sleep(fault.delay)
            self.api_calls.append(
                ApiCall(method, args, token, request.method, request.content_type, fault.status, {})
            )
            self._touch()
            return web.Response(
                status=fault.status, text=fault.body, content_type=fault.content_type
            )
        if fault is not None:
            return self._respond(
                method,
                args,
                token,
                request,
                200,
                {"ok": False, "error": fault.error, **fault.extra},
                set(),
            )
        status, body, scopes = web_api.dispatch(
            method, dict(args), token, self.workspace, self.origin, self._denied
        )
        return self._respond(method, args, token, request, status, body, scopes)

    def _respond(
        self,
        method: str,
        args: JSON,
        token: str | None,
        request: web.Request,
        status: int,
        body: JSON,
        scopes: set[str],
        headers: dict[str, str] | None = None,
    ) -> web.Response:
        self.api_calls.append(
            ApiCall(method, args, token, request.method, request.content_type, status, body)
        )
        self._touch()
        all_headers = {"X-Slack-Req-Id": secrets.token_hex(16), **(headers or {})}
        if scopes:
            all_headers["X-OAuth-Scopes"] = ",".join(sorted(scopes))
        return web.json_response(body, status=status, headers=all_headers)

    # -- response_url endpoint -------------------------------------------------------------

    async def _handle_response_url(self, request: web.Request) -> web.Response:
        info = self.builder.response_urls.get(request.match_info["key"])
        url = str(request.url)
        try:
            body = await request.json()
        except ValueError:
            body = None
        if info is None:
            return web.Response(status=404, text="no_service")
        info.uses += 1
        if not isinstance(body, dict):
            status, text = 400, "invalid_payload"
        elif info.uses > RESPONSE_URL_MAX_USES:
            status, text = 404, "used_url"
        elif not body.get("text") and not body.get("blocks") and not body.get("delete_original"):
            status, text = 400, "no_text"
        else:
            status, text = 200, "ok"
            self._apply_response(info, body)
        self.responses.append(
            ResponseUrlPost(
                url=url,
                kind=info.kind,
                user=info.user,
                channel=info.channel,
                body=body if isinstance(body, dict) else {},
                status=status,
                original_ts=info.original_ts,
            )
        )
        self._touch()
        return web.Response(status=status, text=text, content_type="text/plain")

    def _apply_response(self, info: ResponseUrl, body: JSON) -> None:
        """Effects of a response_url post, as Slack applies them."""
        ws = self.workspace
        channel = ws.channels.get(info.channel or "")
        blocks = body.get("blocks")
        blocks = normalize_blocks(blocks) if isinstance(blocks, list) else None
        if info.original_ts and (body.get("delete_original") or body.get("replace_original")):
            if info.original_ephemeral:
                for eph in ws.ephemerals:
                    if eph.ts == info.original_ts:
                        if body.get("delete_original"):
                            ws.ephemerals.remove(eph)
                        else:
                            eph.text, eph.blocks = str(body.get("text", "")), blocks
                        break
                return
            original = channel.find(info.original_ts) if channel else None
            if original is not None:
                if body.get("delete_original"):
                    channel.messages.remove(original)  # type: ignore[union-attr]
                else:
                    original.text = str(body.get("text", ""))
                    original.blocks = blocks
                    original.edited_ts = ws.clock.next()
            return
        if channel is None:
            return
        if body.get("response_type") == "in_channel":
            ws.post(
                channel,
                user=ws.bot.id,
                bot_id=ws.bot_id,
                app_id=ws.app_id,
                text=str(body.get("text", "")),
                blocks=blocks,
                thread_ts=body.get("thread_ts"),
                source="response_url",
            )
        else:
            ws.ephemerals.append(
                Ephemeral(
                    ts=ws.clock.next(),
                    channel=channel.id,
                    user=info.user,
                    text=str(body.get("text", "")),
                    blocks=blocks,
                    source="response_url",
                )
            )
