"""State of the fake Discord and the rules that change it.

REST handlers and the test-driving API both go through these methods, so a change made by the
bot (a REST call) and one made by the test (a member typing) reach the gateway the same way:
as dispatches, with per-session intent filtering and MESSAGE_CONTENT stripping applied.
"""

from __future__ import annotations

import asyncio
import copy
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.fakes.discord.model import (
    ALL_PERMISSIONS,
    BOT_ROLE_DEFAULT,
    DM,
    EVERYONE_DEFAULT,
    INTENT_DIRECT_MESSAGES,
    INTENT_GUILD_MEMBERS,
    INTENT_GUILD_MESSAGES,
    INTENT_GUILD_PRESENCES,
    INTENT_GUILD_WEBHOOKS,
    INTENT_GUILDS,
    INTENT_MESSAGE_CONTENT,
    JSON,
    PERMISSIONS,
    PRIVATE_THREAD,
    PRIVILEGED_INTENTS,
    PUBLIC_THREAD,
    TEXT,
    Channel,
    Guild,
    Member,
    Overwrite,
    Role,
    SnowflakeGenerator,
    User,
    Webhook,
    component_ids,
    iso,
    permission_bits,
)

if TYPE_CHECKING:
    from tests.fakes.discord.gateway import GatewayConnection, GatewaySession
    from tests.fakes.discord.interactions import Interaction
    from tests.fakes.discord.rest import RecordedRequest, Rule

P = PERMISSIONS
MAX_CONTENT = 2000

_EVENT_INTENTS: dict[str, int] = {
    "GUILD_CREATE": INTENT_GUILDS,
    "GUILD_UPDATE": INTENT_GUILDS,
    "GUILD_DELETE": INTENT_GUILDS,
    "GUILD_ROLE_CREATE": INTENT_GUILDS,
    "GUILD_ROLE_UPDATE": INTENT_GUILDS,
    "GUILD_ROLE_DELETE": INTENT_GUILDS,
    "CHANNEL_CREATE": INTENT_GUILDS,
    "CHANNEL_UPDATE": INTENT_GUILDS,
    "CHANNEL_DELETE": INTENT_GUILDS,
    "THREAD_CREATE": INTENT_GUILDS,
    "THREAD_UPDATE": INTENT_GUILDS,
    "THREAD_DELETE": INTENT_GUILDS,
    "THREAD_LIST_SYNC": INTENT_GUILDS,
    "THREAD_MEMBER_UPDATE": INTENT_GUILDS,
    "THREAD_MEMBERS_UPDATE": INTENT_GUILDS,
    "GUILD_MEMBER_ADD": INTENT_GUILD_MEMBERS,
    "GUILD_MEMBER_UPDATE": INTENT_GUILD_MEMBERS,
    "GUILD_MEMBER_REMOVE": INTENT_GUILD_MEMBERS,
    "WEBHOOKS_UPDATE": INTENT_GUILD_WEBHOOKS,
}
_MESSAGE_EVENTS = ("MESSAGE_CREATE", "MESSAGE_UPDATE", "MESSAGE_DELETE")
_MENTION = re.compile(r"<@!?(\d{15,21})>")
_ROLE_MENTION = re.compile(r"<@&(\d{15,21})>")


class DiscordError(Exception):
    """An error the fake answers with, in Discord's shape: `{"message", "code"[, "errors"]}`."""

    def __init__(self, status: int, code: int, message: str, errors: JSON | None = None) -> None:
        super().__init__(f"{status} {code} {message}")
        self.status = status
        self.code = code
        self.message = message
        self.errors = errors

    def body(self) -> JSON:
        data: JSON = {"message": self.message, "code": self.code}
        if self.errors is not None:
            data["errors"] = self.errors
        return data


def unknown_channel() -> DiscordError:
    return DiscordError(404, 10003, "Unknown Channel")


def unknown_message() -> DiscordError:
    return DiscordError(404, 10008, "Unknown Message")


def unknown_webhook() -> DiscordError:
    return DiscordError(404, 10015, "Unknown Webhook")


def missing_permissions() -> DiscordError:
    return DiscordError(403, 50013, "Missing Permissions")


def missing_access() -> DiscordError:
    return DiscordError(403, 50001, "Missing Access")


def invalid_form(field_name: str, code: str, message: str) -> DiscordError:
    return DiscordError(
        400,
        50035,
        "Invalid Form Body",
        {field_name: {"_errors": [{"code": code, "message": message}]}},
    )


@dataclass
class UploadedFile:
    field: str
    filename: str
    content_type: str | None
    data: bytes


@dataclass
class WebhookExecution:
    """One message sent through a channel webhook (not interaction followups)."""

    webhook_id: int
    channel_id: int  # where the message landed (the thread, when thread_id was given)
    thread_id: int | None
    username: str | None
    avatar_url: str | None
    content: str
    embeds: list[JSON]
    wait: bool
    payload: JSON
    message: JSON
    files: list[UploadedFile] = field(default_factory=list)


UserLike = User | Member | int
ChannelLike = Channel | int
GuildLike = Guild | int


class World:
    def __init__(
        self,
        *,
        token: str = "fake-bot-token",
        bot_name: str = "Mafiabot",
        privileged_intents: int = PRIVILEGED_INTENTS,
        heartbeat_interval: float = 41.25,
        echo_own_messages: bool = True,
        interaction_timeout: float | None = None,
        gateway_compression: bool = True,
        shards: int = 1,
    ) -> None:
        self.snowflakes = SnowflakeGenerator()
        self.token = token
        self.privileged_intents = privileged_intents
        self.heartbeat_interval_ms = int(heartbeat_interval * 1000)
        self.echo_own_messages = echo_own_messages
        self.interaction_timeout = interaction_timeout
        self.gateway_compression = gateway_compression
        #: the shard count GET /gateway/bot recommends (IDENTIFY may ask for any split)
        self.shards = shards
        self.application_id = self.snowflakes.next()
        self.bot = User(id=self.application_id, username=bot_name, bot=True, discriminator="4821")
        self.app_owner = User(id=self.snowflakes.next(), username="app-owner")
        self.users: dict[int, User] = {self.bot.id: self.bot, self.app_owner.id: self.app_owner}
        self.guilds: dict[int, Guild] = {}
        self.channels: dict[int, Channel] = {}
        self.messages: dict[int, JSON] = {}
        self.channel_messages: dict[int, list[int]] = {}
        self.ephemeral_ids: set[int] = set()
        self.ephemeral_owner: dict[int, int] = {}  # ephemeral message id -> the one viewer
        self.webhooks: dict[int, Webhook] = {}
        self.deleted_webhooks: set[int] = set()
        self.deleted_channels: set[int] = set()
        self.attachments: dict[int, UploadedFile] = {}
        self.global_commands: list[JSON] = []
        self.guild_commands: dict[int, list[JSON]] = {}
        self.adhoc_command_ids: dict[str, int] = {}
        self.dm_blocked: set[int] = set()
        self.nonces: dict[tuple[int, str], int] = {}
        self.interactions: dict[int, Interaction] = {}
        self.webhook_executions: list[WebhookExecution] = []
        self.requests: list[RecordedRequest] = []
        self.unhandled: list[RecordedRequest] = []
        self.rules: list[Rule] = []
        #: Discord's rate limit on executing one webhook, when set: (executes, seconds); the
        #: next execute within the window is answered 429 with ``retry_after``
        self.webhook_limit: tuple[int, float] | None = None
        #: webhook id -> (window end, executes in it) for `webhook_limit`
        self.webhook_windows: dict[int, tuple[float, int]] = {}
        #: executes refused by `webhook_limit`
        self.webhook_429s = 0
        self.sessions: dict[str, GatewaySession] = {}
        self.connections: list[GatewayConnection] = []
        self.gateway_log: list[JSON] = []
        self.gateway_received: list[JSON] = []
        self.resume_count = 0
        self.ready_count = 0  # sessions whose READY burst has been written, ever
        self.resume_gateway_url = ""
        self.ws_url = ""
        self._changed = asyncio.Event()

    # --- waiting ---------------------------------------------------------------------------

    def notify(self) -> None:
        """Wake everything blocked in `wait_until`; called after every state change."""
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_until(self, predicate: Callable[[], Any], within: float = 20.0) -> Any:
        """Wait until `predicate()` is truthy; return its value.

        Re-checked after every change to the fake and at least every 20 ms, so the predicate
        may also look at the client's state (which changes when it processes a frame).
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while True:
            result = predicate()
            if result:
                return result
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"condition not met within {within}s")
            changed = self._changed
            try:
                await asyncio.wait_for(changed.wait(), min(remaining, 0.02))
            except TimeoutError:
                continue

    # --- lookups ------------------------------------------------------------------------------

    @staticmethod
    def _id(obj: Any) -> int:
        if isinstance(obj, int):
            return obj
        if isinstance(obj, str):
            return int(obj)
        if isinstance(obj, dict):
            return int(obj["id"])
        return int(obj.id)

    def user(self, obj: UserLike) -> User:
        if isinstance(obj, User):
            return obj
        if isinstance(obj, Member):
            return obj.user
        return self.users[self._id(obj)]

    def guild(self, obj: GuildLike) -> Guild:
        return obj if isinstance(obj, Guild) else self.guilds[self._id(obj)]

    def channel(self, obj: ChannelLike) -> Channel:
        return obj if isinstance(obj, Channel) else self.channels[self._id(obj)]

    def member(self, guild: GuildLike, user: UserLike) -> Member:
        return self.guild(guild).members[self.user(user).id]

    def bot_member(self, guild: GuildLike) -> Member:
        return self.member(guild, self.bot)

    def find_channel(self, channel_id: int | str) -> Channel:
        try:
            return self.channels[int(channel_id)]
        except (KeyError, ValueError):
            raise unknown_channel() from None

    def find_message(self, channel: Channel, message_id: int | str) -> JSON:
        try:
            msg = self.messages[int(message_id)]
        except (KeyError, ValueError):
            raise unknown_message() from None
        if int(msg["channel_id"]) != channel.id or int(message_id) in self.ephemeral_ids:
            raise unknown_message()
        return msg

    # --- permissions ----------------------------------------------------------------------

    def permissions_for(self, channel: Channel, user: UserLike) -> int:
        """Discord's permission algorithm: roles, then @everyone/role/member overwrites."""
        user_id = self.user(user).id
        if channel.guild_id is None:
            return EVERYONE_DEFAULT
        guild = self.guilds[channel.guild_id]
        member = guild.members.get(user_id)
        if user_id == guild.owner_id:
            return ALL_PERMISSIONS
        if member is None:
            return 0
        base = guild.roles[guild.id].permissions
        for role_id in member.roles:
            role = guild.roles.get(role_id)
            if role is not None:
                base |= role.permissions
        if base & P["administrator"]:
            return ALL_PERMISSIONS
        source: Channel | None = channel
        if channel.is_thread:
            source = self.channels.get(channel.parent_id) if channel.parent_id else None
        perms = base
        if source is not None:
            ows = source.overwrites
            everyone = ows.get(guild.id)
            if everyone is not None:
                perms = (perms & ~everyone.deny) | everyone.allow
            allow = deny = 0
            for role_id in member.roles:
                ow = ows.get(role_id)
                if ow is not None and ow.type == 0:
                    allow |= ow.allow
                    deny |= ow.deny
            perms = (perms & ~deny) | allow
            mine = ows.get(user_id)
            if mine is not None and mine.type == 1:
                perms = (perms & ~mine.deny) | mine.allow
        if channel.is_thread and user_id == self.bot.id:
            perms &= ~channel.denied
        if not perms & P["view_channel"]:
            return 0
        return perms

    def guild_permissions(self, guild: Guild, user: UserLike) -> int:
        """Guild-level permissions (roles only), for guild routes like creating channels."""
        probe = Channel(id=0, type=TEXT, name=None, guild_id=guild.id)
        return self.permissions_for(probe, user)

    def require_guild(self, guild: Guild, *perms: str) -> None:
        have = self.guild_permissions(guild, self.bot)
        for perm in perms:
            if not have & P[perm]:
                raise missing_permissions()

    def require(self, channel: Channel, *perms: str) -> None:
        """Raise Discord's error if the bot lacks any of `perms` in `channel`."""
        if channel.guild_id is None:
            return
        have = self.permissions_for(channel, self.bot)
        if not have & P["view_channel"]:
            raise missing_access()
        for perm in perms:
            if not have & P[perm]:
                raise missing_permissions()

    def deny_permission(self, channel: ChannelLike, perm: str | int) -> None:
        """Take `perm` away from the bot in `channel`, as a member overwrite (CHANNEL_UPDATE).

        For a thread (threads have no overwrites) the bit is masked server-side only.
        """
        ch = self.channel(channel)
        bits = permission_bits(perm)
        if ch.is_thread:
            ch.denied |= bits
            self.notify()
            return
        ow = ch.overwrites.setdefault(self.bot.id, Overwrite(id=self.bot.id, type=1))
        ow.deny |= bits
        ow.allow &= ~bits
        self._dispatch("CHANNEL_UPDATE", ch.payload(self), guild_id=ch.guild_id)

    def allow_permission(self, channel: ChannelLike, perm: str | int) -> None:
        """Undo `deny_permission`."""
        ch = self.channel(channel)
        bits = permission_bits(perm)
        if ch.is_thread:
            ch.denied &= ~bits
            self.notify()
            return
        ow = ch.overwrites.get(self.bot.id)
        if ow is None:
            return
        ow.deny &= ~bits
        if not ow.deny and not ow.allow:
            del ch.overwrites[self.bot.id]
        self._dispatch("CHANNEL_UPDATE", ch.payload(self), guild_id=ch.guild_id)

    # --- dispatching --------------------------------------------------------------------------

    def _dispatch(
        self,
        event: str,
        data: JSON,
        *,
        guild_id: int | None = None,
        transform: Callable[[GatewaySession, JSON], JSON | None] | None = None,
    ) -> None:
        intent = _EVENT_INTENTS.get(event)
        if event in _MESSAGE_EVENTS:
            intent = INTENT_GUILD_MESSAGES if guild_id is not None else INTENT_DIRECT_MESSAGES
        for session in list(self.sessions.values()):
            if not session.alive or not session.sees_guild(guild_id):
                continue
            if intent is not None and not session.intents & intent:
                continue
            payload = transform(session, data) if transform is not None else data
            if payload is not None:
                session.send_dispatch(event, payload)
        self.notify()

    def _dispatch_message(self, event: str, msg: JSON) -> None:
        guild_id = int(msg["guild_id"]) if msg.get("guild_id") else None
        self._dispatch(
            event, msg, guild_id=guild_id, transform=lambda s, m: self._visible_message(s, m)
        )

    def _visible_message(self, session: GatewaySession, msg: JSON) -> JSON | None:
        """The message as this session may see it: not at all in a channel the bot cannot
        view; without the MESSAGE_CONTENT intent, guild messages arrive with their content
        blank unless the bot wrote them, is mentioned in them, or they are DMs."""
        own = msg.get("author", {}).get("id") == str(self.bot.id)
        if own and not self.echo_own_messages:
            return None
        channel = self.channels.get(int(msg["channel_id"]))
        if (
            channel is not None
            and channel.guild_id is not None
            and not self.permissions_for(channel, self.bot) & P["view_channel"]
        ):
            return None
        if session.intents & INTENT_MESSAGE_CONTENT or not msg.get("guild_id") or own:
            return msg
        if any(m.get("id") == str(self.bot.id) for m in msg.get("mentions", [])):
            return msg
        stripped = dict(msg)
        stripped.update(content="", embeds=[], attachments=[], components=[])
        stripped.pop("poll", None)
        return stripped

    def ready_payload(self, session: GatewaySession) -> JSON:
        user = self.bot.payload()
        user.update(verified=True, mfa_enabled=False, email=None, flags=0)
        data: JSON = {
            "v": 10,
            "user": user,
            "user_settings": {},
            "guilds": [
                {"id": str(g.id), "unavailable": True}
                for g in self.guilds.values()
                if session.sees_guild(g.id)
            ],
            "session_id": session.id,
            "session_type": "normal",
            "resume_gateway_url": self.resume_gateway_url,
            "application": {"id": str(self.application_id), "flags": self.application_flags},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": ["fake"],
            "auth": {},
            "_trace": ["fake-discord-gateway"],
        }
        if session.shard is not None:
            data["shard"] = list(session.shard)
        return data

    def guild_create_payload(self, guild: Guild, session: GatewaySession) -> JSON:
        data = guild.payload()
        everyone = bool(session.intents & INTENT_GUILD_PRESENCES)
        members = [m for m in guild.members.values() if everyone or m.id == self.bot.id]
        channels = [c for c in self.channels.values() if c.guild_id == guild.id]
        data.update(
            joined_at=guild.joined_at,
            large=len(guild.members) >= 250,
            unavailable=False,
            member_count=len(guild.members),
            voice_states=[],
            members=[m.payload() for m in members],
            presences=[],
            channels=[c.payload(self) for c in channels if not c.is_thread],
            threads=[c.payload(self) for c in channels if c.is_thread and not c.archived],
            stage_instances=[],
            guild_scheduled_events=[],
            soundboard_sounds=[],
            lazy=True,
        )
        return data

    @property
    def application_flags(self) -> int:
        flags = 0
        if self.privileged_intents & INTENT_GUILD_PRESENCES:
            flags |= 1 << 12
        if self.privileged_intents & INTENT_GUILD_MEMBERS:
            flags |= 1 << 14
        if self.privileged_intents & INTENT_MESSAGE_CONTENT:
            flags |= 1 << 18
        return flags

    def application_payload(self) -> JSON:
        bot = self.bot.payload()
        return {
            "id": str(self.application_id),
            "name": self.bot.username,
            "icon": None,
            "description": "",
            "summary": "",
            "type": None,
            "hook": True,
            "bot_public": True,
            "bot_require_code_grant": False,
            "verify_key": "0" * 64,
            "flags": self.application_flags,
            "owner": self.app_owner.payload(),
            "team": None,
            "bot": bot,
            "redirect_uris": [],
            "interactions_endpoint_url": None,
            "approximate_guild_count": len(self.guilds),
            "integration_types_config": {"0": {}},
            "tags": [],
        }

    # --- world building ---------------------------------------------------------------------

    def add_user(self, username: str, *, global_name: str | None = None, bot: bool = False) -> User:
        user = User(id=self.snowflakes.next(), username=username, global_name=global_name, bot=bot)
        self.users[user.id] = user
        return user

    def add_guild(
        self,
        name: str = "Mafia Club",
        *,
        owner: UserLike | None = None,
        shard: tuple[int, int] | None = None,
    ) -> Guild:
        """A guild the bot is in, with @everyone and the bot's managed role.

        The owner defaults to an id that is not a member: an owner bypasses every overwrite,
        so making anyone in the test the owner would hide permission bugs. ``shard=(i, n)``:
        a guild whose events go to shard i of n (its id is drawn until it falls there, a
        millisecond or so).
        """
        gid = self.snowflakes.next()
        while shard is not None and (gid >> 22) % shard[1] != shard[0]:
            gid = self.snowflakes.next()
        owner_id = self.user(owner).id if owner is not None else self.snowflakes.next()
        guild = Guild(id=gid, name=name, owner_id=owner_id)
        guild.roles[gid] = Role(
            id=gid, guild_id=gid, name="@everyone", permissions=EVERYONE_DEFAULT
        )
        bot_role = Role(
            id=self.snowflakes.next(),
            guild_id=gid,
            name=self.bot.username,
            permissions=BOT_ROLE_DEFAULT,
            position=1,
            managed=True,
            bot_id=self.bot.id,
        )
        guild.roles[bot_role.id] = bot_role
        guild.members[self.bot.id] = Member(guild_id=gid, user=self.bot, roles=[bot_role.id])
        self.guilds[gid] = guild
        if owner is not None and owner_id not in guild.members:
            guild.members[owner_id] = Member(guild_id=gid, user=self.user(owner))
        for session in self.sessions.values():
            if session.alive and session.sees_guild(gid):
                session.send_dispatch("GUILD_CREATE", self.guild_create_payload(guild, session))
        self.notify()
        return guild

    def add_role(
        self,
        guild: GuildLike,
        name: str,
        permissions: int | str = 0,
        *,
        position: int = 1,
        mentionable: bool = False,
    ) -> Role:
        """A new role; like Discord, it goes in just above @everyone (position 1) unless told
        otherwise, so the bot's own role stays above it and the bot can assign it."""
        g = self.guild(guild)
        shifted = [r for r in g.roles.values() if r.id != g.id and r.position >= position]
        for other in shifted:
            other.position += 1
        role = Role(
            id=self.snowflakes.next(),
            guild_id=g.id,
            name=name,
            permissions=permission_bits(permissions),
            position=position,
            mentionable=mentionable,
        )
        g.roles[role.id] = role
        self._dispatch(
            "GUILD_ROLE_CREATE", {"guild_id": str(g.id), "role": role.payload()}, guild_id=g.id
        )
        for other in shifted:
            self._dispatch(
                "GUILD_ROLE_UPDATE", {"guild_id": str(g.id), "role": other.payload()}, guild_id=g.id
            )
        return role

    def add_member(
        self,
        guild: GuildLike,
        name: str | None = None,
        *,
        user: UserLike | None = None,
        nick: str | None = None,
        roles: Sequence[Role | int] = (),
        bot: bool = False,
        global_name: str | None = None,
    ) -> Member:
        g = self.guild(guild)
        if user is None:
            if name is None:
                raise ValueError("add_member needs a name or an existing user")
            u = self.add_user(name, global_name=global_name, bot=bot)
        else:
            u = self.user(user)
        member = Member(guild_id=g.id, user=u, roles=[self._id(r) for r in roles], nick=nick)
        g.members[u.id] = member
        data = member.payload()
        data["guild_id"] = str(g.id)
        self._dispatch("GUILD_MEMBER_ADD", data, guild_id=g.id)
        return member

    def update_member(
        self,
        guild: GuildLike,
        user: UserLike,
        *,
        nick: str | None = None,
        roles: Sequence[Role | int] | None = None,
    ) -> Member:
        member = self.member(guild, user)
        if nick is not None:
            member.nick = nick
        if roles is not None:
            member.roles = [self._id(r) for r in roles]
        data = member.payload()
        data["guild_id"] = str(member.guild_id)
        self._dispatch("GUILD_MEMBER_UPDATE", data, guild_id=member.guild_id)
        return member

    def remove_member(self, guild: GuildLike, user: UserLike) -> None:
        g = self.guild(guild)
        member = g.members.pop(self.user(user).id)
        self._dispatch(
            "GUILD_MEMBER_REMOVE",
            {"guild_id": str(g.id), "user": member.user.payload()},
            guild_id=g.id,
        )

    def add_channel(
        self,
        guild: GuildLike,
        name: str,
        *,
        type: int = TEXT,
        parent: ChannelLike | None = None,
        topic: str | None = None,
        position: int | None = None,
        overwrites: list[Overwrite] | None = None,
    ) -> Channel:
        g = self.guild(guild)
        siblings = [c for c in self.channels.values() if c.guild_id == g.id and not c.is_thread]
        ch = Channel(
            id=self.snowflakes.next(),
            type=type,
            name=name,
            guild_id=g.id,
            position=position if position is not None else len(siblings),
            parent_id=self.channel(parent).id if parent is not None else None,
            topic=topic,
            overwrites={o.id: o for o in overwrites or []},
        )
        self.channels[ch.id] = ch
        self.channel_messages[ch.id] = []
        self._dispatch("CHANNEL_CREATE", ch.payload(self), guild_id=g.id)
        return ch

    def add_thread(
        self,
        parent: ChannelLike,
        name: str,
        *,
        private: bool = False,
        owner: UserLike | None = None,
        members: Sequence[UserLike] = (),
        invitable: bool = True,
        thread_id: int | None = None,
        auto_archive_duration: int = 1440,
        rate_limit_per_user: int = 0,
    ) -> Channel:
        par = self.channel(parent)
        owner_user = self.user(owner) if owner is not None else self.bot
        th = Channel(
            id=thread_id or self.snowflakes.next(),
            type=PRIVATE_THREAD if private else PUBLIC_THREAD,
            name=name,
            guild_id=par.guild_id,
            parent_id=par.id,
            owner_id=owner_user.id,
            invitable=invitable if private else True,
            auto_archive_duration=auto_archive_duration,
            rate_limit_per_user=rate_limit_per_user,
        )
        th.member_ids[owner_user.id] = iso()
        for m in members:
            th.member_ids.setdefault(self.user(m).id, iso())
        self.channels[th.id] = th
        self.channel_messages[th.id] = []
        data = th.payload(self)
        data["newly_created"] = True
        if self.bot.id in th.member_ids:
            data["member"] = self._thread_member(th, self.bot.id)
        self._dispatch("THREAD_CREATE", data, guild_id=th.guild_id)
        return th

    def _thread_member(self, thread: Channel, user_id: int, *, with_member: bool = False) -> JSON:
        data: JSON = {
            "id": str(thread.id),
            "user_id": str(user_id),
            "join_timestamp": thread.member_ids.get(user_id, iso()),
            "flags": 1,
        }
        if with_member and thread.guild_id is not None:
            member = self.guilds[thread.guild_id].members.get(user_id)
            if member is not None:
                data["member"] = member.payload()
        return data

    def add_thread_member(self, thread: ChannelLike, user: UserLike) -> None:
        th = self.channel(thread)
        uid = self.user(user).id
        if uid in th.member_ids:
            return
        th.member_ids[uid] = iso()
        self._dispatch(
            "THREAD_MEMBERS_UPDATE",
            {
                "id": str(th.id),
                "guild_id": str(th.guild_id),
                "member_count": min(len(th.member_ids), 50),
                "added_members": [self._thread_member(th, uid, with_member=True)],
            },
            guild_id=th.guild_id,
        )

    def remove_thread_member(self, thread: ChannelLike, user: UserLike) -> None:
        th = self.channel(thread)
        uid = self.user(user).id
        if th.member_ids.pop(uid, None) is None:
            return
        self._dispatch(
            "THREAD_MEMBERS_UPDATE",
            {
                "id": str(th.id),
                "guild_id": str(th.guild_id),
                "member_count": min(len(th.member_ids), 50),
                "removed_member_ids": [str(uid)],
            },
            guild_id=th.guild_id,
        )

    def update_channel(self, channel: ChannelLike) -> None:
        """Announce the channel's current state (CHANNEL_UPDATE or THREAD_UPDATE)."""
        ch = self.channel(channel)
        event = "THREAD_UPDATE" if ch.is_thread else "CHANNEL_UPDATE"
        self._dispatch(event, ch.payload(self), guild_id=ch.guild_id)

    def delete_channel(self, channel: ChannelLike) -> JSON:
        """Delete a channel (and its threads, messages and webhooks), as a moderator would."""
        ch = self.channel(channel)
        payload = ch.payload(self)
        for th in [c for c in self.channels.values() if c.parent_id == ch.id and c.is_thread]:
            self._forget_channel(th)
        self._forget_channel(ch)
        for wh in [w for w in self.webhooks.values() if w.channel_id == ch.id]:
            del self.webhooks[wh.id]
            self.deleted_webhooks.add(wh.id)
        if ch.is_thread:
            self._dispatch(
                "THREAD_DELETE",
                {
                    "id": str(ch.id),
                    "guild_id": str(ch.guild_id),
                    "parent_id": str(ch.parent_id),
                    "type": ch.type,
                },
                guild_id=ch.guild_id,
            )
        else:
            self._dispatch("CHANNEL_DELETE", payload, guild_id=ch.guild_id)
        return payload

    def _forget_channel(self, ch: Channel) -> None:
        self.channels.pop(ch.id, None)
        self.deleted_channels.add(ch.id)
        for mid in self.channel_messages.pop(ch.id, []):
            self.messages.pop(mid, None)

    def add_webhook(
        self, channel: ChannelLike, name: str = "Mafia Stage", *, creator: UserLike | None = None
    ) -> Webhook:
        ch = self.channel(channel)
        if ch.is_thread or ch.guild_id is None:
            raise ValueError("webhooks belong to a guild text channel, not a thread or DM")
        creator_user = self.user(creator) if creator is not None else self.bot
        wh = Webhook(
            id=self.snowflakes.next(),
            token=secrets.token_urlsafe(48),
            channel_id=ch.id,
            guild_id=ch.guild_id,
            name=name,
            creator_id=creator_user.id,
            application_id=self.application_id if creator_user is self.bot else None,
        )
        self.webhooks[wh.id] = wh
        self._dispatch(
            "WEBHOOKS_UPDATE",
            {"guild_id": str(ch.guild_id), "channel_id": str(ch.id)},
            guild_id=ch.guild_id,
        )
        return wh

    def delete_webhook(self, webhook: Webhook | int) -> None:
        """Delete a webhook behind the bot's back (its next execution gets 10015)."""
        wh = webhook if isinstance(webhook, Webhook) else self.webhooks[int(webhook)]
        self.webhooks.pop(wh.id, None)
        self.deleted_webhooks.add(wh.id)
        self._dispatch(
            "WEBHOOKS_UPDATE",
            {"guild_id": str(wh.guild_id), "channel_id": str(wh.channel_id)},
            guild_id=wh.guild_id,
        )

    def dm_channel(self, user: UserLike) -> Channel:
        u = self.user(user)
        for ch in self.channels.values():
            if ch.type == DM and ch.recipient_ids == [u.id]:
                return ch
        ch = Channel(id=self.snowflakes.next(), type=DM, name=None, recipient_ids=[u.id])
        self.channels[ch.id] = ch
        self.channel_messages[ch.id] = []
        return ch

    # --- messages -----------------------------------------------------------------------------

    def create_message(
        self,
        channel: Channel,
        author: User,
        *,
        content: str = "",
        embeds: list[JSON] | None = None,
        components: list[JSON] | None = None,
        attachments: list[JSON] | None = None,
        flags: int = 0,
        type: int = 0,
        webhook: JSON | None = None,
        webhook_id: int | None = None,
        reference: JSON | None = None,
        application_id: int | None = None,
        interaction_metadata: JSON | None = None,
        ephemeral: bool = False,
        tts: bool = False,
        nonce: str | int | None = None,
        dispatch: bool = True,
    ) -> JSON:
        """Store a message and (unless ephemeral) dispatch MESSAGE_CREATE.

        `webhook` is a webhook author `{"id", "username", "avatar"}`: the message then has no
        member and `webhook_id` set.  Interaction responses keep the bot as author and pass
        `webhook_id` (the application id) alone.
        """
        mid = self.snowflakes.next()
        guild = self.guilds.get(channel.guild_id) if channel.guild_id else None
        if webhook is not None:
            author_payload: JSON = {
                "id": str(webhook["id"]),
                "username": webhook["username"],
                "avatar": webhook.get("avatar"),
                "discriminator": "0000",
                "global_name": None,
                "public_flags": 0,
                "flags": 0,
                "bot": True,
            }
        else:
            author_payload = author.payload()
        msg: JSON = {
            "id": str(mid),
            "type": type,
            "channel_id": str(channel.id),
            "author": author_payload,
            "content": content,
            "timestamp": iso(),
            "edited_timestamp": None,
            "tts": tts,
            "mention_everyone": "@everyone" in content or "@here" in content,
            "mentions": self._mentions(content, guild),
            "mention_roles": [
                r
                for r in _ROLE_MENTION.findall(content)
                if guild is not None and int(r) in guild.roles
            ],
            "attachments": attachments or [],
            "embeds": [self._embed(e) for e in embeds or []],
            "components": component_ids(components or []),
            "reactions": [],
            "pinned": False,
            "flags": flags | (64 if ephemeral else 0),
        }
        if guild is not None:
            msg["guild_id"] = str(guild.id)
            if webhook is None and author.id in guild.members:
                msg["member"] = guild.members[author.id].payload(with_user=False)
        if webhook is not None:
            msg["webhook_id"] = str(webhook["id"])
        elif webhook_id is not None:
            msg["webhook_id"] = str(webhook_id)
        if application_id is not None:
            msg["application_id"] = str(application_id)
        if interaction_metadata is not None:
            msg["interaction_metadata"] = interaction_metadata
        if nonce is not None:
            msg["nonce"] = nonce
        if channel.is_thread:
            msg["position"] = channel.total_message_sent
        if reference is not None:
            ref_msg = self.messages.get(int(reference["message_id"]))
            msg["type"] = 19 if type == 0 else type
            msg["message_reference"] = {
                "type": 0,
                "message_id": str(reference["message_id"]),
                "channel_id": str(reference.get("channel_id") or channel.id),
                "guild_id": msg.get("guild_id"),
            }
            msg["referenced_message"] = copy.deepcopy(ref_msg) if ref_msg else None
        self.messages[mid] = msg
        if ephemeral:
            self.ephemeral_ids.add(mid)
            self.notify()
            return msg
        self.channel_messages.setdefault(channel.id, []).append(mid)
        channel.last_message_id = mid
        if channel.is_thread:
            channel.message_count += 1
            channel.total_message_sent += 1
        if dispatch:
            self._dispatch_message("MESSAGE_CREATE", msg)
        else:
            self.notify()
        return msg

    def _mentions(self, content: str, guild: Guild | None) -> list[JSON]:
        out: list[JSON] = []
        seen: set[int] = set()
        for raw in _MENTION.findall(content):
            uid = int(raw)
            if uid in seen or uid not in self.users:
                continue
            seen.add(uid)
            data = self.users[uid].payload()
            if guild is not None and uid in guild.members:
                data["member"] = guild.members[uid].payload(with_user=False)
            out.append(data)
        return out

    @staticmethod
    def _embed(embed: JSON) -> JSON:
        data = dict(embed)
        data.setdefault("type", "rich")
        data.setdefault("content_scan_version", 0)
        return data

    def edit_message(
        self,
        msg: JSON,
        changes: JSON,
        *,
        attachments: list[JSON] | None = None,
        ephemeral: bool = False,
    ) -> JSON:
        for key in ("content", "embeds", "components", "flags"):
            if key not in changes:
                continue
            value = changes[key]
            if value is None and key == "flags":
                continue
            if value is None:
                value = "" if key == "content" else []
            if key == "embeds":
                value = [self._embed(e) for e in value]
            elif key == "components":
                value = component_ids(value)
            elif key == "flags":
                value = (msg["flags"] & (64 | 128)) | (int(value) & ~(64 | 128))
            elif key == "content":
                value = value or ""
                msg["mentions"] = self._mentions(
                    value, self.guilds.get(int(msg["guild_id"])) if msg.get("guild_id") else None
                )
            msg[key] = value
        if attachments is not None:
            msg["attachments"] = attachments
        msg["flags"] &= ~128  # an edit resolves a "thinking..." placeholder
        msg["edited_timestamp"] = iso()
        if not ephemeral and int(msg["id"]) not in self.ephemeral_ids:
            self._dispatch_message("MESSAGE_UPDATE", msg)
        else:
            self.notify()
        return msg

    def delete_message(self, msg: JSON) -> None:
        mid = int(msg["id"])
        self.messages.pop(mid, None)
        if mid in self.ephemeral_ids:
            self.ephemeral_ids.discard(mid)
            self.notify()
            return
        cid = int(msg["channel_id"])
        ids = self.channel_messages.get(cid, [])
        if mid in ids:
            ids.remove(mid)
        data: JSON = {"id": str(mid), "channel_id": str(cid)}
        if msg.get("guild_id"):
            data["guild_id"] = msg["guild_id"]
        self._dispatch(
            "MESSAGE_DELETE", data, guild_id=int(msg["guild_id"]) if msg.get("guild_id") else None
        )

    def check_sendable(
        self, channel: Channel, *, has_files: bool = False, bot: bool = True
    ) -> None:
        """Permission and thread-state checks shared by message sends and webhooks."""
        if bot:
            if channel.is_thread:
                self.require(channel, "send_messages_in_threads")
            else:
                self.require(channel, "send_messages")
            if has_files:
                self.require(channel, "attach_files")
        if channel.is_thread and channel.archived:
            if channel.locked and not (
                bot and self.permissions_for(channel, self.bot) & P["manage_threads"]
            ):
                raise DiscordError(400, 50083, "Thread is archived")
            channel.archived = False  # sending into an archived thread unarchives it
            channel.archive_timestamp = iso()
            self.update_channel(channel)

    @staticmethod
    def check_message_body(payload: JSON, has_files: bool) -> None:
        content = payload.get("content") or ""
        if len(content) > MAX_CONTENT:
            raise invalid_form(
                "content", "BASE_TYPE_MAX_LENGTH", f"Must be {MAX_CONTENT} or fewer in length."
            )
        if len(payload.get("embeds") or []) > 10:
            raise invalid_form("embeds", "BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.")
        if not (
            content
            or payload.get("embeds")
            or payload.get("components")
            or has_files
            or payload.get("sticker_ids")
            or payload.get("poll")
        ):
            raise DiscordError(400, 50006, "Cannot send an empty message")

    def upload(
        self,
        channel: Channel,
        payload: JSON,
        files: list[UploadedFile],
        keep: list[JSON] | None = None,
    ) -> list[JSON]:
        """Attachment objects for `files` (matched to `payload["attachments"]` by index)."""
        meta = {str(a.get("id")): a for a in payload.get("attachments") or []}
        out = list(keep or [])
        for index, f in enumerate(files):
            aid = self.snowflakes.next()
            self.attachments[aid] = f
            extra = meta.get(str(index), {})
            url = f"https://cdn.discordapp.com/attachments/{channel.id}/{aid}/{f.filename}"
            out.append(
                {
                    "id": str(aid),
                    "filename": f.filename,
                    "size": len(f.data),
                    "url": url,
                    "proxy_url": url.replace("cdn.discordapp.com", "media.discordapp.net"),
                    "content_type": f.content_type,
                    "description": extra.get("description"),
                    "spoiler": f.filename.startswith("SPOILER_"),
                }
            )
        return out

    # --- views ------------------------------------------------------------------------------

    def messages_in(self, channel: ChannelLike) -> list[JSON]:
        """Messages currently visible in a channel or thread, oldest first (no ephemerals)."""
        cid = self._id(channel)
        return [self.messages[m] for m in self.channel_messages.get(cid, []) if m in self.messages]

    def contents_in(self, channel: ChannelLike) -> list[str]:
        return [m["content"] for m in self.messages_in(channel)]
