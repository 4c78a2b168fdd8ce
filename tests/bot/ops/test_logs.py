"""MAFIABOT_LOG_FORMAT=json: one JSON object a line; secrets never in a line."""

from __future__ import annotations

import io
import json
import logging

import pytest

from bot.ops.logs import JsonFormatter, Redacting, secrets_of
from bot.settings import Settings, SettingsError, load_settings

TOKEN = "MTIzNDU2Nzg5.discord-bot-token"


def logger_to(stream: io.StringIO, formatter: logging.Formatter) -> logging.Logger:
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    logger = logging.getLogger(f"test.ops.{id(stream)}")
    logger.propagate = False
    logger.handlers = [handler]
    logger.setLevel(logging.INFO)
    return logger


def test_json_lines_carry_level_logger_message_extras_and_the_exception() -> None:
    out = io.StringIO()
    log = logger_to(out, JsonFormatter())
    log.info("game %s started", "g123", extra={"game_id": "g123", "players": 7})
    try:
        raise ValueError("boom\nsecond line")
    except ValueError:
        log.exception("it failed")
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["level"] == "INFO" and first["message"] == "game g123 started"
    assert first["game_id"] == "g123" and first["players"] == 7
    assert first["time"].endswith("+00:00")
    assert second["level"] == "ERROR" and "ValueError: boom" in second["exc"]


def test_secrets_are_blanked_out_in_both_formats(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-key")
    settings = Settings(
        _env_file=None,
        discord_token=TOKEN,
        database_url="postgresql://bot:pg-password-1@db:5432/mafiabot",
    )
    secrets = secrets_of(settings)
    assert {TOKEN, "sk-test-openai-key", "pg-password-1"} <= set(secrets)
    for inner in (JsonFormatter(), logging.Formatter("%(message)s")):
        out = io.StringIO()
        log = logger_to(out, Redacting(inner, secrets))
        log.warning("token %s and key %s", TOKEN, "sk-test-openai-key")
        try:
            raise RuntimeError("connect to postgresql://bot:pg-password-1@db failed")
        except RuntimeError:
            log.exception("database")
        text = out.getvalue()
        assert TOKEN not in text and "sk-test-openai-key" not in text
        assert "pg-password-1" not in text and "[secret]" in text


def test_a_bad_log_format_or_http_address_is_one_clear_line() -> None:
    with pytest.raises(SettingsError, match="MAFIABOT_LOG_FORMAT"):
        load_settings(_env_file=None, log_format="yaml")
    with pytest.raises(SettingsError, match=r"MAFIABOT_HTTP_ADDR: .*HOST:PORT"):
        load_settings(_env_file=None, http_addr="localhost")
    assert load_settings(_env_file=None, http_addr="").http_addr == ""
