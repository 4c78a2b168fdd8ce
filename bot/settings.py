"""Typed settings from the environment (and ``.env``), all prefixed ``MAFIABOT_``.

Bad values fail fast at start-up with the variable's name. Secrets are ``SecretStr`` so they
never show up in logs or reprs. Provider SDK variables (ANTHROPIC_API_KEY, OPENAI_API_KEY,
their *_BASE_URL) are read by the SDKs themselves, from the environment: `load_settings` puts
those found in ``.env`` there (`provider_env_from_dotenv`), so ``.env`` serves them too.
"""

from __future__ import annotations

import logging
import os
import re
import typing
from functools import lru_cache
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from pydantic_settings import SettingsError as EnvParseError

S = TypeVar("S", bound=BaseSettings)

log = logging.getLogger(__name__)


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

    # --- storage and logs ---
    #: where the SQLite database and agent memories live
    data_dir: Path = Path("data")
    #: SQLAlchemy URL; empty means SQLite at MAFIABOT_DATA_DIR/mafiabot.db
    database_url: str = ""
    #: the database password, apart from MAFIABOT_DATABASE_URL so that any character works
    #: (no URL-encoding; compose.yaml passes POSTGRES_PASSWORD here); replaces one in the URL
    database_password: SecretStr | None = None
    #: the least important log records written (to stderr)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    #: "text" (one readable line a record) or "json" (one JSON object a line)
    log_format: Literal["text", "json"] = "text"

    # --- operations ---
    #: where `mafiabot run` serves /healthz and /metrics (HOST:PORT; empty: not served)
    http_addr: str = "127.0.0.1:9464"
    #: the public address (https://...) at which that server is reached from outside (a
    #: reverse proxy forwarding /p/ to it); set, moderators may turn on their server's web
    #: pages (board, histories, replays) with `/mafia web on`. Empty: no web pages
    public_url: str = ""

    # --- the LLM agent ---
    #: "anthropic:MODEL" or "openai:MODEL"; empty means the offline baseline agent. With a
    #: model set every agent seat is the LLM agent's (`play`/`simulate --agent baseline` and
    #: MAFIABOT_DISCORD_AGENT_KIND=baseline choose the baseline anyway)
    llm: str = ""
    #: optional separate (cheaper, faster) model for the when-to-speak scheduler
    scheduler_llm: str = ""
    #: optional backup model used when the main one keeps failing
    llm_backup: str = ""
    #: seconds one LLM request may take
    llm_timeout: float = Field(20.0, gt=0, le=600)
    #: attempts per LLM request on timeouts, 429 and 5xx answers
    llm_max_attempts: int = Field(3, ge=1, le=10)
    #: tokens an agent seat may spend per game before degrading (0 = unlimited)
    llm_token_budget: int = Field(200_000, ge=0)
    #: tokens all the agent seats of one server (a Discord guild, a Slack workspace) may spend
    #: in a day (UTC), counting the calls the database recorded that day (a restart does not
    #: start the day afresh); a seat that would go over plays on as the baseline agent, and
    #: the game's host is told once a day (0 = no cap)
    llm_server_day_tokens: int = Field(0, ge=0)
    #: the same cap in US dollars (priced by `llm_prices`, else the built-in list prices)
    llm_server_day_usd: float = Field(0.0, ge=0)
    #: tokens all the agent seats of this process may spend in a day (UTC), counting from the
    #: start every call the database recorded that day (0 = no cap)
    llm_process_day_tokens: int = Field(0, ge=0)
    #: the same cap in US dollars
    llm_process_day_usd: float = Field(0.0, ge=0)
    #: the operator's prices for the dollar caps, US dollars per million tokens:
    #: "MODEL=INPUT/OUTPUT[/CACHED]", comma-separated, matched on the model name's start, e.g.
    #: "gpt-4o-mini=0.15/0.60/0.075,claude-haiku=1/5/0.1"; other models use the built-in
    #: list prices (a local model has none: cap it in tokens)
    llm_prices: str = ""
    #: the operator's own agent personas, a JSON file: {"key": "text", ...} or
    #: {"key": {"text": ..., "talkativeness": 0.5-1.5, "title": ...}}. Hosts choose personas by
    #: key only (the built-in ones and these); no chat command can write a persona's text
    personas_file: Path | None = None
    #: how decisions (when to talk, votes, night actions, reflection answers) are asked for:
    #: "auto" (the provider's structured-output form, stepping down on a server that refuses
    #: it), "json_schema", "json_object" (llama-cpp-python server), "tool" (forced tool call)
    #: or "off" (plain text); one mode, then optional per-model overrides, e.g.
    #: "auto,openai:smollm2=json_object"
    llm_structured: str = "auto"
    #: LLM requests in flight at once per model server: "auto" (no limit on the providers'
    #: hosted APIs, 1 on any other base URL: a local server that answers one request at a
    #: time), or a number (0: no limit), then optional per-model overrides, e.g.
    #: "auto,openai:llama3.1:8b=4" for `llama-server --parallel 4` or vLLM. Waiting requests
    #: go votes and night actions first, then talk, then background work
    llm_concurrency: str = "auto"
    #: also ask the seat's model (yes/no) whether a line the disclosure guard passed, but that
    #: comes near what it looks for, gives the writer away as an AI; a "yes" is refused like
    #: the guard's own findings
    llm_guard_judge: bool = False
    #: seconds the model may take to judge a line; no verdict by then leaves the guard's own
    llm_guard_judge_timeout: float = Field(2.0, gt=0, le=30)
    #: what the LLM agent learns from (experience pool, strategy notes): each server's own
    #: games ("server") or every server's ("global")
    experience_scope: Literal["server", "global"] = "server"

    # --- research ---
    #: where `mafiabot likeness` and the research tools find the LLMafia games (default:
    #: shared/data/llmafia/games beside the repository)
    llmafia_dir: str = ""

    # --- new games ---
    #: day discussion length of new games, in game seconds (1 s to a day)
    day_seconds: float = Field(120.0, ge=1, le=86_400)
    #: day vote length of new games, in game seconds
    vote_seconds: float = Field(45.0, ge=1, le=86_400)
    #: night talk (the mafia's den) length of new games, in game seconds
    night_seconds: float = Field(45.0, ge=1, le=86_400)
    #: night kill vote length of new games, in game seconds
    night_vote_seconds: float = Field(30.0, ge=1, le=86_400)
    #: the reveal ("The AI was ...") is posted on the stage once every person at the table
    #: has answered the survey, or at the latest this many seconds after the game ended
    reveal_after_seconds: float = Field(600.0, ge=1, le=7 * 86_400)

    #: after an outage of a platform's input (a restart, a gateway or socket gap) what people
    #: typed meanwhile is released at the pace it was typed, over at most this many seconds
    #: (a longer outage is replayed faster); the phase gets the outage's length back
    outage_release_seconds: float = Field(30.0, ge=0, le=600)

    #: for demos and tests only: the game clock of every new game, on every platform, runs
    #: this many times faster (phases, deadlines and the agents' timing alike)
    clock_speed: float = Field(1.0, gt=0, le=1000)
    #: deprecated name of MAFIABOT_CLOCK_SPEED, still honoured (logs a warning)
    discord_test_speed: float | None = Field(None, gt=0, le=1000)

    # --- platforms ---
    #: the Discord bot token (developer portal: Bot > Reset Token)
    discord_token: SecretStr | None = None
    #: the Slack app's Bot User OAuth Token (xoxb-...), for one workspace
    slack_bot_token: SecretStr | None = None
    #: the Slack app-level token (xapp-..., scope connections:write) for Socket Mode
    slack_app_token: SecretStr | None = None
    #: the Slack app's Signing Secret, for HTTP mode (`run --slack --http PORT`)
    slack_signing_secret: SecretStr | None = None
    #: "Add to Slack" (OAuth, many workspaces, HTTP mode): the app's Client ID and Secret
    #: (Basic Information > App Credentials); with them set no bot token is read
    slack_client_id: str = ""
    #: the "Add to Slack" app's Client Secret (with MAFIABOT_SLACK_CLIENT_ID)
    slack_client_secret: SecretStr | None = None
    #: the public URL of /slack/oauth_redirect, when the app lists more than one redirect URL
    slack_redirect_uri: str = ""
    #: addresses or networks (comma-separated) of the reverse proxies in front of the HTTP
    #: endpoints (this machine's own are always trusted): a request coming through one is
    #: counted against the address in its X-Forwarded-For, not the proxy's
    slack_trusted_proxies: str = ""
    #: key(s) encrypting the Slack tokens stored by "Add to Slack" installs: one Fernet key,
    #: or several separated by commas, newest first (rotation: docs/limits-and-secrets.md);
    #: unset: a key made at the first start and kept in the data folder (secret.key)
    secret_key: SecretStr | None = None
    #: Slack Web API base URL; empty means https://slack.com/api/ (set it for GovSlack,
    #: an Enterprise Grid proxy, or a test server)
    slack_api_url: str = ""
    #: Slack: let the players who are out talk to each other in their booths (the graveyard;
    #: every death is announced there, and a dead AI player takes part like the others)
    slack_graveyard: bool = False

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

    @field_validator("personas_file", mode="before")
    @classmethod
    def _personas_file(cls, value: object) -> object:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        return value

    @field_validator("personas_file")
    @classmethod
    def _personas_readable(cls, value: Path | None) -> Path | None:
        """Checked at start-up (one clear line), not at a host's first command."""
        if value is None:
            return None
        import json

        from agent.personas import operator_personas

        try:
            raw = json.loads(value.read_text("utf-8"))
        except (OSError, ValueError) as err:
            raise ValueError(f"can't read {value}: {err}") from err
        if not isinstance(raw, dict):
            raise ValueError(f"{value} must hold a JSON object of persona key -> text")
        operator_personas(raw)  # a ValueError names the bad entry
        return value

    @field_validator("llm_structured")
    @classmethod
    def _structured(cls, value: str) -> str:
        from agent.llm.structured import parse_modes

        parse_modes(value)
        return value.strip() or "auto"

    @field_validator("llm_prices")
    @classmethod
    def _prices(cls, value: str) -> str:
        from agent.llm.spend import parse_prices

        parse_prices(value)
        return value.strip()

    @field_validator("llm_concurrency")
    @classmethod
    def _concurrency(cls, value: str) -> str:
        from agent.llm.queue import parse_concurrency

        parse_concurrency(value)
        return value.strip() or "auto"

    @field_validator("slack_redirect_uri")
    @classmethod
    def _redirect_uri(cls, value: str) -> str:
        value = value.strip()
        if value and not value.startswith(("https://", "http://")):
            raise ValueError("must be the https:// URL of /slack/oauth_redirect")
        return value

    def slack_oauth(self) -> bool:
        """Installed through "Add to Slack" (many workspaces) rather than one .env token."""
        secret = self.slack_client_secret
        return bool(self.slack_client_id.strip() or (secret and secret.get_secret_value()))

    @field_validator("slack_trusted_proxies")
    @classmethod
    def _trusted_proxies(cls, value: str) -> str:
        from bot.limits import proxy_networks

        try:
            proxy_networks(value)
        except ValueError as e:
            raise ValueError(f"must be addresses or networks separated by commas: {e}") from e
        return value.strip()

    @field_validator("slack_api_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        value = value.strip()
        if not value:
            return value
        if not value.startswith(("https://", "http://")):
            raise ValueError("must be an http(s) URL such as https://slack-gov.com/api/")
        return value if value.endswith("/") else value + "/"

    @model_validator(mode="after")
    def _old_speed_name(self) -> Settings:
        if self.discord_test_speed is not None:
            log.warning("MAFIABOT_DISCORD_TEST_SPEED is deprecated: use MAFIABOT_CLOCK_SPEED")
            if "clock_speed" not in self.model_fields_set:
                self.clock_speed = self.discord_test_speed
        return self

    @field_validator("http_addr")
    @classmethod
    def _http_addr(cls, value: str) -> str:
        value = value.strip()
        if value:
            split_addr(value)
        return value

    def resolved_database_url(self) -> str:
        if self.database_url:
            password = self.database_password.get_secret_value() if self.database_password else ""
            if not password:
                return self.database_url
            from sqlalchemy import make_url  # (encodes every character the URL syntax uses)
            from sqlalchemy.exc import ArgumentError

            try:
                url = make_url(self.database_url)
            except ArgumentError:  # (a malformed URL: refused with its own clear line)
                return self.database_url
            if url.drivername.startswith("sqlite"):
                return self.database_url
            return url.set(password=password).render_as_string(hide_password=False)
        return f"sqlite:///{(self.data_dir / 'mafiabot.db').resolve()}"


def load_env(cls: type[S], **overrides: object) -> S:
    """Read a settings class from the environment; a bad value is a :class:`SettingsError` of
    one line naming each bad variable (never echoing a value: it may be a secret)."""
    prefix = str(cls.model_config.get("env_prefix") or "")
    try:
        return cls(**overrides)  # type: ignore[arg-type]
    except ValidationError as err:
        problems = []
        for e in err.errors():
            field, *where = e["loc"] or ("?",)
            item = f" (item {where[0]})" if where and isinstance(where[0], int) else ""
            problems.append(f"{prefix}{str(field).upper()}{item}: {e['msg']}")
        raise SettingsError("Invalid setting " + "; ".join(problems) + ".") from None
    except EnvParseError as err:  # a list or dict variable that is not JSON
        found = re.search(r'field "(\w+)"', str(err))
        field = found.group(1) if found else ""
        info = cls.model_fields.get(field)
        shape = typing.get_origin(info.annotation) if info is not None else None
        wanted = (
            "a JSON list such as [123,456]"
            if shape is list
            else "a JSON object"
            if shape is dict
            else "valid JSON"
        )
        raise SettingsError(f"Invalid setting {prefix}{field.upper()}: must be {wanted}.") from None


#: the model providers' variables, read by their SDKs from the environment only
PROVIDER_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")


def provider_env_from_dotenv(env_file: str | Path | None = None) -> list[str]:
    """Put the `PROVIDER_ENV` variables that ``.env`` sets (and the environment does not:
    it wins, as for every setting) into the environment, where the SDKs look; returns their
    names. The values are never logged: the log formatter blanks these keys wherever they
    would appear (`bot.ops.logs`)."""
    from dotenv import dotenv_values

    path = Path(env_file or str(Settings.model_config.get("env_file") or ".env"))
    if not path.is_file():
        return []
    try:
        values = dotenv_values(path, encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    taken = []
    for name in PROVIDER_ENV:
        value = values.get(name)
        if value and not os.environ.get(name):
            os.environ[name] = value
            taken.append(name)
    return taken


def load_settings(**overrides: object) -> Settings:
    """Read settings, turning validation errors into one readable line; the providers'
    variables in ``.env`` are put into the environment for their SDKs."""
    provider_env_from_dotenv()
    return load_env(Settings, **overrides)


@lru_cache(maxsize=1)
def settings() -> Settings:
    return load_settings()
