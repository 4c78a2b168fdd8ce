"""Engine and session helpers shared by the service, the CLI and the migrations."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine
from sqlmodel import Session

DB_FILENAME = "mafiabot.db"


def default_database_url(data_dir: Path) -> str:
    """The SQLite file used when no database URL is configured."""
    return f"sqlite:///{Path(data_dir) / DB_FILENAME}"


def normalize_url(url: str | URL) -> URL:
    """Plain `postgresql://` (or Heroku-style `postgres://`) URLs get the psycopg3 driver.

    SQLAlchemy would otherwise pick psycopg2, which we do not install.
    """
    parsed = sa.make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def _is_sqlite_file(url: URL) -> bool:
    db = url.database
    return bool(db) and db != ":memory:" and not str(db).startswith("file:")


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # SQLite ignores foreign keys (and so ON DELETE CASCADE) unless asked on every connection.
    # WAL lets the web/chat adapters read while the game loop writes; NORMAL is durable enough
    # in WAL mode and much faster than FULL.
    cur = dbapi_conn.cursor()
    try:
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
    finally:
        cur.close()


def make_engine(url: str | URL, **kwargs: Any) -> Engine:
    """Create an engine for SQLite or PostgreSQL with the settings the bot relies on."""
    parsed = normalize_url(url)
    if parsed.get_backend_name() == "sqlite":
        if _is_sqlite_file(parsed):
            Path(str(parsed.database)).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(parsed, **kwargs)
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    kwargs.setdefault("pool_pre_ping", True)  # the bot idles for hours between games
    return sa.create_engine(parsed, **kwargs)


@contextmanager
def session_scope(engine: Engine) -> Iterator[Session]:
    """One unit of work: commit on success, roll back on any exception.

    expire_on_commit is off so rows returned out of the scope stay readable (the service passes
    them to adapters after the session has closed).
    """
    session = Session(engine, expire_on_commit=False)
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()
