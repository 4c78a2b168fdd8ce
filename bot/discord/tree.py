"""The slash-command tree: which process answers a command (several may serve one shard),
and each person's command rate limit, before any command runs (`bot.discord.app.MafiaBot`
builds it)."""

from __future__ import annotations

import logging
from typing import Any, Protocol

import discord
from discord import app_commands

from bot.discord.links import PLATFORM, LinkStore
from bot.discord.rooms import Rooms
from bot.discord.servers import defer, reply
from bot.discord.shards import Handover
from bot.limits import CoolingDown
from bot.service.port import GameService

log = logging.getLogger(__name__)


class TreeHost(Protocol):
    """What the tree needs of its client (`bot.discord.app.MafiaBot`)."""

    rooms: Rooms
    links: LinkStore
    handover: Handover
    service: GameService


class GameTree(app_commands.CommandTree[Any]):
    """The slash commands, each answered by one process when several serve the same shard (a
    rolling restart: both receive every command). In a channel whose game another process
    drives, that process answers. Any other command is claimed by answering it first: every
    command is deferred on arrival (an ephemeral "thinking"), Discord accepts only the first
    answer to an interaction, and the process whose answer is refused drops the command before
    it reads or writes anything."""

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        bot: TreeHost = self.client
        channel_id = interaction.channel_id
        if channel_id is not None and bot.rooms.for_channel(channel_id) is None:
            game_id = await bot.links.open_game_in_channel(channel_id)
            at = discord.utils.snowflake_time(interaction.id)
            if game_id is not None and not await bot.handover.claim(game_id, at):
                return False
        try:
            await defer(interaction)
        except discord.HTTPException as exc:
            log.info("a command answered by another process: %s", exc)
            return False
        if interaction.type is not discord.InteractionType.application_command:
            return True  # (an autocomplete of an option being typed is no command)
        try:  # each person's commands are rate-limited (`bot.limits.CommandLimiter`)
            bot.service.commands.check(
                PLATFORM,
                str(interaction.guild_id),
                str(interaction.user.id),
                command=subcommand(interaction),
            )
        except CoolingDown as slow:
            await reply(interaction, str(slow))
            return False
        return True


def subcommand(interaction: discord.Interaction[Any]) -> str:
    """The first word after ``mafia`` of the slash command used (``consent`` for
    ``/mafia consent``), or its own name outside the group."""
    command = interaction.command
    words = command.qualified_name.split() if command is not None else []
    return words[1] if len(words) > 1 and words[0] == "mafia" else (words[0] if words else "")
