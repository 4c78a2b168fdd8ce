"""Logging for every command: plain lines, or one JSON object a line
(``MAFIABOT_LOG_FORMAT=json``) for log collectors.

Secrets never reach a log: besides never being logged on purpose (they are ``SecretStr``),
every formatted line has the configured tokens, the API keys the SDKs read and the
database password replaced by ``[secret]``, exception text included. Tokens no setting
knows are blanked by their shape (`scrub_tokens`): the token part of a Discord webhook or
interaction URL (discord.py logs those URLs at DEBUG), Slack tokens, and JSON ``"token"``
fields. `guard_library_loggers` puts the same scrubbing on the libraries' own loggers, so
it holds at every level also where our formatter is not installed (embedded).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import IO

import sqlalchemy as sa
from pydantic import SecretStr

from bot.settings import Settings

#: libraries whose INFO lines say nothing an operator acts on (faiss's loader reports each CPU
#: variant it tries, "Could not load library with AVX512 support ... ModuleNotFoundError",
#: which reads like an error and is not one)
QUIET = ("apscheduler", "httpx", "sqlalchemy", "alembic", "faiss")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: provider SDK variables that hold keys (read by the SDKs, never by us)
SECRET_ENV = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
REDACTED = "[secret]"
#: secrets recognised by their shape: (pattern, replacement)
TOKEN_SHAPES = (
    # a webhook's or an interaction's token in a Discord URL (/webhooks/<id>/<token>: a
    # webhook, an interaction's follow-ups; /interactions/<id>/<token>/callback: its answer)
    (re.compile(r"(/(?:webhooks|interactions)/\d+/)[A-Za-z0-9_.\-]+"), r"\1" + REDACTED),
    # Slack tokens (bot, user, app-level, refresh)
    (re.compile(r"\b(?:xox[a-z]|xapp|xoxe(?:\.xox[a-z])?)-[A-Za-z0-9-]+"), REDACTED),
    # a "token" field of a JSON or Python dict
    (
        re.compile(r"""(['"](?:access_|refresh_|bot_)?token['"]\s*:\s*['"])[^'"]+"""),
        r"\1" + REDACTED,
    ),
)
#: libraries' loggers whose records may carry such tokens (`guard_library_loggers`)
LIBRARY_LOGGERS = (
    "discord.http",
    "discord.webhook.async_",
    "discord.webhook.sync",
    "discord.gateway",
    "discord.client",
    "slack_sdk.web.async_base_client",
    "slack_sdk.web.base_client",
    "slack_sdk.web.async_slack_response",
    "slack_sdk.web.slack_response",
    "slack_sdk.oauth.installation_store.sqlalchemy",
    "bot.slack.oauth",
)
#: LogRecord attributes that are not ``extra=`` fields
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, the exception if
    any, and any ``extra=`` fields of the call."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exc"] = record.exc_text
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value if isinstance(value, str | int | float | bool) else repr(value)
        return json.dumps(entry, ensure_ascii=False)


class Redacting(logging.Formatter):
    """Wraps a formatter and blanks out every secret in what it produced."""

    def __init__(self, inner: logging.Formatter, secrets: Iterable[str]) -> None:
        super().__init__()
        self.inner = inner
        found: set[str] = set()
        for secret in secrets:
            if len(secret) >= 6:  # a very short value would blank out ordinary words
                found.add(secret)
                found.add(json.dumps(secret)[1:-1])  # as it appears inside a JSON string
        self.secrets = sorted(found, key=len, reverse=True)

    def format(self, record: logging.LogRecord) -> str:
        text = self.inner.format(record)
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return scrub_tokens(text)


def scrub_tokens(text: str) -> str:
    """``text`` with every token recognised by its shape (`TOKEN_SHAPES`) blanked out."""
    for pattern, replacement in TOKEN_SHAPES:
        text = pattern.sub(replacement, text)
    return text


class TokenScrubber(logging.Filter):
    """Rewrites a record's message with `scrub_tokens` before any handler sees it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        clean = scrub_tokens(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


_SCRUBBER = TokenScrubber()


def guard_library_loggers() -> None:
    """Scrub tokens from the records of the libraries' loggers (`LIBRARY_LOGGERS`), whatever
    handler or level the process uses. (A filter on a logger applies to its own records only,
    so each logger that logs URLs is named.) Safe to call more than once."""
    for name in LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        if _SCRUBBER not in logger.filters:
            logger.addFilter(_SCRUBBER)


def _encoded_password(url: sa.URL) -> str:
    """The password as it is written inside the URL (percent-encoded where needed)."""
    marker = "MAFIABOT-PASSWORD-MARKER"
    rendered = url.render_as_string(hide_password=False)
    marked = url.set(password=marker).render_as_string(hide_password=False)
    start = marked.index(marker)
    return rendered[start : start + len(rendered) - len(marked) + len(marker)]


def secrets_of(settings: Settings) -> list[str]:
    """Every secret value the process knows of."""
    found = [
        value.get_secret_value()
        for value in vars(settings).values()
        if isinstance(value, SecretStr) and value.get_secret_value()
    ]
    found += [os.environ[name] for name in SECRET_ENV if os.environ.get(name)]
    if settings.database_url:
        try:
            url = sa.make_url(settings.resolved_database_url())
        except Exception:
            url = None
        if url is not None and url.password:
            found += [str(url.password), _encoded_password(url)]
    return found


def configure_logging(settings: Settings, stream: IO[str] | None = None) -> logging.Handler | None:
    """Route the root logger to ``stream`` (stderr) in the configured format. Like
    `logging.basicConfig`, it leaves a root logger that already has handlers alone (a test
    runner's), apart from quietening the chatty libraries."""
    for noisy in QUIET:
        logging.getLogger(noisy).setLevel(logging.WARNING)
    guard_library_loggers()
    root = logging.getLogger()
    if root.handlers:
        return None
    inner: logging.Formatter = (
        JsonFormatter() if settings.log_format == "json" else logging.Formatter(TEXT_FORMAT)
    )
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(Redacting(inner, secrets_of(settings)))
    root.addHandler(handler)
    root.setLevel(settings.log_level)
    return handler
