"""Database fixtures shared by every test that touches the store.

`db_url` runs a test once on a fresh SQLite file and once on a fresh PostgreSQL database (a new
database per test on the server named by MAFIABOT_TEST_POSTGRES_URL; start one with
`.ci/pg-start`). Without that variable the PostgreSQL run is skipped, or fails when
MAFIABOT_REQUIRE_POSTGRES=1 so CI cannot silently lose its PostgreSQL coverage.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

pytest_plugins = [
    "tests.fakes.fixtures",
    "tests.fakes.discord_fixtures",
    "tests.fakes.slack_fixtures",
]

PG_ENV = "MAFIABOT_TEST_POSTGRES_URL"
REQUIRE_PG_ENV = "MAFIABOT_REQUIRE_POSTGRES"


def _postgres_database(server_url: str) -> Iterator[str]:
    import psycopg
    from sqlalchemy import make_url

    from bot.store.db import normalize_url

    server = make_url(server_url)
    name = f"mafiabot_test_{uuid.uuid4().hex[:12]}"
    admin = server.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield normalize_url(server.set(database=name)).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """URL of an empty database, SQLite or PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'db' / 'mafiabot.db'}"
        return
    yield from _postgres_database(_postgres_server())


def _postgres_server() -> str:
    server_url = os.environ.get(PG_ENV)
    if not server_url:
        if os.environ.get(REQUIRE_PG_ENV) == "1":
            pytest.fail(f"{REQUIRE_PG_ENV}=1 but {PG_ENV} is not set (start one: .ci/pg-start)")
        pytest.skip(f"PostgreSQL tests need {PG_ENV} (e.g. export {PG_ENV}=$(.ci/pg-start))")
    return server_url


@pytest.fixture
def pg_url() -> Iterator[str]:
    """URL of an empty PostgreSQL database (for what only PostgreSQL can do: several
    processes on one database)."""
    yield from _postgres_database(_postgres_server())


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """An engine on a database migrated to the newest revision."""
    from bot.store.db import make_engine
    from bot.store.migrate import upgrade

    upgrade(db_url)
    eng = make_engine(db_url)
    try:
        yield eng
    finally:
        eng.dispose()


# --- the real-model tier (tests/realmodel, `make test-model`) ----------------------------------

REALMODEL_DIR = Path(__file__).parent / "realmodel"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--realmodel",
        action="store_true",
        help="also run tests/realmodel: whole games on a real local model (make test-model)",
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """tests/realmodel plays whole games on a real model (minutes each, and it needs the
    `realmodel` dependency group): `make test` leaves it out, `make test-model` runs it."""
    if collection_path == REALMODEL_DIR and not config.getoption("--realmodel"):
        return True
    return None
