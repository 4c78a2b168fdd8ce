"""The ``/mafia`` slash commands.

Everyone: ``new`` (in a bound channel), ``consent``. Moderators (Manage Server, or a role set
with ``/mafia config moderator_role``): ``setup``, ``config``, ``status``, ``end``, ``kick``,
``export``. Every answer except the lobby itself is ephemeral; a refusal says why.
"""

from __future__ import annotations

import io
import logging
from typing import TYPE_CHECKING, Any, Literal

import discord
from discord import app_commands

from bot.consent import CONSENT_VERSION, consent_status, consent_text, has_consent
from bot.discord.permissions import describe_missing, missing
from bot.discord.rooms import real_deadline
from bot.discord.views import consent_view
from bot.privacy import withdraw
from bot.research.export import export_zip
from bot.service import ServiceError
from bot.table.config import MAX_AGENTS, MIN_AGENTS, config_summary
from bot.table.links import identity_names
from bot.table.status import phase_label
from games.config import GameConfig
from games.errors import ConfigError

if TYPE_CHECKING:
    from bot.discord.app import MafiaBot

log = logging.getLogger(__name__)

MODS_ONLY = (
    "Only moderators can do that (Manage Server, or a moderator role set with /mafia config)."
)
NOT_BOUND = "This channel isn't set up for Mafia yet: a moderator can run /mafia setup here."
RoleChoice = Literal["none", "detective", "doctor", "detective+doctor"]
TieChoice = Literal["none", "random"]
MINUTE_KEYS = ("day_minutes", "vote_minutes", "night_minutes", "night_vote_minutes")


def _roles(choice: str) -> list[str]:
    return [] if choice == "none" else choice.split("+")


def game_config(bot: MafiaBot, server: dict[str, Any], **given: Any) -> GameConfig:
    """Settings defaults, then the server's /mafia config, then the command's options."""
    s = bot.settings
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
    return GameConfig(
        day_seconds=float(values["day_minutes"]) * 60,
        vote_seconds=float(values["vote_minutes"]) * 60,
        night_seconds=float(values["night_minutes"]) * 60,
        night_vote_seconds=float(values["night_vote_minutes"]) * 60,
        tie_rule=values["tie_rule"],
        roles=tuple(_roles(roles) if isinstance(roles, str) else roles),
    )


def mafia_group(bot: MafiaBot) -> app_commands.Group:
    group = app_commands.Group(
        name="mafia", description="Play Mafia with a hidden AI player", guild_only=True
    )

    async def moderator(interaction: discord.Interaction[Any]) -> bool:
        if await bot.is_moderator(interaction):
            return True
        await bot.reply(interaction, MODS_ONLY)
        return False

    # --- setup ------------------------------------------------------------------------------

    @group.command(name="setup", description="Make this channel a Mafia game channel (moderators)")
    @app_commands.describe(remove="Stop using this channel for games")
    async def setup(interaction: discord.Interaction[Any], remove: bool = False) -> None:
        if not await moderator(interaction):
            return
        guild, channel = interaction.guild, interaction.channel
        assert guild is not None and channel is not None
        if not isinstance(channel, discord.TextChannel):
            await bot.reply(interaction, "Run this in a text channel (not a thread or voice).")
            return
        key = str(channel.id)

        def change(settings: dict[str, Any]) -> dict[str, Any]:
            channels = dict(settings.get("channels", {}))
            if remove:
                channels.pop(key, None)
            else:
                channels[key] = {"by": str(interaction.user.id)}
            settings["channels"] = channels
            return settings

        await bot.update_server(guild.id, change, name=guild.name)
        if remove:
            await bot.reply(interaction, "This channel is no longer a Mafia channel.")
            return
        lacking = missing(interaction.app_permissions)
        if lacking:
            text = (
                "This channel is now a Mafia channel, but I'm missing permissions here:\n"
                + describe_missing(lacking)
                + "\nGive them to my role (or in this channel's settings), then run "
                "/mafia setup again to check."
            )
        else:
            text = (
                "This channel is now a Mafia channel, and I have every permission I need. "
                "Anyone can open a game here with /mafia new."
            )
        everyone = channel.permissions_for(guild.default_role)
        if not everyone.send_messages_in_threads:
            text += (
                "\nNote: @everyone can't send messages in threads here; players type in "
                "private threads (their booths), so allow Send Messages in Threads."
            )
        await bot.reply(interaction, text)

    # --- new ----------------------------------------------------------------------------------

    @group.command(name="new", description="Open a game lobby in this channel")
    @app_commands.describe(
        day_minutes="Length of the day discussion",
        night_minutes="Length of the night (mafia talk)",
        vote_minutes="Length of the day vote",
        tie_rule="A tied day vote: nobody is out, or chance decides",
        roles="Extra roles in play",
        agents="How many of the players are AI agents (default 1)",
        persona="The agents' persona (a short description)",
    )
    async def new(
        interaction: discord.Interaction[Any],
        day_minutes: app_commands.Range[float, 0.25, 60.0] | None = None,
        night_minutes: app_commands.Range[float, 0.25, 30.0] | None = None,
        vote_minutes: app_commands.Range[float, 0.25, 30.0] | None = None,
        tie_rule: TieChoice | None = None,
        roles: RoleChoice | None = None,
        agents: app_commands.Range[int, MIN_AGENTS, MAX_AGENTS] | None = None,
        persona: app_commands.Range[str, 1, 200] | None = None,
    ) -> None:
        guild, channel = interaction.guild, interaction.channel
        assert guild is not None and channel is not None
        server, _ = await bot.server(guild.id)
        if str(channel.id) not in server.get("channels", {}):
            await bot.reply(interaction, NOT_BOUND)
            return
        open_game = bot.rooms.for_channel(channel.id)
        other = open_game.game_id if open_game else await bot.links.open_game_in_channel(channel.id)
        if other is not None:
            await bot.reply(
                interaction,
                f"Game {other} is still open in this channel; finish it first, or play in "
                "another Mafia channel.",
            )
            return
        try:
            config = game_config(
                bot,
                server,
                day_minutes=day_minutes,
                night_minutes=night_minutes,
                vote_minutes=vote_minutes,
                tie_rule=tie_rule,
                roles=_roles(roles) if roles is not None else None,
            )
            GameConfig.from_dict(config.to_dict())
        except ConfigError as exc:
            await bot.reply(interaction, f"Can't set up this game: {exc}")
            return
        count = agents if agents is not None else int(server.get("agents", 1))
        await bot.lobby.open(interaction, config, count, persona or server.get("persona"), server)

    # --- config -------------------------------------------------------------------------------

    @group.command(name="config", description="Server defaults for new games (moderators)")
    @app_commands.describe(
        day_minutes="Default day length",
        vote_minutes="Default day vote length",
        night_minutes="Default night length",
        night_vote_minutes="Default mafia vote length",
        tie_rule="Default tie rule",
        roles="Default extra roles",
        agents="Default AI players",
        persona='Default agent persona ("-" clears it)',
        afk_reminder_minutes="Remind a silent player after this long (0: never)",
        afk_takeover_minutes="Hand a silent player's seat to an agent after this long (0: never)",
        graveyard="A thread where eliminated players can talk",
        moderator_role="Add a role whose members count as moderators",
        clear_moderator_roles="Forget the moderator roles",
        research_logging="Keep games for anonymised research exports",
    )
    async def config(
        interaction: discord.Interaction[Any],
        day_minutes: app_commands.Range[float, 0.25, 60.0] | None = None,
        vote_minutes: app_commands.Range[float, 0.25, 30.0] | None = None,
        night_minutes: app_commands.Range[float, 0.25, 30.0] | None = None,
        night_vote_minutes: app_commands.Range[float, 0.25, 30.0] | None = None,
        tie_rule: TieChoice | None = None,
        roles: RoleChoice | None = None,
        agents: app_commands.Range[int, MIN_AGENTS, MAX_AGENTS] | None = None,
        persona: app_commands.Range[str, 1, 200] | None = None,
        afk_reminder_minutes: app_commands.Range[float, 0.0, 120.0] | None = None,
        afk_takeover_minutes: app_commands.Range[float, 0.0, 240.0] | None = None,
        graveyard: bool | None = None,
        moderator_role: discord.Role | None = None,
        clear_moderator_roles: bool = False,
        research_logging: bool | None = None,
    ) -> None:
        if not await moderator(interaction):
            return
        guild = interaction.guild
        assert guild is not None
        given: dict[str, Any] = {
            "day_minutes": day_minutes,
            "vote_minutes": vote_minutes,
            "night_minutes": night_minutes,
            "night_vote_minutes": night_vote_minutes,
            "tie_rule": tie_rule,
            "roles": roles,
            "agents": agents,
            "afk_reminder_minutes": afk_reminder_minutes,
            "afk_takeover_minutes": afk_takeover_minutes,
            "graveyard": graveyard,
        }

        def change(settings: dict[str, Any]) -> dict[str, Any]:
            for key, value in given.items():
                if value is not None:
                    settings[key] = value
            if persona is not None:
                if persona.strip() == "-":
                    settings.pop("persona", None)
                else:
                    settings["persona"] = persona
            roles_now = [int(r) for r in settings.get("moderator_roles", [])]
            if clear_moderator_roles:
                roles_now = []
            if moderator_role is not None and moderator_role.id not in roles_now:
                roles_now.append(moderator_role.id)
            settings["moderator_roles"] = [str(r) for r in roles_now]
            return settings

        settings, logging_on = await bot.update_server(
            guild.id, change, name=guild.name, logging_enabled=research_logging
        )
        try:
            config_now = game_config(bot, settings)
            GameConfig.from_dict(config_now.to_dict())
        except ConfigError as exc:
            await bot.reply(interaction, f"Saved, but new games would fail: {exc}")
            return
        mods = ", ".join(f"<@&{r}>" for r in settings.get("moderator_roles", [])) or "none"
        channels = ", ".join(f"<#{c}>" for c in settings.get("channels", {})) or "none yet"
        opts = bot.options
        remind = settings.get("afk_reminder_minutes", opts.afk_reminder_minutes)
        takeover = settings.get("afk_takeover_minutes", opts.afk_takeover_minutes)
        grave = "on" if settings.get("graveyard", opts.graveyard) else "off"
        await bot.reply(
            interaction,
            "Defaults for new games on this server:\n"
            f"{config_summary(config_now)}\n"
            f"AI players: {settings.get('agents', 1)}. Persona: {settings.get('persona', 'any')}.\n"
            f"AFK reminder after {remind} min; takeover after {takeover} min (0 = never).\n"
            f"Graveyard thread: {grave}. Research logging: {'on' if logging_on else 'off'}.\n"
            f"Moderator roles: {mods}. Game channels: {channels}.",
        )

    # --- status -------------------------------------------------------------------------------

    @group.command(name="status", description="Games on this server (moderators)")
    async def status(interaction: discord.Interaction[Any]) -> None:
        if not await moderator(interaction):
            return
        guild = interaction.guild
        assert guild is not None
        lines = []
        for room in bot.rooms.rooms.values():
            if room.guild_id != guild.id or room.ended:
                continue
            game = bot.service.games.get(room.game_id)
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
        await bot.reply(interaction, "\n".join(lines) if lines else "No games open here.")

    # --- end ------------------------------------------------------------------------------------

    @group.command(name="end", description="Stop the game in this channel (moderators)")
    @app_commands.describe(reason="Shown to the players")
    async def end(
        interaction: discord.Interaction[Any], reason: app_commands.Range[str, 1, 200] | None = None
    ) -> None:
        assert interaction.channel is not None
        room = bot.rooms.for_channel(interaction.channel.id)
        game = bot.service.games.get(room.game_id) if room else None
        if room is None or game is None:
            await bot.reply(interaction, "There is no open game in this channel.")
            return
        host = str(interaction.user.id) == game.host_user_id and game.status == "lobby"
        if not host and not await moderator(interaction):
            return
        why = reason or "ended by a moderator"
        try:
            await bot.service.end(room.game_id, why)
        except ServiceError as exc:
            await bot.reply(interaction, str(exc))
            return
        if game.state is None:
            await bot.end_lobby(room, game, why)
        await bot.reply(interaction, f"Game {room.game_id} is stopped.")

    # --- kick -----------------------------------------------------------------------------------

    @group.command(name="kick", description="Take a player out; an agent or a substitute plays on")
    @app_commands.describe(
        member="The player to take out",
        substitute="Someone to take over the seat (default: an AI agent)",
    )
    async def kick(
        interaction: discord.Interaction[Any],
        member: discord.Member,
        substitute: discord.Member | None = None,
    ) -> None:
        if not await moderator(interaction):
            return
        assert interaction.channel is not None and interaction.guild is not None
        room = bot.rooms.for_channel(interaction.channel.id)
        game = bot.service.games.get(room.game_id) if room else None
        if room is None or game is None or game.state is None or game.state.over:
            await bot.reply(interaction, "There is no running game in this channel.")
            return
        seat = room.seat_of(member.id)
        if seat is None:
            await bot.reply(interaction, f"{member.display_name} is not playing in this game.")
            return
        if substitute is not None:
            if substitute.bot or room.seat_of(substitute.id) is not None:
                await bot.reply(interaction, f"{substitute.display_name} can't take this seat.")
                return
            ok = await bot.links.run(
                has_consent, bot.engine, "discord", str(interaction.guild.id), str(substitute.id)
            )
            if not ok:
                await bot.reply(
                    interaction,
                    f"{substitute.display_name} hasn't agreed to the notice on this server yet: "
                    "ask them to run /mafia consent and agree, then try again.",
                )
                return
        await interaction.response.defer(ephemeral=True, thinking=True)
        try:
            if substitute is not None:
                await bot.actions.substitute(room, seat, substitute.id)
                done = f"{substitute.display_name} plays the seat now"
            else:
                await bot.actions.takeover(room, seat, why="kick")
                done = "an agent plays the seat now"
        except (ServiceError, ValueError) as exc:
            await interaction.followup.send(str(exc), ephemeral=True)
            return
        await interaction.followup.send(
            f"Done: {member.display_name} is out of the game and {done}. Nobody else is told.",
            ephemeral=True,
        )

    # --- export ---------------------------------------------------------------------------------

    @group.command(name="export", description="Anonymised research export of this server's games")
    async def export(interaction: discord.Interaction[Any]) -> None:
        if not await moderator(interaction):
            return
        guild = interaction.guild
        assert guild is not None
        await interaction.response.defer(ephemeral=True, thinking=True)
        ids = await bot.links.ended_games(guild.id)
        if not ids:
            await interaction.followup.send("No finished games on this server yet.", ephemeral=True)
            return
        identities = await _identities(bot, guild, ids)
        data, report = await bot.links.run(export_zip, bot.engine, ids, identities=identities)
        summary = "\n".join(report.summary()[:15])
        if len(data) > interaction.filesize_limit:
            await interaction.followup.send(
                f"The export is {len(data) // 1024} KiB, more than Discord lets me attach here; "
                "the bot's operator can run `mafiabot export` instead.",
                ephemeral=True,
            )
            return
        await interaction.followup.send(
            summary[:1900],
            file=discord.File(io.BytesIO(data), filename=f"mafiabot-export-{guild.id}.zip"),
            ephemeral=True,
        )

    # --- consent --------------------------------------------------------------------------------

    @group.command(name="consent", description="Your consent: read the notice, or withdraw")
    @app_commands.describe(action="show (the default) or withdraw")
    async def consent(
        interaction: discord.Interaction[Any], action: Literal["show", "withdraw"] = "show"
    ) -> None:
        guild = interaction.guild
        assert guild is not None
        user = str(interaction.user.id)
        if action == "show":
            status = await bot.links.run(consent_status, bot.engine, "discord", str(guild.id), user)
            embed = discord.Embed(
                title="The notice",
                description=consent_text(CONSENT_VERSION, research=status.logging_enabled),
            )
            view = (
                None if status.ok else consent_view(None, CONSENT_VERSION, status.logging_enabled)
            )
            await interaction.response.send_message(
                f"Your answer on this server: {status.describe()}",
                embed=embed,
                view=view or discord.utils.MISSING,
                ephemeral=True,
            )
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        report = await bot.links.run(withdraw, bot.engine, "discord", str(guild.id), user)
        for game_id in report.lobby:
            try:
                await bot.service.leave(game_id, user)
            except ServiceError:
                continue
            room = bot.rooms.get(game_id)
            game = bot.service.games.get(game_id)
            if room is not None and game is not None:
                bot.rooms.sync(room, game)
                await bot.lobby.refresh(room, game)
        lines = report.summary()
        running = [g for g in report.pending if g not in report.lobby]
        extra = (
            f"\nYou are still seated in {len(running)} running game(s); what you say there is "
            "removed when they end."
            if running
            else ""
        )
        await interaction.followup.send(
            "Withdrawn: you will be asked again before your next game.\n"
            + "\n".join(lines[1:6])
            + extra,
            ephemeral=True,
        )

    return group


async def _identities(bot: MafiaBot, guild: discord.Guild, ids: list[str]) -> dict[str, list[str]]:
    """Account, display and nick names of the people who played, so the export can scrub them
    from what was typed (looked up once each, at most 500)."""
    out: dict[str, list[str]] = {}
    for uid in await bot.links.players(ids, limit=500):
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
