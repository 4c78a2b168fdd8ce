"""REST routes for channel webhooks: create/list/edit/delete and execute (the stage voices of
the game), plus the token routes that interaction followups share with them."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from tests.fakes.discord.interactions import handle_followup, interaction_message
from tests.fakes.discord.model import (
    ANNOUNCEMENT,
    FORUM,
    JSON,
    PERMISSIONS,
    TEXT,
    VOICE,
    Webhook,
)
from tests.fakes.discord.rest import (
    Req,
    attachments_for_edit,
    check_webhook_name,
    guild_or_404,
    interaction_by_token,
    route,
)
from tests.fakes.discord.world import (
    DiscordError,
    WebhookExecution,
    unknown_channel,
    unknown_message,
    unknown_webhook,
)

if TYPE_CHECKING:
    from tests.fakes.discord.world import World

P = PERMISSIONS


# --- webhooks --------------------------------------------------------------------------------


def _webhook(w: World, webhook_id: str, token: str | None = None) -> Webhook:
    wh = w.webhooks.get(int(webhook_id))
    if wh is None:
        raise unknown_webhook()
    if token is not None and token != wh.token:
        raise DiscordError(401, 50027, "Invalid Webhook Token")
    return wh


@route("POST", "/channels/{channel_id}/webhooks")
async def create_webhook(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    if ch.type not in (TEXT, ANNOUNCEMENT, FORUM, VOICE):
        raise DiscordError(400, 50024, "Cannot execute action on this channel type")
    w.require(ch, "manage_webhooks")
    name = r.body.get("name")
    check_webhook_name(name)
    if sum(1 for wh in w.webhooks.values() if wh.channel_id == ch.id) >= 15:
        raise DiscordError(400, 30007, "Maximum number of webhooks reached (15)")
    wh = w.add_webhook(ch, str(name))
    if r.body.get("avatar"):
        wh.avatar = hashlib.md5(str(r.body["avatar"]).encode()).hexdigest()
    return wh.payload(w)


@route("GET", "/channels/{channel_id}/webhooks")
async def channel_webhooks(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    w.require(ch, "manage_webhooks")
    return [wh.payload(w) for wh in w.webhooks.values() if wh.channel_id == ch.id]


@route("GET", "/guilds/{guild_id}/webhooks")
async def guild_webhooks(w: World, r: Req) -> Any:
    guild = guild_or_404(w, r.params["guild_id"])
    w.require_guild(guild, "manage_webhooks")
    return [wh.payload(w) for wh in w.webhooks.values() if wh.guild_id == guild.id]


@route("GET", "/webhooks/{webhook_id}")
async def get_webhook(w: World, r: Req) -> Any:
    wh = _webhook(w, r.params["webhook_id"])
    w.require(w.channels[wh.channel_id], "manage_webhooks")
    return wh.payload(w)


@route("GET", "/webhooks/{webhook_id}/{webhook_token}", auth=False)
async def get_webhook_with_token(w: World, r: Req) -> Any:
    wh = _webhook(w, r.params["webhook_id"], r.params["webhook_token"])
    return wh.payload(w, with_user=False)


def _edit_webhook(w: World, wh: Webhook, body: JSON, *, allow_move: bool) -> JSON:
    if "name" in body:
        check_webhook_name(body["name"])
        wh.name = body["name"]
    if "avatar" in body:
        wh.avatar = (
            hashlib.md5(str(body["avatar"]).encode()).hexdigest() if body["avatar"] else None
        )
    if allow_move and body.get("channel_id"):
        target = w.find_channel(body["channel_id"])
        w.require(target, "manage_webhooks")
        wh.channel_id = target.id
    w._dispatch(
        "WEBHOOKS_UPDATE",
        {"guild_id": str(wh.guild_id), "channel_id": str(wh.channel_id)},
        guild_id=wh.guild_id,
    )
    return wh.payload(w)


@route("PATCH", "/webhooks/{webhook_id}")
async def edit_webhook(w: World, r: Req) -> Any:
    wh = _webhook(w, r.params["webhook_id"])
    w.require(w.channels[wh.channel_id], "manage_webhooks")
    return _edit_webhook(w, wh, r.body, allow_move=True)


@route("PATCH", "/webhooks/{webhook_id}/{webhook_token}", auth=False)
async def edit_webhook_with_token(w: World, r: Req) -> Any:
    wh = _webhook(w, r.params["webhook_id"], r.params["webhook_token"])
    return _edit_webhook(w, wh, r.body, allow_move=False)


@route("DELETE", "/webhooks/{webhook_id}")
async def delete_webhook(w: World, r: Req) -> Any:
    wh = _webhook(w, r.params["webhook_id"])
    w.require(w.channels[wh.channel_id], "manage_webhooks")
    w.delete_webhook(wh)
    return None


@route("DELETE", "/webhooks/{webhook_id}/{webhook_token}", auth=False)
async def delete_webhook_with_token(w: World, r: Req) -> Any:
    w.delete_webhook(_webhook(w, r.params["webhook_id"], r.params["webhook_token"]))
    return None


@route("POST", "/webhooks/{webhook_id}/{webhook_token}", auth=False)
async def execute_webhook(w: World, r: Req) -> Any:
    wait = r.query.get("wait", "").lower() in ("1", "true")
    if int(r.params["webhook_id"]) == w.application_id:
        inter = interaction_by_token(w, r.params["webhook_token"])
        msg = handle_followup(w, inter, r.body, r.files)
        return msg  # interaction followups always answer with the message
    wh = _webhook(w, r.params["webhook_id"], r.params["webhook_token"])
    target = w.channels.get(wh.channel_id)
    if target is None:
        raise unknown_webhook()
    thread_id = r.query.get("thread_id")
    if thread_id:
        thread = w.channels.get(int(thread_id))
        if thread is None or not thread.is_thread or thread.parent_id != wh.channel_id:
            raise unknown_channel()
        target = thread
    body = r.body
    username = body.get("username")
    if username is not None:
        check_webhook_name(username, "username")
    w.check_message_body(body, bool(r.files))
    w.check_sendable(target, bot=False)
    msg = w.create_message(
        target,
        w.bot,
        content=body.get("content") or "",
        embeds=body.get("embeds"),
        components=body.get("components"),
        attachments=w.upload(target, body, r.files),
        flags=int(body.get("flags") or 0),
        webhook={
            "id": wh.id,
            "username": username or wh.name,
            "avatar": hashlib.md5(body["avatar_url"].encode()).hexdigest()
            if body.get("avatar_url")
            else wh.avatar,
        },
        application_id=wh.application_id,
        tts=bool(body.get("tts")),
    )
    w.webhook_executions.append(
        WebhookExecution(
            webhook_id=wh.id,
            channel_id=target.id,
            thread_id=int(thread_id) if thread_id else None,
            username=username,
            avatar_url=body.get("avatar_url"),
            content=msg["content"],
            embeds=msg["embeds"],
            wait=wait,
            payload=body,
            message=msg,
            files=list(r.files),
        )
    )
    return msg if wait else None


def _webhook_message(w: World, r: Req) -> tuple[JSON, bool]:
    """(message, is_interaction) for /webhooks/{id}/{token}/messages/{message_id}."""
    if int(r.params["webhook_id"]) == w.application_id:
        inter = interaction_by_token(w, r.params["webhook_token"])
        return interaction_message(inter, r.params["message_id"]), True
    wh = _webhook(w, r.params["webhook_id"], r.params["webhook_token"])
    try:
        msg = w.messages[int(r.params["message_id"])]
    except (KeyError, ValueError):
        raise unknown_message() from None
    if msg.get("webhook_id") != str(wh.id):
        raise unknown_message()
    thread_id = r.query.get("thread_id")
    if (thread_id and msg["channel_id"] != thread_id) or (
        not thread_id and msg["channel_id"] != str(wh.channel_id)
    ):
        raise unknown_message()
    return msg, False


@route("GET", "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}", auth=False)
async def get_webhook_message(w: World, r: Req) -> Any:
    return _webhook_message(w, r)[0]


@route("PATCH", "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}", auth=False)
async def edit_webhook_message(w: World, r: Req) -> Any:
    msg, _ = _webhook_message(w, r)
    channel = w.channels[int(msg["channel_id"])]
    attachments = attachments_for_edit(w, channel, msg, r)
    return w.edit_message(msg, r.body, attachments=attachments)


@route("DELETE", "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}", auth=False)
async def delete_webhook_message(w: World, r: Req) -> Any:
    msg, _ = _webhook_message(w, r)
    w.delete_message(msg)
    return None
