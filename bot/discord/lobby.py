"""The lobby: open a game, consent, join, leave, start.

Before a person's first game on a server the service refuses their join with
`bot.protection.consent.ConsentRequired`, which carries the notice to show (one player is an AI;
what is
recorded; how to withdraw). They get it privately with Agree / Decline; the answer and the
notice's version are stored (`bot.protection.consent.record_consent`) and, on Agree, they are
seated.

Starting prepares the Discord side before the service deals the roles (the stage webhook, the
stage locked to the bot); the service then seats everyone in a seed-drawn order, and the booths
(one per human, keyed by seat) are opened from that final table.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import discord

from bot.discord.links import LinkStore
from bot.discord.options import DiscordOptions
from bot.discord.permissions import blocking, describe_missing
from bot.discord.rooms import Room, Rooms
from bot.discord.servers import defer
from bot.discord.views import consent_view, lobby_view
from bot.limits import CoolingDown
from bot.protection.consent import ConsentRequired, record_consent
from bot.service.live import LiveGame
from bot.service.port import GameService, ServiceError
from bot.settings import Settings
from bot.table import balance_estimate
from bot.table.config import config_summary
from bot.table.lobby import may_manage, seat_agents, start_problem
from games.config import MIN_PLAYERS, GameConfig
from games.errors import ConfigError

log = logging.getLogger(__name__)

Reply = Callable[[discord.Interaction[Any], str], Awaitable[None]]
IsModerator = Callable[[discord.Interaction[Any]], Awaitable[bool]]
RestoreRoom = Callable[[LiveGame], Awaitable[Room | None]]


class Lobby:
    """Given what it uses (as `bot.slack.lobby.Lobby` is): the service, the rooms and links of
    this process, the options and settings, an ephemeral ``reply``, the moderator check, a way
    to rebuild the room of a game not loaded yet (a lobby clicked after a restart), and the
    kind of agent seated for AI players."""

    def __init__(
        self,
        service: GameService,
        rooms: Rooms,
        links: LinkStore,
        options: DiscordOptions,
        settings: Settings,
        *,
        reply: Reply,
        is_moderator: IsModerator,
        restore_room: RestoreRoom,
        agent_kind: str,
    ) -> None:
        self.service = service
        self.rooms = rooms
        self.links = links
        self.options = options
        self.settings = settings
        self.reply = reply
        self.is_moderator = is_moderator
        self.restore_room = restore_room
        self.agent_kind = agent_kind

    # --- the lobby message --------------------------------------------------------------------

    def embed(self, game: LiveGame, room: Room, status: str | None = None) -> discord.Embed:
        humans = [s for s in game.seats if not s.is_agent and s.user_id]
        if game.state is not None:
            # once started, seat order is the start announcement's order: listing accounts in
            # it would pair them with characters (and point at the agent's place)
            humans.sort(key=lambda s: s.user_id or "")
        agents = max(room.agents, len(game.seats) - len(humans))
        embed = discord.Embed(title=f"Mafia: game {game.id}", colour=discord.Colour.dark_red())
        host = f"Hosted by <@{room.host_id}>.\n" if room.host_id else ""
        line = balance_estimate.shared().line(game.config) if game.status == "lobby" else None
        balance = f"{line}\n\n" if line else ""
        embed.description = (
            f"{host}{config_summary(game.config)}\n\n{balance}"
            "**One of the players is an AI agent**, and nobody is told which. Everyone plays "
            "under a character name drawn at the start and talks through a private booth, so "
            "all lines look alike."
        )
        names = ", ".join(f"<@{s.user_id}>" for s in humans) or "nobody yet"
        if agents:
            names += f" + {agents} AI player{'s' if agents != 1 else ''}"
        embed.add_field(
            name=f"Players: {len(humans) + agents} (at least {MIN_PLAYERS})",
            value=names,
            inline=False,
        )
        embed.set_footer(text=status or "Join, then the host or a moderator starts the game.")
        return embed

    async def refresh(
        self, room: Room, game: LiveGame, status: str | None = None, *, closed: bool = False
    ) -> None:
        if room.lobby_message_id is None:
            return
        channel = self.rooms.messageable(room, room.channel_id, thread=False)
        message = channel.get_partial_message(room.lobby_message_id)
        try:
            await message.edit(
                embed=self.embed(game, room, status),
                view=None if closed else lobby_view(game.id),
            )
        except discord.HTTPException as exc:
            log.info("could not update the lobby of %s: %s", game.id, exc)

    def show_balance(self, room: Room, game: LiveGame) -> None:
        """Redraw the lobby when its setup's balance estimate comes in (measured off the loop)."""

        async def redraw() -> None:
            if game.status == "lobby":
                await self.refresh(room, game)

        balance_estimate.shared().watch(game.config, redraw)

    # --- open ----------------------------------------------------------------------------------

    async def open(
        self,
        interaction: discord.Interaction[Any],
        config: GameConfig,
        agents: int,
        persona: str | None,
        server: dict[str, Any],
    ) -> None:
        guild, channel, user = interaction.guild, interaction.channel, interaction.user
        assert guild is not None and channel is not None
        await defer(interaction)
        try:
            game_id = await self.service.create_game(
                config,
                platform="discord",
                server_external_id=str(guild.id),
                server_name=guild.name,
                channel_id=str(channel.id),
                host_user_id=str(user.id),
                speed=self.options.test_speed or self.settings.clock_speed,
                seed=self.options.test_seed,
            )
        except ServiceError as exc:  # the bot is restarting
            await interaction.followup.send(str(exc), ephemeral=True)
            return
        game = self.service.games[game_id]
        binding = server.get("channels", {}).get(str(channel.id), {})
        contacts = {user.id} | ({int(binding["by"])} if binding.get("by") else set())
        room = Room(
            game_id=game_id,
            guild_id=guild.id,
            channel_id=channel.id,
            host_id=user.id,
            contacts=contacts,
            afk={
                "reminder_minutes": float(
                    server.get("afk_reminder_minutes", self.options.afk_reminder_minutes)
                ),
                "takeover_minutes": float(
                    server.get("afk_takeover_minutes", self.options.afk_takeover_minutes)
                ),
            },
            graveyard=bool(server.get("graveyard", self.options.graveyard)),
            agents=agents,
            persona=persona,
        )
        self.rooms.register(room)
        self.rooms.sync(room, game)
        await self.links.put(
            game_id,
            "room",
            channel.id,
            data={
                "contacts": sorted(map(str, contacts)),
                "afk": room.afk,
                "graveyard": room.graveyard,
            },
        )
        message = await self.rooms.post(
            room, channel.id, embed=self.embed(game, room), view=lobby_view(game_id), thread=False
        )
        assert message is not None
        room.lobby_message_id = message.id
        await self.links.put(game_id, "lobby", message.id)
        self.show_balance(room, game)
        await interaction.followup.send(
            f"Lobby for game {game_id} is open. Players join with the button; you (or a "
            "moderator) press Start when at least 5 seats are taken.",
            ephemeral=True,
        )

    # --- buttons -------------------------------------------------------------------------------

    async def game(self, game_id: str) -> tuple[LiveGame, Room] | None:
        room = self.rooms.get(game_id)
        game = self.service.games.get(game_id)
        if game is None:
            try:
                game = await self.service.resume(game_id)
            except ServiceError:
                return None
        if room is None:
            room = await self.restore_room(game)
        if room is None:
            return None
        return game, room

    async def button(
        self, interaction: discord.Interaction[Any], game_id: str, action: str
    ) -> None:
        try:  # each person's commands are rate-limited (`bot.limits.CommandLimiter`)
            self.service.commands.check(
                "discord", str(interaction.guild_id), str(interaction.user.id)
            )
        except CoolingDown as slow:
            await self.reply(interaction, str(slow))
            return
        found = await self.game(game_id)
        if found is None or found[0].status not in ("lobby", "running"):
            await self.reply(interaction, "This lobby is closed.")
            return
        game, room = found
        if action == "join":
            await self.join(interaction, game, room)
        elif action == "leave":
            await self.leave(interaction, game, room)
        else:
            await self.start(interaction, game, room)

    async def join(self, interaction: discord.Interaction[Any], game: LiveGame, room: Room) -> None:
        try:
            await self.service.join(game.id, str(interaction.user.id))
        except ConsentRequired as notice:
            await self.show_notice(interaction, game.id, notice)
            return
        except ServiceError as exc:
            await self.reply(interaction, str(exc))
            return
        self.rooms.sync(room, game)
        await interaction.response.edit_message(embed=self.embed(game, room))
        await interaction.followup.send(
            "You're in. When the game starts you get a private booth thread: your role, and "
            "where you type to talk.",
            ephemeral=True,
        )

    async def show_notice(
        self, interaction: discord.Interaction[Any], game_id: str | None, notice: ConsentRequired
    ) -> None:
        embed = discord.Embed(title="Before you play", description=notice.text)
        view = consent_view(game_id, notice.version, notice.research)
        if interaction.response.is_done():
            await interaction.followup.send(embed=embed, view=view, ephemeral=True)
        else:
            await interaction.response.send_message(embed=embed, view=view, ephemeral=True)

    async def consent_answer(
        self,
        interaction: discord.Interaction[Any],
        game_id: str | None,
        agreed: bool,
        version: str,
        research: bool,
    ) -> None:
        if interaction.guild is None:
            await self.reply(interaction, "Answer this on the server where you play.")
            return
        await self.links.run(
            record_consent,
            self.links.engine,
            "discord",
            str(interaction.guild.id),
            str(interaction.user.id),
            agreed,
            version,
            research=research,
        )
        if not agreed:
            await interaction.response.edit_message(
                content="No problem: you have not joined, and nothing about you is recorded. "
                "You can change your mind by pressing Join again.",
                embed=None,
                view=None,
            )
            return
        if game_id is None:
            await interaction.response.edit_message(
                content=f"Thanks: your answer (notice version {version}) is saved. You can join "
                "games on this server now.",
                embed=None,
                view=None,
            )
            return
        found = await self.game(game_id)
        if found is None:
            await interaction.response.edit_message(
                content="Thanks, your answer is saved, but that lobby is closed now.",
                embed=None,
                view=None,
            )
            return
        game, room = found
        try:
            await self.service.join(game.id, str(interaction.user.id))
        except ConsentRequired as notice:  # the notice changed in between: show the new one
            embed = discord.Embed(title="Before you play", description=notice.text)
            await interaction.response.edit_message(
                embed=embed, view=consent_view(game_id, notice.version, notice.research)
            )
            return
        except ServiceError as exc:
            await interaction.response.edit_message(
                content=f"Thanks, your answer is saved. {exc}", embed=None, view=None
            )
            return
        self.rooms.sync(room, game)
        await interaction.response.edit_message(
            content=f"Thanks, you're in game {game.id}. When it starts you get a private booth "
            "thread: your role, and where you type to talk.",
            embed=None,
            view=None,
        )
        await self.refresh(room, game)

    async def leave(
        self, interaction: discord.Interaction[Any], game: LiveGame, room: Room
    ) -> None:
        try:
            await self.service.leave(game.id, str(interaction.user.id))
        except ServiceError as exc:
            await self.reply(interaction, str(exc))
            return
        self.rooms.sync(room, game)
        await interaction.response.edit_message(embed=self.embed(game, room))

    async def start(
        self, interaction: discord.Interaction[Any], game: LiveGame, room: Room
    ) -> None:
        user = str(interaction.user.id)
        if not may_manage(game, user, moderator=await self.is_moderator(interaction)):
            await self.reply(interaction, "Only the host or a moderator can start the game.")
            return
        problem = start_problem(game, room.agents)
        if problem is not None:
            await self.reply(interaction, problem)
            return
        lacking = blocking(interaction.app_permissions)
        if lacking:
            await self.reply(
                interaction,
                "I can't run a game in this channel; I'm missing:\n" + describe_missing(lacking),
            )
            return
        await interaction.response.defer()
        try:
            await self.seat_agents(game, room)
            await self.prepare(room)
            await self.service.start(game.id)
        except (ServiceError, ConfigError) as exc:
            await interaction.followup.send(f"Can't start: {exc}", ephemeral=True)
            return
        except discord.HTTPException as exc:
            await self.refused(interaction, exc)
            return
        # The service seated everyone anew: seat numbers come from the started game only.
        self.rooms.sync(room, game)
        try:
            await self.open_booths(room)
        except discord.HTTPException as exc:
            # the game runs: each booth is tried again when its first post goes out
            await interaction.followup.send(
                f"The game has started, but Discord refused to open the booths "
                f"({exc.text or exc.status}); I'll keep trying as their posts go out. Check my "
                "permissions with /mafia setup.",
                ephemeral=True,
            )
        await self.refresh(
            room, game, "The game is on: watch the stage, talk in your booth.", closed=True
        )

    @staticmethod
    async def refused(interaction: discord.Interaction[Any], exc: discord.HTTPException) -> None:
        await interaction.followup.send(
            f"Discord refused to set the game up ({exc.text or exc.status}); check my "
            "permissions with /mafia setup.",
            ephemeral=True,
        )

    async def seat_agents(self, game: LiveGame, room: Room) -> None:
        """Add the AI players the host asked for, with the lobby's persona."""
        await seat_agents(
            self.service,
            game,
            room.agents,
            agent_kind=self.agent_kind,
            persona=room.persona,
        )

    async def prepare(self, room: Room) -> None:
        """Webhook and stage lock: what the first stage posts need (booths come after the
        start, once seat numbers are final)."""
        await self.rooms.webhook(room)
        try:
            await self.rooms.lock_stage(room)
        except discord.Forbidden:
            await self.rooms.report(
                room,
                "lock",
                "I could not keep the game channel to myself (I need Manage Permissions there). "
                "The game runs, but lines typed straight into the channel show who wrote them.",
            )

    async def open_booths(self, room: Room) -> None:
        """A booth per human, keyed by their seat in the started game (the role cards would
        open them too; this has them ready at once)."""
        for seat, uid in sorted(room.humans.items()):
            await self.rooms.booth(room, seat, uid)
