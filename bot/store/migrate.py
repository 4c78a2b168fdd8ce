"""Run and inspect Alembic migrations from code (service start-up, CLI, tests).

The Alembic config is built in memory and points at the `migrations` package's own folder, so
this works from any working directory and from an installed wheel, without alembic.ini.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.pool import NullPool
from sqlmodel import SQLModel

import migrations
from bot.invocation import prog
from bot.store import models as _models  # noqa: F401  (fills SQLModel.metadata)
from bot.store.db import DatabaseUnusable, database_errors, make_engine, shown, sqlite_file


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


def prepare_for_writing(url: str) -> None:
    """For commands that write: create or migrate the database, then make sure it takes writes
    (a read-only file would otherwise fail at the first move of a game). Any failure is one
    :class:`DatabaseUnusable` line."""
    with database_errors(url):
        upgrade(url)
        engine = make_engine(url, poolclass=NullPool)
        try:
            with engine.connect() as conn, conn.begin() as tx:
                # writes nothing, yet needs write access (SQLite: not read-only; PostgreSQL:
                # the UPDATE privilege)
                conn.execute(
                    sa.text("UPDATE alembic_version SET version_num = version_num WHERE 1 = 0")
                )
                tx.rollback()
        finally:
            engine.dispose()


def require_current(url: str) -> None:
    """For commands that only read (export, report, consent status): the database must exist and
    be at the code's revision. Nothing is created or migrated (a read-only database works);
    an older one is refused with a line saying to run ``mafiabot db upgrade``."""
    with database_errors(url):
        path = sqlite_file(url)
        if path is not None and not path.exists():
            raise DatabaseUnusable(
                f"There is no database at {path}: nothing to read. Games played, "
                f"`{prog()} import-llmafia` or `{prog()} db upgrade` create it."
            )
        at, newest = current(url), head()
        if at == newest:
            return
        if at is None:
            raise DatabaseUnusable(
                f"The database {shown(url)} has no mafiabot tables: run `{prog()} db upgrade` "
                "(or point --db / MAFIABOT_DATABASE_URL at a mafiabot database)."
            )
        known = {
            r.revision for r in ScriptDirectory.from_config(alembic_config("")).walk_revisions()
        }
        if at not in known:
            raise DatabaseUnusable(
                f"The database {shown(url)} was set up by a newer mafiabot (revision {at}): "
                "upgrade mafiabot to read it."
            )
        raise DatabaseUnusable(
            f"The database {shown(url)} is at revision {at}, older than this mafiabot's "
            f"({newest}): run `{prog()} db upgrade` first (reading commands change nothing)."
        )


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


__all__ = [
    "alembic_config",
    "check",
    "current",
    "downgrade",
    "head",
    "migrations_dir",
    "prepare_for_writing",
    "require_current",
    "upgrade",
]
