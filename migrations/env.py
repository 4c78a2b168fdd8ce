"""Alembic environment: runs migrations against SQLite or PostgreSQL.

The database URL is looked up in this order: `config.attributes["sqlalchemy.url"]` (set by
bot.store.migrate, kept out of the ini parser so `%` in passwords is harmless), the
MAFIABOT_DATABASE_URL environment variable, then `sqlalchemy.url` in alembic.ini. A live
connection in `config.attributes["connection"]` takes precedence over all of them.
"""

from __future__ import annotations

import os
from logging.config import fileConfig
from typing import TYPE_CHECKING, Any, Literal

import sqlalchemy as sa
from alembic import context
from sqlmodel import SQLModel

import bot.store.models  # noqa: F401  (registers every table on SQLModel.metadata)
from bot.store.db import make_engine
from bot.store.models import UTCDateTime

if TYPE_CHECKING:
    from alembic.autogenerate.api import AutogenContext

config = context.config

if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = SQLModel.metadata


def _database_url() -> str:
    url = config.attributes.get("sqlalchemy.url") or os.environ.get("MAFIABOT_DATABASE_URL")
    url = url or config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError(
            "no database URL: set MAFIABOT_DATABASE_URL or use bot.store.migrate.upgrade(url)"
        )
    return str(url)


def _render_item(type_: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    # UTCDateTime is plain naive DATETIME in the database; render it as such so revisions do
    # not import application code that may change later.
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime()"
    return False


def _configure(connection: sa.Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        render_item=_render_item,
    )


def _run_with(connection: sa.Connection) -> None:
    if connection.dialect.name == "sqlite":
        # Batch migrations recreate tables; with foreign keys on, dropping the old parent table
        # would cascade-delete child rows. The PRAGMA is a no-op inside a transaction, so end
        # the autobegun one before and after.
        connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
        connection.commit()
    _configure(connection)
    with context.begin_transaction():
        context.run_migrations()
    if connection.dialect.name == "sqlite":
        connection.commit()
        connection.exec_driver_sql("PRAGMA foreign_keys=ON")
        connection.commit()


def run_migrations_offline() -> None:
    """Emit SQL to stdout (`alembic upgrade head --sql`)."""
    url = sa.make_url(_database_url())
    context.configure(
        url=url,
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_as_batch=url.get_backend_name() == "sqlite",
        compare_type=True,
        render_item=_render_item,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    given = config.attributes.get("connection")
    if given is not None:
        _run_with(given)
        return
    engine = make_engine(_database_url(), poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as connection:
            _run_with(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
