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
    Interaction,
)
from tests.fakes.discord.model import (
    JSON,
    PERMISSIONS,
    Channel,
    Guild,
)
from tests.fakes.discord.world import (
    DiscordError,
    UploadedFile,
    invalid_form,
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
    params: int = field(init=False)

    def __post_init__(self) -> None:
        self.params = self.template.count("{")
        pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(self.template))
        self.regex = re.compile(f"^{pattern}$")


ROUTES: list[RouteDef] = []


def route(method: str, template: str, *, auth: bool = True) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        ROUTES.append(RouteDef(method, template, fn, auth))
        return fn

    return register


def _match(method: str, path: str) -> tuple[RouteDef | None, dict[str, str], bool]:
    """The most specific route (fewest parameters) for `method path`; whether the path is
    known at all (for 405 vs 404).  "/users/@me" beats "/users/{user_id}"."""
    best: tuple[RouteDef, dict[str, str]] | None = None
    path_known = False
    for rd in ROUTES:
        m = rd.regex.match(path)
        if m is None:
            continue
        path_known = True
        if rd.method == method and (best is None or rd.params < best[0].params):
            best = (rd, m.groupdict())
    if best is None:
        return None, {}, path_known
    return best[0], best[1], True


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
                files.append(
                    UploadedFile(
                        part.name or "",
                        part.filename,
                        part.headers.get("Content-Type"),
                        bytes(data),
                    )
                )
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
    rec = RecordedRequest(
        method=method,
        path=path,
        route=rd.template if rd else None,
        params=params,
        query=dict(request.query),
        headers=dict(request.headers),
        json=body,
        files=files,
    )
    world.requests.append(rec)
    bucket = _bucket(method, rd.template if rd else path)
    headers = _ratelimit_headers(bucket, 4, 1.0)
    status: int
    out: Any
    rule = _active_rule(world, method, path, rec.route)
    limited = None if rule is not None else _webhook_limited(world, rec, bucket)
    if rule is not None:
        rec.injected = True
        status, out, headers = _fault(rule, bucket)
    elif limited is not None and limited[0] == 429:
        rec.injected = True
        status, out, headers = limited
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
    if limited is not None and limited[0] != 429:
        headers = limited[2]
    rec.status = status
    rec.response = out
    world.notify()
    return _json_response(status, out, headers)


def _webhook_limited(
    world: World, rec: RecordedRequest, bucket: str
) -> tuple[int, JSON, dict[str, str]] | None:
    """Discord's per-webhook execute limit (`World.webhook_limit`): None when not modelled or
    not an execute; else (429, body, headers) over the limit, or (200, {}, the headers of an
    execute let through: what is left in the window and when it resets)."""
    limit = world.webhook_limit
    if (
        limit is None
        or rec.method != "POST"
        or rec.route != "/webhooks/{webhook_id}/{webhook_token}"
        or int(rec.params.get("webhook_id", 0)) == world.application_id
    ):
        return None
    count, seconds = limit
    wid = int(rec.params["webhook_id"])
    now = time.monotonic()
    end, used = world.webhook_windows.get(wid, (0.0, 0))
    if now >= end:
        end, used = now + seconds, 0
    if used >= count:
        world.webhook_429s += 1
        wait = end - now
        return _fault(Rule("*", retry_after=wait, scope="user"), bucket)
    world.webhook_windows[wid] = (end, used + 1)
    return 200, {}, _ratelimit_headers(bucket, count - used - 1, end - now)


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
    headers.update(
        {
            "Retry-After": str(max(1, math.ceil(rule.retry_after))),
            "X-RateLimit-Scope": rule.scope,
            "Via": "1.1 google",
        }
    )
    if rule.is_global:
        headers["X-RateLimit-Global"] = "true"
    body = {
        "message": rule.message,
        "retry_after": rule.retry_after,
        "global": rule.is_global,
        "code": 0,
    }
    return 429, body, headers


# --- helpers ---------------------------------------------------------------------------------


def guild_or_404(world: World, guild_id: str) -> Guild:
    try:
        return world.guilds[int(guild_id)]
    except (KeyError, ValueError):
        raise DiscordError(404, 10004, "Unknown Guild") from None


def user_id_param(world: World, raw: str) -> int:
    return world.bot.id if raw == "@me" else int(raw)


def thread_or_400(world: World, channel_id: str) -> Channel:
    ch = world.find_channel(channel_id)
    if not ch.is_thread:
        raise DiscordError(400, 50024, "Cannot execute action on this channel type")
    return ch


def check_webhook_name(name: Any, field_name: str = "name") -> None:
    if not isinstance(name, str) or not 1 <= len(name) <= 80:
        raise invalid_form(
            field_name, "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 80 in length."
        )
    lowered = name.lower()
    for banned in ("clyde", "discord"):
        if banned in lowered:
            raise invalid_form(
                field_name, "USERNAME_INVALID_CONTAINS", f'Username cannot contain "{banned}"'
            )


def attachments_for_edit(world: World, channel: Channel, msg: JSON, req: Req) -> list[JSON] | None:
    keep = req.body.get("attachments")
    if keep is None and not req.files:
        return None
    if keep is None:
        kept = msg["attachments"]
    else:
        kept_ids = {str(a.get("id")) for a in keep}
        kept = [a for a in msg["attachments"] if a["id"] in kept_ids]
    return world.upload(channel, req.body, req.files, kept)


def interaction_by_token(w: World, token: str) -> Interaction:
    for inter in w.interactions.values():
        if inter.token == token:
            return inter
    raise unknown_webhook()
