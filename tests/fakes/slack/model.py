"""The fake workspace's state: users, conversations, messages, views, and what was recorded.

Everything here is plain data so tests can assert on it directly; the Web API handlers in
`web_api.py` and the inbound builders in `inbound.py` are the only writers.  Objects render
themselves in the shapes the real API returns (`to_api()`), so the fake never hand-builds a
response twice in two slightly different ways.
"""

from __future__ import annotations

import itertools
import json
import secrets
import string
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]

# Bot scopes the fake grants by default: what a Mafia host bot would request.  Deliberately
# without `chat:write.public`, so posting into a public channel the bot never joined fails
# with `not_in_channel` exactly as it does on a real workspace.
DEFAULT_BOT_SCOPES: frozenset[str] = frozenset(
    {
        "app_mentions:read",
        "channels:history",
        "channels:manage",
        "channels:read",
        "chat:write",
        "chat:write.customize",
        "commands",
        "groups:history",
        "groups:read",
        "groups:write",
        "im:history",
        "im:read",
        "im:write",
        "mpim:history",
        "mpim:read",
        "mpim:write",
        "users:read",
    }
)
APP_TOKEN_SCOPES: frozenset[str] = frozenset({"connections:write"})


class Ids:
    """Slack-looking ids (`U0000000A`), unique per fake, readable in assertion diffs."""

    def __init__(self, offset: int = 0) -> None:
        self._counters: dict[str, Iterator[int]] = {}
        #: where numbering starts (past 0): workspaces of one fake Slack never share an id
        self.offset = offset

    def new(self, prefix: str) -> str:
        counter = self._counters.setdefault(prefix, itertools.count(self.offset + 1))
        return f"{prefix}{next(counter):08X}"


class TsClock:
    """Message timestamps: `"<unix seconds>.<6 digits>"`, strictly increasing.

    Slack uses `ts` as the message id within a channel, so two messages must never share one;
    and it is the moment the message was made, to the microsecond (an app may judge a line by
    it). So: the wall clock in microseconds, one more than the last when two would collide."""

    def __init__(self) -> None:
        self._last = 0

    def next(self) -> str:
        self._last = max(time.time_ns() // 1000, self._last + 1)
        return f"{self._last // 1_000_000}.{self._last % 1_000_000:06d}"


def random_token(n: int = 5) -> str:
    """Short alphanumeric like the block_id / action_id Slack invents for blocks without one."""
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(n))


def decode_json_arg(value: Any) -> Any:
    """Form-encoded calls carry `blocks`, `view`... as JSON strings; JSON calls as objects."""
    if isinstance(value, str | bytes):
        return json.loads(value)
    return value


# -- blocks -------------------------------------------------------------------------------


def normalize_blocks(blocks: list[JSON]) -> list[JSON]:
    """Fill in `block_id` / `action_id` where missing, as Slack does when storing a message.

    Interaction payloads always carry both, so a fake that left them out would let an adapter
    rely on ids that never exist in production."""
    out: list[JSON] = []
    for block in blocks:
        block = dict(block)
        block.setdefault("block_id", random_token())
        if block.get("type") == "actions":
            block["elements"] = [_with_action_id(e) for e in block.get("elements", [])]
        if isinstance(block.get("accessory"), dict):
            block["accessory"] = _with_action_id(block["accessory"])
        if block.get("type") == "input" and isinstance(block.get("element"), dict):
            block["element"] = _with_action_id(block["element"])
        out.append(block)
    return out


def _with_action_id(element: JSON) -> JSON:
    element = dict(element)
    if element.get("type") not in {"image"}:
        element.setdefault("action_id", random_token())
    return element


def iter_elements(blocks: list[JSON]) -> Iterator[tuple[JSON, JSON]]:
    """(block, interactive element) pairs: actions elements, section accessories, inputs."""
    for block in blocks:
        if block.get("type") == "actions":
            for element in block.get("elements", []):
                yield block, element
        if isinstance(block.get("accessory"), dict):
            yield block, block["accessory"]
        if block.get("type") == "input" and isinstance(block.get("element"), dict):
            yield block, block["element"]


def find_element(blocks: list[JSON], action_id: str) -> tuple[JSON, JSON] | None:
    for block, element in iter_elements(blocks):
        if element.get("action_id") == action_id:
            return block, element
    return None


def element_options(element: JSON) -> list[JSON]:
    options = list(element.get("options") or [])
    for group in element.get("option_groups") or []:
        options.extend(group.get("options") or [])
    return options


def find_option(element: JSON, value: str) -> JSON | None:
    for option in element_options(element):
        if option.get("value") == value:
            return option
    return None


def plain_text(text: str) -> JSON:
    return {"type": "plain_text", "text": text, "emoji": True}


# -- workspace objects --------------------------------------------------------------------


@dataclass
class FakeUser:
    id: str
    name: str
    team_id: str
    real_name: str = ""
    display_name: str = ""
    is_bot: bool = False
    is_admin: bool = False
    deleted: bool = False
    bot_id: str | None = None
    tz: str = "Europe/London"

    def to_api(self) -> JSON:
        real = self.real_name or self.name
        return {
            "id": self.id,
            "team_id": self.team_id,
            "name": self.name,
            "deleted": self.deleted,
            "real_name": real,
            "tz": self.tz,
            "tz_label": "British Summer Time",
            "tz_offset": 3600,
            "is_admin": self.is_admin,
            "is_owner": False,
            "is_bot": self.is_bot,
            "is_app_user": False,
            "updated": 1_700_000_000,
            "profile": {
                "real_name": real,
                "display_name": self.display_name,
                "real_name_normalized": real,
                "display_name_normalized": self.display_name,
                "image_48": f"https://avatars.example.invalid/{self.id}_48.png",
                "image_72": f"https://avatars.example.invalid/{self.id}_72.png",
                "team": self.team_id,
                **({"bot_id": self.bot_id} if self.bot_id else {}),
            },
        }


@dataclass
class Message:
    """One message as stored in a conversation (posted by the bot or injected by a test)."""

    ts: str
    channel: str
    text: str = ""
    user: str | None = None
    bot_id: str | None = None
    app_id: str | None = None
    blocks: list[JSON] | None = None
    attachments: list[JSON] | None = None
    thread_ts: str | None = None
    username: str | None = None
    icon_url: str | None = None
    icon_emoji: str | None = None
    metadata: JSON | None = None
    edited_ts: str | None = None
    reply_count: int = 0
    source: str = "api"  # "api" | "response_url" | "user"
    team: str | None = None

    @property
    def is_reply(self) -> bool:
        return self.thread_ts is not None and self.thread_ts != self.ts

    def to_api(self) -> JSON:
        out: JSON = {"type": "message", "text": self.text, "ts": self.ts}
        if self.user:
            out["user"] = self.user
        if self.bot_id:
            out["bot_id"] = self.bot_id
            out["app_id"] = self.app_id
            if not self.username:
                out["bot_profile"] = {"id": self.bot_id, "app_id": self.app_id, "deleted": False}
        if self.team:
            out["team"] = self.team
        if self.blocks is not None:
            out["blocks"] = self.blocks
        if self.attachments is not None:
            out["attachments"] = self.attachments
        if self.thread_ts:
            out["thread_ts"] = self.thread_ts
        if self.reply_count:
            out["reply_count"] = self.reply_count
        if self.username:
            out["username"] = self.username
        icons: JSON = {}
        if self.icon_emoji:
            icons["emoji"] = self.icon_emoji
        elif self.icon_url:
            icons["image_48"] = self.icon_url
        if icons:
            out["icons"] = icons
        if self.metadata is not None:
            out["metadata"] = self.metadata
        if self.edited_ts:
            out["edited"] = {"user": self.user, "ts": self.edited_ts}
        return out


@dataclass
class Ephemeral:
    """A message only `user` sees: chat.postEphemeral, or a response_url reply."""

    ts: str
    channel: str
    user: str
    text: str = ""
    blocks: list[JSON] | None = None
    source: str = "chat.postEphemeral"  # or "response_url"
    username: str | None = None
    icon_url: str | None = None
    icon_emoji: str | None = None


@dataclass
class FakeChannel:
    id: str
    name: str
    is_private: bool = False
    is_im: bool = False
    is_mpim: bool = False
    members: list[str] = field(default_factory=list)
    is_archived: bool = False
    creator: str | None = None
    created: int = field(default_factory=lambda: int(time.time()))
    im_user: str | None = None
    is_general: bool = False
    messages: list[Message] = field(default_factory=list)

    @property
    def kind(self) -> str:
        """Scope family: channels / groups / im / mpim."""
        if self.is_im:
            return "im"
        if self.is_mpim:
            return "mpim"
        return "groups" if self.is_private else "channels"

    @property
    def channel_type(self) -> str:
        """`channel_type` as message events spell it."""
        return {"channels": "channel", "groups": "group", "im": "im", "mpim": "mpim"}[self.kind]

    def find(self, ts: str) -> Message | None:
        for message in self.messages:
            if message.ts == ts:
                return message
        return None

    def to_api(self, *, num_members: bool = False) -> JSON:
        if self.is_im:
            return {
                "id": self.id,
                "created": self.created,
                "is_im": True,
                "is_org_shared": False,
                "user": self.im_user,
                "is_user_deleted": False,
                "priority": 0,
            }
        out: JSON = {
            "id": self.id,
            "name": self.name,
            "name_normalized": self.name,
            "is_channel": not self.is_private and not self.is_mpim,
            "is_group": self.is_private and not self.is_mpim,
            "is_im": False,
            "is_mpim": self.is_mpim,
            "is_private": self.is_private,
            "created": self.created,
            "creator": self.creator,
            "is_archived": self.is_archived,
            "is_general": self.is_general,
            "is_shared": False,
            "is_ext_shared": False,
            "is_org_shared": False,
            "is_member": False,  # set by the caller, it depends on who asks
            "topic": {"value": "", "creator": "", "last_set": 0},
            "purpose": {"value": "", "creator": "", "last_set": 0},
            "previous_names": [],
        }
        if num_members:
            out["num_members"] = len(self.members)
        return out


@dataclass
class FakeView:
    """A modal (or Home tab) the app opened; `stack` links pushed modals."""

    id: str
    user: str
    view: JSON
    team_id: str
    app_id: str
    bot_id: str
    hash: str
    trigger_id: str | None = None
    external_id: str = ""
    root_view_id: str | None = None
    previous_view_id: str | None = None
    closed: bool = False
    state_values: JSON = field(default_factory=dict)

    @property
    def type(self) -> str:
        return str(self.view.get("type", "modal"))

    @property
    def callback_id(self) -> str:
        return str(self.view.get("callback_id", ""))

    @property
    def private_metadata(self) -> str:
        return str(self.view.get("private_metadata", ""))

    @property
    def blocks(self) -> list[JSON]:
        return list(self.view.get("blocks", []))

    def to_api(self) -> JSON:
        view = self.view
        return {
            "id": self.id,
            "team_id": self.team_id,
            "type": self.type,
            "blocks": self.blocks,
            "private_metadata": self.private_metadata,
            "callback_id": self.callback_id,
            "state": {"values": self.state_values},
            "hash": self.hash,
            "title": view.get("title"),
            "clear_on_close": bool(view.get("clear_on_close", False)),
            "notify_on_close": bool(view.get("notify_on_close", False)),
            "close": view.get("close"),
            "submit": view.get("submit"),
            "previous_view_id": self.previous_view_id,
            "root_view_id": self.root_view_id or self.id,
            "app_id": self.app_id,
            "external_id": self.external_id,
            "app_installed_team_id": self.team_id,
            "bot_id": self.bot_id,
        }


# -- recordings ---------------------------------------------------------------------------


@dataclass
class ApiCall:
    """One Web API request as the fake saw it, including rejected ones (429, errors)."""

    method: str
    args: JSON
    token: str | None
    http_verb: str
    content_type: str
    status: int
    response: JSON
    at: float = field(default_factory=time.monotonic)

    @property
    def ok(self) -> bool:
        return self.status == 200 and bool(self.response.get("ok"))

    @property
    def error(self) -> str | None:
        return None if self.ok else str(self.response.get("error"))

    @property
    def rate_limited(self) -> bool:
        return self.status == 429


@dataclass
class ResponseUrlPost:
    """A POST to a `response_url` the fake handed out (bolt's `respond()`)."""

    url: str
    kind: str  # "commands" | "actions" | "views"
    user: str
    channel: str | None
    body: JSON
    status: int
    original_ts: str | None = None

    @property
    def text(self) -> str:
        return str(self.body.get("text", ""))

    @property
    def ephemeral(self) -> bool:
        return bool(self.body.get("response_type", "ephemeral") != "in_channel")


@dataclass
class SocketAck:
    envelope_id: str
    type: str
    payload: JSON | None


@dataclass
class InboundResult:
    """What the app answered to one inbound delivery (HTTP response or Socket Mode ack)."""

    status: int
    body: str
    headers: dict[str, str]
    elapsed: float
    acked: bool = True

    @property
    def late(self) -> bool:
        """Slack gives up after 3 s and shows the user an error (or retries an event)."""
        return self.elapsed > 3.0

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None
