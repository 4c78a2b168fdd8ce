"""The ``/mafia`` slash commands: everyone's (``new`` in a bound channel, ``consent``...) and
moderators' (``setup``, ``config``, ``status``, ``end``, ``kick``, ``export``, ``spotrate``; Manage
Server or ``/mafia config moderator_role``). Answers but the lobby are ephemeral; refusals say why.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import discord
from discord import app_commands

from bot.discord.actions import Actions
from bot.discord.links import LinkStore
from bot.discord.lobby import Lobby
from bot.discord.moderation import (
    RoleChoice,
    TieChoice,
    _identities,
    _roles,
    config_summary,
    game_config,
    status_lines,
)
from bot.discord.options import DiscordOptions
from bot.discord.permissions import bound_reply, missing
from bot.discord.rooms import Room, Rooms
from bot.discord.servers import Servers, defer, reply, tell
from bot.discord.views import consent_view
from bot.errors import ServiceError
from bot.players.spotrate import server_chat_lines
from bot.protection.consent import CONSENT_VERSION, consent_status, consent_text, has_consent
from bot.protection.dataset.export import export_file_name, export_zip
from bot.protection.privacy import WithdrawalReport
from bot.protection.withdrawals import Withdrawals, withdrawn_reply
from bot.service.live import LiveGame
from bot.service.port import GameService
from bot.settings import Settings
from bot.table.config import MAX_AGENTS, MIN_AGENTS, setup_names
from bot.table.help import catalog_text
from bot.table.personas import (
    PersonaError,
    choose_persona,
    configured_personas,
    persona_choices,
    server_persona,
)
from bot.table.server_settings import bind_channel, set_defaults
from games.config import GameConfig
from games.errors import ConfigError

log = logging.getLogger(__name__)

MODS_ONLY = (
    "Only moderators can do that (Manage Server, or a moderator role set with /mafia config)."
)
NOT_BOUND = "This channel isn't set up for Mafia yet: a moderator can run /mafia setup here."


class MafiaCommands(
    app_commands.Group,
    name="mafia",
    description="Play Mafia with a hidden AI player",
    guild_only=True,
):
    """The ``/mafia`` group: thin commands over the service, the rooms and the lobby."""

    def __init__(
        self,
        service: GameService,
        rooms: Rooms,
        links: LinkStore,
        servers: Servers,
        lobby: Lobby,
        actions: Actions,
        settings: Settings,
        options: DiscordOptions,
        end_lobby: Callable[[Room, LiveGame, str], Awaitable[None]],
    ) -> None:
        super().__init__()
        self.service = service
        self.rooms = rooms
        self.links = links
        self.servers = servers
        self.lobby = lobby
        self.actions = actions
        self.settings = settings
        self.options = options
        self.end_lobby = end_lobby
        #: consent withdrawals, run in the background (`bot.protection.withdrawals`)
        self.withdrawals = Withdrawals(service.engine, write=service.write)

    async def moderator(self, interaction: discord.Interaction[Any]) -> bool:
        if await self.servers.is_moderator(interaction):
            return True
        await reply(interaction, MODS_ONLY)
        return False

    # --- setup ------------------------------------------------------------------------------

    @app_commands.command(
        name="setup", description="Make this channel a Mafia game channel (moderators)"
    )
    @app_commands.describe(remove="Stop using this channel for games")
    async def setup(self, interaction: discord.Interaction[Any], remove: bool = False) -> None:
        if not await self.moderator(interaction):
            return
        guild, channel = interaction.guild, interaction.channel
        assert guild is not None and channel is not None
        if not isinstance(channel, discord.TextChannel):
            await reply(interaction, "Run this in a text channel (not a thread or voice).")
            return
        key, by = str(channel.id), str(interaction.user.id)
        await self.servers.update(
            guild.id, lambda s: bind_channel(s, key, by, remove=remove), name=guild.name
        )
        if remove:
            await reply(interaction, "This channel is no longer a Mafia channel.")
            return
        everyone = channel.permissions_for(guild.default_role)
        text = bound_reply(missing(interaction.app_permissions), everyone)
        await reply(interaction, text)

    # --- new ----------------------------------------------------------------------------------

    @app_commands.command(name="new", description="Open a game lobby in this channel")
    @app_commands.describe(
        day_minutes="Length of the day discussion",
        night_minutes="Length of the night (mafia talk)",
        vote_minutes="Length of the day vote",
        tie_rule="A tied day vote: nobody is out, or chance decides",
        roles="Extra roles in play",
        agents="How many of the players are AI agents (default 1)",
        persona="The AI players' persona: one of the listed keys (any: drawn per player)",
        setup="A setup (mafiabot setups) or one role a seat, comma-separated",
    )
    async def new(
        self,
        interaction: discord.Interaction[Any],
        day_minutes: app_commands.Range[float, 0.25, 60.0] | None = None,
        night_minutes: app_commands.Range[float, 0.25, 30.0] | None = None,
        vote_minutes: app_commands.Range[float, 0.25, 30.0] | None = None,
        tie_rule: TieChoice | None = None,
        roles: RoleChoice | None = None,
        agents: app_commands.Range[int, MIN_AGENTS, MAX_AGENTS] | None = None,
        persona: app_commands.Range[str, 1, 40] | None = None,
        setup: app_commands.Range[str, 1, 400] | None = None,
    ) -> None:
        guild, channel = interaction.guild, interaction.channel
        assert guild is not None and channel is not None
        try:
            chosen = choose_persona(persona, configured_personas(self.settings))
        except PersonaError as exc:
            await reply(interaction, str(exc))
            return
        server, _ = await self.servers.get(guild.id)
        if str(channel.id) not in server.get("channels", {}):
            await reply(interaction, NOT_BOUND)
            return
        open_game = self.rooms.for_channel(channel.id)
        other = (
            open_game.game_id if open_game else await self.links.open_game_in_channel(channel.id)
        )
        if other is not None:
            await reply(
                interaction,
                f"Game {other} is still open in this channel; finish it first, or play in "
                "another Mafia channel.",
            )
            return
        try:
            config = game_config(
                self.settings,
                server,
                day_minutes=day_minutes,
                night_minutes=night_minutes,
                vote_minutes=vote_minutes,
                tie_rule=tie_rule,
                roles=_roles(roles) if roles is not None else None,
                setup=setup,
            )
            GameConfig.from_dict(config.to_dict())
        except ConfigError as exc:
            await reply(interaction, f"Can't set up this game: {exc}")
            return
        count = agents if agents is not None else int(server.get("agents", 1))
        default = server_persona(server, configured_personas(self.settings))
        await self.lobby.open(interaction, config, count, chosen or default, server)

    @new.autocomplete("setup")
    async def _new_setup(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        return [app_commands.Choice(name=n, value=n) for n in setup_names(current)]

    @new.autocomplete("persona")
    async def _new_persona(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        return self._persona_menu(current)

    def _persona_menu(self, current: str) -> list[app_commands.Choice[str]]:
        keys = persona_choices(current, configured_personas(self.settings))
        return [app_commands.Choice(name=k, value=k) for k in keys]

    # --- config -------------------------------------------------------------------------------

    @app_commands.command(name="config", description="Server defaults for new games (moderators)")
    @app_commands.describe(
        day_minutes="Default day length",
        vote_minutes="Default day vote length",
        night_minutes="Default night length",
        night_vote_minutes="Default mafia vote length",
        tie_rule="Default tie rule",
        roles="Default extra roles",
        agents="Default AI players",
        persona="Default AI persona: one of the listed keys (any: drawn per player)",
        afk_reminder_minutes="Remind a silent player after this long (0: never)",
        afk_takeover_minutes="Hand a silent player's seat to an agent after this long (0: never)",
        graveyard="Let eliminated players talk to each other (in their booths)",
        moderator_role="Add a role whose members count as moderators",
        clear_moderator_roles="Forget the moderator roles",
        research_logging="Keep games for anonymised research exports",
    )
    async def config(
        self,
        interaction: discord.Interaction[Any],
        day_minutes: app_commands.Range[float, 0.25, 60.0] | None = None,
        vote_minutes: app_commands.Range[float, 0.25, 30.0] | None = None,
        night_minutes: app_commands.Range[float, 0.25, 30.0] | None = None,
        night_vote_minutes: app_commands.Range[float, 0.25, 30.0] | None = None,
        tie_rule: TieChoice | None = None,
        roles: RoleChoice | None = None,
        agents: app_commands.Range[int, MIN_AGENTS, MAX_AGENTS] | None = None,
        persona: app_commands.Range[str, 1, 40] | None = None,
        afk_reminder_minutes: app_commands.Range[float, 0.0, 120.0] | None = None,
        afk_takeover_minutes: app_commands.Range[float, 0.0, 240.0] | None = None,
        graveyard: bool | None = None,
        moderator_role: discord.Role | None = None,
        clear_moderator_roles: bool = False,
        research_logging: bool | None = None,
    ) -> None:
        if not await self.moderator(interaction):
            return
        guild = interaction.guild
        assert guild is not None
        try:
            chosen = choose_persona(persona, configured_personas(self.settings))
        except PersonaError as exc:
            await reply(interaction, str(exc))
            return
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
            return set_defaults(
                settings,
                given,
                persona_given=persona is not None,
                persona=chosen,
                add_moderator_role=moderator_role.id if moderator_role is not None else None,
                clear_moderator_roles=clear_moderator_roles,
            )

        settings, logging_on = await self.servers.update(
            guild.id, change, name=guild.name, logging_enabled=research_logging
        )
        try:
            config_now = game_config(self.settings, settings)
            GameConfig.from_dict(config_now.to_dict())
        except ConfigError as exc:
            await reply(interaction, f"Saved, but new games would fail: {exc}")
            return
        await reply(interaction, config_summary(settings, logging_on, config_now, self.options))

    @config.autocomplete("persona")
    async def _config_persona(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        return self._persona_menu(current)

    # --- status -------------------------------------------------------------------------------

    @app_commands.command(name="status", description="Games on this server (moderators)")
    async def status(self, interaction: discord.Interaction[Any]) -> None:
        if not await self.moderator(interaction):
            return
        guild = interaction.guild
        assert guild is not None
        lines = status_lines(self.rooms.rooms.values(), self.service.games, guild.id)
        await reply(interaction, "\n".join(lines) if lines else "No games open here.")

    @app_commands.command(name="roles", description="Every role and setup a game can use")
    async def roles(self, interaction: discord.Interaction[Any]) -> None:
        await reply(interaction, catalog_text("discord"))

    # --- end ------------------------------------------------------------------------------------

    @app_commands.command(name="end", description="Stop the game in this channel (moderators)")
    @app_commands.describe(reason="Shown to the players")
    async def end(
        self,
        interaction: discord.Interaction[Any],
        reason: app_commands.Range[str, 1, 200] | None = None,
    ) -> None:
        assert interaction.channel is not None
        room = self.rooms.for_channel(interaction.channel.id)
        game = self.service.games.get(room.game_id) if room else None
        if room is None or game is None:
            await reply(interaction, "There is no open game in this channel.")
            return
        host = str(interaction.user.id) == game.host_user_id and game.status == "lobby"
        if not host and not await self.moderator(interaction):
            return
        why = reason or "ended by a moderator"
        try:
            await self.service.end(room.game_id, why)
        except ServiceError as exc:
            await reply(interaction, str(exc))
            return
        if game.state is None:
            await self.end_lobby(room, game, why)
        await reply(interaction, f"Game {room.game_id} is stopped.")

    # --- kick -----------------------------------------------------------------------------------

    @app_commands.command(
        name="kick", description="Take a player out; an agent or a substitute plays on"
    )
    @app_commands.describe(
        member="The player to take out",
        substitute="Someone to take over the seat (default: an AI agent)",
    )
    async def kick(
        self,
        interaction: discord.Interaction[Any],
        member: discord.Member,
        substitute: discord.Member | None = None,
    ) -> None:
        if not await self.moderator(interaction):
            return
        assert interaction.channel is not None and interaction.guild is not None
        room = self.rooms.for_channel(interaction.channel.id)
        game = self.service.games.get(room.game_id) if room else None
        if room is None or game is None or game.state is None or game.state.over:
            await reply(interaction, "There is no running game in this channel.")
            return
        seat = room.seat_of(member.id)
        if seat is None:
            await reply(interaction, f"{member.display_name} is not playing in this game.")
            return
        if substitute is not None:
            if substitute.bot or room.seat_of(substitute.id) is not None:
                await reply(interaction, f"{substitute.display_name} can't take this seat.")
                return
            ok = await self.links.run(
                has_consent,
                self.service.engine,
                "discord",
                str(interaction.guild.id),
                str(substitute.id),
            )
            if not ok:
                await reply(
                    interaction,
                    f"{substitute.display_name} hasn't agreed to the notice on this server yet: "
                    "ask them to run /mafia consent and agree, then try again.",
                )
                return
        await defer(interaction)
        try:
            if substitute is not None:
                await self.actions.substitute(room, seat, substitute.id)
                done = f"{substitute.display_name} plays the seat now"
            else:
                await self.actions.takeover(room, seat, why="kick")
                done = "an agent plays the seat now"
        except (ServiceError, ValueError) as exc:
            await interaction.followup.send(str(exc), ephemeral=True)
            return
        await interaction.followup.send(
            f"Done: {member.display_name} is out of the game and {done}. Nobody else is told.",
            ephemeral=True,
        )

    # --- export ---------------------------------------------------------------------------------

    @app_commands.command(
        name="export", description="Anonymised research export of this server's games"
    )
    async def export(self, interaction: discord.Interaction[Any]) -> None:
        if not await self.moderator(interaction):
            return
        guild = interaction.guild
        assert guild is not None
        await defer(interaction)
        ids = await self.links.ended_games(guild.id)
        if not ids:
            await interaction.followup.send("No finished games on this server yet.", ephemeral=True)
            return
        identities = await _identities(self.links, guild, ids)
        data, report = await self.links.run(
            export_zip, self.service.engine, ids, identities=identities, revealed_only=True
        )
        summary = "\n".join(report.summary()[:15])
        if not report.exported:  # (a game whose AI is not revealed yet is never exported)
            await interaction.followup.send(summary[:1900], ephemeral=True)
            return
        if len(data) > interaction.filesize_limit:
            await interaction.followup.send(
                f"The export is {len(data) // 1024} KiB, more than Discord lets me attach here; "
                "the bot's operator can run `mafiabot export` instead.",
                ephemeral=True,
            )
            return
        await interaction.followup.send(
            summary[:1900],
            file=discord.File(io.BytesIO(data), filename=export_file_name()),
            ephemeral=True,
        )

    # --- spot-the-AI rate ------------------------------------------------------------------------

    @app_commands.command(
        name="spotrate", description="How often people named the AI in the survey (moderators)"
    )
    async def spotrate(self, interaction: discord.Interaction[Any]) -> None:
        if not await self.moderator(interaction):
            return
        guild = interaction.guild
        assert guild is not None
        await defer(interaction)
        lines = await self.links.run(
            server_chat_lines, self.service.engine, "discord", str(guild.id)
        )
        await interaction.followup.send("\n".join(lines)[:1900], ephemeral=True)

    # --- consent --------------------------------------------------------------------------------

    @app_commands.command(name="consent", description="Your consent: read the notice, or withdraw")
    @app_commands.describe(action="show (the default) or withdraw")
    async def consent(
        self, interaction: discord.Interaction[Any], action: Literal["show", "withdraw"] = "show"
    ) -> None:
        guild = interaction.guild
        assert guild is not None
        user = str(interaction.user.id)
        if action == "show":
            status = await self.links.run(
                consent_status, self.service.engine, "discord", str(guild.id), user
            )
            embed = discord.Embed(
                title="The notice",
                description=consent_text(CONSENT_VERSION, research=status.logging_enabled),
            )
            view = (
                None if status.ok else consent_view(None, CONSENT_VERSION, status.logging_enabled)
            )
            await defer(interaction)
            await interaction.followup.send(
                f"Your answer on this server: {status.describe()}",
                embed=embed,
                view=view or discord.utils.MISSING,
                ephemeral=True,
            )
            return
        await defer(interaction)

        async def done(report: WithdrawalReport) -> None:
            await tell(interaction, "Your withdrawal is done. " + " ".join(report.summary()[1:]))

        try:
            report = await self.withdrawals.start("discord", str(guild.id), user, done)
        except ServiceError as err:
            await interaction.followup.send(str(err), ephemeral=True)
            return
        for game_id in report.lobby:
            try:
                await self.service.leave(game_id, user)
            except ServiceError:
                continue
            room = self.rooms.get(game_id)
            game = self.service.games.get(game_id)
            if room is not None and game is not None:
                self.rooms.sync(room, game)
                await self.lobby.refresh(room, game)
        await interaction.followup.send(withdrawn_reply(report), ephemeral=True)
