"""Per-server settings (``/mafia setup`` and ``/mafia config``), cached briefly, and who
moderates.

Read from the adapter's store and kept in memory for a few seconds; every change goes through
`update`, which stores it and refreshes the cache.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

import discord

from bot.discord.links import LinkStore
from bot.discord.permissions import is_moderator

log = logging.getLogger(__name__)

Change = Callable[[dict[str, Any]], dict[str, Any]]


async def reply(interaction: discord.Interaction[Any], text: str) -> None:
    """An ephemeral answer, whether or not the interaction was answered already."""
    try:
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=True)
        else:
            await interaction.response.send_message(text, ephemeral=True)
    except discord.HTTPException as exc:
        log.info("could not answer an interaction: %s", exc)


async def defer(interaction: discord.Interaction[Any]) -> None:
    """Say "thinking" (ephemeral) unless the interaction was answered already (every slash
    command is deferred on arrival: `bot.discord.tree.GameTree`)."""
    if not interaction.response.is_done():
        await interaction.response.defer(ephemeral=True, thinking=True)


#: how long a server's settings are trusted from memory: another process serving the same
#: shard (a rolling restart) may have changed them in the database meanwhile
CACHE_SECONDS = 5.0


class Servers:
    def __init__(self, links: LinkStore) -> None:
        self.links = links
        self._cache: dict[int, tuple[float, tuple[dict[str, Any], bool]]] = {}

    async def get(self, guild_id: int) -> tuple[dict[str, Any], bool]:
        """(settings, research logging on) of a server."""
        cached = self._cache.get(guild_id)
        if cached is not None and time.monotonic() - cached[0] < CACHE_SECONDS:
            return cached[1]
        result = await self.links.server_settings(guild_id)
        self._cache[guild_id] = (time.monotonic(), result)
        return result

    async def update(
        self, guild_id: int, change: Change, **kwargs: Any
    ) -> tuple[dict[str, Any], bool]:
        result = await self.links.update_server(guild_id, change, **kwargs)
        self._cache[guild_id] = (time.monotonic(), result)
        return result

    async def is_moderator(self, interaction: discord.Interaction[Any]) -> bool:
        """Manage Server, or one of the server's moderator roles."""
        if interaction.guild is None:
            return False
        settings, _ = await self.get(interaction.guild.id)
        return is_moderator(interaction.user, interaction.permissions, settings)


async def tell(interaction: discord.Interaction[Any], text: str) -> None:
    """A private note for whoever ran ``interaction``, after the fact: a followup while the
    interaction's token lasts (15 minutes), else a direct message."""
    try:
        await interaction.followup.send(text[:1900], ephemeral=True)
    except discord.HTTPException:
        with contextlib.suppress(discord.HTTPException):
            await interaction.user.send(text[:1900])
