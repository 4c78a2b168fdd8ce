"""The fake REST API (`/api/v10/...`): recording, fault injection, and the route handlers.

Every request is recorded before it is answered, 429s included, so a test can check that a
rate-limited send was retried rather than dropped or duplicated.  Responses carry Discord's
rate-limit headers; JSON bodies are sent with `Content-Type: application/json` exactly, which
discord.py requires (anything else, even with `; charset=utf-8`, is treated as text).
A 429 carries a `Via` header: discord.py treats a 429 without one as a Cloudflare ban and
raises instead of retrying.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
import re
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import BodyPartReader, web

from tests.fakes.discord.interactions import (
    handle_callback,
    handle_followup,
    interaction_message,
)
from tests.fakes.discord.model import (
    ANNOUNCEMENT,
    DM,
    FORUM,
    JSON,
    PERMISSIONS,
    PRIVATE_THREAD,
    PUBLIC_THREAD,
    TEXT,
    VOICE,
    Channel,
    Overwrite,
    iso,
)
from tests.fakes.discord.world import (
    DiscordError,
    UploadedFile,
    WebhookExecution,
    invalid_form,
    missing_access,
    missing_permissions,
    unknown_channel,
    unknown_message,
    unknown_webhook,
)

if TYPE_CHECKING:
    from tests.fakes.discord.world import World

P = PERMISSIONS


@dataclass
class RecordedRequest:
    """One REST request as the fake saw it (path without the `/api/v10` prefix)."""

    method: str
    path: str
    route: str | None
    params: dict[str, str]
    query: dict[str, str]
    headers: dict[str, str]
    json: Any
    files: list[UploadedFile]
    status: int | None = None
    response: Any = None
    injected: bool = False  # answered by a rate-limit/fault rule, not the handler

    @property
    def key(self) -> str:
        return f"{self.method} {self.route or self.path}"

    @property
    def reason(self) -> str | None:
        """The decoded X-Audit-Log-Reason header."""
        raw = self.headers.get("X-Audit-Log-Reason")
        return urllib.parse.unquote(raw) if raw is not None else None


@dataclass
class Rule:
    """A fault for requests matching `pattern`: a 429 (rate limit) or any other error.

    `pattern` is a glob over "METHOD /path" (e.g. "POST /channels/*/messages") or, without a
    method, over the path alone; it is also tried against the route template
    ("POST /channels/{channel_id}/messages").  The first `skip` matches pass, the next `times`
    get the fault.
    """

    pattern: str
    times: int = 1
    skip: int = 0
    status: int = 429
    retry_after: float = 0.05
    is_global: bool = False
    scope: str = "user"
    code: int = 0
    message: str = "You are being rate limited."
    seen: int = 0
    hits: int = 0

    def matches(self, method: str, path: str, route: str | None) -> bool:
        if " " in self.pattern:
            subjects = [f"{method} {path}"] + ([f"{method} {route}"] if route else [])
        else:
            subjects = [path] + ([route] if route else [])
        return any(fnmatch.fnmatchcase(s, self.pattern) for s in subjects)

    @property
    def exhausted(self) -> bool:
        return self.hits >= self.times


@dataclass
class Req:
    params: dict[str, str]
    query: dict[str, str]
    json: Any
    files: list[UploadedFile]
    record: RecordedRequest

    @property
    def body(self) -> JSON:
        return self.json if isinstance(self.json, dict) else {}


@dataclass
class Reply:
    status: int
    body: Any = None


Handler = Callable[["World", Req], Awaitable[Any]]


@dataclass
class RouteDef:
    method: str
    template: str
    handler: Handler
    auth: bool
    regex: re.Pattern[str] = field(init=False)

    def __post_init__(self) -> None:
        pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(self.template))
        self.regex = re.compile(f"^{pattern}$")


ROUTES: list[RouteDef] = []


def route(method: str, template: str, *, auth: bool = True) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        ROUTES.append(RouteDef(method, template, fn, auth))
        return fn

    return register


def _match(method: str, path: str) -> tuple[RouteDef | None, dict[str, str], bool]:
    path_known = False
    for rd in ROUTES:
        m = rd.regex.match(path)
        if m is None:
            continue
        path_known = True
        if rd.method == method:
            return rd, m.groupdict(), True
    return None, {}, path_known


def _json_response(status: int, body: Any, headers: dict[str, str]) -> web.Response:
    if body is None or status == 204:
        return web.Response(status=204 if status < 300 else status, headers=headers)
    headers = {**headers, "Content-Type": "application/json"}
    return web.Response(status=status, body=json.dumps(body).encode(), headers=headers)


def _bucket(method: str, route_key: str) -> str:
    return hashlib.md5(f"{method} {route_key}".encode()).hexdigest()


def _ratelimit_headers(bucket: str, remaining: int, reset_after: float) -> dict[str, str]:
    return {
        "X-RateLimit-Limit": "5",
        "X-RateLimit-Remaining": str(remaining),
        "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
        "X-RateLimit-Reset-After": f"{reset_after:.3f}",
        "X-RateLimit-Bucket": bucket,
    }


async def _read_body(request: web.Request) -> tuple[Any, list[UploadedFile]]:
    ctype = request.headers.get("Content-Type", "")
    files: list[UploadedFile] = []
    if ctype.startswith("multipart/"):
        payload: Any = None
        reader = await request.multipart()
        async for part in reader:
            if not isinstance(part, BodyPartReader):
                continue
            data = await part.read()
            if part.name == "payload_json":
                payload = json.loads(data.decode())
            elif part.filename is not None:
                files.append(UploadedFile(part.name or "", part.filename,
                                          part.headers.get("Content-Type"), bytes(data)))
        return payload, files
    raw = await request.read()
    if not raw:
        return None, files
    try:
        return json.loads(raw), files
    except ValueError:
        return raw.decode(errors="replace"), files


async def handle_rest(world: World, request: web.Request) -> web.StreamResponse:
    path = request.path.removeprefix("/api/v10")
    method = request.method
    rd, params, path_known = _match(method, path)
    body, files = await _read_body(request)
    rec = RecordedRequest(method=method, path=path, route=rd.template if rd else None,
                          params=params, query=dict(request.query),
                          headers=dict(request.headers), json=body, files=files)
    world.requests.append(rec)
    bucket = _bucket(method, rd.template if rd else path)
    headers = _ratelimit_headers(bucket, 4, 1.0)
    status: int
    out: Any
    rule = _active_rule(world, method, path, rec.route)
    if rule is not None:
        rec.injected = True
        status, out, headers = _fault(rule, bucket)
    else:
        try:
            if rd is None:
                world.unhandled.append(rec)
                if path_known:
                    raise DiscordError(405, 0, "405: Method Not Allowed")
                raise DiscordError(404, 0, "404: Not Found")
            if rd.auth and request.headers.get("Authorization") != f"Bot {world.token}":
                raise DiscordError(401, 0, "401: Unauthorized")
            result = await rd.handler(world, Req(params, rec.query, body, files, rec))
            if isinstance(result, Reply):
                status, out = result.status, result.body
            else:
                status, out = (200, result) if result is not None else (204, None)
        except DiscordError as exc:
            status, out = exc.status, exc.body()
    rec.status = status
    rec.response = out
    world.notify()
    return _json_response(status, out, headers)


def _active_rule(world: World, method: str, path: str, route_key: str | None) -> Rule | None:
    for rule in world.rules:
        if rule.exhausted or not rule.matches(method, path, route_key):
            continue
        rule.seen += 1
        if rule.seen <= rule.skip:
            continue
        rule.hits += 1
        return rule
    return None


def _fault(rule: Rule, bucket: str) -> tuple[int, JSON, dict[str, str]]:
    if rule.status != 429:
        message = rule.message if rule.message != Rule.message else f"{rule.status}: fault"
        return rule.status, {"message": message, "code": rule.code}, {}
    headers = _ratelimit_headers(bucket, 0, rule.retry_after)
    headers.update({
        "Retry-After": str(max(1, math.ceil(rule.retry_after))),
        "X-RateLimit-Scope": rule.scope,
        "Via": "1.1 google",
    })
    if rule.is_global:
        headers["X-RateLimit-Global"] = "true"
    body = {"message": rule.message, "retry_after": rule.retry_after, "global": rule.is_global,
            "code": 0}
    return 429, body, headers


# --- helpers ---------------------------------------------------------------------------------


def _guild(world: World, guild_id: str) -> Any:
    try:
        return world.guilds[int(guild_id)]
    except (KeyError, ValueError):
        raise DiscordError(404, 10004, "Unknown Guild") from None


def _user_id(world: World, raw: str) -> int:
    return world.bot.id if raw == "@me" else int(raw)


def _thread(world: World, channel_id: str) -> Channel:
    ch = world.find_channel(channel_id)
    if not ch.is_thread:
        raise DiscordError(400, 50024, "Cannot execute action on this channel type")
    return ch


def _check_webhook_name(name: Any, field_name: str = "name") -> None:
    if not isinstance(name, str) or not 1 <= len(name) <= 80:
        raise invalid_form(field_name, "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 80 in length.")
    lowered = name.lower()
    for banned in ("clyde", "discord"):
        if banned in lowered:
            raise invalid_form(field_name, "USERNAME_INVALID_CONTAINS",
                               f'Username cannot contain "{banned}"')


def _attachments_for_edit(world: World, channel: Channel, msg: JSON, req: Req) -> list[JSON] | None:
    keep = req.body.get("attachments")
    if keep is None and not req.files:
        return None
    if keep is None:
        kept = msg["attachments"]
    else:
        kept_ids = {str(a.get("id")) for a in keep}
        kept = [a for a in msg["attachments"] if a["id"] in kept_ids]
    return world.upload(channel, req.body, req.files, kept)


# --- users, gateway, application -------------------------------------------------------------


@route("GET", "/users/@me")
async def get_me(w: World, r: Req) -> Any:
    data = w.bot.payload()
    data.update(verified=True, mfa_enabled=False, email=None, locale="en-US", flags=0)
    return data


@route("GET", "/users/{user_id}")
async def get_user(w: World, r: Req) -> Any:
    user = w.users.get(int(r.params["user_id"]))
    if user is None:
        raise DiscordError(404, 10013, "Unknown User")
    return user.payload()


@route("GET", "/users/@me/guilds")
async def get_my_guilds(w: World, r: Req) -> Any:
    return [{"id": str(g.id), "name": g.name, "icon": None, "banner": None, "owner": False,
             "permissions": str(w.guild_permissions(g, w.bot)), "features": []}
            for g in w.guilds.values()]


@route("POST", "/users/@me/channels")
async def open_dm(w: World, r: Req) -> Any:
    uid = int(r.body.get("recipient_id", 0))
    if uid not in w.users:
        raise DiscordError(404, 10013, "Unknown User")
    return w.dm_channel(uid).payload(w)


@route("GET", "/gateway", auth=False)
async def get_gateway(w: World, r: Req) -> Any:
    return {"url": w.ws_url}


@route("GET", "/gateway/bot")
async def get_gateway_bot(w: World, r: Req) -> Any:
    return {"url": w.ws_url, "shards": 1,
            "session_start_limit": {"total": 1000, "remaining": 999,
                                    "reset_after": 14_400_000, "max_concurrency": 1}}


@route("GET", "/oauth2/applications/@me")
async def get_oauth_app(w: World, r: Req) -> Any:
    return w.application_payload()


@route("GET", "/applications/@me")
async def get_app(w: World, r: Req) -> Any:
    return w.application_payload()


# --- application commands ---------------------------------------------------------------------


def _commands(w: World, r: Req) -> tuple[list[JSON], int | None]:
    if int(r.params["application_id"]) != w.application_id:
        raise DiscordError(403, 50001, "Missing Access")
    if "guild_id" in r.params:
        guild = _guild(w, r.params["guild_id"])
        return w.guild_commands.setdefault(guild.id, []), guild.id
    return w.global_commands, None


def _store_command(w: World, body: JSON, guild_id: int | None,
                   existing: list[JSON]) -> JSON:
    name = body.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[-_\w]{1,32}", name) \
            or name != name.lower():
        raise invalid_form("name", "APPLICATION_COMMAND_INVALID_NAME",
                           "Command name is invalid")
    kind = body.get("type", 1)
    if kind == 1 and not body.get("description"):
        raise invalid_form("description", "BASE_TYPE_REQUIRED", "This field is required")
    old = next((c for c in existing if c["name"] == name and c.get("type", 1) == kind), None)
    cmd: JSON = {
        "id": old["id"] if old else str(w.snowflakes.next()),
        "application_id": str(w.application_id),
        "version": str(w.snowflakes.next()),
        "type": kind,
        "name": name,
        "name_localizations": body.get("name_localizations"),
        "description": body.get("description", ""),
        "description_localizations": body.get("description_localizations"),
        "default_member_permissions": body.get("default_member_permissions"),
        "dm_permission": body.get("dm_permission", True),
        "nsfw": body.get("nsfw", False),
        "integration_types": body.get("integration_types", [0]),
        "contexts": body.get("contexts"),
    }
    if body.get("options"):
        cmd["options"] = body["options"]
    if guild_id is not None:
        cmd["guild_id"] = str(guild_id)
    return cmd


@route("GET", "/applications/{application_id}/commands")
@route("GET", "/applications/{application_id}/guilds/{guild_id}/commands")
async def list_commands(w: World, r: Req) -> Any:
    return list(_commands(w, r)[0])


@route("PUT", "/applications/{application_id}/commands")
@route("PUT", "/applications/{application_id}/guilds/{guild_id}/commands")
async def bulk_overwrite_commands(w: World, r: Req) -> Any:
    existing, guild_id = _commands(w, r)
    if not isinstance(r.json, list):
        raise invalid_form("_root", "LIST_TYPE_CONVERT", "Must be an array")
    new = [_store_command(w, body, guild_id, existing) for body in r.json]
    existing[:] = new
    return new


@route("POST", "/applications/{application_id}/commands")
@route("POST", "/applications/{application_id}/guilds/{guild_id}/commands")
async def upsert_command(w: World, r: Req) -> Any:
    existing, guild_id = _commands(w, r)
    cmd = _store_command(w, r.body, guild_id, existing)
    existing[:] = [c for c in existing if c["id"] != cmd["id"]] + [cmd]
    return Reply(201, cmd)


def _command(w: World, r: Req) -> tuple[list[JSON], JSON]:
    existing, _ = _commands(w, r)
    for cmd in existing:
        if cmd["id"] == r.params["command_id"]:
            return existing, cmd
    raise DiscordError(404, 10063, "Unknown application command")


@route("GET", "/applications/{application_id}/commands/{command_id}")
@route("GET", "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}")
async def get_command(w: World, r: Req) -> Any:
    if r.params["command_id"] == "permissions":  # /guilds/{id}/commands/permissions
        return []
    return _command(w, r)[1]


@route("PATCH", "/applications/{application_id}/commands/{command_id}")
@route("PATCH", "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}")
async def edit_command(w: World, r: Req) -> Any:
    _, cmd = _command(w, r)
    cmd.update({k: v for k, v in r.body.items() if k != "id"})
    cmd["version"] = str(w.snowflakes.next())
    return cmd


@route("DELETE", "/applications/{application_id}/commands/{command_id}")
@route("DELETE", "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}")
async def delete_command(w: World, r: Req) -> Any:
    existing, cmd = _command(w, r)
    existing.remove(cmd)
    return None


# --- interactions ----------------------------------------------------------------------------


@route("POST", "/interactions/{interaction_id}/{interaction_token}/callback", auth=False)
async def interaction_callback(w: World, r: Req) -> Any:
    inter = w.interactions.get(int(r.params["interaction_id"]))
    if inter is None or inter.token != r.params["interaction_token"]:
        raise DiscordError(404, 10062, "Unknown interaction")
    with_response = r.query.get("with_response", "").lower() in ("1", "true")
    return handle_callback(w, inter, r.body, r.files, with_response)


def _interaction_by_token(w: World, token: str) -> Any:
    for inter in w.interactions.values():
        if inter.token == token:
            return inter
    raise unknown_webhook()


# --- webhooks --------------------------------------------------------------------------------


def _webhook(w: World, webhook_id: str, token: str | None = None) -> Any:
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
    _check_webhook_name(name)
    if sum(1 for wh in w.webhooks.values() if wh.channel_id == ch.id) >= 15:
        raise DiscordError(400, 30007, "Maximum number of webhooks reached (15)")
    wh = w.add_webhook(ch, name)
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
    guild = _guild(w, r.params["guild_id"])
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


def _edit_webhook(w: World, wh: Any, body: JSON, *, allow_move: bool) -> JSON:
    if "name" in body:
        _check_webhook_name(body["name"])
        wh.name = body["name"]
    if "avatar" in body:
        wh.avatar = hashlib.md5(str(body["avatar"]).encode()).hexdigest() if body["avatar"] \
            else None
    if allow_move and body.get("channel_id"):
        target = w.find_channel(body["channel_id"])
        w.require(target, "manage_webhooks")
        wh.channel_id = target.id
    w._dispatch("WEBHOOKS_UPDATE", {"guild_id": str(wh.guild_id),
                                    "channel_id": str(wh.channel_id)}, guild_id=wh.guild_id)
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
        inter = _interaction_by_token(w, r.params["webhook_token"])
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
        _check_webhook_name(username, "username")
    w.check_message_body(body, bool(r.files))
    w.check_sendable(target, bot=False)
    msg = w.create_message(
        target, w.bot,
        content=body.get("content") or "",
        embeds=body.get("embeds"),
        components=body.get("components"),
        attachments=w.upload(target, body, r.files),
        flags=int(body.get("flags") or 0),
        webhook={"id": wh.id, "username": username or wh.name,
                 "avatar": hashlib.md5(body["avatar_url"].encode()).hexdigest()
                 if body.get("avatar_url") else wh.avatar},
        application_id=wh.application_id,
        tts=bool(body.get("tts")),
    )
    w.webhook_executions.append(WebhookExecution(
        webhook_id=wh.id, channel_id=target.id, thread_id=int(thread_id) if thread_id else None,
        username=username, avatar_url=body.get("avatar_url"), content=msg["content"],
        embeds=msg["embeds"], wait=wait, payload=body, message=msg, files=list(r.files)))
    return msg if wait else None


def _webhook_message(w: World, r: Req) -> tuple[JSON, bool]:
    """(message, is_interaction) for /webhooks/{id}/{token}/messages/{message_id}."""
    if int(r.params["webhook_id"]) == w.application_id:
        inter = _interaction_by_token(w, r.params["webhook_token"])
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
    attachments = _attachments_for_edit(w, channel, msg, r)
    return w.edit_message(msg, r.body, attachments=attachments)


@route("DELETE", "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}", auth=False)
async def delete_webhook_message(w: World, r: Req) -> Any:
    msg, _ = _webhook_message(w, r)
    w.delete_message(msg)
    return None


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
            raise invalid_form("message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE",
                               "Unknown message")
        if ref is None:
            reference = None
    else:
        reference = None
    msg = w.create_message(
        ch, w.bot,
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
        before = [m for m, i in zip(msgs, ids, strict=True) if i < around][-(limit // 2):]
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
    attachments = _attachments_for_edit(w, ch, msg, r)
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
    msg["reactions"].append({"count": 1, "me": True, "emoji": {"id": None, "name": emoji},
                             "burst_colors": [], "me_burst": False,
                             "count_details": {"burst": 0, "normal": 1}})
    return None


@route("DELETE", "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me")
async def remove_reaction(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    msg = w.find_message(ch, r.params["message_id"])
    msg["reactions"] = [x for x in msg["reactions"]
                        if not (x["emoji"]["name"] == r.params["emoji"] and x["count"] == 1)]
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


# Registered before `/messages/{message_id}` matching would shadow it: _match tries routes in
# order and "pins" is not a snowflake, so move this to the front.
@route("GET", "/channels/{channel_id}/messages/pins")
async def list_pins(w: World, r: Req) -> Any:
    ch = w.find_channel(r.params["channel_id"])
    w.require(ch, "read_message_history")
    return {"items": [{"pinned_at": iso(), "message": m} for m in reversed(w.messages_in(ch))
                      if m["pinned"]], "has_more": False}


ROUTES.insert(0, ROUTES.pop())


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
        if ({"archived", "name", "auto_archive_duration", "rate_limit_per_user"} & set(body)) \
                and not (manage or is_owner):
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
    return Overwrite(id=int(target if target is not None else body["id"]), type=kind,
                     allow=allow, deny=deny)


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
        raise invalid_form("auto_archive_duration", "BASE_TYPE_CHOICES",
                           "Value must be one of (60, 1440, 4320, 10080).")
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
    w.require(parent, "create_private_threads" if kind == PRIVATE_THREAD
              else "create_public_threads")
    name, duration = _check_thread_options(body)
    thread = w.add_thread(parent, name, private=kind == PRIVATE_THREAD,
                          invitable=body.get("invitable", True) is not False,
                          auto_archive_duration=duration,
                          rate_limit_per_user=int(body.get("rate_limit_per_user") or 0))
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
    thread = w.add_thread(parent, name, thread_id=int(msg["id"]),
                          auto_archive_duration=duration,
                          rate_limit_per_user=int(r.body.get("rate_limit_per_user") or 0))
    msg["flags"] |= 32  # HAS_THREAD
    return Reply(201, thread.payload(w))


@route("GET", "/channels/{channel_id}/thread-members")
async def list_thread_members(w: World, r: Req) -> Any:
    th = _thread(w, r.params["channel_id"])
    with_member = r.query.get("with_member", "").lower() in ("1", "true")
    return [w._thread_member(th, uid, with_member=with_member) for uid in th.member_ids]


@route("GET", "/channels/{channel_id}/thread-members/{user_id}")
async def get_thread_member(w: World, r: Req) -> Any:
    th = _thread(w, r.params["channel_id"])
    uid = _user_id(w, r.params["user_id"])
    if uid not in th.member_ids:
        raise DiscordError(404, 10007, "Unknown Member")
    with_member = r.query.get("with_member", "").lower() in ("1", "true")
    return w._thread_member(th, uid, with_member=with_member)


@route("PUT", "/channels/{channel_id}/thread-members/{user_id}")
async def add_thread_member(w: World, r: Req) -> Any:
    th = _thread(w, r.params["channel_id"])
    uid = _user_id(w, r.params["user_id"])
    if th.archived:
        raise DiscordError(400, 50083, "Thread is archived")
    guild = w.guilds[th.guild_id] if th.guild_id is not None else None
    if guild is None or uid not in guild.members:
        raise DiscordError(404, 10007, "Unknown Member")
    w.require(th, "send_messages_in_threads")
    if th.type == PRIVATE_THREAD and uid != w.bot.id and w.bot.id not in th.member_ids \
            and not w.permissions_for(th, w.bot) & P["manage_threads"]:
        raise missing_access()
    w.add_thread_member(th, uid)
    return None


@route("DELETE", "/channels/{channel_id}/thread-members/{user_id}")
async def remove_thread_member(w: World, r: Req) -> Any:
    th = _thread(w, r.params["channel_id"])
    uid = _user_id(w, r.params["user_id"])
    if th.archived:
        raise DiscordError(400, 50083, "Thread is archived")
    if uid != w.bot.id and not (
        w.permissions_for(th, w.bot) & P["manage_threads"]
        or (th.type == PRIVATE_THREAD and th.owner_id == w.bot.id)
    ):
        raise missing_permissions()
    w.remove_thread_member(th, uid)
    return None


# --- guilds ----------------------------------------------------------------------------------


@route("GET", "/guilds/{guild_id}")
async def get_guild(w: World, r: Req) -> Any:
    guild = _guild(w, r.params["guild_id"])
    return guild.payload(counts=r.query.get("with_counts", "").lower() in ("1", "true"))


@route("GET", "/guilds/{guild_id}/channels")
async def guild_channels(w: World, r: Req) -> Any:
    guild = _guild(w, r.params["guild_id"])
    return [c.payload(w) for c in w.channels.values()
            if c.guild_id == guild.id and not c.is_thread]


@route("POST", "/guilds/{guild_id}/channels")
async def create_guild_channel(w: World, r: Req) -> Any:
    guild = _guild(w, r.params["guild_id"])
    w.require_guild(guild, "manage_channels")
    body = r.body
    name = body.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= 100:
        raise invalid_form("name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
    have = w.guild_permissions(guild, w.bot)
    overwrites = []
    for o in body.get("permission_overwrites") or []:
        allow, deny = int(o.get("allow") or 0), int(o.get("deny") or 0)
        if (allow | deny) & ~have:
            raise missing_permissions()
        overwrites.append(Overwrite(id=int(o["id"]), type=int(o.get("type", 0)),
                                    allow=allow, deny=deny))
    parent = body.get("parent_id")
    ch = w.add_channel(guild, name, type=int(body.get("type") or TEXT),
                       parent=int(parent) if parent else None, topic=body.get("topic"),
                       position=body.get("position"), overwrites=overwrites)
    return Reply(201, ch.payload(w))


@route("GET", "/guilds/{guild_id}/members")
async def list_members(w: World, r: Req) -> Any:
    guild = _guild(w, r.params["guild_id"])
    if not w.privileged_intents & (1 << 1):
        raise missing_access()
    limit = max(1, min(1000, int(r.query.get("limit", 1))))
    after = int(r.query.get("after", 0))
    members = sorted((m for m in guild.members.values() if m.id > after), key=lambda m: m.id)
    return [m.payload() for m in members[:limit]]


@route("GET", "/guilds/{guild_id}/members/{user_id}")
async def get_member(w: World, r: Req) -> Any:
    guild = _guild(w, r.params["guild_id"])
    member = guild.members.get(_user_id(w, r.params["user_id"]))
    if member is None:
        raise DiscordError(404, 10007, "Unknown Member")
    return member.payload()


@route("GET", "/guilds/{guild_id}/roles")
async def list_roles(w: World, r: Req) -> Any:
    return [role.payload() for role in _guild(w, r.params["guild_id"]).roles.values()]


@route("POST", "/guilds/{guild_id}/roles")
async def create_role(w: World, r: Req) -> Any:
    guild = _guild(w, r.params["guild_id"])
    w.require_guild(guild, "manage_roles")
    perms = int(r.body.get("permissions") or 0)
    if perms & ~w.guild_permissions(guild, w.bot):
        raise missing_permissions()
    role = w.add_role(guild, r.body.get("name") or "new role", perms,
                      mentionable=bool(r.body.get("mentionable")))
    role.color = int(r.body.get("color") or 0)
    role.hoist = bool(r.body.get("hoist"))
    return role.payload()


def _top_position(w: World, guild: Any) -> int:
    member = guild.members[w.bot.id]
    return max((guild.roles[r].position for r in member.roles if r in guild.roles), default=0)


async def _member_role(w: World, r: Req, add: bool) -> Any:
    guild = _guild(w, r.params["guild_id"])
    member = guild.members.get(int(r.params["user_id"]))
    if member is None:
        raise DiscordError(404, 10007, "Unknown Member")
    role = guild.roles.get(int(r.params["role_id"]))
    if role is None:
        raise DiscordError(404, 10011, "Unknown Role")
    w.require_guild(guild, "manage_roles")
    if role.position >= _top_position(w, guild) or role.managed:
        raise missing_permissions()
    roles = [x for x in member.roles if x != role.id] + ([role.id] if add else [])
    w.update_member(guild, member, roles=roles)
    return None


@route("PUT", "/guilds/{guild_id}/members/{user_id}/roles/{role_id}")
async def add_member_role(w: World, r: Req) -> Any:
    return await _member_role(w, r, True)


@route("DELETE", "/guilds/{guild_id}/members/{user_id}/roles/{role_id}")
async def remove_member_role(w: World, r: Req) -> Any:
    return await _member_role(w, r, False)


@route("GET", "/guilds/{guild_id}/threads/active")
async def active_threads(w: World, r: Req) -> Any:
    guild = _guild(w, r.params["guild_id"])
    threads = [c for c in w.channels.values()
               if c.guild_id == guild.id and c.is_thread and not c.archived]
    return {"threads": [t.payload(w) for t in threads],
            "members": [w._thread_member(t, w.bot.id) for t in threads
                        if w.bot.id in t.member_ids]}

