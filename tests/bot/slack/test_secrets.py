"""Slack tokens encrypted at rest (issue 21): an install's bot and refresh tokens are stored as
Fernet ciphertext under MAFIABOT_SECRET_KEY, tokens stored before are encrypted by the
migration (or at the first start with a key), a key is rotated by listing a new one first, and
a process without the key refuses to start with one line when encrypted tokens are stored."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from cryptography.fernet import Fernet
from pydantic import SecretStr

from bot.protection.crypto import PREFIX, SecretBox, SecretKeyError, check_rows
from bot.service.port import GameService
from bot.service.timers import make_scheduler
from bot.settings import Settings
from bot.slack.app import SlackRunner, SlackSetupError
from bot.store.db import make_engine
from bot.store.migrate import upgrade
from bot.store.models import SLACK_BOTS, SLACK_INSTALLATIONS
from tests.bot.slack.test_oauth import (
    CLIENT_ID,
    CLIENT_SECRET,
    SECRET,
    World,
    _game,
    _say,
    world,  # noqa: F401  (the fixture)
)

KEY1 = Fernet.generate_key().decode()
KEY2 = Fernet.generate_key().decode()
BOT = "xoxb-1111-2222-plaintextbottoken"
REFRESH = "xoxe-1-plaintextrefreshtoken"


@pytest.fixture
def secret_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("MAFIABOT_SECRET_KEY", KEY1)
    return KEY1


def _tokens(engine: sa.Engine) -> list[tuple[str | None, str | None]]:
    out = []
    with engine.connect() as conn:
        for table in (SLACK_BOTS, SLACK_INSTALLATIONS):
            for row in conn.execute(sa.select(table.c.bot_token, table.c.bot_refresh_token)):
                out.append((row[0], row[1]))
    return out


def _insert_plain(engine: sa.Engine) -> None:
    now = sa.func.current_timestamp()
    common = {
        "client_id": CLIENT_ID,
        "app_id": "A1",
        "team_id": "T1",
        "bot_token": BOT,
        "bot_id": "B1",
        "bot_user_id": "U1",
        "bot_refresh_token": REFRESH,
        "is_enterprise_install": False,
        "installed_at": now,
    }
    with engine.begin() as conn:
        conn.execute(sa.insert(SLACK_BOTS).values(**common))
        conn.execute(sa.insert(SLACK_INSTALLATIONS).values(user_id="U2", **common))


async def test_installed_tokens_are_ciphertext_in_the_database(
    secret_key: str,
    world: World,  # noqa: F811
) -> None:
    a, h = await world.workspace("acme")
    await world.install(a)
    issued = set(world.slack.tokens(a))
    rows = _tokens(world.service.engine)
    assert rows
    box = SecretBox([secret_key])
    for bot, refresh in rows:
        assert bot is not None and bot.startswith(PREFIX) and bot not in issued
        assert refresh is not None and refresh.startswith(PREFIX)
        assert box.open(bot) in issued
    # and the game runs on the decrypted token
    _game_id, users = await _game(h, 4)
    await _say(h, users[1], "Morning")
    await h.wait_stage(lambda: "Morning" in [t for _n, t in h.persona_lines()], what="line")
    assert {c.token for c in a.calls()} <= issued


def test_the_migration_encrypts_existing_tokens(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    upgrade(db_url, "0009")
    engine = make_engine(db_url)
    try:
        _insert_plain(engine)
        monkeypatch.setenv("MAFIABOT_SECRET_KEY", KEY1)
        upgrade(db_url)
        rows = _tokens(engine)
        assert len(rows) == 2
        box = SecretBox([KEY1])
        for bot, refresh in rows:
            assert bot is not None and bot.startswith(PREFIX) and BOT not in bot
            assert box.open(bot) == BOT and box.open(refresh) == REFRESH
    finally:
        engine.dispose()


def test_a_key_is_rotated_and_plain_rows_are_sealed_at_start(db_url: str) -> None:
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        _insert_plain(engine)
        assert check_rows(engine, SecretBox([KEY1])) == 2  # plain -> sealed under KEY1
        sealed = _tokens(engine)
        assert all(b and b.startswith(PREFIX) for b, _ in sealed)
        with pytest.raises(SecretKeyError):
            SecretBox([KEY2]).open(sealed[0][0])
        # rotation: the new key first, the old one after; every row moves to the new key
        assert check_rows(engine, SecretBox([KEY2, KEY1])) == 2
        only_new = SecretBox([KEY2])
        for bot, refresh in _tokens(engine):
            assert only_new.open(bot) == BOT and only_new.open(refresh) == REFRESH
    finally:
        engine.dispose()


async def test_without_the_key_the_runner_refuses_to_start(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MAFIABOT_SECRET_KEY", raising=False)
    upgrade(db_url)
    engine = make_engine(db_url)
    _insert_plain(engine)
    check_rows(engine, SecretBox([KEY1]))
    scheduler = make_scheduler()
    service = GameService(engine, scheduler)
    settings = Settings(
        _env_file=None,
        data_dir=tmp_path,
        slack_client_id=CLIENT_ID,
        slack_client_secret=CLIENT_SECRET,
        slack_signing_secret=SECRET,
    )
    try:
        with pytest.raises(SlackSetupError, match="MAFIABOT_SECRET_KEY is not set"):
            SlackRunner(settings, service)
        wrong = settings.model_copy(
            update={"secret_key": SecretStr(Fernet.generate_key().decode())}
        )
        with pytest.raises(SlackSetupError, match="a key MAFIABOT_SECRET_KEY does not list"):
            SlackRunner(wrong, service)
    finally:
        await service.close()
        engine.dispose()


async def test_without_a_key_setting_a_key_file_is_made_and_used(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """No MAFIABOT_SECRET_KEY: the first start makes a key in the data folder (owner-only,
    never logged) and encrypts the stored tokens under it; the next start reads them with it;
    without the file (tokens encrypted) the runner refuses to start with one line."""
    import logging
    import stat

    caplog.set_level(logging.DEBUG)
    monkeypatch.delenv("MAFIABOT_SECRET_KEY", raising=False)
    upgrade(db_url)
    engine = make_engine(db_url)
    _insert_plain(engine)
    scheduler = make_scheduler()
    service = GameService(engine, scheduler)
    data = tmp_path / "data"
    settings = Settings(
        _env_file=None,
        data_dir=data,
        slack_client_id=CLIENT_ID,
        slack_client_secret=CLIENT_SECRET,
        slack_signing_secret=SECRET,
    )
    try:
        first = SlackRunner(settings, service)
        await first.close()
        path = data / "secret.key"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        key = path.read_text().strip()
        assert key not in caplog.text
        box = SecretBox([key])
        for bot, refresh in _tokens(engine):
            assert bot is not None and bot.startswith(PREFIX)
            assert box.open(bot) == BOT and box.open(refresh) == REFRESH
        again = SlackRunner(settings, service)  # a restart: the same key, nothing changes
        await again.close()
        assert path.read_text().strip() == key
        path.unlink()
        with pytest.raises(SlackSetupError, match=r"data folder has no secret\.key"):
            SlackRunner(settings, service)
        assert not path.exists()  # (no new key is made over tokens it could not read)
    finally:
        await service.close()
        engine.dispose()


def test_a_start_that_dies_while_making_the_key_file_leaves_no_broken_one(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key file appears whole or not at all: a start that dies while writing it leaves
    nothing a later start would refuse ("does not hold a Fernet key"), and the next start makes
    a key as the first would have."""
    from bot.protection import crypto

    upgrade(db_url)
    engine = make_engine(db_url)
    data = tmp_path / "data"
    real = crypto.new_key

    def dies() -> str:
        raise KeyboardInterrupt  # (the process stopped half-way)

    try:
        monkeypatch.setattr(crypto, "new_key", dies)
        with pytest.raises(KeyboardInterrupt):
            crypto.key_file_box(data, engine)
        assert not (data / crypto.KEY_FILE).exists()
        monkeypatch.setattr(crypto, "new_key", real)
        box = crypto.key_file_box(data, engine)
        assert box is not None
        key = (data / crypto.KEY_FILE).read_text().strip()
        assert SecretBox([key]).open(box.seal("x")) == "x"
        assert [p.name for p in data.iterdir()] == [crypto.KEY_FILE]  # (no leftovers)
    finally:
        engine.dispose()
