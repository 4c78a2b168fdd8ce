"""A loopback fake of Discord (REST API v10 + gateway) for discord.py's real client.

See `tests/fakes/discord_fixtures.py` for how tests point discord.py at it.
"""

from tests.fakes.discord.interactions import Callback, Interaction
from tests.fakes.discord.model import (
    ANNOUNCEMENT,
    CATEGORY,
    DM,
    INTENT_DIRECT_MESSAGES,
    INTENT_GUILD_MEMBERS,
    INTENT_GUILD_MESSAGES,
    INTENT_GUILD_PRESENCES,
    INTENT_GUILDS,
    INTENT_MESSAGE_CONTENT,
    PERMISSIONS,
    PRIVATE_THREAD,
    PRIVILEGED_INTENTS,
    PUBLIC_THREAD,
    TEXT,
    VOICE,
    Channel,
    Guild,
    Member,
    Overwrite,
    Role,
    User,
    Webhook,
)
from tests.fakes.discord.rest import RecordedRequest, Rule
from tests.fakes.discord.server import FakeDiscord
from tests.fakes.discord.world import DiscordError, UploadedFile, WebhookExecution

__all__ = [
    "ANNOUNCEMENT",
    "CATEGORY",
    "DM",
    "INTENT_DIRECT_MESSAGES",
    "INTENT_GUILDS",
    "INTENT_GUILD_MEMBERS",
    "INTENT_GUILD_MESSAGES",
    "INTENT_GUILD_PRESENCES",
    "INTENT_MESSAGE_CONTENT",
    "PERMISSIONS",
    "PRIVATE_THREAD",
    "PRIVILEGED_INTENTS",
    "PUBLIC_THREAD",
    "TEXT",
    "VOICE",
    "Callback",
    "Channel",
    "DiscordError",
    "FakeDiscord",
    "Guild",
    "Interaction",
    "Member",
    "Overwrite",
    "RecordedRequest",
    "Role",
    "Rule",
    "UploadedFile",
    "User",
    "Webhook",
    "WebhookExecution",
]
