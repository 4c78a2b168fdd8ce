"""Migrations and models must describe the same schema, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlmodel import SQLModel

from bot.store import migrate
from bot.store.db import make_engine

REPO = Path(__file__).resolve().parents[3]


def test_fresh_upgrade_matches_models(db_url: str) -> None:
    assert migrate.current(db_url) is None
    migrate.upgrade(db_url)
    assert migrate.current(db_url) == migrate.head()
    assert migrate.check(db_url) == []


def test_comparison_detects_model_drift(db_url: str) -> None:
    """Guards the test above: the same comparison must notice a column the DB lacks."""
    migrate.upgrade(db_url)
    altered = sa.MetaData(naming_convention=SQLModel.metadata.naming_convention)
    for table in SQLModel.metadata.sorted_tables:
        table.to_metadata(altered)
    altered.tables["games"].append_column(sa.Column("mood", sa.String(), nullable=True))
    altered.tables["seats"].c["role"].type = sa.Integer()

    eng = make_engine(db_url)
    try:
        with eng.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": True})
            diffs = compare_metadata(ctx, altered)
    finally:
        eng.dispose()
    flat = [d for group in diffs for d in (group if isinstance(group, list) else [group])]
    assert any(d[0] == "add_column" and d[3].name == "mood" for d in flat)
    assert any(d[0] == "modify_type" and d[3] == "role" for d in flat)


def test_check_detects_schema_drift_in_database(db_url: str) -> None:
    migrate.upgrade(db_url)
    eng = make_engine(db_url)
    try:
        with eng.begin() as conn:
            conn.exec_driver_sql("DROP INDEX ix_games_status")
    finally:
        eng.dispose()
    diffs = migrate.check(db_url)
    assert [d[0] for d in diffs] == ["add_index"]
    assert diffs[0][1].name == "ix_games_status"


def test_downgrade_to_base_and_back(db_url: str) -> None:
    migrate.upgrade(db_url)
    migrate.downgrade(db_url, "base")
    assert migrate.current(db_url) is None
    eng = make_engine(db_url)
    try:
        assert set(sa.inspect(eng).get_table_names()) <= {"alembic_version"}
    finally:
        eng.dispose()
    migrate.upgrade(db_url)
    assert migrate.check(db_url) == []


def test_upgrade_works_from_any_directory(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    migrate.upgrade(db_url)
    assert migrate.current(db_url) == migrate.head()


def test_alembic_cli_uses_repo_ini_and_env_url(db_url: str) -> None:
    env = {**os.environ, "MAFIABOT_DATABASE_URL": db_url}
    proc = subprocess.run(
        [sys.executable, "-m", "alembic", "-c", str(REPO / "alembic.ini"), "upgrade", "head"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert migrate.current(db_url) == migrate.head()
