"""compose.yaml as Compose reads it (issue 22, item 9): a database password with URL characters
reaches the bot intact and never in a log line; the data lands in the volume's root; the health
check waits for the real server; older Compose versions can read the file."""

from __future__ import annotations

import io
import logging
import re
from pathlib import Path

import pytest
import yaml
from sqlalchemy import make_url

from bot.ops.logs import configure_logging
from bot.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "p/w+x@y=z:%?#&"


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ``${VAR:-default}`` and ``${VAR}``."""
    return re.sub(
        r"\$\{(\w+)(?::-([^}]*))?\}", lambda m: env.get(m.group(1)) or (m.group(2) or ""), value
    )


def dotenv(path: Path) -> dict[str, str]:
    pairs = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            pairs[key.strip()] = value.split(" #")[0].strip()
    return pairs


@pytest.fixture
def bot_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    """The bot container's environment after `cp .env.example .env` and a password of one's
    own: .env's variables, then compose's `environment:` over them (it wins)."""
    bot = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]["bot"]
    env = dotenv(ROOT / ".env.example")
    project = {"POSTGRES_PASSWORD": PASSWORD}
    env.update({k: interpolate(str(v), project) for k, v in bot["environment"].items()})
    for key in [k for k in list(__import__("os").environ) if k.startswith("MAFIABOT_")]:
        monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)  # (no .env of the checkout)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def test_a_password_with_url_characters_reaches_the_bot_intact(bot_env: dict[str, str]) -> None:
    url = make_url(Settings().resolved_database_url())
    assert (url.host, url.port, url.username, url.database) == ("db", 5432, "mafiabot", "mafiabot")
    assert url.password == PASSWORD


def test_the_password_is_never_logged(bot_env: dict[str, str]) -> None:
    settings = Settings()
    out = io.StringIO()
    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers = []
    try:
        configure_logging(settings, out)
        logging.getLogger("t").warning("connecting to %s", settings.resolved_database_url())
        logging.getLogger("t").warning("password %s", PASSWORD)
    finally:
        for handler in root.handlers:
            root.removeHandler(handler)
        root.handlers = saved
    assert "p/w" not in out.getvalue() and "p%2Fw" not in out.getvalue(), out.getvalue()


def test_the_data_goes_to_the_volume_root(bot_env: dict[str, str]) -> None:
    assert Settings().data_dir == Path("/data")


def test_compose_waits_for_the_real_server_and_older_compose_can_read_it() -> None:
    services = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    assert "-h 127.0.0.1" in str(services["db"]["healthcheck"]["test"])
    files = services["bot"]["env_file"]
    assert all(isinstance(f, str) for f in ([files] if isinstance(files, str) else files))
    assert "pg_isready" in str(services["db"]["healthcheck"]["test"])
