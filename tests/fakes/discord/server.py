"""`FakeDiscord`: the loopback server plus the API tests use to play the humans.

The world-building calls (`add_guild`, `add_channel`, ...) are synchronous and, once a bot is
connected, queue the matching gateway dispatch; the user actions (`send_message`, `slash`,
`click`, ...) are coroutines that return once their dispatch is on the wire.  Neither waits
for the bot to *handle* the event: wait for its effect (`interaction.response()`,
`wait_for_message`, `wait_for_request`, or an event in the bot).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

from aiohttp import web

from tests.fakes.discord import routes_app, routes_channels, routes_webhooks
from tests.fakes.discord.gateway import (
    OP_INVALID_SESSION,
    OP_RECONNECT,
    GatewaySession,
    handle_gateway,
)
from tests.fakes.discord.interactions import (
    Interaction,
    component_payload,
    modal_payload,
    slash_payload,
)
from tests.fakes.discord.model import (
    JSON,
    PERMISSIONS,
    PRIVATE_THREAD,
    Channel,
)
from tests.fakes.discord.rest import RecordedRequest, Rule, handle_rest
from tests.fakes.discord.world import (
    ChannelLike,
    DiscordError,
    UploadedFile,
    UserLike,
    World,
)

P = PERMISSIONS
# Importing these registers their handlers in rest.ROUTES.
ROUTE_MODULES = (routes_app, routes_channels, routes_webhooks)


class FakeDiscord(World):
    """A fake Discord (REST + gateway) on 127.0.0.1, for discord.py's real client.

    Keyword options: `token` (the only one accepted, REST and IDENTIFY), `bot_name`,
    `privileged_intents` (bitmask the app is approved for; others close the gateway with
    4014), `heartbeat_interval` (seconds), `gateway_compression` (honour
    `compress=zlib-stream`; False sends plain text frames), `echo_own_messages` (dispatch
    MESSAGE_CREATE for the bot's own messages, as Discord does), `interaction_timeout`
    (seconds before a callback gets 10062 Unknown interaction; None = never), `shards` (the
    shard count ``GET /gateway/bot`` recommends; guild events go to the sessions whose
    IDENTIFY ``shard`` covers the guild, to each of them when several identified alike).
    """

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.port = 0
        self.api_base = ""
        self._runner: web.AppRunner | None = None
        #: cleared by `hold_gateway`: new gateway connections wait until `release_gateway`
        self._gateway_open = asyncio.Event()
        self._gateway_open.set()

    # --- lifecycle --------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        app.router.add_get("/", self._gateway)
        app.router.add_get("/resume", self._gateway)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        self.api_base = f"http://127.0.0.1:{self.port}/api/v10"
        self.ws_url = f"ws://127.0.0.1:{self.port}/"
        self.resume_gateway_url = f"ws://127.0.0.1:{self.port}/resume"

    async def stop(self) -> None:
        self._gateway_open.set()
        for conn in list(self.connections):
            await conn.close(1001, "Discord is going away.")
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        return await handle_rest(self, request)

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        await self._gateway_open.wait()
        return await handle_gateway(self, request)

    # --- gateway --------------------------------------------------------------------------

    async def flush(self) -> None:
        """Return once every queued gateway frame has been written."""
        for conn in list(self.connections):
            await conn.flush()

    async def wait_ready(self, within: float = 60.0, *, count: int = 1) -> GatewaySession:
        """Wait until `count` sessions (in total, ever) got their READY + GUILD_CREATEs.

        The client handles those asynchronously: also `await client.wait_until_ready()`.
        """
        await self.wait_until(lambda: self.ready_count >= count, within)
        return [s for s in self.sessions.values() if s.ready][-1]

    async def dispatch(self, event: str, data: JSON, *, guild_id: int | None = None) -> None:
        """Push an arbitrary dispatch event to every session (intents permitting)."""
        self._dispatch(event, data, guild_id=guild_id)
        await self.flush()

    async def reconnect(self) -> None:
        """Send op 7 RECONNECT: the client should reconnect and RESUME."""
        for conn in list(self.connections):
            conn.enqueue({"op": OP_RECONNECT, "d": None, "s": None, "t": None})
        await self.flush()

    async def invalidate_session(self, resumable: bool = False) -> None:
        """Send op 9 INVALID_SESSION; unless resumable, the sessions are gone."""
        for conn in list(self.connections):
            if not resumable and conn.session is not None:
                conn.session.alive = False
            conn.enqueue({"op": OP_INVALID_SESSION, "d": resumable, "s": None, "t": None})
        await self.flush()

    async def drop_connections(self, code: int = 4000) -> None:
        """Close every websocket from the server side (4000: resumable unknown error)."""
        for conn in list(self.connections):
            await conn.close(code)

    async def hold_gateway(self, code: int = 4000) -> None:
        """An outage: every websocket is closed (`drop_connections`) and new ones hang in
        their handshake until `release_gateway`, so the client stays disconnected."""
        self._gateway_open.clear()
        await self.drop_connections(code)

    def release_gateway(self) -> None:
        """The outage is over: held and new connections go through (the client resumes)."""
        self._gateway_open.set()

    # --- faults ---------------------------------------------------------------------------

    def rate_limit(
        self,
        pattern: str,
        times: int = 1,
        retry_after: float = 0.05,
        *,
        skip: int = 0,
        is_global: bool = False,
        scope: str = "user",
    ) -> Rule:
        """Answer the next `times` requests matching `pattern` with a 429.

        `pattern`: glob over "METHOD /path" or the route template, e.g.
        "POST /channels/*/messages" or "POST /webhooks/{webhook_id}/{webhook_token}".
        """
        rule = Rule(
            pattern,
            times=times,
            skip=skip,
            retry_after=retry_after,
            is_global=is_global,
            scope=scope,
        )
        self.rules.append(rule)
        return rule

    def fail(
        self,
        pattern: str,
        status: int,
        code: int = 0,
        message: str | None = None,
        *,
        times: int = 1,
        skip: int = 0,
    ) -> Rule:
        """Answer matching requests with an arbitrary error (e.g. 500, or 403/50013)."""
        rule = Rule(
            pattern,
            times=times,
            skip=skip,
            status=status,
            code=code,
            message=message or f"{status}: injected fault",
        )
        self.rules.append(rule)
        return rule

    def block_dms(self, user: UserLike) -> None:
        """The user closed their DMs: sends to their DM channel get 403 / 50007."""
        self.dm_blocked.add(self.user(user).id)

    # --- what the bot did -----------------------------------------------------------------

    def requests_to(self, pattern: str) -> list[RecordedRequest]:
        """Recorded requests matching a "METHOD /path" or route-template glob."""
        probe = Rule(pattern)
        return [r for r in self.requests if probe.matches(r.method, r.path, r.route)]

    async def wait_for_request(
        self, pattern: str, *, count: int = 1, within: float = 20.0
    ) -> RecordedRequest:
        """Wait until `count` answered requests match `pattern`; return the latest."""

        def done() -> list[RecordedRequest]:
            hits = [r for r in self.requests_to(pattern) if r.status is not None]
            return hits if len(hits) >= count else []

        hits: list[RecordedRequest] = await self.wait_until(done, within)
        return hits[-1]

    async def wait_for_message(
        self,
        channel: ChannelLike,
        predicate: Callable[[JSON], bool] | None = None,
        *,
        after: JSON | int | None = None,
        from_bot: bool = False,
        within: float = 20.0,
    ) -> JSON:
        """Wait for (or find) the first visible message in `channel` matching the filters.

        `after`: only messages newer than this message (id); `from_bot`: only the bot's own
        messages (not webhooks, not users).
        """
        cid = self._id(channel)
        after_id = self._id(after) if after is not None else 0
        bot_id = str(self.bot.id)

        def found() -> JSON | None:
            for msg in self.messages_in(cid):
                if int(msg["id"]) <= after_id:
                    continue
                if from_bot and (
                    msg["author"]["id"] != bot_id or msg.get("webhook_id", bot_id) != bot_id
                ):
                    continue
                if predicate is None or predicate(msg):
                    return msg
            return None

        msg: JSON = await self.wait_until(found, within)
        return msg

    # --- what the humans do ---------------------------------------------------------------

    def _can_post(self, channel: Channel, user_id: int) -> bool:
        perms = self.permissions_for(channel, user_id)
        needed = P["send_messages_in_threads"] if channel.is_thread else P["send_messages"]
        if (
            channel.type == PRIVATE_THREAD
            and user_id not in channel.member_ids
            and not perms & P["manage_threads"]
        ):
            return False
        return bool(perms & P["view_channel"] and perms & needed)

    async def send_message(
        self,
        channel: ChannelLike,
        author: UserLike,
        content: str = "",
        *,
        embeds: list[JSON] | None = None,
        files: list[tuple[str, bytes]] | None = None,
        reply_to: JSON | int | None = None,
        force: bool = False,
    ) -> JSON:
        """A member posts in a channel or thread (MESSAGE_CREATE).

        Raises PermissionError if the member could not post there (overwrites, private
        thread they are not in, locked thread) unless `force`.
        """
        ch = self.channel(channel)
        user = self.user(author)
        if ch.guild_id is not None:
            if user.id not in self.guilds[ch.guild_id].members:
                raise ValueError(f"{user.username} is not a member of the guild")
            if not force and not self._can_post(ch, user.id):
                raise PermissionError(f"{user.username} cannot post in #{ch.name}")
        if ch.is_thread and ch.archived:
            if ch.locked and not force:
                raise PermissionError(f"#{ch.name} is locked")
            try:
                self.check_sendable(ch, bot=False)
            except DiscordError as exc:
                raise PermissionError(str(exc)) from None
        uploads = [
            UploadedFile(f"files[{i}]", name, None, data)
            for i, (name, data) in enumerate(files or [])
        ]
        reference = None
        if reply_to is not None:
            reference = {"message_id": self._id(reply_to), "channel_id": ch.id}
        msg = self.create_message(
            ch,
            user,
            content=content,
            embeds=embeds,
            attachments=self.upload(ch, {}, uploads),
            reference=reference,
        )
        await self.flush()
        return msg

    async def deliver(self, message: JSON) -> None:
        """Dispatch MESSAGE_CREATE for a message stored with ``create_message(...,
        dispatch=False)``: a message Discord took at one moment and delivers later."""
        self._dispatch_message("MESSAGE_CREATE", message)
        await self.flush()

    async def send_dm(self, user: UserLike, content: str) -> JSON:
        """A user DMs the bot (MESSAGE_CREATE without guild_id)."""
        u = self.user(user)
        msg = self.create_message(self.dm_channel(u), u, content=content)
        await self.flush()
        return msg

    async def edit_user_message(self, message: JSON | int, content: str) -> JSON:
        msg = self.messages[self._id(message)]
        self.edit_message(msg, {"content": content})
        await self.flush()
        return msg

    async def delete_user_message(self, message: JSON | int) -> None:
        self.delete_message(self.messages[self._id(message)])
        await self.flush()

    async def _interact(
        self, payload: JSON, user_id: int, channel_id: int, source_message_id: int | None = None
    ) -> Interaction:
        inter = Interaction(
            self,
            payload,
            user_id=user_id,
            channel_id=channel_id,
            source_message_id=source_message_id,
        )
        self.interactions[inter.id] = inter
        guild_id = int(payload["guild_id"]) if payload.get("guild_id") else None
        self._dispatch("INTERACTION_CREATE", payload, guild_id=guild_id)
        await self.flush()
        return inter

    async def slash(
        self,
        command: str,
        options: dict[str, Any] | None = None,
        *,
        user: UserLike,
        channel: ChannelLike,
    ) -> Interaction:
        """Run `/command` (e.g. "mafia new") with `options` {name: value}.

        Values may be str/int/float/bool, or User/Member/Channel/Role objects for
        snowflake options (they are put in `data.resolved`).
        """
        u, ch = self.user(user), self.channel(channel)
        payload = slash_payload(self, command, options or {}, u, ch)
        return await self._interact(payload, u.id, ch.id)

    async def click(self, message: JSON | int, custom_id: str, *, user: UserLike) -> Interaction:
        """Click the button `custom_id` on a message (must exist and not be disabled)."""
        msg = self.messages[self._id(message)]
        u = self.user(user)
        payload = component_payload(self, msg, custom_id, u)
        return await self._interact(payload, u.id, int(msg["channel_id"]), int(msg["id"]))

    async def select(
        self, message: JSON | int, custom_id: str, values: list[Any], *, user: UserLike
    ) -> Interaction:
        """Choose `values` in a select menu (option values, or users/roles/channels)."""
        msg = self.messages[self._id(message)]
        u = self.user(user)
        payload = component_payload(self, msg, custom_id, u, list(values))
        return await self._interact(payload, u.id, int(msg["channel_id"]), int(msg["id"]))

    async def submit_modal(
        self,
        source: Interaction | None = None,
        values: dict[str, Any] | None = None,
        *,
        custom_id: str | None = None,
        user: UserLike | None = None,
        channel: ChannelLike | None = None,
    ) -> Interaction:
        """Submit the modal the bot opened in answer to `source` with {input custom_id: value}.

        Without `source`, submits an ad-hoc modal `custom_id` of text inputs (as a user could
        after a restart, for a modal opened by the previous process).
        """
        if source is not None:
            u = self.user(user if user is not None else source.user_id)
            ch = self.channel(channel if channel is not None else source.channel_id)
        elif user is None or channel is None:
            raise ValueError("submit_modal without a source needs user and channel")
        else:
            u, ch = self.user(user), self.channel(channel)
        payload = modal_payload(self, source, custom_id, values or {}, u, ch)
        src_msg = source.source_message_id if source is not None else None
        return await self._interact(payload, u.id, ch.id, src_msg)
