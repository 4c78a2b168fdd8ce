"""Engine and session helpers shared by the service, the CLI and the migrations."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine
from sqlmodel import Session

DB_FILENAME = "mafiabot.db"

#: the databases the bot runs on, as a user would write their URLs
SUPPORTED = "SQLite (sqlite:///PATH) or PostgreSQL (postgresql://USER:PASSWORD@HOST/NAME)"
_DRIVERS = {"sqlite", "sqlite+pysqlite", "postgresql", "postgres", "postgresql+psycopg"}


class DatabaseUnusable(RuntimeError):
    """The database cannot be used as asked. The message is one line naming the problem and
    what to do; the CLI prints it and exits 2."""


def default_database_url(data_dir: Path) -> str:
    """The SQLite file used when no database URL is configured."""
    return f"sqlite:///{Path(data_dir) / DB_FILENAME}"


def normalize_url(url: str | URL) -> URL:
    """Plain `postgresql://` (or Heroku-style `postgres://`) URLs get the psycopg3 driver.

    SQLAlchemy would otherwise pick psycopg2, which we do not install. A URL that does not
    parse, or names a database the bot does not run on, is :class:`DatabaseUnusable`.
    """
    try:
        parsed = sa.make_url(url)
    except (sa.exc.ArgumentError, ValueError):
        # (the text is not echoed: it may hold a password)
        raise DatabaseUnusable(
            f"The database URL (--db or MAFIABOT_DATABASE_URL) is not a valid URL: use {SUPPORTED}."
        ) from None
    if parsed.drivername not in _DRIVERS:
        raise DatabaseUnusable(
            f"Unsupported database {parsed.drivername!r} in the database URL: use {SUPPORTED}."
        )
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def _is_sqlite_file(url: URL) -> bool:
    db = url.database
    return bool(db) and db != ":memory:" and not str(db).startswith("file:")


def sqlite_file(url: str | URL) -> Path | None:
    """The file of a SQLite URL (None for other databases, in-memory and ``file:`` URIs)."""
    parsed = normalize_url(url)
    if parsed.get_backend_name() != "sqlite" or not _is_sqlite_file(parsed):
        return None
    return Path(str(parsed.database)).expanduser()


def shown(url: str | URL) -> str:
    """How messages name a database: a SQLite file's path, else the URL without password."""
    path = sqlite_file(url)
    if path is not None:
        return str(path)
    return sa.make_url(url).render_as_string(hide_password=True)


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
        path = sqlite_file(parsed)
        if path is not None:
            if path.is_dir():
                raise DatabaseUnusable(
                    f"{path} is a folder, not a database file: give a file path, "
                    f"e.g. {path / DB_FILENAME}."
                )
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise DatabaseUnusable(
                    f"Can't create the folder for the database {path} ({e.strerror}): "
                    "choose a writable place with --db or MAFIABOT_DATABASE_URL."
                ) from None
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


def first_line(error: BaseException) -> str:
    """The driver's own first line of a database error (without SQLAlchemy's SQL and links)."""
    orig = getattr(error, "orig", None) or error
    text = next((line.strip() for line in str(orig).splitlines() if line.strip()), "")
    return text or type(orig).__name__


def explain(error: BaseException, url: str | URL) -> str:
    """One line for a database failure at ``url``: what is wrong and what to do."""
    if isinstance(error, DatabaseUnusable):
        return str(error)
    where = shown(url)
    text = first_line(error)
    low = text.lower()
    if normalize_url(url).get_backend_name() == "sqlite":
        if "file is not a database" in low:
            return (
                f"{where} is not a SQLite database, or it is damaged: give the path of a mafiabot "
                "database (--db or MAFIABOT_DATABASE_URL), or move the file away to start anew."
            )
        if "malformed" in low or "corrupt" in low:
            return (
                f"The database {where} is damaged ({text}): restore it from a backup, or move it "
                "away to start anew."
            )
        if "readonly" in low or "read-only" in low:
            return (
                f"The database {where} is read-only: make the file and its folder writable "
                "(export and report can read it as it is)."
            )
        if "unable to open" in low:
            return (
                f"Can't open the database file {where}: check that it and its folder exist and "
                "may be read and written."
            )
        if "locked" in low or "busy" in low:
            return f"The database {where} is locked by another program: try again when it is done."
        if "full" in low:
            return f"The disk holding the database {where} is full: free some space and retry."
        return f"Database error at {where}: {text}."
    if isinstance(error, sa.exc.OperationalError) and (
        "connect" in low or "password" in low or "does not exist" in low
    ):
        return (
            f"Can't connect to the PostgreSQL database {where}: {text}. Check that the server "
            "runs and the host, port, user, password and database name in the URL "
            "(--db or MAFIABOT_DATABASE_URL)."
        )
    return f"Database error at {where}: {text}."


@contextmanager
def database_errors(url: str | URL) -> Iterator[None]:
    """Turn a failure of the database at ``url`` into :class:`DatabaseUnusable` (one line)."""
    from alembic.util import CommandError

    try:
        yield
    except DatabaseUnusable:
        raise
    except CommandError as e:  # a revision this code does not know: a newer mafiabot's
        found = re.search(r"identified by '([^']+)'", str(e))
        revision = found.group(1) if found else "unknown"
        raise DatabaseUnusable(
            f"The database {shown(url)} was set up by a newer mafiabot (revision {revision}): "
            "upgrade mafiabot to use it."
        ) from None
    except sa.exc.SQLAlchemyError as e:
        raise DatabaseUnusable(explain(e, url)) from None
