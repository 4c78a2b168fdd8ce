"""Run and inspect Alembic migrations from code (service start-up, CLI, tests).

The Alembic config is built in memory and points at the `migrations` package's own folder, so
this works from any working directory and from an installed wheel, without alembic.ini.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.pool import NullPool
from sqlmodel import SQLModel

import migrations
from bot.store import models as _models  # noqa: F401  (fills SQLModel.metadata)
from bot.store.db import make_engine


def migrations_dir() -> Path:
    return Path(migrations.__file__).resolve().parent


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    # Passed as an attribute, not a main option: the ini parser would choke on `%` in passwords.
    cfg.attributes["sqlalchemy.url"] = url
    cfg.attributes["configure_logger"] = False
    return cfg


def upgrade(url: str, revision: str = "head") -> None:
    """Bring the database at `url` up to `revision` (creating it for SQLite files)."""
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    command.downgrade(alembic_config(url), revision)


def head() -> str | None:
    """The newest revision shipped with the code."""
    return ScriptDirectory.from_config(alembic_config("")).get_current_head()


def current(url: str) -> str | None:
    """The revision the database is at, or None if it was never migrated."""
    engine = make_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def check(url: str) -> list[Any]:
    """Differences between the live schema and the models, as Alembic autogenerate sees them.

    Empty means the migrations produce exactly what the models describe.
    """
    engine = make_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": True})
            return list(compare_metadata(ctx, SQLModel.metadata))
    finally:
        engine.dispose()


__all__ = ["alembic_config", "check", "current", "downgrade", "head", "migrations_dir", "upgrade"]
