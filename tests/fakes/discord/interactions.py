"""Interactions: the payloads a user's click or command produces, and what the bot answers.

A test gets an `Interaction` handle back from `slash`/`click`/`select`/`submit_modal` and
awaits `response()` / `followup(n)`.  The fake applies Discord's rules to the answers: one
callback per interaction (40060 for a second one), update types (6/7) only for components,
the first followup after a "thinking" defer replaces the placeholder instead of posting a new
message, ephemeral messages stay out of channel history, and (if `interaction_timeout` is set)
a callback that comes too late gets 10062 Unknown interaction.
"""

from __future__ import annotations

import asyncio
import copy
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.fakes.discord.model import (
    DM,
    JSON,
    Channel,
    Member,
    Role,
    User,
    iter_components,
)
from tests.fakes.discord.world import DiscordError, UploadedFile, invalid_form, unknown_webhook

if TYPE_CHECKING:
    from tests.fakes.discord.world import World

APPLICATION_COMMAND = 2
MESSAGE_COMPONENT = 3
AUTOCOMPLETE = 4
MODAL_SUBMIT = 5

PONG = 1
CHANNEL_MESSAGE = 4
DEFERRED_CHANNEL_MESSAGE = 5
DEFERRED_UPDATE_MESSAGE = 6
UPDATE_MESSAGE = 7
AUTOCOMPLETE_RESULT = 8
MODAL = 9

_ALLOWED: dict[int, set[int]] = {
    APPLICATION_COMMAND: {CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, MODAL},
    MESSAGE_COMPONENT: {
        CHANNEL_MESSAGE,
        DEFERRED_CHANNEL_MESSAGE,
        DEFERRED_UPDATE_MESSAGE,
        UPDATE_MESSAGE,
        MODAL,
    },
    AUTOCOMPLETE: {AUTOCOMPLETE_RESULT},
    MODAL_SUBMIT: {
        CHANNEL_MESSAGE,
        DEFERRED_CHANNEL_MESSAGE,
        DEFERRED_UPDATE_MESSAGE,
        UPDATE_MESSAGE,
    },
}
SELECT_TYPES = (3, 5, 6, 7, 8)
ATTACHMENT_SIZE_LIMIT = 10 * 1024 * 1024


@dataclass
class Callback:
    """The bot's `POST /interactions/{id}/{token}/callback`."""

    type: int
    data: JSON
    files: list[UploadedFile] = field(default_factory=list)

    @property
    def flags(self) -> int:
        return int(self.data.get("flags") or 0)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & 64)

    @property
    def content(self) -> str | None:
        return self.data.get("content")


class Interaction:
    """Handle on one interaction the fake sent to the bot."""

    def __init__(
        self,
        world: World,
        payload: JSON,
        *,
        user_id: int,
        channel_id: int,
        source_message_id: int | None = None,
    ) -> None:
        self.world = world
        self.payload = payload
        self.id = int(payload["id"])
        self.token: str = payload["token"]
        self.type: int = payload["type"]
        self.user_id = user_id
        self.channel_id = channel_id
        self.source_message_id = source_message_id
        self.created_at = asyncio.get_running_loop().time()
        self.callback: Callback | None = None
        self.rejected_callbacks: list[Callback] = []
        self.original_id: int | None = None
        self.followups: list[JSON] = []

    def __repr__(self) -> str:
        cb = self.callback.type if self.callback else None
        return f"<Interaction id={self.id} type={self.type} callback={cb}>"

    @property
    def responded(self) -> bool:
        return self.callback is not None

    @property
    def ephemeral(self) -> bool:
        """Whether the response (or the deferred placeholder) is only visible to the user."""
        if self.original_id is not None and self.original_id in self.world.ephemeral_ids:
            return True
        return self.callback is not None and self.callback.ephemeral

    @property
    def modal(self) -> JSON | None:
        """The modal the bot opened (callback type 9), as sent."""
        if self.callback is not None and self.callback.type == MODAL:
            return self.callback.data
        return None

    @property
    def original(self) -> JSON | None:
        """Current state of the original response message (after edits), if any."""
        if self.original_id is None:
            return None
        return self.world.messages.get(self.original_id)

    async def response(self, within: float = 20.0) -> Callback:
        """Wait for the bot's callback."""
        await self.world.wait_until(lambda: self.callback is not None, within)
        assert self.callback is not None
        return self.callback

    async def followup(self, index: int = 0, within: float = 20.0) -> JSON:
        """Wait for the bot's `index`-th followup message (0-based)."""
        await self.world.wait_until(lambda: len(self.followups) > index, within)
        return self.followups[index]

    async def edited(self, within: float = 20.0) -> JSON:
        """Wait until the original response has been edited (e.g. after a defer)."""
        await self.world.wait_until(
            lambda: self.original is not None and self.original.get("edited_timestamp"), within
        )
        assert self.original is not None
        return self.original


# --- payloads the fake sends ------------------------------------------------------------------


def _base(world: World, itype: int, user: User, channel: Channel, data: JSON) -> JSON:
    iid = world.snowflakes.next()
    channel_payload = channel.payload(world)
    payload: JSON = {
        "id": str(iid),
        "application_id": str(world.application_id),
        "type": itype,
        "data": data,
        "token": "aW50ZXJhY3Rpb246" + secrets.token_urlsafe(96),
        "version": 1,
        "channel_id": str(channel.id),
        "channel": channel_payload,
        "locale": "en-US",
        "entitlements": [],
        "entitlement_sku_ids": [],
        "attachment_size_limit": ATTACHMENT_SIZE_LIMIT,
    }
    if channel.guild_id is not None:
        guild = world.guilds[channel.guild_id]
        member = guild.members.get(user.id)
        if member is None:
            raise ValueError(f"{user.username} is not a member of {guild.name}")
        user_perms = world.permissions_for(channel, user)
        member_payload = member.payload()
        member_payload["permissions"] = str(user_perms)
        channel_payload["permissions"] = str(user_perms)
        payload.update(
            guild_id=str(guild.id),
            guild={"id": str(guild.id), "locale": "en-US", "features": []},
            guild_locale="en-US",
            member=member_payload,
            app_permissions=str(world.permissions_for(channel, world.bot)),
            authorizing_integration_owners={"0": str(guild.id)},
            context=0,
        )
    else:
        payload.update(
            user=user.payload(),
            app_permissions=str(world.permissions_for(channel, world.bot)),
            authorizing_integration_owners={"0": "0"},
            context=1 if channel.type == DM else 2,
        )
    return payload


def _infer_option_type(value: Any) -> int:
    if isinstance(value, bool):
        return 5
    if isinstance(value, int):
        return 4
    if isinstance(value, float):
        return 10
    if isinstance(value, User | Member):
        return 6
    if isinstance(value, Channel):
        return 7
    if isinstance(value, Role):
        return 8
    return 3


def _resolve(
    world: World, resolved: JSON, kind: int, value: Any, channel: Channel, invoker: User
) -> str:
    """Add a user/channel/role option value to `resolved`; return its id as Discord sends it."""
    guild = world.guilds.get(channel.guild_id) if channel.guild_id else None
    if kind == 9:  # mentionable: a role or a user
        kind = (
            8
            if isinstance(value, Role) or (guild is not None and world._id(value) in guild.roles)
            else 6
        )
    if kind == 6:
        user = world.user(value)
        resolved.setdefault("users", {})[str(user.id)] = user.payload()
        if guild is not None and user.id in guild.members:
            mp = guild.members[user.id].payload(with_user=False)
            mp["permissions"] = str(world.permissions_for(channel, user))
            resolved.setdefault("members", {})[str(user.id)] = mp
        return str(user.id)
    if kind == 7:
        ch = world.channel(value)
        cp = ch.payload(world)
        cp["permissions"] = str(world.permissions_for(ch, invoker))
        resolved.setdefault("channels", {})[str(ch.id)] = cp
        return str(ch.id)
    if kind == 8:
        if guild is None:
            raise ValueError("role options need a guild channel")
        role = guild.roles[world._id(value)]
        resolved.setdefault("roles", {})[str(role.id)] = role.payload()
        return str(role.id)
    raise ValueError(f"option type {kind} is not a snowflake type")


def _find_command(world: World, name: str, guild_id: int | None) -> tuple[JSON | None, bool]:
    if guild_id is not None:
        for cmd in world.guild_commands.get(guild_id, []):
            if cmd["name"] == name and cmd.get("type", 1) == 1:
                return cmd, True
    for cmd in world.global_commands:
        if cmd["name"] == name and cmd.get("type", 1) == 1:
            return cmd, False
    return None, False


def slash_payload(
    world: World, path: str, options: dict[str, Any], user: User, channel: Channel
) -> JSON:
    """An APPLICATION_COMMAND interaction for `/path` (e.g. "mafia new").

    With commands registered (the bot synced its tree) the declared option types, required
    options and choices are enforced, like the Discord client does; without any, option types
    are inferred from the Python values.
    """
    parts = path.strip().lstrip("/").split()
    if not parts:
        raise ValueError("empty command path")
    cmd, is_guild = _find_command(world, parts[0], channel.guild_id)
    anything_registered = bool(world.global_commands) or any(world.guild_commands.values())
    if cmd is None and anything_registered:
        raise LookupError(f"/{parts[0]} is not a registered command")
    declared: list[JSON] | None = cmd.get("options", []) if cmd is not None else None
    chain: list[tuple[str, int]] = []
    for i, sub in enumerate(parts[1:]):
        if declared is not None:
            found = next((o for o in declared if o["name"] == sub and o["type"] in (1, 2)), None)
            if found is None:
                raise LookupError(f"/{' '.join(parts[: i + 2])} is not a registered subcommand")
            chain.append((sub, found["type"]))
            declared = found.get("options", [])
        else:
            chain.append((sub, 2 if i < len(parts) - 2 else 1))
    if declared is not None and any(o["type"] in (1, 2) for o in declared):
        raise LookupError(f"/{path} is a command group; name a subcommand")
    resolved: JSON = {}
    leaf: list[JSON] = []
    declared_by_name = {o["name"]: o for o in declared or []}
    for name, value in options.items():
        decl = declared_by_name.get(name)
        if declared is not None and decl is None:
            raise LookupError(f"/{path} has no option {name!r}")
        kind = decl["type"] if decl is not None else _infer_option_type(value)
        if kind in (6, 7, 8, 9):
            out: Any = _resolve(world, resolved, kind, value, channel, user)
        elif kind == 4:
            out = int(value)
        elif kind == 10:
            out = float(value)
        elif kind == 5:
            out = bool(value)
        else:
            out = str(value)
        if decl is not None and decl.get("choices"):
            allowed = [c["value"] for c in decl["choices"]]
            if out not in allowed:
                raise ValueError(f"{name}={out!r} is not one of the choices {allowed}")
        leaf.append({"name": name, "type": kind, "value": out})
    for decl in declared or []:
        if decl.get("required") and decl["name"] not in options:
            raise ValueError(f"/{path} requires option {decl['name']!r}")
    opts = leaf
    for name, kind in reversed(chain):
        opts = [{"name": name, "type": kind, "options": opts}]
    if cmd is not None:
        command_id = cmd["id"]
    else:
        command_id = str(world.adhoc_command_ids.setdefault(parts[0], world.snowflakes.next()))
    data: JSON = {"id": command_id, "name": parts[0], "type": 1}
    if opts:
        data["options"] = opts
    if resolved:
        data["resolved"] = resolved
    if is_guild and channel.guild_id is not None:
        data["guild_id"] = str(channel.guild_id)
    return _base(world, APPLICATION_COMMAND, user, channel, data)


def find_component(msg: JSON, custom_id: str) -> JSON:
    for comp in iter_components(msg.get("components") or []):
        if comp.get("custom_id") == custom_id:
            return comp
    ids = [
        c.get("custom_id")
        for c in iter_components(msg.get("components") or [])
        if c.get("custom_id")
    ]
    raise LookupError(f"message {msg['id']} has no component {custom_id!r} (has {ids})")


def component_payload(
    world: World, msg: JSON, custom_id: str, user: User, values: list[Any] | None = None
) -> JSON:
    """A MESSAGE_COMPONENT interaction for clicking/selecting on `msg`, as a user could."""
    mid = int(msg["id"])
    owner = world.ephemeral_owner.get(mid)
    if owner is not None and owner != user.id:
        raise PermissionError("only the user who got an ephemeral message can use it")
    comp = find_component(msg, custom_id)
    if comp.get("disabled"):
        raise PermissionError(f"component {custom_id!r} is disabled")
    channel = world.channels[int(msg["channel_id"])]
    data: JSON = {"custom_id": custom_id, "component_type": comp["type"], "id": comp.get("id")}
    if comp["type"] in SELECT_TYPES:
        if values is None:
            raise ValueError("a select needs values")
        lo, hi = comp.get("min_values", 1), comp.get("max_values", 1)
        if not lo <= len(values) <= hi:
            raise ValueError(f"select {custom_id!r} takes {lo}..{hi} values, got {len(values)}")
        if comp["type"] == 3:
            allowed = [o["value"] for o in comp.get("options", [])]
            bad = [v for v in values if v not in allowed]
            if bad:
                raise ValueError(f"{bad} are not options of {custom_id!r} ({allowed})")
            data["values"] = list(values)
        else:
            resolved: JSON = {}
            kinds = {5: 6, 6: 8, 7: 9, 8: 7}
            data["values"] = [
                _resolve(world, resolved, kinds[comp["type"]], v, channel, user) for v in values
            ]
            data["resolved"] = resolved
    elif values is not None:
        raise ValueError(f"component {custom_id!r} is not a select")
    payload = _base(world, MESSAGE_COMPONENT, user, channel, data)
    payload["message"] = copy.deepcopy(msg)
    return payload


def modal_payload(
    world: World,
    source: Interaction | None,
    custom_id: str | None,
    values: dict[str, Any],
    user: User,
    channel: Channel,
) -> JSON:
    """A MODAL_SUBMIT for the modal `source` opened (or an ad-hoc one by `custom_id`)."""
    if source is not None:
        modal = source.modal
        if modal is None:
            raise LookupError(f"{source!r} did not open a modal")
        custom_id = modal["custom_id"]
        components = [_submitted(c, values) for c in modal.get("components", [])]
        unknown = set(values) - {
            c.get("custom_id") for c in iter_components(modal.get("components", []))
        }
        if unknown:
            raise LookupError(f"modal {custom_id!r} has no inputs {sorted(unknown)}")
    else:
        if custom_id is None:
            raise ValueError("submit_modal needs the interaction that opened it or a custom_id")
        components = [
            {"type": 1, "components": [{"type": 4, "custom_id": k, "value": v}]}
            for k, v in values.items()
        ]
    data: JSON = {"custom_id": custom_id, "components": components}
    payload = _base(world, MODAL_SUBMIT, user, channel, data)
    if source is not None and source.source_message_id is not None:
        msg = world.messages.get(source.source_message_id)
        if msg is not None:
            payload["message"] = copy.deepcopy(msg)
    return payload


def _submitted(comp: JSON, values: dict[str, Any]) -> JSON:
    kind = comp.get("type")
    if kind == 1:
        return {
            "type": 1,
            "id": comp.get("id"),
            "components": [_submitted(c, values) for c in comp.get("components", [])],
        }
    if kind == 18:
        return {
            "type": 18,
            "id": comp.get("id"),
            "component": _submitted(comp["component"], values),
        }
    cid = str(comp.get("custom_id"))
    if kind == 4:
        value = values.get(cid, comp.get("value") or "")
        if comp.get("required", True) and not value:
            raise ValueError(f"text input {cid!r} is required")
        if value and not comp.get("min_length", 0) <= len(value) <= comp.get("max_length", 4000):
            raise ValueError(f"text input {cid!r} length out of range")
        return {"type": 4, "id": comp.get("id"), "custom_id": cid, "value": value}
    if kind in SELECT_TYPES:
        chosen = values.get(cid, [])
        return {
            "type": kind,
            "id": comp.get("id"),
            "custom_id": cid,
            "values": [str(v) for v in chosen],
        }
    return {"type": kind, "id": comp.get("id")}


# --- answers the bot sends ----------------------------------------------------------------


def _metadata(world: World, inter: Interaction) -> JSON:
    data: JSON = {
        "id": str(inter.id),
        "type": inter.type,
        "user": world.users[inter.user_id].payload(),
        "authorizing_integration_owners": inter.payload.get("authorizing_integration_owners", {}),
    }
    if inter.type == APPLICATION_COMMAND:
        data["name"] = inter.payload["data"]["name"]
        data["command_type"] = 1
    if inter.source_message_id is not None:
        data["interacted_message_id"] = str(inter.source_message_id)
    return data


def _post(
    world: World,
    inter: Interaction,
    body: JSON,
    files: list[UploadedFile],
    *,
    ephemeral: bool,
    loading: bool = False,
) -> JSON:
    channel = world.channels.get(inter.channel_id)
    if channel is None:
        raise DiscordError(404, 10003, "Unknown Channel")
    attachments = world.upload(channel, body, files)
    flags = int(body.get("flags") or 0) & ~64
    msg = world.create_message(
        channel,
        world.bot,
        content="" if loading else body.get("content") or "",
        embeds=None if loading else body.get("embeds"),
        components=None if loading else body.get("components"),
        attachments=attachments,
        flags=flags | (128 if loading else 0),
        type=20 if inter.type == APPLICATION_COMMAND else 0,
        webhook_id=world.application_id,
        application_id=world.application_id,
        interaction_metadata=_metadata(world, inter),
        ephemeral=ephemeral,
        tts=bool(body.get("tts")),
    )
    if inter.type == APPLICATION_COMMAND:
        msg["interaction"] = {
            "id": str(inter.id),
            "type": inter.type,
            "name": inter.payload["data"]["name"],
            "user": world.users[inter.user_id].payload(),
        }
    if ephemeral:
        world.ephemeral_owner[int(msg["id"])] = inter.user_id
    return msg


def handle_callback(
    world: World, inter: Interaction, body: JSON, files: list[UploadedFile], with_response: bool
) -> JSON | None:
    cb_type = int(body.get("type", 0))
    data = body.get("data") or {}
    callback = Callback(cb_type, data, files)
    if inter.callback is not None:
        inter.rejected_callbacks.append(callback)
        raise DiscordError(400, 40060, "Interaction has already been acknowledged.")
    timeout = world.interaction_timeout
    if timeout is not None and asyncio.get_running_loop().time() - inter.created_at > timeout:
        inter.rejected_callbacks.append(callback)
        raise DiscordError(404, 10062, "Unknown interaction")
    allowed = _ALLOWED.get(inter.type, set())
    if cb_type in (DEFERRED_UPDATE_MESSAGE, UPDATE_MESSAGE) and inter.source_message_id is None:
        allowed = allowed - {DEFERRED_UPDATE_MESSAGE, UPDATE_MESSAGE}
    if cb_type not in allowed:
        raise invalid_form(
            "type",
            "INTERACTION_RESPONSE_TYPE_INVALID",
            f"Interaction response type {cb_type} is not valid here",
        )
    ephemeral = bool(int(data.get("flags") or 0) & 64)
    message: JSON | None = None
    if cb_type == CHANNEL_MESSAGE:
        world.check_message_body(data, bool(files))
        message = _post(world, inter, data, files, ephemeral=ephemeral)
        inter.original_id = int(message["id"])
    elif cb_type == DEFERRED_CHANNEL_MESSAGE:
        message = _post(world, inter, data, files, ephemeral=ephemeral, loading=True)
        inter.original_id = int(message["id"])
    elif cb_type in (DEFERRED_UPDATE_MESSAGE, UPDATE_MESSAGE):
        assert inter.source_message_id is not None
        inter.original_id = inter.source_message_id
        source = world.messages.get(inter.source_message_id)
        if source is None:
            raise DiscordError(404, 10008, "Unknown Message")
        ephemeral = inter.source_message_id in world.ephemeral_ids
        if cb_type == UPDATE_MESSAGE:
            channel = world.channels[int(source["channel_id"])]
            keep = data.get("attachments")
            attachments = None
            if keep is not None or files:
                kept_ids = {str(a.get("id")) for a in keep or []}
                kept = (
                    [a for a in source["attachments"] if a["id"] in kept_ids]
                    if keep is not None
                    else source["attachments"]
                )
                attachments = world.upload(channel, data, files, kept)
            message = world.edit_message(source, data, attachments=attachments)
        else:
            message = source
    elif cb_type == MODAL:
        for key in ("custom_id", "title", "components"):
            if not data.get(key):
                raise invalid_form(f"data.{key}", "BASE_TYPE_REQUIRED", "This field is required")
    inter.callback = callback
    world.notify()
    if not with_response:
        return None
    info: JSON = {
        "id": str(inter.id),
        "type": inter.type,
        "response_message_loading": cb_type == DEFERRED_CHANNEL_MESSAGE,
        "response_message_ephemeral": ephemeral,
    }
    if inter.original_id is not None:
        info["response_message_id"] = str(inter.original_id)
    result: JSON = {"interaction": info}
    if message is not None and cb_type != DEFERRED_UPDATE_MESSAGE:
        result["resource"] = {"type": cb_type, "message": message}
    return result


def handle_followup(
    world: World, inter: Interaction, body: JSON, files: list[UploadedFile]
) -> JSON:
    if inter.callback is None or inter.callback.type == MODAL:
        raise unknown_webhook()
    world.check_message_body(body, bool(files))
    original = inter.original
    if (
        inter.callback.type == DEFERRED_CHANNEL_MESSAGE
        and original is not None
        and original["flags"] & 128
    ):
        # Discord turns the first followup after a "thinking" defer into the response itself.
        channel = world.channels[int(original["channel_id"])]
        attachments = world.upload(channel, body, files)
        msg = world.edit_message(original, body, attachments=attachments or None)
    else:
        ephemeral = bool(int(body.get("flags") or 0) & 64)
        msg = _post(world, inter, body, files, ephemeral=ephemeral)
    inter.followups.append(msg)
    world.notify()
    return msg


def interaction_message(inter: Interaction, message_id: str) -> JSON:
    """The original response or a followup of `inter`, by id or "@original"."""
    world = inter.world
    if message_id == "@original":
        if inter.original_id is None or inter.original_id not in world.messages:
            raise DiscordError(404, 10008, "Unknown Message")
        return world.messages[inter.original_id]
    ids = {int(m["id"]) for m in inter.followups}
    if inter.original_id is not None:
        ids.add(inter.original_id)
    try:
        mid = int(message_id)
    except ValueError:
        raise DiscordError(404, 10008, "Unknown Message") from None
    if mid not in ids or mid not in world.messages:
        raise DiscordError(404, 10008, "Unknown Message")
    return world.messages[mid]
