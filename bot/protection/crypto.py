"""Secrets at rest: the Slack bot and refresh tokens of "Add to Slack" installs.

Tokens are encrypted with Fernet (`cryptography`: AES-128-CBC with an HMAC-SHA256, a well-kept
library) under the key(s) in ``MAFIABOT_SECRET_KEY``: one key, or several separated by
commas, the newest first. New values are encrypted with the first key; a value encrypted
under any listed key can be read (`MultiFernet`), so a key is rotated by putting a new key in
front, starting once (which re-encrypts every stored token under the new key: `seal_rows`),
and then removing the old key. An encrypted value is stored as ``fernet:<token>``, so a value
written before encryption was turned on (plain text) is recognised, still read, and
encrypted at the next start with a key.

Without ``MAFIABOT_SECRET_KEY`` the key is kept in the data folder (`KEY_FILE`, made at the
first start with a fresh key, readable by its owner only: `key_file_box`), so tokens are
encrypted by default; only when that file cannot be made are tokens stored as Slack sent
them (with a warning at start). If encrypted tokens are stored and no key (or no right key)
is found, the process refuses to start with one line saying so (`check_rows`).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from bot.store.models import SLACK_BOTS, SLACK_INSTALLATIONS

log = logging.getLogger(__name__)

PREFIX = "fernet:"
#: the token columns encrypted at rest, per table
COLUMNS: dict[sa.Table, tuple[str, ...]] = {
    SLACK_BOTS: ("bot_token", "bot_refresh_token"),
    SLACK_INSTALLATIONS: ("bot_token", "bot_refresh_token", "user_token", "user_refresh_token"),
}


class SecretKeyError(RuntimeError):
    """The secret key is missing, malformed, or not the one the stored tokens were sealed with."""


def sealed(value: str | None) -> bool:
    return value is not None and value.startswith(PREFIX)


def new_key() -> str:
    key: bytes = Fernet.generate_key()
    return key.decode()


class SecretBox:
    """Encrypts and decrypts token strings under one or more Fernet keys (newest first)."""

    def __init__(self, keys: Sequence[str]) -> None:
        if not keys:
            raise SecretKeyError("MAFIABOT_SECRET_KEY is empty.")
        try:
            self._fernet = MultiFernet([Fernet(k.strip().encode()) for k in keys])
        except (ValueError, TypeError):
            raise SecretKeyError(
                "MAFIABOT_SECRET_KEY must be one or more Fernet keys (32 url-safe base64 "
                "bytes each), separated by commas (see docs/limits-and-secrets.md)."
            ) from None

    @classmethod
    def from_setting(cls, value: str | None) -> SecretBox | None:
        keys = [k for k in (value or "").split(",") if k.strip()]
        return cls(keys) if keys else None

    def seal(self, value: str | None) -> str | None:
        if value is None or sealed(value):
            return value
        token: bytes = self._fernet.encrypt(value.encode())
        return PREFIX + token.decode()

    def open(self, value: str | None) -> str | None:
        if not sealed(value):
            return value
        assert value is not None
        try:
            plain: bytes = self._fernet.decrypt(value.removeprefix(PREFIX).encode())
            return plain.decode()
        except InvalidToken:
            raise SecretKeyError(
                "A stored Slack token was encrypted under a key MAFIABOT_SECRET_KEY does not "
                "list: put that key back (after the new one) and start again."
            ) from None

    def rotate(self, value: str | None) -> str | None:
        """``value`` encrypted under the newest key (plain text is encrypted)."""
        if value is None:
            return None
        if not sealed(value):
            return self.seal(value)
        try:
            token: bytes = self._fernet.rotate(value.removeprefix(PREFIX).encode())
            return PREFIX + token.decode()
        except InvalidToken:
            raise SecretKeyError(
                "A stored Slack token was encrypted under a key MAFIABOT_SECRET_KEY does not "
                "list: put that key back (after the new one) and start again."
            ) from None


def open_value(box: SecretBox | None, value: str | None) -> str | None:
    """``value`` as Slack issued it; a sealed one with no box is a `SecretKeyError`."""
    if box is None:
        if sealed(value):
            raise SecretKeyError(_MISSING)
        return value
    return box.open(value)


_MISSING = (
    "Stored Slack tokens are encrypted but MAFIABOT_SECRET_KEY is not set and the data folder "
    "has no secret.key: set MAFIABOT_SECRET_KEY to the key (or keys) they were encrypted "
    "with, or put the key file back."
)

#: where the key is kept when MAFIABOT_SECRET_KEY is not set (in the data folder)
KEY_FILE = "secret.key"


def key_file_box(data_dir: Path, engine: sa.Engine) -> SecretBox | None:
    """The key kept in ``data_dir`` / `KEY_FILE` (for a bot without MAFIABOT_SECRET_KEY).

    Made at the first start, with a fresh key, readable by its owner only, when no encrypted
    token is stored yet (with some stored, a new key could not read them: `check_rows` then
    refuses to start, saying which key is missing). None when the file can't be made (a
    read-only folder): tokens are then stored in plain text, with a warning. The key itself is
    never logged."""
    path = Path(data_dir) / KEY_FILE
    if not path.exists():
        with engine.connect() as conn:
            if count_sealed(conn):
                return None
        try:
            made = _make_key_file(path)
        except OSError as exc:
            log.warning("could not make a secret key file in %s (%s)", path.parent, exc.strerror)
            return None
        if made:
            log.info(
                "made a secret key for the stored Slack tokens: %s (keep it, and back it up "
                "apart from the database; see docs/limits-and-secrets.md)",
                path,
            )
    try:
        text = path.read_text().strip()
    except OSError as exc:
        raise SecretKeyError(f"Can't read the secret key file {path} ({exc.strerror}).") from None
    try:
        return SecretBox([text])
    except SecretKeyError:
        raise SecretKeyError(
            f"The secret key file {path} does not hold a Fernet key: put the right one back, "
            "or set MAFIABOT_SECRET_KEY (see docs/limits-and-secrets.md)."
        ) from None


def _make_key_file(path: Path) -> bool:
    """Write a fresh key to ``path`` whole or not at all: written and synced under a temporary
    name beside it, then linked into place (which fails if the file is there). False when
    another process made it first (theirs is used)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(new_key() + "\n")
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False  # another process made it at the same moment: use theirs
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def count_sealed(conn: sa.Connection) -> int:
    total = 0
    for table, columns in COLUMNS.items():
        cond = sa.or_(*(table.c[c].like(PREFIX + "%") for c in columns))
        total += conn.execute(
            sa.select(sa.func.count()).select_from(table).where(cond)
        ).scalar_one()
    return total


def seal_rows(conn: sa.Connection, box: SecretBox) -> int:
    """Encrypt every plain-text token under the newest key and re-encrypt every sealed one
    under it (rotation), in the transaction of ``conn``; returns how many rows changed."""
    changed = 0
    for table, columns in COLUMNS.items():
        rows = conn.execute(sa.select(table.c.id, *(table.c[c] for c in columns))).all()
        for row in rows:
            values = {c: getattr(row, c) for c in columns}
            new = {c: box.rotate(v) for c, v in values.items()}
            if any(new[c] != values[c] for c in columns):
                conn.execute(sa.update(table).where(table.c.id == row.id).values(**new))
                changed += 1
    return changed


def check_rows(engine: sa.Engine, box: SecretBox | None) -> int:
    """At start, before any token is read: with a key, encrypt (or re-encrypt under the
    newest key) every stored token; without one, refuse (`SecretKeyError`, one line) when
    encrypted tokens are stored, and warn once when plain ones are."""
    with engine.begin() as conn:
        if box is not None:
            changed = seal_rows(conn, box)
            if changed:
                log.info("encrypted %d stored Slack installation(s) under the newest key", changed)
            return changed
        if count_sealed(conn):
            raise SecretKeyError(_MISSING)
        plain = sum(
            conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one() for t in COLUMNS
        )
    if plain:
        log.warning(
            "MAFIABOT_SECRET_KEY is not set and no key file could be made: Slack tokens are "
            "stored unencrypted; set it to encrypt them (see docs/limits-and-secrets.md)"
        )
    return 0
