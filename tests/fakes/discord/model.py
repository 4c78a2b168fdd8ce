"""The fake Discord's world: snowflakes, permissions, and the objects it serves as JSON.

Payloads follow Discord's API v10 shapes closely enough for discord.py 2.7's parsers (which
index many keys directly, e.g. `member['flags']`, `thread['thread_metadata']`,
`interaction['attachment_size_limit']`), so a missing key here shows up as a KeyError inside
discord.py rather than as a silently wrong test.
"""

from __future__ import annotations

import datetime as dt
import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]

DISCORD_EPOCH_MS = 1_420_070_400_000


class SnowflakeGenerator:
    """Real-looking, strictly increasing snowflakes (timestamp, worker, process, increment).

    discord.py reads the creation time back out of ids (e.g. it picks a different rate-limit
    bucket when deleting messages younger than 10 s), so ids must encode the current time.
    """

    def __init__(self, worker: int = 1, process: int = 0) -> None:
        self._worker = worker & 0x1F
        self._process = process & 0x1F
        self._last_ms = 0
        self._increment = 0
        self._lock = threading.Lock()
        self._pinned: int | None = None
        self._pinned_increment = 0

    def pin(self, when: dt.datetime | None) -> None:
        """Stamp the next ids with ``when`` (to the millisecond) instead of now, until
        ``pin(None)``: two events in one millisecond, or a message Discord stamped at one
        moment and delivers later. Pinned ids come from another process number, so they never
        collide with the running ones (and, pinned in the past, are older than them)."""
        with self._lock:
            self._pinned = None if when is None else int(when.timestamp() * 1000)
            self._pinned_increment = 0

    def next(self) -> int:
        with self._lock:
            if self._pinned is not None:
                self._pinned_increment += 1
                return (
                    ((self._pinned - DISCORD_EPOCH_MS) << 22)
                    | (self._worker << 17)
                    | ((self._process ^ 1) << 12)
                    | (self._pinned_increment & 0xFFF)
                )
            ms = int(time.time() * 1000)
            if ms <= self._last_ms:
                ms = self._last_ms
                self._increment += 1
                if self._increment > 0xFFF:
                    ms += 1
                    self._increment = 0
            else:
                self._increment = 0
            self._last_ms = ms
            return (
                ((ms - DISCORD_EPOCH_MS) << 22)
                | (self._worker << 17)
                | (self._process << 12)
                | self._increment
            )


def snowflake_time(snowflake: int) -> dt.datetime:
    ms = (snowflake >> 22) + DISCORD_EPOCH_MS
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)


def iso(moment: dt.datetime | None = None) -> str:
    return (moment or dt.datetime.now(dt.UTC)).isoformat()


# --- permissions --------------------------------------------------------------------------

PERMISSIONS: dict[str, int] = {
    "create_instant_invite": 1 << 0,
    "kick_members": 1 << 1,
    "ban_members": 1 << 2,
    "administrator": 1 << 3,
    "manage_channels": 1 << 4,
    "manage_guild": 1 << 5,
    "add_reactions": 1 << 6,
    "view_audit_log": 1 << 7,
    "priority_speaker": 1 << 8,
    "stream": 1 << 9,
    "view_channel": 1 << 10,
    "send_messages": 1 << 11,
    "send_tts_messages": 1 << 12,
    "manage_messages": 1 << 13,
    "embed_links": 1 << 14,
    "attach_files": 1 << 15,
    "read_message_history": 1 << 16,
    "mention_everyone": 1 << 17,
    "use_external_emojis": 1 << 18,
    "view_guild_insights": 1 << 19,
    "connect": 1 << 20,
    "speak": 1 << 21,
    "mute_members": 1 << 22,
    "deafen_members": 1 << 23,
    "move_members": 1 << 24,
    "use_vad": 1 << 25,
    "change_nickname": 1 << 26,
    "manage_nicknames": 1 << 27,
    "manage_roles": 1 << 28,
    "manage_webhooks": 1 << 29,
    "manage_expressions": 1 << 30,
    "use_application_commands": 1 << 31,
    "request_to_speak": 1 << 32,
    "manage_events": 1 << 33,
    "manage_threads": 1 << 34,
    "create_public_threads": 1 << 35,
    "create_private_threads": 1 << 36,
    "use_external_stickers": 1 << 37,
    "send_messages_in_threads": 1 << 38,
    "use_embedded_activities": 1 << 39,
    "moderate_members": 1 << 40,
    "send_polls": 1 << 49,
    "pin_messages": 1 << 51,
}
ALL_PERMISSIONS = 0
for _bit in PERMISSIONS.values():
    ALL_PERMISSIONS |= _bit
P = PERMISSIONS

EVERYONE_DEFAULT = (
    P["create_instant_invite"]
    | P["add_reactions"]
    | P["stream"]
    | P["view_channel"]
    | P["send_messages"]
    | P["embed_links"]
    | P["attach_files"]
    | P["read_message_history"]
    | P["use_external_emojis"]
    | P["connect"]
    | P["speak"]
    | P["use_vad"]
    | P["change_nickname"]
    | P["use_application_commands"]
    | P["create_public_threads"]
    | P["create_private_threads"]
    | P["send_messages_in_threads"]
)
# What a bot invited with a sensible scope gets: everything a game host needs, but not
# administrator, which would bypass channel overwrites and hide permission bugs.
BOT_ROLE_DEFAULT = EVERYONE_DEFAULT | (
    P["manage_channels"]
    | P["manage_messages"]
    | P["mention_everyone"]
    | P["manage_roles"]
    | P["manage_webhooks"]
    | P["manage_threads"]
    | P["moderate_members"]
)


def permission_bits(perm: str | int) -> int:
    if isinstance(perm, int):
        return perm
    try:
        return PERMISSIONS[perm]
    except KeyError:
        raise ValueError(f"unknown permission {perm!r}") from None


# --- intents --------------------------------------------------------------------------------

INTENT_GUILDS = 1 << 0
INTENT_GUILD_MEMBERS = 1 << 1
INTENT_GUILD_WEBHOOKS = 1 << 5
INTENT_GUILD_PRESENCES = 1 << 8
INTENT_GUILD_MESSAGES = 1 << 9
INTENT_DIRECT_MESSAGES = 1 << 12
INTENT_MESSAGE_CONTENT = 1 << 15
PRIVILEGED_INTENTS = INTENT_GUILD_MEMBERS | INTENT_GUILD_PRESENCES | INTENT_MESSAGE_CONTENT

# --- channel types --------------------------------------------------------------------------

TEXT = 0
DM = 1
VOICE = 2
CATEGORY = 4
ANNOUNCEMENT = 5
ANNOUNCEMENT_THREAD = 10
PUBLIC_THREAD = 11
PRIVATE_THREAD = 12
FORUM = 15
THREAD_TYPES = (ANNOUNCEMENT_THREAD, PUBLIC_THREAD, PRIVATE_THREAD)


# --- objects ---------------------------------------------------------------------------------


@dataclass(eq=False)
class User:
    id: int
    username: str
    global_name: str | None = None
    bot: bool = False
    avatar: str | None = None
    discriminator: str = "0"

    def payload(self) -> JSON:
        data: JSON = {
            "id": str(self.id),
            "username": self.username,
            "discriminator": self.discriminator,
            "global_name": self.global_name,
            "avatar": self.avatar,
            "public_flags": 0,
            "flags": 0,
            "banner": None,
            "accent_color": None,
            "avatar_decoration_data": None,
            "collectibles": None,
            "primary_guild": None,
        }
        if self.bot:
            data["bot"] = True
        return data


@dataclass(eq=False)
class Role:
    id: int
    guild_id: int
    name: str
    permissions: int = 0
    position: int = 0
    color: int = 0
    hoist: bool = False
    managed: bool = False
    mentionable: bool = False
    bot_id: int | None = None

    def payload(self) -> JSON:
        data: JSON = {
            "id": str(self.id),
            "name": self.name,
            "description": None,
            "permissions": str(self.permissions),
            "position": self.position,
            "color": self.color,
            "colors": {
                "primary_color": self.color,
                "secondary_color": None,
                "tertiary_color": None,
            },
            "hoist": self.hoist,
            "managed": self.managed,
            "mentionable": self.mentionable,
            "icon": None,
            "unicode_emoji": None,
            "flags": 0,
        }
        if self.bot_id is not None:
            data["tags"] = {"bot_id": str(self.bot_id)}
        return data


@dataclass(eq=False)
class Member:
    guild_id: int
    user: User
    roles: list[int] = field(default_factory=list)
    nick: str | None = None
    joined_at: str = field(default_factory=iso)

    @property
    def id(self) -> int:
        return self.user.id

    def payload(self, *, with_user: bool = True) -> JSON:
        data: JSON = {
            "roles": [str(r) for r in self.roles],
            "nick": self.nick,
            "avatar": None,
            "banner": None,
            "joined_at": self.joined_at,
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "pending": False,
            "flags": 0,
            "communication_disabled_until": None,
            "avatar_decoration_data": None,
        }
        if with_user:
            data["user"] = self.user.payload()
        return data


@dataclass(eq=False)
class Overwrite:
    id: int
    type: int  # 0 role, 1 member
    allow: int = 0
    deny: int = 0

    def payload(self) -> JSON:
        return {
            "id": str(self.id),
            "type": self.type,
            "allow": str(self.allow),
            "deny": str(self.deny),
        }


@dataclass(eq=False)
class Channel:
    id: int
    type: int
    name: str | None
    guild_id: int | None = None
    position: int = 0
    parent_id: int | None = None
    topic: str | None = None
    nsfw: bool = False
    rate_limit_per_user: int = 0
    overwrites: dict[int, Overwrite] = field(default_factory=dict)
    last_message_id: int | None = None
    # threads
    owner_id: int | None = None
    archived: bool = False
    locked: bool = False
    invitable: bool = True
    auto_archive_duration: int = 1440
    archive_timestamp: str = field(default_factory=iso)
    create_timestamp: str = field(default_factory=iso)
    archiver_id: int | None = None
    message_count: int = 0
    total_message_sent: int = 0
    member_ids: dict[int, str] = field(default_factory=dict)  # user id -> join timestamp
    denied: int = 0  # thread-only permission mask (threads have no overwrites)
    # DMs
    recipient_ids: list[int] = field(default_factory=list)

    @property
    def is_thread(self) -> bool:
        return self.type in THREAD_TYPES

    def payload(self, fake: Any = None) -> JSON:
        data: JSON = {
            "id": str(self.id),
            "type": self.type,
            "flags": 0,
            "last_message_id": _opt(self.last_message_id),
        }
        if self.type == DM:
            data["recipients"] = (
                [fake.users[u].payload() for u in self.recipient_ids] if fake is not None else []
            )
            return data
        data["guild_id"] = _opt(self.guild_id)
        data["name"] = self.name
        data["parent_id"] = _opt(self.parent_id)
        data["rate_limit_per_user"] = self.rate_limit_per_user
        data["nsfw"] = self.nsfw
        if self.is_thread:
            data.update(
                owner_id=_opt(self.owner_id),
                message_count=self.message_count,
                member_count=min(len(self.member_ids), 50),
                total_message_sent=self.total_message_sent,
                member_ids_preview=[str(u) for u in list(self.member_ids)[:8]],
                thread_metadata={
                    "archived": self.archived,
                    "archiver_id": _opt(self.archiver_id),
                    "auto_archive_duration": self.auto_archive_duration,
                    "archive_timestamp": self.archive_timestamp,
                    "locked": self.locked,
                    "invitable": self.invitable,
                    "create_timestamp": self.create_timestamp,
                },
            )
            return data
        data.update(
            position=self.position,
            permission_overwrites=[o.payload() for o in self.overwrites.values()],
            topic=self.topic,
            default_auto_archive_duration=1440,
            default_thread_rate_limit_per_user=0,
        )
        if self.type == VOICE:
            data.update(bitrate=64000, user_limit=0, rtc_region=None)
        return data


@dataclass(eq=False)
class Guild:
    id: int
    name: str
    owner_id: int
    roles: dict[int, Role] = field(default_factory=dict)
    members: dict[int, Member] = field(default_factory=dict)
    joined_at: str = field(default_factory=iso)

    def payload(self, *, counts: bool = False) -> JSON:
        data: JSON = {
            "id": str(self.id),
            "name": self.name,
            "icon": None,
            "icon_hash": None,
            "splash": None,
            "discovery_splash": None,
            "owner_id": str(self.owner_id),
            "afk_channel_id": None,
            "afk_timeout": 300,
            "widget_enabled": False,
            "verification_level": 1,
            "default_message_notifications": 1,
            "explicit_content_filter": 0,
            "roles": [r.payload() for r in self.roles.values()],
            "emojis": [],
            "stickers": [],
            "features": [],
            "mfa_level": 0,
            "application_id": None,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "public_updates_channel_id": None,
            "safety_alerts_channel_id": None,
            "max_members": 500000,
            "max_presences": None,
            "vanity_url_code": None,
            "description": None,
            "banner": None,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": "en-US",
            "nsfw_level": 0,
            "premium_progress_bar_enabled": False,
            "incidents_data": None,
        }
        if counts:
            data["approximate_member_count"] = len(self.members)
            data["approximate_presence_count"] = 0
        return data


@dataclass(eq=False)
class Webhook:
    id: int
    token: str
    channel_id: int
    guild_id: int
    name: str
    creator_id: int
    application_id: int | None
    avatar: str | None = None

    def payload(self, fake: Any, *, with_user: bool = True, with_token: bool = True) -> JSON:
        data: JSON = {
            "id": str(self.id),
            "type": 1,
            "guild_id": str(self.guild_id),
            "channel_id": str(self.channel_id),
            "name": self.name,
            "avatar": self.avatar,
            "application_id": _opt(self.application_id),
        }
        if with_token:
            data["token"] = self.token
        if with_user and self.creator_id in fake.users:
            data["user"] = fake.users[self.creator_id].payload()
        return data


def _opt(value: int | None) -> str | None:
    return None if value is None else str(value)


def component_ids(components: list[JSON]) -> list[JSON]:
    """Copy components, numbering them as Discord does (`id` 1..n in depth-first order)."""
    counter = itertools.count(1)

    def walk(items: list[JSON]) -> list[JSON]:
        out = []
        for item in items:
            item = dict(item)
            item.setdefault("id", next(counter))
            for key in ("components", "items"):
                if isinstance(item.get(key), list):
                    item[key] = walk(item[key])
            for key in ("accessory", "component"):
                if isinstance(item.get(key), dict):
                    item[key] = walk([item[key]])[0]
            out.append(item)
        return out

    return walk(components)


def iter_components(components: list[JSON]) -> list[JSON]:
    """Every component, nested ones included, depth-first."""
    out: list[JSON] = []
    for item in components:
        out.append(item)
        for key in ("components", "items"):
            if isinstance(item.get(key), list):
                out.extend(iter_components(item[key]))
        for key in ("accessory", "component"):
            if isinstance(item.get(key), dict):
                out.extend(iter_components([item[key]]))
    return out
