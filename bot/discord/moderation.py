"""Pure helpers of the ``/mafia`` commands: the game settings a command asks for, the answers
of ``config`` and ``status``, the names the export scrubs. No interaction, no reply: the
command class (`bot.discord.commands.MafiaCommands`) calls these and answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import discord

from bot.discord.links import LinkStore
from bot.discord.options import DiscordOptions
from bot.discord.rooms import Room, real_deadline
from bot.service.live import LiveGame
from bot.settings import Settings
from bot.table.config import SettingsTextError, setup_fields
from bot.table.config import config_summary as describe_config
from bot.table.links import identity_names
from bot.table.personas import persona_summary
from bot.table.status import phase_label
from games.config import GameConfig
from games.errors import ConfigError

RoleChoice = Literal["none", "detective", "doctor", "detective+doctor"]
TieChoice = Literal["none", "random"]


def _roles(choice: str) -> list[str]:
    return [] if choice == "none" else choice.split("+")


def game_config(settings: Settings, server: dict[str, Any], **given: Any) -> GameConfig:
    """Settings defaults, then the server's /mafia config, then the command's options."""
    s = settings
    values: dict[str, Any] = {
        "day_minutes": s.day_seconds / 60,
        "vote_minutes": s.vote_seconds / 60,
        "night_minutes": s.night_seconds / 60,
        "night_vote_minutes": s.night_vote_seconds / 60,
        "tie_rule": "none",
        "roles": [],
    }
    values.update({k: server[k] for k in values if k in server})
    values.update({k: v for k, v in given.items() if v is not None})
    roles = values["roles"]
    chosen: dict[str, Any] = {}
    if values.get("setup"):  # a named setup or one role a seat, as in the chat settings
        try:
            chosen = setup_fields(str(values["setup"]))
        except SettingsTextError as exc:
            raise ConfigError(str(exc)) from None
        roles = chosen.pop("roles")
        chosen.pop("mafia")
    return GameConfig(
        **chosen,
        day_seconds=float(values["day_minutes"]) * 60,
        vote_seconds=float(values["vote_minutes"]) * 60,
        night_seconds=float(values["night_minutes"]) * 60,
        night_vote_seconds=float(values["night_vote_minutes"]) * 60,
        tie_rule=values["tie_rule"],
        roles=tuple(_roles(roles) if isinstance(roles, str) else roles),
    )


def config_summary(
    settings: dict[str, Any], logging_on: bool, config_now: GameConfig, opts: DiscordOptions
) -> str:
    """What /mafia config answers: the server's defaults for new games."""
    mods = ", ".join(f"<@&{r}>" for r in settings.get("moderator_roles", [])) or "none"
    channels = ", ".join(f"<#{c}>" for c in settings.get("channels", {})) or "none yet"
    remind = settings.get("afk_reminder_minutes", opts.afk_reminder_minutes)
    takeover = settings.get("afk_takeover_minutes", opts.afk_takeover_minutes)
    grave = "on" if settings.get("graveyard", opts.graveyard) else "off"
    return (
        "Defaults for new games on this server:\n"
        f"{describe_config(config_now)}\n"
        f"AI players: {settings.get('agents', 1)}. {persona_summary(settings)}\n"
        f"AFK reminder after {remind} min; takeover after {takeover} min (0 = never).\n"
        f"Graveyard (the dead talk in their booths): {grave}. "
        f"Research logging: {'on' if logging_on else 'off'}.\n"
        f"Moderator roles: {mods}. Game channels: {channels}."
    )


def status_lines(rooms: Iterable[Room], games: Mapping[str, LiveGame], guild_id: int) -> list[str]:
    """What /mafia status answers: one line per open game of the server."""
    lines = []
    for room in rooms:
        if room.guild_id != guild_id or room.ended:
            continue
        game = games.get(room.game_id)
        if game is None:
            continue
        if game.state is None:
            lines.append(
                f"- {room.game_id} in <#{room.channel_id}>: lobby, {len(game.seats)} seat(s)"
            )
            continue
        p = game.state.phase
        ends = f", ends <t:{real_deadline(game, p.deadline)}:R>" if p.deadline else ""
        alive = sum(1 for s in game.state.seats if s.alive)
        lines.append(
            f"- {room.game_id} in <#{room.channel_id}>: {phase_label(p.kind, p.number)}"
            f"{ends}; {alive}/{len(game.state.seats)} alive, "
            f"{len(room.humans)} human(s)"
        )
    return lines


async def _identities(
    links: LinkStore, guild: discord.Guild, ids: list[str]
) -> dict[str, list[str]]:
    """Account, display and nick names of the people who played, so the export can scrub them
    from what was typed (looked up once each, at most 500)."""
    out: dict[str, list[str]] = {}
    for uid in await links.players(ids, limit=500):
        if not uid.isdigit():
            continue
        member = guild.get_member(int(uid))
        if member is None:
            try:
                member = await guild.fetch_member(int(uid))
            except discord.HTTPException:
                continue
        out[uid] = identity_names(member.name, member.display_name, member.global_name, member.nick)
    return out
