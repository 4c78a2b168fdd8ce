"""REST routes for the bot user, gateway discovery, the application and its commands,
interaction callbacks, and guilds (members, roles, channels)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tests.fakes.discord.interactions import handle_callback
from tests.fakes.discord.model import (
    JSON,
    PERMISSIONS,
    TEXT,
    Guild,
    Overwrite,
)
from tests.fakes.discord.rest import (
    Reply,
    Req,
    guild_or_404,
    route,
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
    return [
        {
            "id": str(g.id),
            "name": g.name,
            "icon": None,
            "banner": None,
            "owner": False,
            "permissions": str(w.guild_permissions(g, w.bot)),
            "features": [],
        }
        for g in w.guilds.values()
    ]


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
    return {
        "url": w.ws_url,
        "shards": w.shards,
        "session_start_limit": {
            "total": 1000,
            "remaining": 999,
            "reset_after": 14_400_000,
            "max_concurrency": 1,
        },
    }


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
        guild = guild_or_404(w, r.params["guild_id"])
        return w.guild_commands.setdefault(guild.id, []), guild.id
    return w.global_commands, None


def _store_command(w: World, body: JSON, guild_id: int | None, existing: list[JSON]) -> JSON:
    name = body.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[-_\w]{1,32}", name) or name != name.lower():
        raise invalid_form("name", "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
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
    return _command(w, r)[1]


@route("GET", "/applications/{application_id}/guilds/{guild_id}/commands/permissions")
async def command_permissions(w: World, r: Req) -> Any:
    return []


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


# --- guilds ----------------------------------------------------------------------------------


@route("GET", "/guilds/{guild_id}")
async def get_guild(w: World, r: Req) -> Any:
    guild = guild_or_404(w, r.params["guild_id"])
    return guild.payload(counts=r.query.get("with_counts", "").lower() in ("1", "true"))


@route("GET", "/guilds/{guild_id}/channels")
async def guild_channels(w: World, r: Req) -> Any:
    guild = guild_or_404(w, r.params["guild_id"])
    return [c.payload(w) for c in w.channels.values() if c.guild_id == guild.id and not c.is_thread]


@route("POST", "/guilds/{guild_id}/channels")
async def create_guild_channel(w: World, r: Req) -> Any:
    guild = guild_or_404(w, r.params["guild_id"])
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
        overwrites.append(
            Overwrite(id=int(o["id"]), type=int(o.get("type", 0)), allow=allow, deny=deny)
        )
    parent = body.get("parent_id")
    ch = w.add_channel(
        guild,
        name,
        type=int(body.get("type") or TEXT),
        parent=int(parent) if parent else None,
        topic=body.get("topic"),
        position=body.get("position"),
        overwrites=overwrites,
    )
    return Reply(201, ch.payload(w))


@route("GET", "/guilds/{guild_id}/members")
async def list_members(w: World, r: Req) -> Any:
    guild = guild_or_404(w, r.params["guild_id"])
    if not w.privileged_intents & (1 << 1):
        raise missing_access()
    limit = max(1, min(1000, int(r.query.get("limit", 1))))
    after = int(r.query.get("after", 0))
    members = sorted((m for m in guild.members.values() if m.id > after), key=lambda m: m.id)
    return [m.payload() for m in members[:limit]]


@route("GET", "/guilds/{guild_id}/members/{user_id}")
async def get_member(w: World, r: Req) -> Any:
    guild = guild_or_404(w, r.params["guild_id"])
    member = guild.members.get(user_id_param(w, r.params["user_id"]))
    if member is None:
        raise DiscordError(404, 10007, "Unknown Member")
    return member.payload()


@route("GET", "/guilds/{guild_id}/roles")
async def list_roles(w: World, r: Req) -> Any:
    return [role.payload() for role in guild_or_404(w, r.params["guild_id"]).roles.values()]


@route("POST", "/guilds/{guild_id}/roles")
async def create_role(w: World, r: Req) -> Any:
    guild = guild_or_404(w, r.params["guild_id"])
    w.require_guild(guild, "manage_roles")
    perms = int(r.body.get("permissions") or 0)
    if perms & ~w.guild_permissions(guild, w.bot):
        raise missing_permissions()
    role = w.add_role(
        guild, r.body.get("name") or "new role", perms, mentionable=bool(r.body.get("mentionable"))
    )
    role.color = int(r.body.get("color") or 0)
    role.hoist = bool(r.body.get("hoist"))
    return role.payload()


def _top_position(w: World, guild: Guild) -> int:
    member = guild.members[w.bot.id]
    return max((guild.roles[r].position for r in member.roles if r in guild.roles), default=0)


async def _member_role(w: World, r: Req, add: bool) -> Any:
    guild = guild_or_404(w, r.params["guild_id"])
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
    guild = guild_or_404(w, r.params["guild_id"])
    threads = [
        c for c in w.channels.values() if c.guild_id == guild.id and c.is_thread and not c.archived
    ]
    return {
        "threads": [t.payload(w) for t in threads],
        "members": [w._thread_member(t, w.bot.id) for t in threads if w.bot.id in t.member_ids],
    }
