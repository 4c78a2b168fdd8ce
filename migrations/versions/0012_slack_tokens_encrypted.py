"""Slack tokens encrypted at rest: wider token columns, existing tokens encrypted

Revision ID: 0012
Revises: 0011

The bot and refresh tokens of "Add to Slack" installs are stored Fernet-encrypted (as
``fernet:<token>``) under the key(s) in ``MAFIABOT_SECRET_KEY`` (comma-separated, newest
first); a ciphertext is longer than the 200 characters slack-sdk's tables allow, so the token
columns are widened to 1,000. When the key is set while migrating, every stored token is
encrypted here; otherwise the bot encrypts them at its first start with a key. Downgrading
decrypts them again (and needs the key when any is encrypted).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import op

if TYPE_CHECKING:
    from cryptography.fernet import MultiFernet

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PREFIX = "fernet:"
TOKENS = {
    "slack_bots": ("bot_token", "bot_refresh_token"),
    "slack_installations": ("bot_token", "bot_refresh_token", "user_token", "user_refresh_token"),
}


def _fernet() -> MultiFernet | None:
    keys = [k.strip() for k in os.environ.get("MAFIABOT_SECRET_KEY", "").split(",") if k.strip()]
    if not keys:
        return None
    from cryptography.fernet import Fernet, MultiFernet

    return MultiFernet([Fernet(k.encode()) for k in keys])


def _rewrite(change: Callable[[str], str]) -> None:
    conn = op.get_bind()
    for name, columns in TOKENS.items():
        table = sa.table(name, sa.column("id"), *(sa.column(c) for c in columns))
        for row in conn.execute(sa.select(table)).mappings().all():
            new = {c: change(row[c]) for c in columns if row[c]}
            new = {c: v for c, v in new.items() if v != row[c]}
            if new:
                conn.execute(sa.update(table).where(table.c.id == row["id"]).values(**new))


def _resize(length: int, before: int) -> None:
    for name, columns in TOKENS.items():
        with op.batch_alter_table(name) as batch:
            for c in columns:
                batch.alter_column(
                    c,
                    existing_type=sa.String(length=before),
                    type_=sa.String(length=length),
                    existing_nullable=True,
                )


def upgrade() -> None:
    _resize(1000, 200)
    fernet = _fernet()
    if fernet is None:
        return

    def seal(value: str) -> str:
        if value.startswith(PREFIX):
            return value
        return PREFIX + fernet.encrypt(value.encode()).decode()

    _rewrite(seal)


def downgrade() -> None:
    fernet = _fernet()

    def unseal(value: str) -> str:
        if not value.startswith(PREFIX):
            return value
        if fernet is None:
            raise RuntimeError("MAFIABOT_SECRET_KEY is needed to decrypt the stored Slack tokens")
        return str(fernet.decrypt(value.removeprefix(PREFIX).encode()).decode())

    _rewrite(unseal)
    _resize(200, 1000)
