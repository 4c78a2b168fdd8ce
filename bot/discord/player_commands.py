"""``/mafia help``, ``/mafia stats``, ``/mafia leaderboard``, ``/mafia history`` and
``/mafia replay``: added to the ``/mafia`` group (`bot.discord.commands.MafiaCommands`) by
:func:`add_player_commands`.

The words are the table's (`bot.table.help`, `bot.players.stats`, `bot.players.history`,
`bot.players.replay_page`),
the same on every platform; every answer is private to the person who asked. ``replay`` is for
everyone who played in the game and for moderators, as a file, and only for a game of this
server that has finished and revealed its AI.
"""

from __future__ import annotations

import io
from typing import Any

import discord
from discord import app_commands

from bot.discord.links import LinkStore
from bot.discord.moderation import _identities, game_config
from bot.discord.rooms import Rooms
from bot.discord.servers import Servers, defer, reply
from bot.players import reveal
from bot.players.history import MOST, SHOWN, history_text, may_replay, player_history
from bot.players.replay_page import ReplayError, page_bytes
from bot.players.stats import board as server_board
from bot.players.stats import leaderboard_text, stats_text
from bot.players.web_pages import web_command
from bot.settings import Settings
from bot.table.help import DISCORD, help_text, roles_in_play

PLATFORM = "discord"
MODS_ONLY = (
    "Only moderators can do that (Manage Server, or a moderator role set with /mafia config)."
)
NOT_YOURS = (
    "A game's replay is for the people who played in it and for moderators (Manage Server, "
    "or a moderator role set with /mafia config). `/mafia history` lists your games."
)


def booth_where(rooms: Rooms, guild_id: int, user_id: int) -> str:
    """Where the asker's booth is: the thread of each game of this server they sit in now,
    or where it will be."""
    mine = []
    for room in rooms.rooms.values():
        if room.guild_id != guild_id or room.ended:
            continue
        seat = room.seat_of(user_id)
        booth = room.booths.get(seat) if seat is not None else None
        if booth is not None:
            mine.append(f"<#{booth.thread_id}>")
    if mine:
        return (
            "Your booth in the game you are playing: "
            + ", ".join(mine)
            + (". Type there to talk; your role card, menus and private results are there too.")
        )
    return (
        "When a game you joined starts, I open a private thread for you under the game "
        "channel: your booth, seen only by you and me. Type there to talk; your role card, "
        "menus and private results come there (and the den's night talk if you are mafia)."
    )


def _pieces(text: str, limit: int = 2000) -> list[str]:
    """Discord's 2,000 characters a message, cut between lines."""
    out: list[str] = []
    for line in text.split("\n"):
        if out and len(out[-1]) + 1 + len(line) <= limit:
            out[-1] += "\n" + line
        else:
            out.append(line[:limit])
    return out


def add_player_commands(
    group: app_commands.Group,
    *,
    rooms: Rooms,
    links: LinkStore,
    servers: Servers,
    settings: Settings,
) -> None:
    engine = links.engine

    async def help_(interaction: discord.Interaction[Any]) -> None:
        guild = interaction.guild
        assert guild is not None
        server, _ = await servers.get(guild.id)
        roles = game_config(settings, server).roles
        text = help_text(
            commands=DISCORD,
            roles=roles_in_play(roles),
            booth=booth_where(rooms, guild.id, interaction.user.id),
            markup="discord",
        )
        await defer(interaction)
        for piece in _pieces(text):
            await interaction.followup.send(piece, ephemeral=True)

    async def stats(
        interaction: discord.Interaction[Any],
        member: discord.Member | None = None,
        numbers: bool = False,
    ) -> None:
        guild = interaction.guild
        assert guild is not None
        who = member or interaction.user
        if who.bot:
            await reply(interaction, "Bots and AI players have no stats.")
            return
        await defer(interaction)  # (a busy database: the answer may take a moment)
        b = await links.run(server_board, engine, PLATFORM, str(guild.id))
        rank = b.rank_of(str(who.id))
        place = (rank, len(b.ranked)) if rank is not None else None
        text = stats_text(b.of(str(who.id)), f"<@{who.id}>", rank=place, numbers=numbers)
        await interaction.followup.send(text, ephemeral=True)

    async def board(
        interaction: discord.Interaction[Any], page: int = 1, numbers: bool = False
    ) -> None:
        guild = interaction.guild
        assert guild is not None
        await defer(interaction)
        b = await links.run(server_board, engine, PLATFORM, str(guild.id))
        me = str(interaction.user.id)
        text = leaderboard_text(b, lambda u: f"<@{u}>", page=page, me=me, numbers=numbers)
        for piece in _pieces(text):
            await interaction.followup.send(piece, ephemeral=True)

    async def history(interaction: discord.Interaction[Any], count: int = SHOWN) -> None:
        guild = interaction.guild
        assert guild is not None
        me = str(interaction.user.id)
        await defer(interaction)  # (before the database: Discord waits 3 seconds for an answer)
        games = await links.run(player_history, engine, PLATFORM, str(guild.id), me, limit=count)
        text = history_text(games, f"<@{me}>", "/mafia replay game:{game}")
        for piece in _pieces(text):
            await interaction.followup.send(piece, ephemeral=True)

    async def web(interaction: discord.Interaction[Any], what: str = "") -> None:
        guild = interaction.guild
        assert guild is not None
        wanted = what.strip()
        moderator = wanted.lower() in ("on", "off") and await servers.is_moderator(interaction)
        user = interaction.user
        text = await links.run(
            web_command, engine, settings.public_url, PLATFORM, str(guild.id), str(user.id),
            wanted, moderator=moderator, display_name=user.display_name,
        )  # fmt: skip
        await reply(interaction, text)

    async def replay(interaction: discord.Interaction[Any], game: str) -> None:
        guild = interaction.guild
        assert guild is not None
        game_id = game.strip()
        row = await links.game(game_id)
        if row is None or row.guild_id != str(guild.id):
            await reply(interaction, f"There is no game {game_id!r} on this server.")
            return
        me = str(interaction.user.id)
        played = await links.run(may_replay, engine, PLATFORM, str(guild.id), game_id, me)
        if not played and not await servers.is_moderator(interaction):
            await reply(interaction, NOT_YOURS)
            return
        if row.status != "finished":
            await reply(interaction, f"Game {game_id} is {row.status}: only finished games.")
            return
        if not await links.run(reveal.revealed, engine, game_id):
            await reply(
                interaction,
                f"Game {game_id}'s survey is still open: its replay (which shows who the AI "
                "was) is available once the AI has been revealed on the stage.",
            )
            return
        await defer(interaction)
        identities = await _identities(links, guild, [game_id])
        try:
            data = await links.run(page_bytes, engine, game_id, identities=identities)
        except ReplayError as err:
            await interaction.followup.send(str(err), ephemeral=True)
            return
        if len(data) > interaction.filesize_limit:
            await interaction.followup.send(
                f"The page is {len(data) // 1024} KiB, more than Discord lets me attach here; "
                f"the bot's operator can run `mafiabot replay {game_id} --html FILE` instead.",
                ephemeral=True,
            )
            return
        await interaction.followup.send(
            f"The replay of game {game_id}: open the file in a browser (it works offline).",
            file=discord.File(io.BytesIO(data), filename=f"mafia-replay-{game_id}.html"),
            ephemeral=True,
        )

    group.add_command(
        app_commands.Command(
            name="help",
            description="How a game goes, the roles here, the commands, your booth",
            callback=help_,
        )
    )
    stats_cmd: app_commands.Command[Any, ..., None] = app_commands.Command(
        name="stats",
        description="Games, wins, survival and spot-the-AI score on this server",
        callback=stats,
    )
    app_commands.describe(
        member="Whose stats (yours by default)", numbers="Show the rating's numbers too"
    )(stats_cmd)
    group.add_command(stats_cmd)
    board_cmd: app_commands.Command[Any, ..., None] = app_commands.Command(
        name="leaderboard",
        description="This server's players ranked: skill, spot-the-AI, your place, the AI",
        callback=board,
    )
    app_commands.describe(page="Which page (15 a page)", numbers="Show the ratings' numbers")(
        board_cmd
    )
    group.add_command(board_cmd)
    history_cmd: app_commands.Command[Any, ..., None] = app_commands.Command(
        name="history",
        description="Your last games here: role, result, who the AI was, your guess, replays",
        callback=history,
    )
    app_commands.describe(count=f"How many games (at most {MOST})")(history_cmd)
    group.add_command(history_cmd)
    web_cmd: app_commands.Command[Any, ..., None] = app_commands.Command(
        name="web",
        description="This server's pages on the web: your links; on/off (moderators); name",
        callback=web,
    )
    app_commands.describe(what="on, off (moderators), name or noname (show your name or not)")(
        web_cmd
    )
    group.add_command(web_cmd)
    replay_cmd: app_commands.Command[Any, ..., None] = app_commands.Command(
        name="replay",
        description="A finished game's replay page, as a file (its players, moderators)",
        callback=replay,
    )
    app_commands.describe(game="The game's id (from the lobby, or /mafia status)")(replay_cmd)
    group.add_command(replay_cmd)
