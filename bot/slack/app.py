"""Running the Slack app: Socket Mode by default (no public URL), or HTTP with Slack's request
signatures verified by Bolt.

    await run_slack(settings)                      # Socket Mode, own service
    await run_slack(settings, http_port=3000)      # HTTP: https://<host>/slack/events
    await run_slack(settings, service=service)     # share one GameService with Discord

With ``MAFIABOT_SLACK_CLIENT_ID`` and ``MAFIABOT_SLACK_CLIENT_SECRET`` set the app is installed
into any number of workspaces through "Add to Slack" (HTTP mode: ``/slack/install`` and
``/slack/oauth_redirect`` beside ``/slack/events``; `bot.slack.oauth`); otherwise it serves the
one workspace of ``MAFIABOT_SLACK_BOT_TOKEN``.

`run_slack` runs until it is cancelled. To run Slack next to another adapter on one event loop,
build every adapter first (each subscribes to the service), then resume the games, then run
the transports; see `SlackRunner` and the README's Slack section.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.protection.crypto import SecretBox, SecretKeyError, check_rows, key_file_box
from bot.service.live import LiveGame
from bot.service.port import GameService
from bot.settings import Settings
from bot.slack import inbound
from bot.slack.adapter import SlackAdapter
from bot.slack.http_watch import HttpWatch, events_handler, watch_http
from bot.slack.oauth import (
    Departures,
    InstallGate,
    StatesFull,
    installed_workspaces,
    oauth_settings,
)
from bot.slack.verify import quiet_verification
from bot.table.text import AVATAR_URL_TEMPLATE

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"


class SlackSetupError(RuntimeError):
    """A setting the Slack app cannot run without; the message names it."""


#: Slack's answers to a token it does not take
REFUSED = frozenset({"invalid_auth", "not_authed", "account_inactive", "token_revoked",
                     "token_expired", "not_allowed_token_type"})  # fmt: skip
UNREACHABLE = (
    "check this machine's network connection, DNS and firewall (or proxy), and "
    "MAFIABOT_SLACK_API_URL if set, then start again; running games carry on from where they "
    "were."
)


@asynccontextmanager
async def start_calls(token: str) -> AsyncIterator[None]:
    """Slack's first calls at start: a refused ``token`` (the variable's name) is a
    `SlackSetupError` and no connection at all `PlatformUnreachable`, each one line for the
    person starting the bot (`mafiabot run`), not a traceback."""
    import aiohttp
    from slack_sdk.errors import SlackApiError

    from bot.errors import PlatformUnreachable

    try:
        yield
    except SlackApiError as e:
        error = str(e.response.get("error", "")) if e.response is not None else ""
        if error not in REFUSED:
            raise
        raise SlackSetupError(
            f"Slack refused {token} ({error}): copy it again from the app's settings page "
            "(docs/slack.md)."
        ) from None
    except (aiohttp.ClientConnectionError, TimeoutError) as e:
        reason = str(e).split(" [", 1)[0] or type(e).__name__
        raise PlatformUnreachable(f"Can't reach Slack ({reason}): {UNREACHABLE}") from None


def make_client(
    token: str | None,
    *,
    base_url: str | None = None,
    rate_limit_retries: int = 3,
    like: AsyncWebClient | None = None,
) -> AsyncWebClient:
    """The Web API client, with the SDK's 429 (Retry-After) and connection retries; what the
    SDK gives up on, the delivery queue retries without reordering. ``like``: share that
    client's retry handlers (a workspace's client: the same rate-limit metering)."""
    handlers = (
        like.retry_handlers
        if like is not None
        else [
            AsyncConnectionErrorRetryHandler(),
            AsyncRateLimitErrorRetryHandler(max_retry_count=rate_limit_retries),
        ]
    )
    return AsyncWebClient(
        token=token, base_url=base_url or AsyncWebClient.BASE_URL, retry_handlers=handlers
    )


def authorize_url(api_url: str | None) -> str | None:
    """Slack's consent page on the same host as the Web API (GovSlack, a test server);
    None: slack.com's."""
    if not api_url:
        return None
    return api_url.rstrip("/").removesuffix("/api") + "/oauth/v2/authorize"


def build_app(adapter: SlackAdapter, signing_secret: str | None) -> AsyncApp:
    """The Bolt app with every listener. With a signing secret every HTTP request must carry a
    valid Slack signature (401 otherwise); Socket Mode needs none."""
    app = AsyncApp(
        client=adapter.client,
        signing_secret=signing_secret or "",
        request_verification_enabled=True,
        name="mafiabot",
    )
    quiet_verification(app)
    inbound.register(app, adapter)
    return app


def check_settings(settings: Settings, *, http_port: int | None) -> None:
    """Fail before anything starts when a token the chosen mode needs is missing."""

    def given(value: object) -> bool:
        return value is not None and bool(value.get_secret_value())  # type: ignore[attr-defined]

    if settings.slack_oauth():
        if not settings.slack_client_id.strip() or not given(settings.slack_client_secret):
            raise SlackSetupError(
                "Installing to many workspaces needs both MAFIABOT_SLACK_CLIENT_ID and "
                "MAFIABOT_SLACK_CLIENT_SECRET (Basic Information > App Credentials)."
            )
        if http_port is None:
            raise SlackSetupError(
                "Add to Slack (MAFIABOT_SLACK_CLIENT_ID) needs HTTP mode: run with --http PORT "
                "behind your public https URL."
            )
    elif not given(settings.slack_bot_token):
        raise SlackSetupError("MAFIABOT_SLACK_BOT_TOKEN is not set (the xoxb-... bot token).")
    if http_port is None and not given(settings.slack_app_token):
        raise SlackSetupError(
            "MAFIABOT_SLACK_APP_TOKEN is not set: Socket Mode needs the app-level token "
            "(xapp-..., scope connections:write). Or run in HTTP mode with --http PORT."
        )
    if http_port is not None and not given(settings.slack_signing_secret):
        raise SlackSetupError(
            "MAFIABOT_SLACK_SIGNING_SECRET is not set: HTTP mode verifies every request "
            "with it (Basic Information > App Credentials > Signing Secret)."
        )


class HostAlerts:
    """Problems the service reports (the database refusing a game's writes), as a DM to the
    game's host."""

    def __init__(self, adapter: SlackAdapter) -> None:
        self.adapter = adapter

    async def on_alert(self, game: LiveGame, message: str) -> None:
        sg = self.adapter.games.get(game.id)
        if sg is not None:
            await self.adapter.out.tell_host(sg, message)


def watch_reconnects(client: Any, adapter: SlackAdapter) -> None:
    """Tell the adapter when the Socket Mode client loses its socket and when it has one
    again. Every way the SDK reconnects (Slack's refresh notice, a closed socket, a stale one)
    goes through ``connect_to_new_endpoint``; overlapping calls count as one gap, which ends
    only once the client is connected again."""
    reconnect = client.connect_to_new_endpoint
    busy = 0

    async def reconnecting(force: bool = False) -> None:
        nonlocal busy
        if busy == 0:
            adapter.input_lost()
        busy += 1
        try:
            await reconnect(force)
        finally:
            busy -= 1
            if busy == 0 and await client.is_connected():
                adapter.input_regained()

    client.connect_to_new_endpoint = reconnecting


class SlackRunner:
    """The Slack side of a process: adapter + Bolt app + one transport.

    runner = SlackRunner(settings, service)      # subscribes to the service
    await runner.prepare()                       # auth, open games back, booth backlog
    await runner.serve(http_port=None)           # until cancelled
    """

    def __init__(
        self,
        settings: Settings,
        service: GameService,
        *,
        base_url: str | None = None,
        allow_test_options: bool = False,
        avatar_template: str = AVATAR_URL_TEMPLATE,
    ) -> None:
        self.settings = settings
        #: the transport while it runs: the Socket Mode handler, or the HTTP mode's server
        self._socket: Any = None
        self._http_runner: web.AppRunner | None = None
        #: HTTP mode: the endpoint's health (`bot.slack.http_watch`)
        self.http_watch: HttpWatch | None = None
        self._allow_test_options = allow_test_options
        self._avatar_template = avatar_template
        api_url = base_url or settings.slack_api_url or None
        secret = settings.slack_signing_secret
        signing_secret = secret.get_secret_value() if secret else None
        if settings.slack_oauth():
            self._many_workspaces(service, api_url, signing_secret)
            return
        token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else ""
        if not token:
            raise SlackSetupError("MAFIABOT_SLACK_BOT_TOKEN is not set (the xoxb-... token).")
        self.client = make_client(token, base_url=api_url)
        self.adapter = SlackAdapter(
            service,
            self.client,
            settings=settings,
            allow_test_options=self._allow_test_options,
            avatar_template=self._avatar_template,
        )
        service.add_alert_sink(HostAlerts(self.adapter))
        self.app = build_app(self.adapter, signing_secret)

    def _many_workspaces(
        self, service: GameService, api_url: str | None, signing_secret: str | None
    ) -> None:
        """Installed through "Add to Slack": each workspace's token from our database."""
        settings = self.settings
        client_id = settings.slack_client_id.strip()
        secret = settings.slack_client_secret
        client_secret = secret.get_secret_value() if secret else ""
        if settings.slack_bot_token is not None and settings.slack_bot_token.get_secret_value():
            log.warning(
                "Slack: MAFIABOT_SLACK_BOT_TOKEN is not used when MAFIABOT_SLACK_CLIENT_ID is "
                "set; install the app into that workspace through /slack/install as well"
            )
        # slack-sdk and Bolt log request and response bodies at DEBUG; here those hold each
        # workspace's tokens, which no redaction list knows: their DEBUG lines never go out
        for name in ("slack_sdk", "slack_bolt"):
            logging.getLogger(name).setLevel(logging.INFO)
        #: no token: Bolt's token exchange and refresh (oauth.v2.access) go through it
        self.client = make_client(None, base_url=api_url)
        key = settings.secret_key
        try:
            box = SecretBox.from_setting(key.get_secret_value() if key else None)
            if box is None:  # the key kept in the data folder (made at the first start)
                box = key_file_box(settings.data_dir, service.engine)
            check_rows(service.engine, box)
        except SecretKeyError as err:
            raise SlackSetupError(str(err)) from None
        flow, store = oauth_settings(
            client_id=client_id,
            client_secret=client_secret,
            engine=service.engine,
            redirect_uri=settings.slack_redirect_uri or None,
            authorization_url=authorize_url(api_url),
            box=box,
        )
        workspaces, authorize = installed_workspaces(
            store,
            client_id=client_id,
            client_secret=client_secret,
            api=self.client,
            make=lambda token: make_client(token, base_url=api_url, like=self.client),
        )
        self.adapter = SlackAdapter(
            service,
            workspaces,
            settings=settings,
            allow_test_options=self._allow_test_options,
            avatar_template=self._avatar_template,
        )
        service.add_alert_sink(HostAlerts(self.adapter))
        self.app = AsyncApp(
            client=self.client,
            signing_secret=signing_secret or "",
            request_verification_enabled=True,
            oauth_settings=flow,
            installation_store=store,
            authorize=authorize,  # type: ignore[arg-type]  # Bolt takes an AsyncAuthorize too
            name="mafiabot",
        )
        quiet_verification(self.app)
        inbound.register(
            self.app, self.adapter, Departures(self.adapter.leave_workspace, store, workspaces)
        )

    async def connected(self) -> bool:
        """Is Slack's input reaching us? Socket Mode: the websocket is open and answers its
        pings; HTTP mode: the listener is up. (Health: `bot.ops.health`.)"""
        if self._socket is not None:
            return bool(await self._socket.client.is_connected())
        return self._http_runner is not None and bool(self._http_runner.sites)

    async def stop_input(self) -> None:
        """Stop receiving (a graceful stop, `bot.ops.serve`): the websocket is closed or the
        listener stops, after the requests it is handling are answered. Slack delivers what
        it could not hand over again to the next process, and lines typed meanwhile are read
        back from the booths then. Posting goes on."""
        socket, self._socket = self._socket, None
        if socket is not None:
            await socket.close_async()
        runner, self._http_runner = self._http_runner, None
        if runner is not None:
            await runner.cleanup()
        await self.adapter.relay.idle()  # the booth lines already received reach the service

    async def prepare(self) -> None:
        async with start_calls("MAFIABOT_SLACK_BOT_TOKEN"):
            await self.adapter.start()

    async def serve(self, *, http_port: int | None = None, host: str = "0.0.0.0") -> None:
        """Receive Slack's requests until cancelled."""
        if http_port is None:
            await self._socket_mode()
        else:
            await self._http(http_port, host)

    async def _socket_mode(self) -> None:
        from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler

        app_token = self.settings.slack_app_token
        if app_token is None or not app_token.get_secret_value():
            raise SlackSetupError(
                "MAFIABOT_SLACK_APP_TOKEN is not set: Socket Mode needs the app-level token "
                "(xapp-..., scope connections:write). Or run in HTTP mode with --http PORT."
            )
        handler = AsyncSocketModeHandler(
            self.app, app_token.get_secret_value(), web_client=self.client
        )
        try:
            async with start_calls("MAFIABOT_SLACK_APP_TOKEN"):
                # asked here once: connect_async retries a refused token for ever (a traceback
                # each time); the URL it gives is the one connected to
                opened = await handler.client.web_client.apps_connections_open(
                    app_token=app_token.get_secret_value()
                )
                handler.client.wss_uri = str(opened["url"])
                await handler.connect_async()  # type: ignore[no-untyped-call]
        except BaseException:
            await handler.close_async()  # type: ignore[no-untyped-call]
            raise
        watch_reconnects(handler.client, self.adapter)
        self._socket = handler
        self.adapter.listening()
        log.info("Slack: connected in Socket Mode")
        try:
            await asyncio.Event().wait()
        finally:
            if self._socket is handler:  # not closed by `stop_input` already
                self._socket = None
                await handler.close_async()

    async def _http(self, port: int, host: str) -> None:
        secret = self.settings.slack_signing_secret
        if secret is None or not secret.get_secret_value():
            raise SlackSetupError(
                "MAFIABOT_SLACK_SIGNING_SECRET is not set: HTTP mode verifies every request "
                "with it (Basic Information > App Credentials > Signing Secret)."
            )
        runner = web.AppRunner(self.web_app(), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        self._http_runner = runner
        self.adapter.listening()
        log.info("Slack: listening on http://%s:%s%s", host, port, EVENTS_PATH)
        try:
            await asyncio.Event().wait()
        finally:
            if self._http_runner is runner:  # not stopped by `stop_input` already
                self._http_runner = None
                await runner.cleanup()

    def web_app(self) -> web.Application:
        """The HTTP endpoints: Slack's requests (``/slack/events``, signature checked) and,
        with Add to Slack, the browser's two stops of an install."""
        from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request

        # Slack failing to reach this endpoint is an outage, as a dropped socket is
        if self.http_watch is None:
            self.http_watch = watch_http(self.adapter)
        secret = self.settings.slack_signing_secret
        handle = events_handler(
            self.app, self.http_watch, secret.get_secret_value() if secret else ""
        )
        web_app = web.Application()
        web_app.router.add_post(EVENTS_PATH, handle)
        flow = self.app.oauth_flow
        if flow is not None:  # Add to Slack: the browser's two stops
            gate = InstallGate(trusted_proxies=self.settings.slack_trusted_proxies)
            back = InstallGate(trusted_proxies=self.settings.slack_trusted_proxies)

            async def install(request: web.Request) -> web.Response:
                if not gate.admit_request(request):
                    return web.Response(
                        status=429, text="Too many installs started; try again in a minute."
                    )
                try:
                    return await to_aiohttp_response(
                        await flow.handle_installation(await to_bolt_request(request))
                    )
                except StatesFull:
                    return web.Response(
                        status=503,
                        headers={"Retry-After": "60"},
                        text="Too many installs in progress; try again in a few minutes.",
                    )

            async def redirect(request: web.Request) -> web.Response:
                if not back.admit_request(request):
                    return web.Response(status=429, text="Too many tries; wait a minute.")
                return await to_aiohttp_response(
                    await flow.handle_callback(await to_bolt_request(request))
                )

            web_app.router.add_get(flow.install_path, install)
            web_app.router.add_get(flow.redirect_uri_path, redirect)
        return web_app

    async def close(self) -> None:
        if self.http_watch is not None:
            self.http_watch.close()
        await self.adapter.close()


@asynccontextmanager
async def _own_service(settings: Settings) -> AsyncIterator[GameService]:
    from bot.protection.privacy import PendingWithdrawals
    from bot.runtime import running_service

    async with running_service(settings) as service:
        service.subscribe(PendingWithdrawals(service.engine))
        yield service


async def run_slack(
    settings: Settings,
    *,
    http_port: int | None = None,
    service: GameService | None = None,
    base_url: str | None = None,
    host: str = "0.0.0.0",
    allow_test_options: bool = False,
) -> None:
    """Run the Slack app until cancelled: Socket Mode, or HTTP on ``http_port``.

    With ``service`` given, games are shared with whatever else uses it (Discord); the
    caller owns its lifetime. ``base_url`` points the Web API elsewhere (GovSlack, tests); by
    default it is ``MAFIABOT_SLACK_API_URL``, else Slack's own."""
    check_settings(settings, http_port=http_port)
    async with contextlib.AsyncExitStack() as stack:
        if service is None:
            service = await stack.enter_async_context(_own_service(settings))
        runner = SlackRunner(
            settings, service, base_url=base_url, allow_test_options=allow_test_options
        )
        stack.push_async_callback(runner.close)
        await runner.prepare()
        await runner.serve(http_port=http_port, host=host)
