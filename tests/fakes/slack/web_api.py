"""The Web API methods the fake implements, on top of `Workspace`.

Each handler takes a `Call` (parsed args + the caller's token) and returns the success body, or
raises `ApiFailure(error, **extra)` which becomes `{"ok": false, "error": ...}` with HTTP 200,
as Slack answers.  Errors follow the real API where it matters to an adapter: private channels
the bot is not in are `channel_not_found` (not `not_in_channel`), posting into a public channel
without membership is `not_in_channel` unless `chat:write.public` is granted, archived channels
are `is_archived`, and a missing scope is `missing_scope` with `needed`/`provided`.
"""

from __future__ import annotations

import base64
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.fakes.slack.model import (
    JSON,
    Ephemeral,
    FakeChannel,
    FakeView,
    Message,
    decode_json_arg,
    normalize_blocks,
)
from tests.fakes.slack.workspace import TokenInfo, Workspace

MAX_TEXT = 40_000
MAX_MESSAGE_BLOCKS = 50
MAX_VIEW_BLOCKS = 100
CHANNEL_NAME = re.compile(r"^[a-z0-9_\-]+$")


class ApiFailure(Exception):
    def __init__(self, error: str, **extra: Any) -> None:
        super().__init__(error)
        self.error = error
        self.extra = extra


def invalid_arguments(*messages: str) -> ApiFailure:
    return ApiFailure("invalid_arguments", response_metadata={"messages": list(messages)})


@dataclass
class Call:
    method: str
    args: JSON
    token: TokenInfo
    ws: Workspace
    origin: str
    denied: dict[str, str]

    # -- argument access -------------------------------------------------------------------

    def opt(self, name: str) -> Any:
        value = self.args.get(name)
        return None if value == "" else value

    def req(self, name: str) -> Any:
        value = self.opt(name)
        if value is None:
            raise invalid_arguments(f"[ERROR] missing required field: {name}")
        return value

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.args.get(name)
        if value is None or value == "":
            return default
        if isinstance(value, bool):
            return value
        return str(value).lower() in {"1", "true"}

    def number(self, name: str, default: int) -> int:
        value = self.args.get(name)
        if value in (None, ""):
            return default
        try:
            return int(value)
        except (TypeError, ValueError):
            raise invalid_arguments(f"[ERROR] {name} must be an integer") from None

    def json_arg(self, name: str) -> Any:
        value = self.opt(name)
        if value is None:
            return None
        try:
            return decode_json_arg(value)
        except ValueError:
            raise ApiFailure(f"invalid_{name}") from None

    # -- permission ------------------------------------------------------------------------

    def need(self, *any_of: str) -> None:
        """Fail with missing_scope unless the token has one of `any_of`."""
        if not any(scope in self.token.scopes for scope in any_of):
            raise ApiFailure(
                "missing_scope",
                needed=",".join(any_of),
                provided=",".join(sorted(self.token.scopes)),
            )

    def conversation(self, name: str = "channel") -> FakeChannel:
        """A conversation the bot can see; private ones it is not in do not exist for it."""
        cid = str(self.req(name))
        channel = self.ws.channels.get(cid)
        if channel is None:
            raise ApiFailure("channel_not_found")
        if channel.kind != "channels" and self.ws.bot.id not in channel.members:
            raise ApiFailure("channel_not_found")
        return channel

    def need_for(self, channel: FakeChannel, verb: str) -> None:
        """Scope of `verb` ("read", "history", "write") for this kind of conversation."""
        if verb == "manage":
            self.need("groups:write" if channel.is_private else "channels:manage")
        else:
            self.need(f"{channel.kind}:{verb}")

    def member(self, channel: FakeChannel) -> None:
        if self.ws.bot.id not in channel.members:
            raise ApiFailure("not_in_channel")

    def can_post(self, channel: FakeChannel) -> None:
        """Public channels need membership, or chat:write.public to post from outside."""
        outside = channel.kind == "channels" and self.ws.bot.id not in channel.members
        if outside and "chat:write.public" not in self.token.scopes:
            raise ApiFailure("not_in_channel")

    def not_archived(self, channel: FakeChannel) -> None:
        if channel.is_archived:
            raise ApiFailure("is_archived")


Handler = Callable[[Call], JSON]
HANDLERS: dict[str, tuple[str, Handler]] = {}


def method(name: str, token_kind: str = "bot") -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        HANDLERS[name] = (token_kind, fn)
        return fn

    return register


def dispatch(
    name: str, args: JSON, token: str | None, ws: Workspace, origin: str, denied: dict[str, str]
) -> tuple[int, JSON, set[str]]:
    """(HTTP status, body, scopes of the token) for one call."""
    if name not in HANDLERS:
        return 404, {"ok": False, "error": "unknown_method", "req_method": name}, set()
    if not token:
        return 200, {"ok": False, "error": "not_authed"}, set()
    info = ws.tokens.get(token)
    if info is None:
        return 200, {"ok": False, "error": "invalid_auth"}, set()
    kind, handler = HANDLERS[name]
    if info.kind != kind:
        return 200, {"ok": False, "error": "not_allowed_token_type"}, info.scopes
    call = Call(name, args, info, ws, origin, denied)
    try:
        if name in denied:
            raise ApiFailure(
                "missing_scope", needed=denied[name], provided=",".join(sorted(info.scopes))
            )
        body = handler(call)
    except ApiFailure as failure:
        return 200, {"ok": False, "error": failure.error, **failure.extra}, info.scopes
    return 200, {"ok": True, **body}, info.scopes


# -- auth / apps --------------------------------------------------------------------------


@method("auth.test")
def auth_test(c: Call) -> JSON:
    ws = c.ws
    return {
        "url": f"https://{ws.team_domain}.slack.com/",
        "team": ws.team_domain.title(),
        "user": ws.bot.name,
        "team_id": ws.team_id,
        "user_id": ws.bot.id,
        "bot_id": ws.bot_id,
        "is_enterprise_install": False,
        **({"enterprise_id": ws.enterprise_id} if ws.enterprise_id is not None else {}),
    }


@method("apps.connections.open", token_kind="app")
def apps_connections_open(c: Call) -> JSON:
    c.need("connections:write")
    ticket = secrets.token_hex(12)
    c.ws.socket_tickets.add(ticket)
    ws_origin = c.origin.replace("http://", "ws://", 1)
    return {"url": f"{ws_origin}/link/?ticket={ticket}&app_id={c.ws.app_id}"}


# -- chat ---------------------------------------------------------------------------------


def _message_content(c: Call, *, required: bool) -> JSON:
    text = c.opt("text")
    blocks = c.json_arg("blocks")
    attachments = c.json_arg("attachments")
    if required and not text and not blocks and not attachments:
        raise ApiFailure("no_text")
    if text is not None and len(str(text)) > MAX_TEXT:
        raise ApiFailure("msg_too_long")
    if blocks is not None:
        if (
            not isinstance(blocks, list)
            or len(blocks) > MAX_MESSAGE_BLOCKS
            or not all(isinstance(b, dict) and b.get("type") for b in blocks)
        ):
            raise ApiFailure("invalid_blocks")
        blocks = normalize_blocks(blocks)
    if attachments is not None and not isinstance(attachments, list):
        raise ApiFailure("invalid_attachments")
    out: JSON = {}
    if text is not None:
        out["text"] = str(text)
    if blocks is not None:
        out["blocks"] = blocks
    if attachments is not None:
        out["attachments"] = attachments
    return out


def _authorship(c: Call) -> JSON:
    """username / icon_url / icon_emoji, which need chat:write.customize."""
    fields = {k: c.opt(k) for k in ("username", "icon_url", "icon_emoji") if c.opt(k)}
    if fields and "chat:write.customize" not in c.token.scopes:
        if c.ws.strict_customize:
            c.need("chat:write.customize")
        return {}
    return fields


def _post_target(c: Call) -> FakeChannel:
    """chat.postMessage's `channel`: an id, a #name, or a user id (posts to the bot's DM)."""
    ref = str(c.req("channel"))
    if ref in c.ws.users:
        return c.ws.dm(ref)
    if ref not in c.ws.channels:
        name = ref.lstrip("#")
        for channel in c.ws.channels.values():
            if not channel.is_im and channel.name == name:
                c.args["channel"] = channel.id
                break
    return c.conversation()


@method("chat.postMessage")
def chat_post_message(c: Call) -> JSON:
    c.need("chat:write")
    channel = _post_target(c)
    c.not_archived(channel)
    c.can_post(channel)
    content = _message_content(c, required=True)
    authorship = _authorship(c)
    metadata = c.json_arg("metadata")
    message = c.ws.post(
        channel,
        user=c.ws.bot.id,
        bot_id=c.ws.bot_id,
        app_id=c.ws.app_id,
        thread_ts=c.opt("thread_ts"),
        metadata=metadata,
        **content,
        **authorship,
    )
    return {"channel": channel.id, "ts": message.ts, "message": message.to_api()}


@method("chat.update")
def chat_update(c: Call) -> JSON:
    c.need("chat:write")
    channel = c.conversation()
    c.not_archived(channel)
    message = channel.find(str(c.req("ts")))
    if message is None:
        raise ApiFailure("message_not_found")
    if message.user != c.ws.bot.id:
        raise ApiFailure("cant_update_message")
    content = _message_content(c, required=False)
    for key, value in content.items():
        setattr(message, key, value)
    metadata = c.json_arg("metadata")
    if metadata is not None:
        message.metadata = metadata
    message.edited_ts = c.ws.clock.next()
    return {
        "channel": channel.id,
        "ts": message.ts,
        "text": message.text,
        "message": message.to_api(),
    }


@method("chat.postEphemeral")
def chat_post_ephemeral(c: Call) -> JSON:
    c.need("chat:write")
    channel = _post_target(c)
    c.not_archived(channel)
    uid = str(c.req("user"))
    if uid not in c.ws.users:
        raise ApiFailure("user_not_found")
    c.can_post(channel)
    if uid not in channel.members:
        raise ApiFailure("user_not_in_channel")
    content = _message_content(c, required=True)
    authorship = _authorship(c)
    ephemeral = Ephemeral(
        ts=c.ws.clock.next(),
        channel=channel.id,
        user=uid,
        text=content.get("text", ""),
        blocks=content.get("blocks"),
        **authorship,
    )
    c.ws.ephemerals.append(ephemeral)
    return {"message_ts": ephemeral.ts}


@method("chat.delete")
def chat_delete(c: Call) -> JSON:
    c.need("chat:write")
    channel = c.conversation()
    message = channel.find(str(c.req("ts")))
    if message is None:
        raise ApiFailure("message_not_found")
    if message.user != c.ws.bot.id:
        raise ApiFailure("cant_delete_message")
    channel.messages.remove(message)
    return {"channel": channel.id, "ts": message.ts}


# -- conversations ------------------------------------------------------------------------


def _channel_json(c: Call, channel: FakeChannel, *, num_members: bool = False) -> JSON:
    out = channel.to_api(num_members=num_members)
    if not channel.is_im:
        out["is_member"] = c.ws.bot.id in channel.members
    return out


def _user_list(c: Call, name: str = "users") -> list[str]:
    raw = c.opt(name)
    if not raw:
        raise ApiFailure("users_list_not_supplied" if name == "users" else "no_user")
    return [u.strip() for u in str(raw).split(",") if u.strip()]


@method("conversations.open")
def conversations_open(c: Call) -> JSON:
    existing_id = c.opt("channel")
    if existing_id:
        channel = c.conversation()
        return {"channel": _channel_json(c, channel)}
    users = _user_list(c)
    for uid in users:
        if uid not in c.ws.users:
            raise ApiFailure("user_not_found")
    if len(users) > 1:
        c.need("mpim:write")
        raise ApiFailure("method_not_supported_for_channel_type")  # group DMs: not modelled
    c.need("im:write")
    already = c.ws.existing_dm(users[0]) is not None
    channel = c.ws.dm(users[0])
    body: JSON = {
        "channel": _channel_json(c, channel) if c.flag("return_im") else {"id": channel.id}
    }
    if already:
        body = {"no_op": True, "already_open": True, **body}
    return body


@method("conversations.create")
def conversations_create(c: Call) -> JSON:
    private = c.flag("is_private")
    c.need("groups:write" if private else "channels:manage")
    name = str(c.req("name"))
    if len(name) > 80:
        raise ApiFailure("invalid_name_maxlength")
    if not CHANNEL_NAME.match(name):
        raise ApiFailure("invalid_name_specials")
    if any(ch.name == name and not ch.is_im for ch in c.ws.channels.values()):
        raise ApiFailure("name_taken")
    channel = c.ws.add_channel(name, private=private, creator=c.ws.bot.id)
    return {"channel": _channel_json(c, channel)}


@method("conversations.invite")
def conversations_invite(c: Call) -> JSON:
    channel = c.conversation()
    if channel.is_im:
        raise ApiFailure("method_not_supported_for_channel_type")
    c.need_for(channel, "manage")
    c.not_archived(channel)
    c.member(channel)
    users = _user_list(c)
    for uid in users:
        if uid == c.ws.bot.id:
            raise ApiFailure("cant_invite_self")
        if uid not in c.ws.users:
            raise ApiFailure("user_not_found")
        if uid in channel.members:
            raise ApiFailure("already_in_channel")
    channel.members.extend(users)
    return {"channel": _channel_json(c, channel)}


@method("conversations.kick")
def conversations_kick(c: Call) -> JSON:
    channel = c.conversation()
    if channel.is_im:
        raise ApiFailure("method_not_supported_for_channel_type")
    c.need_for(channel, "manage")
    c.member(channel)
    uid = str(c.req("user"))
    if uid == c.ws.bot.id:
        raise ApiFailure("cant_kick_self")
    if uid not in c.ws.users:
        raise ApiFailure("user_not_found")
    if uid not in channel.members:
        raise ApiFailure("not_in_channel")
    channel.members.remove(uid)
    return {}


@method("conversations.archive")
def conversations_archive(c: Call) -> JSON:
    channel = c.conversation()
    if channel.is_im:
        raise ApiFailure("method_not_supported_for_channel_type")
    c.need_for(channel, "manage")
    if channel.is_general:
        raise ApiFailure("cant_archive_general")
    if channel.is_archived:
        raise ApiFailure("already_archived")
    c.member(channel)
    channel.is_archived = True
    return {}


@method("conversations.info")
def conversations_info(c: Call) -> JSON:
    channel = c.conversation()
    c.need_for(channel, "read")
    return {"channel": _channel_json(c, channel, num_members=c.flag("include_num_members"))}


def _page(c: Call, items: list[Any], max_limit: int) -> tuple[list[Any], str]:
    limit = max(1, min(c.number("limit", 100), max_limit))
    cursor = c.opt("cursor")
    start = 0
    if cursor:
        try:
            kind, _, offset = base64.b64decode(str(cursor)).decode().partition(":")
            start = int(offset)
            if kind != "offset":
                raise ValueError(kind)
        except ValueError:
            raise ApiFailure("invalid_cursor") from None
    page = items[start : start + limit]
    more = start + limit < len(items)
    next_cursor = base64.b64encode(f"offset:{start + limit}".encode()).decode() if more else ""
    return page, next_cursor


@method("conversations.members")
def conversations_members(c: Call) -> JSON:
    channel = c.conversation()
    c.need_for(channel, "read")
    page, next_cursor = _page(c, list(channel.members), 1000)
    return {"members": page, "response_metadata": {"next_cursor": next_cursor}}


@method("conversations.history")
def conversations_history(c: Call) -> JSON:
    channel = c.conversation()
    c.need_for(channel, "history")
    c.member(channel)
    oldest = float(c.opt("oldest") or 0)
    latest = float(c.opt("latest") or time.time() + 10**6)
    inclusive = c.flag("inclusive")

    def in_range(m: Message) -> bool:
        ts = float(m.ts)
        if inclusive:
            return oldest <= ts <= latest
        return oldest < ts < latest

    top = [m for m in reversed(channel.messages) if not m.is_reply and in_range(m)]
    page, next_cursor = _page(c, top, 999)
    return {
        "messages": [m.to_api() for m in page],
        "has_more": bool(next_cursor),
        "pin_count": 0,
        "channel_actions_query": [],
        "channel_actions_count": 0,
        "response_metadata": {"next_cursor": next_cursor},
    }


# -- users --------------------------------------------------------------------------------


@method("users.info")
def users_info(c: Call) -> JSON:
    c.need("users:read")
    uid = str(c.req("user"))
    user = c.ws.users.get(uid)
    if user is None:
        raise ApiFailure("user_not_found")
    return {"user": user.to_api()}


# -- views --------------------------------------------------------------------------------


def _text_len_error(obj: Any, pointer: str, limit: int) -> list[str]:
    if not isinstance(obj, dict) or obj.get("type") != "plain_text" or not obj.get("text"):
        return [f"[ERROR] must provide a plain_text object [json-pointer:{pointer}]"]
    if len(str(obj["text"])) > limit:
        return [f"[ERROR] must be less than {limit + 1} characters [json-pointer:{pointer}/text]"]
    return []


def validate_view(view: Any, *, home: bool) -> JSON:
    """A view as Slack would store it, or invalid_arguments with Slack-style messages."""
    if not isinstance(view, dict):
        raise ApiFailure(
            "invalid_arguments", response_metadata={"messages": ["[ERROR] view must be an object"]}
        )
    errors: list[str] = []
    kind = view.get("type")
    if kind != ("home" if home else "modal"):
        errors.append(f"[ERROR] invalid view type {kind!r} [json-pointer:/view/type]")
    blocks = view.get("blocks")
    if not isinstance(blocks, list):
        errors.append("[ERROR] missing required field: blocks [json-pointer:/view/blocks]")
        blocks = []
    if len(blocks) > MAX_VIEW_BLOCKS:
        errors.append("[ERROR] no more than 100 items allowed [json-pointer:/view/blocks]")
    if not home:
        errors += _text_len_error(view.get("title"), "/view/title", 24)
        for key in ("submit", "close"):
            if view.get(key) is not None:
                errors += _text_len_error(view[key], f"/view/{key}", 24)
        if any(b.get("type") == "input" for b in blocks if isinstance(b, dict)) and not view.get(
            "submit"
        ):
            errors.append(
                "[ERROR] submit is required when an input block is present "
                "[json-pointer:/view/submit]"
            )
    if len(str(view.get("private_metadata", ""))) > 3000:
        errors.append(
            "[ERROR] must be less than 3001 characters [json-pointer:/view/private_metadata]"
        )
    if len(str(view.get("callback_id", ""))) > 255:
        errors.append("[ERROR] must be less than 256 characters [json-pointer:/view/callback_id]")
    seen: set[str] = set()
    for i, block in enumerate(blocks):
        if not isinstance(block, dict) or not block.get("type"):
            errors.append(f"[ERROR] missing required field: type [json-pointer:/view/blocks/{i}]")
            continue
        bid = block.get("block_id")
        if bid is not None:
            if bid in seen:
                errors.append(f"[ERROR] duplicate block_id [json-pointer:/view/blocks/{i}]")
            seen.add(bid)
    if errors:
        raise ApiFailure("invalid_arguments", response_metadata={"messages": errors})
    return {**view, "blocks": normalize_blocks(blocks)}


def _new_hash() -> str:
    return f"{int(time.time())}.{secrets.token_hex(4)}"


def _use_trigger(c: Call) -> str:
    trigger_id = c.opt("trigger_id") or c.opt("interactivity_pointer")
    if not trigger_id:
        raise invalid_arguments("[ERROR] missing required field: trigger_id")
    trigger = c.ws.triggers.get(str(trigger_id))
    if trigger is None:
        raise ApiFailure("invalid_trigger_id")
    if trigger.used:
        raise ApiFailure("exchanged_trigger_id")
    ttl = c.ws.trigger_ttl
    if ttl is not None and time.monotonic() - trigger.issued_at > ttl:
        raise ApiFailure("expired_trigger_id")
    trigger.used = True
    return trigger.user


def _store_view(
    c: Call, user: str, view: JSON, *, trigger: str | None = None, previous: FakeView | None = None
) -> FakeView:
    stored = FakeView(
        id=c.ws.ids.new("V"),
        user=user,
        view=view,
        team_id=c.ws.team_id,
        app_id=c.ws.app_id,
        bot_id=c.ws.bot_id,
        hash=_new_hash(),
        trigger_id=trigger,
        external_id=str(view.get("external_id", "")),
        previous_view_id=previous.id if previous else None,
        root_view_id=(previous.root_view_id or previous.id) if previous else None,
    )
    c.ws.views[stored.id] = stored
    return stored


@method("views.open")
def views_open(c: Call) -> JSON:
    view = validate_view(c.json_arg("view"), home=False)
    user = _use_trigger(c)
    stored = _store_view(c, user, view, trigger=str(c.opt("trigger_id") or ""))
    return {"view": stored.to_api()}


@method("views.push")
def views_push(c: Call) -> JSON:
    view = validate_view(c.json_arg("view"), home=False)
    user = _use_trigger(c)
    current = [v for v in c.ws.views.values() if v.user == user and not v.closed]
    stored = _store_view(c, user, view, previous=current[-1] if current else None)
    return {"view": stored.to_api()}


@method("views.update")
def views_update(c: Call) -> JSON:
    view = validate_view(c.json_arg("view"), home=False)
    view_id = c.opt("view_id")
    external_id = c.opt("external_id")
    target: FakeView | None = None
    if view_id:
        target = c.ws.views.get(str(view_id))
    elif external_id:
        target = next((v for v in c.ws.views.values() if v.external_id == external_id), None)
    else:
        raise invalid_arguments("[ERROR] either view_id or external_id is required")
    if target is None or target.closed:
        raise ApiFailure("not_found")
    wanted_hash = c.opt("hash")
    if wanted_hash and wanted_hash != target.hash:
        raise ApiFailure("hash_conflict")
    target.view = view
    target.hash = _new_hash()
    return {"view": target.to_api()}


@method("views.publish")
def views_publish(c: Call) -> JSON:
    view = validate_view(c.json_arg("view"), home=True)
    uid = str(c.req("user_id"))
    if uid not in c.ws.users:
        raise ApiFailure("user_not_found")
    current = c.ws.home_views.get(uid)
    wanted_hash = c.opt("hash")
    if current is not None and wanted_hash and wanted_hash != current.hash:
        raise ApiFailure("hash_conflict")
    if current is None:
        current = _store_view(c, uid, view)
        c.ws.home_views[uid] = current
    else:
        current.view = view
        current.hash = _new_hash()
    return {"view": current.to_api()}
