"""REST routes for messages, channels, threads, thread members and permission overwrites."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.fakes.discord.model import (
    ANNOUNCEMENT,
    DM,
    JSON,
    PERMISSIONS,
    PRIVATE_THREAD,
    PUBLIC_THREAD,
    TEXT,
    Channel,
    Overwrite,
    iso,
)
from tests.fakes.discord.rest import (
    Reply,
    Req,
    attachments_for_edit,
    route,
    thread_or_400,
    user_id_param,
)
from tests.fakes.discord.world import (
    DiscordError,
    invalid_form,
    missing_access,
    missing_permissions,
)

if TYPE_CHECKING:
    from tests.fakes.discord.world import World

P = PERMISSIONS


# --- messages --------------------------------------------------------------------------------


@route("POST", "/channels/{channel_id}/messages")
async def send_message(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    body = r.body
    if ch.type == DM and ch.recipient_ids and ch.recipient_ids[0] in w.dm_blocked:
        raise DiscordError(403, 50007, "Cannot send messages to this user")
    w.check_sendable(ch, has_files=bool(r.files))
    w.check_message_body(body, bool(r.files))
    nonce = body.get("nonce")
    if nonce is not None and body.get("enforce_nonce"):
        seen = w.nonces.get((ch.id, str(nonce)))
        if seen is not None and seen in w.messages:
            return w.messages[seen]
    reference = body.get("message_reference")
    if reference and reference.get("message_id"):
        ref_channel = int(reference.get("channel_id") or ch.id)
        ref = w.messages.get(int(reference["message_id"]))
        if (ref is None or int(ref["channel_id"]) != ref_channel) and reference.get(
            "fail_if_not_exists", True
        ):
            raise invalid_form(
                "message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message"
            )
        if ref is None:
            reference = None
    else:
        reference = None
    msg = w.create_message(
        ch,
        w.bot,
        content=body.get("content") or "",
        embeds=body.get("embeds"),
        components=body.get("components"),
        attachments=w.upload(ch, body, r.files),
        flags=int(body.get("flags") or 0) & ~64,
        reference=reference,
        tts=bool(body.get("tts")),
        nonce=nonce,
    )
    if nonce is not None:
        w.nonces[(ch.id, str(nonce))] = int(msg["id"])
    return msg


@route("GET", "/channels/{channel_id}/messages")
async def list_messages(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    w.require(ch, "read_message_history")
    limit = max(1, min(100, int(r.query.get("limit", 50))))
    msgs = w.messages_in(ch)
    ids = [int(m["id"]) for m in msgs]
    if "around" in r.query:
        around = int(r.query["around"])
        before = [m for m, i in zip(msgs, ids, strict=True) if i < around][-(limit // 2) :]
        after = [m for m, i in zip(msgs, ids, strict=True) if i >= around][: limit - len(before)]
        return list(reversed(before + after))
    if "after" in r.query:
        after_id = int(r.query["after"])
        picked = [m for m, i in zip(msgs, ids, strict=True) if i > after_id][:limit]
        return list(reversed(picked))
    if "before" in r.query:
        before_id = int(r.query["before"])
        msgs = [m for m, i in zip(msgs, ids, strict=True) if i < before_id]
    return list(reversed(msgs[-limit:]))


@route("GET", "/channels/{channel_id}/messages/{message_id}")
async def get_message(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    w.require(ch, "read_message_history")
    return w.find_message(ch, r.params["message_id"])


@route("PATCH", "/channels/{channel_id}/messages/{message_id}")
async def edit_message(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    msg = w.find_message(ch, r.params["message_id"])
    if msg["author"]["id"] != str(w.bot.id) or (
        msg.get("webhook_id") and msg["webhook_id"] != str(w.application_id)
    ):
        if set(r.body) - {"flags"}:
            raise DiscordError(403, 50005, "Cannot edit a message authored by another user")
        w.require(ch, "manage_messages")
    if "content" in r.body:
        w.check_message_body({**msg, **r.body}, bool(msg["attachments"] or r.files))
    attachments = attachments_for_edit(w, ch, msg, r)
    return w.edit_message(msg, r.body, attachments=attachments)


@route("DELETE", "/channels/{channel_id}/messages/{message_id}")
async def delete_message(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    msg = w.find_message(ch, r.params["message_id"])
    if msg["author"]["id"] != str(w.bot.id):
        w.require(ch, "manage_messages")
    w.delete_message(msg)
    return None


@route("POST", "/channels/{channel_id}/typing")
async def typing(w: World, r: Req) -> Any:
    w.find_channel(r.params["channel_id"])
    return None


@route("PUT", "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me")
async def add_reaction(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    msg = w.find_message(ch, r.params["message_id"])
    w.require(ch, "read_message_history", "add_reactions")
    emoji = r.params["emoji"]
    for reaction in msg["reactions"]:
        if reaction["emoji"]["name"] == emoji:
            if not reaction["me"]:
                reaction["me"] = True
                reaction["count"] += 1
            return None
    msg["reactions"].append(
        {
            "count": 1,
            "me": True,
            "emoji": {"id": None, "name": emoji},
            "burst_colors": [],
            "me_burst": False,
            "count_details": {"burst": 0, "normal": 1},
        }
    )
    return None


@route("DELETE", "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me")
async def remove_reaction(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    msg = w.find_message(ch, r.params["message_id"])
    msg["reactions"] = [
        x
        for x in msg["reactions"]
        if not (x["emoji"]["name"] == r.params["emoji"] and x["count"] == 1)
    ]
    return None


def _pin(w: World, r: Req, pinned: bool) -> None:
    ch = w.find_channel(r.params["channel_id"])
    msg = w.find_message(ch, r.params["message_id"])
    have = w.permissions_for(ch, w.bot)
    if not have & (P["pin_messages"] | P["manage_messages"]):
        raise missing_permissions()
    msg["pinned"] = pinned
    data: JSON = {"channel_id": str(ch.id), "last_pin_timestamp": iso()}
    if ch.guild_id:
        data["guild_id"] = str(ch.guild_id)
    w._dispatch("CHANNEL_PINS_UPDATE", data, guild_id=ch.guild_id)


@route("PUT", "/channels/{channel_id}/messages/pins/{message_id}")
async def pin_message(w: World, r: Req) -> Any:
    _pin(w, r, True)
    return None


@route("DELETE", "/channels/{channel_id}/messages/pins/{message_id}")
async def unpin_message(w: World, r: Req) -> Any:
    _pin(w, r, False)
    return None


@route("GET", "/channels/{channel_id}/messages/pins")
async def list_pins(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    w.require(ch, "read_message_history")
    return {
        "items": [
            {"pinned_at": iso(), "message": m} for m in reversed(w.messages_in(ch)) if m["pinned"]
        ],
        "has_more": False,
    }


# --- channels and threads -------------------------------------------------------------------


@route("GET", "/channels/{channel_id}")
async def get_channel(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    if ch.guild_id is not None and not w.permissions_for(ch, w.bot) & P["view_channel"]:
        raise missing_access()
    return ch.payload(w)


@route("PATCH", "/channels/{channel_id}")
async def edit_channel(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    body = r.body
    if ch.is_thread:
        is_owner = ch.owner_id == w.bot.id
        manage = bool(w.permissions_for(ch, w.bot) & P["manage_threads"])
        if ({"locked", "invitable"} & set(body)) and not manage:
            raise missing_permissions()
        if (
            {"archived", "name", "auto_archive_duration", "rate_limit_per_user"} & set(body)
        ) and not (manage or is_owner):
            raise missing_permissions()
        if ch.locked and body.get("archived") is False and not manage:
            raise missing_permissions()
        if "name" in body:
            ch.name = body["name"]
        if "archived" in body and bool(body["archived"]) != ch.archived:
            ch.archived = bool(body["archived"])
            ch.archive_timestamp = iso()
            ch.archiver_id = w.bot.id if ch.archived else None
        if "locked" in body:
            ch.locked = bool(body["locked"])
        if "invitable" in body and ch.type == PRIVATE_THREAD:
            ch.invitable = bool(body["invitable"])
        if "auto_archive_duration" in body:
            ch.auto_archive_duration = int(body["auto_archive_duration"])
        if "rate_limit_per_user" in body:
            ch.rate_limit_per_user = int(body["rate_limit_per_user"] or 0)
    else:
        w.require(ch, "manage_channels")
        for key in ("name", "topic", "position", "nsfw", "rate_limit_per_user"):
            if key in body:
                setattr(ch, key, body[key] if body[key] is not None else getattr(ch, key))
        if "parent_id" in body:
            ch.parent_id = int(body["parent_id"]) if body["parent_id"] else None
        if "permission_overwrites" in body:
            overwrites = [_overwrite(w, ch, o) for o in body["permission_overwrites"] or []]
            ch.overwrites = {o.id: o for o in overwrites}
    w.update_channel(ch)
    return ch.payload(w)


def _overwrite(w: World, ch: Channel, body: JSON, target: str | None = None) -> Overwrite:
    w.require(ch, "manage_roles")
    allow, deny = int(body.get("allow") or 0), int(body.get("deny") or 0)
    have = w.permissions_for(ch, w.bot)
    if (allow | deny) & ~have:
        raise missing_permissions()
    kind = int(body.get("type", 0))
    return Overwrite(
        id=int(target if target is not None else body["id"]), type=kind, allow=allow, deny=deny
    )


@route("DELETE", "/channels/{channel_id}")
async def delete_channel(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    if ch.type == DM:
        return ch.payload(w)
    w.require(ch, "manage_threads" if ch.is_thread else "manage_channels")
    return w.delete_channel(ch)


@route("PUT", "/channels/{channel_id}/permissions/{target}")
async def set_permission(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    if ch.is_thread or ch.guild_id is None:
        raise DiscordError(400, 50024, "Cannot execute action on this channel type")
    ow = _overwrite(w, ch, r.body, r.params["target"])
    ch.overwrites[ow.id] = ow
    w.update_channel(ch)
    return None


@route("DELETE", "/channels/{channel_id}/permissions/{target}")
async def delete_permission(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    if ch.is_thread or ch.guild_id is None:
        raise DiscordError(400, 50024, "Cannot execute action on this channel type")
    w.require(ch, "manage_roles")
    if ch.overwrites.pop(int(r.params["target"]), None) is not None:
        w.update_channel(ch)
    return None


def _check_thread_options(body: JSON) -> tuple[str, int]:
    name = body.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= 100:
        raise invalid_form("name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
    duration = int(body.get("auto_archive_duration") or 1440)
    if duration not in (60, 1440, 4320, 10080):
        raise invalid_form(
            "auto_archive_duration",
            "BASE_TYPE_CHOICES",
            "Value must be one of (60, 1440, 4320, 10080).",
        )
    return name, duration


@route("POST", "/channels/{channel_id}/threads")
async def start_thread(w: World, r: Req) -> Any:
    parent = w.find_channel(r.params["channel_id"])
    if parent.type not in (TEXT, ANNOUNCEMENT):
        raise DiscordError(400, 50024, "Cannot execute action on this channel type")
    body = r.body
    kind = int(body.get("type") or PRIVATE_THREAD)
    if kind not in (PUBLIC_THREAD, PRIVATE_THREAD, 10):
        raise invalid_form("type", "BASE_TYPE_CHOICES", "Value must be one of (10, 11, 12).")
    if kind == PRIVATE_THREAD and parent.type != TEXT:
        raise DiscordError(400, 50024, "Cannot execute action on this channel type")
    w.require(
        parent, "create_private_threads" if kind == PRIVATE_THREAD else "create_public_threads"
    )
    name, duration = _check_thread_options(body)
    thread = w.add_thread(
        parent,
        name,
        private=kind == PRIVATE_THREAD,
        invitable=body.get("invitable", True) is not False,
        auto_archive_duration=duration,
        rate_limit_per_user=int(body.get("rate_limit_per_user") or 0),
    )
    return Reply(201, thread.payload(w))


@route("POST", "/channels/{channel_id}/messages/{message_id}/threads")
async def start_thread_from_message(w: World, r: Req) -> Any:
    parent = w.find_channel(r.params["channel_id"])
    if parent.type not in (TEXT, ANNOUNCEMENT):
        raise DiscordError(400, 50024, "Cannot execute action on this channel type")
    msg = w.find_message(parent, r.params["message_id"])
    if int(msg["id"]) in w.channels:
        raise DiscordError(400, 160004, "A thread has already been created for this message")
    w.require(parent, "create_public_threads")
    name, duration = _check_thread_options(r.body)
    thread = w.add_thread(
        parent,
        name,
        thread_id=int(msg["id"]),
        auto_archive_duration=duration,
        rate_limit_per_user=int(r.body.get("rate_limit_per_user") or 0),
    )
    msg["flags"] |= 32  # HAS_THREAD
    return Reply(201, thread.payload(w))


@route("GET", "/channels/{channel_id}/thread-members")
async def list_thread_members(w: World, r: Req) -> Any:
    th = thread_or_400(w, r.params["channel_id"])
    with_member = r.query.get("with_member", "").lower() in ("1", "true")
    return [w._thread_member(th, uid, with_member=with_member) for uid in th.member_ids]


@route("GET", "/channels/{channel_id}/thread-members/{user_id}")
async def get_thread_member(w: World, r: Req) -> Any:
    th = thread_or_400(w, r.params["channel_id"])
    uid = user_id_param(w, r.params["user_id"])
    if uid not in th.member_ids:
        raise DiscordError(404, 10007, "Unknown Member")
    with_member = r.query.get("with_member", "").lower() in ("1", "true")
    return w._thread_member(th, uid, with_member=with_member)


@route("PUT", "/channels/{channel_id}/thread-members/{user_id}")
async def add_thread_member(w: World, r: Req) -> Any:
    th = thread_or_400(w, r.params["channel_id"])
    uid = user_id_param(w, r.params["user_id"])
    if th.archived:
        raise DiscordError(400, 50083, "Thread is archived")
    guild = w.guilds[th.guild_id] if th.guild_id is not None else None
    if guild is None or uid not in guild.members:
        raise DiscordError(404, 10007, "Unknown Member")
    w.require(th, "send_messages_in_threads")
    if (
        th.type == PRIVATE_THREAD
        and uid != w.bot.id
        and w.bot.id not in th.member_ids
        and not w.permissions_for(th, w.bot) & P["manage_threads"]
    ):
        raise missing_access()
    w.add_thread_member(th, uid)
    return None


@route("DELETE", "/channels/{channel_id}/thread-members/{user_id}")
async def remove_thread_member(w: World, r: Req) -> Any:
    th = thread_or_400(w, r.params["channel_id"])
    uid = user_id_param(w, r.params["user_id"])
    if th.archived:
        raise DiscordError(400, 50083, "Thread is archived")
    if uid != w.bot.id and not (
        w.permissions_for(th, w.bot) & P["manage_threads"]
        or (th.type == PRIVATE_THREAD and th.owner_id == w.bot.id)
    ):
        raise missing_permissions()
    w.remove_thread_member(th, uid)
    return None
