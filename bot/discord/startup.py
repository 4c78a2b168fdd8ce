"""Starting the Discord client: the token checked before anything starts, and what Discord's
refusals at login mean, each as one line for the operator (`bot.discord.app.serve_discord`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp
import discord

from bot.errors import PlatformUnreachable
from bot.settings import Settings, SettingsError

__all__ = ["UNREACHABLE", "check_token", "start_refusals"]

# The bot never joins a voice channel: discord.py's "PyNaCl is not installed, voice will NOT be
# supported" and "davey is not installed" warnings at every start would only read like faults.
discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False

UNREACHABLE = (
    "check this machine's network connection, DNS and firewall (or proxy), then start again; "
    "running games carry on from where they were."
)


def check_token(settings: Settings) -> str:
    """The bot token, or a SettingsError saying how to get one (before anything starts)."""
    token = settings.discord_token.get_secret_value() if settings.discord_token else ""
    if not token:
        raise SettingsError(
            "MAFIABOT_DISCORD_TOKEN is not set: put the bot token in .env or the environment "
            "(see docs/discord.md)."
        )
    return token


@asynccontextmanager
async def start_refusals() -> AsyncIterator[None]:
    """Around ``client.start``: Discord's refusals become a SettingsError or a
    PlatformUnreachable saying what to do."""
    try:
        yield
    except discord.LoginFailure:
        raise SettingsError(
            "Discord refused MAFIABOT_DISCORD_TOKEN: copy the bot token again from the developer "
            "portal (Bot > Reset Token)."
        ) from None
    except (aiohttp.ClientConnectorError, discord.GatewayNotFound) as e:
        raise PlatformUnreachable(f"Can't reach Discord ({_reason(e)}): {UNREACHABLE}") from None
    except discord.PrivilegedIntentsRequired:
        raise SettingsError(
            "Discord refused the Message Content intent: switch on 'Message Content Intent' "
            "under Bot > Privileged Gateway Intents in the developer portal."
        ) from None


def _reason(e: Exception) -> str:
    if isinstance(e, aiohttp.ClientConnectorError):
        why = e.os_error.strerror or str(e.os_error) or type(e.os_error).__name__
        return f"{e.host}:{e.port}: {why}"
    return str(e) or type(e).__name__
