"""Typed settings from the environment (and ``.env``), all prefixed ``MAFIABOT_``.

Bad values fail fast at start-up with the variable's name. Secrets are ``SecretStr`` so they
never show up in logs or reprs. Provider SDK variables (ANTHROPIC_API_KEY, OPENAI_API_KEY,
their *_BASE_URL) are read by the SDKs themselves.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class SettingsError(RuntimeError):
    pass


def split_addr(addr: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:9464`` for IPv6; no host: every interface) -> (host, port)."""
    host, sep, port = addr.strip().rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError("must look like HOST:PORT, e.g. 127.0.0.1:9464")
    return host.strip("[]") or "0.0.0.0", int(port)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="MAFIABOT_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    #: where the SQLite database and agent memories live
    data_dir: Path = Path("data")
    #: SQLAlchemy URL; empty means SQLite at <data_dir>/mafiabot.db
    database_url: str = ""
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    #: "text" (one readable line a record) or "json" (one JSON object a line)
    log_format: Literal["text", "json"] = "text"
    #: where `mafiabot run` serves /healthz and /metrics (HOST:PORT; empty: not served)
    http_addr: str = "127.0.0.1:9464"

    #: "anthropic:MODEL" or "openai:MODEL"; empty means the offline baseline agent
    llm: str = ""
    #: optional separate (cheaper, faster) model for the when-to-speak scheduler
    scheduler_llm: str = ""
    #: optional backup model used when the main one keeps failing
    llm_backup: str = ""
    llm_timeout: float = Field(20.0, gt=0, le=600)
    llm_max_attempts: int = Field(3, ge=1, le=10)
    #: tokens an agent seat may spend per game before degrading (0 = unlimited)
    llm_token_budget: int = Field(200_000, ge=0)
    #: what the LLM agent learns from (experience pool, strategy notes): each server's own
    #: games ("server") or every server's ("global")
    experience_scope: Literal["server", "global"] = "server"

    #: seconds of game time; defaults for new games
    day_seconds: float = Field(120.0, gt=0, le=86_400)
    vote_seconds: float = Field(45.0, gt=0, le=86_400)
    night_seconds: float = Field(45.0, gt=0, le=86_400)
    night_vote_seconds: float = Field(30.0, gt=0, le=86_400)

    discord_token: SecretStr | None = None
    slack_bot_token: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None

    @field_validator("llm", "scheduler_llm", "llm_backup")
    @classmethod
    def _llm_spec(cls, value: str) -> str:
        value = value.strip()
        if not value:
            return value
        provider, _, model = value.partition(":")
        if provider not in ("anthropic", "openai") or not model.strip():
            raise ValueError("must look like 'anthropic:MODEL' or 'openai:MODEL'")
        return value

    @field_validator("http_addr")
    @classmethod
    def _http_addr(cls, value: str) -> str:
        value = value.strip()
        if value:
            split_addr(value)
        return value

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'mafiabot.db').resolve()}"


def load_settings(**overrides: object) -> Settings:
    """Read settings, turning validation errors into one readable message."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as err:
        lines = []
        for e in err.errors():
            name = "MAFIABOT_" + "_".join(str(p) for p in e["loc"]).upper()
            lines.append(f"  {name}: {e['msg']}")
        raise SettingsError("Invalid settings:\n" + "\n".join(lines)) from None


@lru_cache(maxsize=1)
def settings() -> Settings:
    return load_settings()
