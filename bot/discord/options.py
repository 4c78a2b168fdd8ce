"""Discord-only options, read like the other settings from the environment and ``.env``.

They are kept apart from `bot.settings.Settings` (which holds the token) because they only
matter to the Discord adapter. All are optional. The fast clock for demos and tests is
``MAFIABOT_CLOCK_SPEED`` (`bot.settings.Settings.clock_speed`, every platform);
``MAFIABOT_DISCORD_TEST_SPEED`` is its deprecated old name.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.discord.shards import MAX_SHARDS, Shards, parse_shards
from bot.settings import load_env
from bot.table.text import AVATAR_URL_TEMPLATE


class DiscordOptions(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="MAFIABOT_DISCORD_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    #: sync the slash commands to these servers at start-up (instant) instead of globally
    #: (Discord can take up to an hour to show new global commands)
    guild_ids: list[int] = Field(default_factory=list)
    #: how many shards the bot is split into; empty: what Discord recommends
    shard_count: int | None = Field(None, ge=1, le=MAX_SHARDS)
    #: the shards this process connects ("0-3", "0,2,4-6"; needs shard_count); empty: all.
    #: Several processes, each with its own shards, share one database (docs/operating.md)
    shards: str = ""
    #: per-character webhook avatar, the same picture on every platform; {seed} is the
    #: URL-quoted character name
    avatar_template: str = AVATAR_URL_TEMPLATE
    #: the name of the one webhook the bot creates in each game channel
    webhook_name: str = "Mafia stage"
    #: agent kind for agent seats and AFK/kick takeovers; empty: "llm" when MAFIABOT_LLM is
    #: set, else the offline "baseline"
    agent_kind: Literal["", "baseline", "llm"] = ""
    #: server default (a moderator changes it with /mafia config): minutes a player may be
    #: quiet while they could act before a reminder in their booth (0: never)
    afk_reminder_minutes: float = Field(3.0, ge=0)
    #: server default: minutes of such silence before an agent takes the seat over (0: never)
    afk_takeover_minutes: float = Field(0.0, ge=0)
    #: server default: let the players who are out talk to each other (a graveyard in their
    #: booths)
    graveyard: bool = False
    #: deprecated (use MAFIABOT_CLOCK_SPEED): game clock speed of new games; None: the
    #: settings' clock_speed
    test_speed: float | None = Field(None, gt=0)
    #: tests and benchmarks only: a fixed seed for the deal and the names of new games
    test_seed: int | None = None

    @field_validator("shards")
    @classmethod
    def _shards(cls, value: str, info: ValidationInfo) -> str:
        value = value.strip()
        if value:
            parse_shards(value, info.data.get("shard_count"))
        return value

    def shard_set(self) -> Shards:
        """The shards this process serves."""
        ids = parse_shards(self.shards, self.shard_count) if self.shards else None
        return Shards(None if ids is None else tuple(ids), self.shard_count)


def load_options(**overrides: object) -> DiscordOptions:
    return load_env(DiscordOptions, **overrides)
