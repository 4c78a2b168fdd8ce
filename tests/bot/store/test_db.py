"""Engine/session helpers: URL handling, SQLite pragmas, transaction boundaries."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import select

from bot.store.db import default_database_url, make_engine, normalize_url, session_scope
from bot.store.models import Server


def test_default_database_url_points_into_data_dir(tmp_path: Path) -> None:
    assert default_database_url(tmp_path) == f"sqlite:///{tmp_path}/mafiabot.db"


@pytest.mark.parametrize(
    ("given", "driver"),
    [
        ("postgresql://u:p@h:5432/db", "postgresql+psycopg"),
        ("postgres://u:p@h/db", "postgresql+psycopg"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg"),
        ("sqlite:///x.db", "sqlite"),
    ],
)
def test_normalize_url_selects_psycopg3(given: str, driver: str) -> None:
    url = normalize_url(given)
    assert url.drivername == driver
    assert url.database in ("db", "x.db")


def test_postgres_engine_uses_psycopg3_without_connecting() -> None:
    eng = make_engine("postgresql://nobody@127.0.0.1:1/none")
    assert eng.dialect.driver == "psycopg"
    eng.dispose()


def test_sqlite_file_gets_parent_dir_and_pragmas(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "mafiabot.db"
    eng = make_engine(f"sqlite:///{path}")
    try:
        with eng.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
        assert path.exists()
    finally:
        eng.dispose()


def _server_names(engine: Engine) -> list[str | None]:
    with session_scope(engine) as s:
        return [row.name for row in s.exec(select(Server).order_by(Server.name))]


def test_session_scope_commits_and_rolls_back(engine: Engine) -> None:
    with session_scope(engine) as s:
        s.add(Server(platform="local", external_id="a", name="kept"))

    with pytest.raises(RuntimeError), session_scope(engine) as s:
        s.add(Server(platform="local", external_id="b", name="dropped"))
        s.flush()
        raise RuntimeError("boom")

    assert _server_names(engine) == ["kept"]


def test_session_scope_rows_stay_readable_after_close(engine: Engine) -> None:
    with session_scope(engine) as s:
        server = Server(platform="discord", external_id="42", name="guild")
        s.add(server)
    assert server.id is not None
    assert server.name == "guild"


def test_integrity_error_propagates_and_rolls_back(engine: Engine) -> None:
    with session_scope(engine) as s:
        s.add(Server(platform="slack", external_id="T1"))
    with pytest.raises(sa.exc.IntegrityError), session_scope(engine) as s:
        s.add(Server(platform="slack", external_id="T2", name="fine"))
        s.add(Server(platform="slack", external_id="T1"))
    assert _server_names(engine) == [None]
