"""Discord-only options, read like the other settings from the environment and ``.env``.

They are kept apart from `bot.settings.Settings` (which holds the token) because they only
matter to the Discord adapter. All are optional; `MAFIABOT_DISCORD_TEST_SPEED` is for tests
and benchmarks only (it makes every new game run that many times faster).
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.platform_common import AVATAR_URL_TEMPLATE


class DiscordOptions(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="MAFIABOT_DISCORD_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    #: sync the slash commands to these servers at start-up (instant) instead of globally
    #: (Discord can take up to an hour to show new global commands)
    guild_ids: list[int] = Field(default_factory=list)
    #: None lets Discord recommend the shard count
    shard_count: int | None = Field(None, ge=1)
    #: per-character webhook avatar, the same picture on every platform; {seed} is the
    #: URL-quoted character name
    avatar_template: str = AVATAR_URL_TEMPLATE
    #: the name of the one webhook the bot creates in each game channel
    webhook_name: str = "Mafia stage"
    #: agent kind for agent seats and AFK/kick takeovers; empty: "llm" when MAFIABOT_LLM is
    #: set, else the offline "baseline"
    agent_kind: str = ""
    #: server defaults (a moderator can change them per server with /mafia config)
    afk_reminder_minutes: float = Field(3.0, ge=0)
    afk_takeover_minutes: float = Field(0.0, ge=0)
    graveyard: bool = False
    #: tests and benchmarks only: game clock speed of new games, and a fixed seed (deal and
    #: names) instead of a random one
    test_speed: float = Field(1.0, gt=0)
    test_seed: int | None = None


def load_options(**overrides: object) -> DiscordOptions:
    return DiscordOptions(**overrides)  # type: ignore[arg-type]
