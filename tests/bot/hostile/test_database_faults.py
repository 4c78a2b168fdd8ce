"""Database faults, for every subcommand that opens the database: one line naming the problem
and what to do, exit 2, no traceback, nothing changed (issue 12, item 7). Commands that only
read (export, report, consent status) never create, migrate or write a database."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.bot.hostile.harness import (
    assert_one_line_refusal,
    migrated_database,
    read_only,
    run_main,
    snapshot,
)

PG_PASSWORD = "s3cret-pw"

#: commands that write (DB is replaced by the database URL, OUT by a scratch folder)
WRITERS = {
    "simulate": ["simulate", "--speed", "1000", "--db", "DB"],
    "play": ["play", "--db", "DB"],
    "run": ["run", "--discord", "--db", "DB"],
    "replay": ["replay", "OUT", "--db", "DB"],
    "import-llmafia": ["import-llmafia", "OUT", "--db", "DB"],
    "db upgrade": ["db", "upgrade", "--db", "DB"],
    "consent withdraw": ["consent", "withdraw", "--platform", "discord", "--server", "1",
                         "--user", "2", "--db", "DB"],
}  # fmt: skip
#: commands that only read
READERS = {
    "export": ["export", "--all", "--out", "OUT/bundle", "--db", "DB"],
    "report": ["report", "--out", "OUT/report", "--no-embeddings", "--db", "DB"],
    "consent status": ["consent", "status", "--platform", "discord", "--server", "1",
                       "--user", "2", "--db", "DB"],
}  # fmt: skip


def _text_file(folder: Path) -> str:
    path = folder / "notes.db"
    path.write_text("these are my notes, not a database\n" * 50)
    return f"sqlite:///{path}"


def _folder(folder: Path) -> str:
    (folder / "games.db").mkdir()
    return f"sqlite:///{folder / 'games.db'}"


def _truncated(folder: Path) -> str:
    url = migrated_database(folder / "cut.db")
    path = folder / "cut.db"
    path.write_bytes(path.read_bytes()[: 40 * 1024])
    return url


#: fault -> (make it in a folder, what the one line must say)
FAULTS: dict[str, tuple[Callable[[Path], str], str]] = {
    "not-sqlite": (_text_file, "is not a SQLite database"),
    "folder": (_folder, "is a folder, not a database file"),
    "malformed-url": (lambda _: "sqlite:/:/:::", "is not a valid URL"),
    "unparseable-url": (lambda _: "::::", "is not a valid URL"),
    "unsupported": (lambda _: "mysql://u:p@db.example/mafia", "unsupported database 'mysql'"),
    "unreachable-postgres": (
        lambda _: f"postgresql://mafiabot:{PG_PASSWORD}@127.0.0.1:1/mafiabot",
        "can't connect to the postgresql database",
    ),
    "corrupted": (_truncated, "is damaged"),
}


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MAFIABOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MAFIABOT_DISCORD_TOKEN", "not-a-real-token")
    monkeypatch.setenv("MAFIABOT_LLM", "")
    monkeypatch.delenv("MAFIABOT_DATABASE_URL", raising=False)
    return tmp_path


def _argv(template: list[str], url: str, scratch: Path) -> list[str]:
    return [url if a == "DB" else a.replace("OUT", str(scratch)) for a in template]


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("command", [*WRITERS, *READERS])
def test_a_database_fault_is_one_line_for_every_command(
    scratch: Path, capsys: pytest.CaptureFixture[str], command: str, fault: str
) -> None:
    make, says = FAULTS[fault]
    url = make(scratch)
    before = snapshot(scratch)
    code, err = run_main(_argv({**WRITERS, **READERS}[command], url, scratch), capsys)
    assert_one_line_refusal(code, err, says)
    assert PG_PASSWORD not in err
    assert snapshot(scratch) == before


@pytest.mark.parametrize("command", list(WRITERS))
def test_a_read_only_database_is_refused_by_commands_that_write(
    scratch: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    url = migrated_database(scratch / "ro.db")
    before = snapshot(scratch)
    with read_only(scratch / "ro.db"):
        code, err = run_main(_argv(WRITERS[command], url, scratch), capsys)
    assert_one_line_refusal(code, err, "is read-only")
    assert snapshot(scratch) == before


def test_reading_commands_read_a_read_only_database(
    scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = migrated_database(scratch / "ro.db")
    with read_only(scratch / "ro.db"):
        code, err = run_main(_argv(READERS["export"], url, scratch), capsys)
        assert code == 0, err
        code, err = run_main(_argv(READERS["consent status"], url, scratch), capsys)
        assert code in (0, 1) and "Traceback" not in err, err  # (1: may not play)


def _older_database(scratch: Path) -> str:
    from bot.store.migrate import downgrade

    url = migrated_database(scratch / "old.db")
    downgrade(url, "0005")
    return url


@pytest.mark.parametrize("command", list(READERS))
def test_reading_commands_do_not_migrate_an_older_database(
    scratch: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    url = _older_database(scratch)
    before = snapshot(scratch)
    code, err = run_main(_argv(READERS[command], url, scratch), capsys)
    assert_one_line_refusal(code, err, "run `", "mafiabot db upgrade`", "0005")
    assert snapshot(scratch) == before
    # ... which then lets them read it
    code, err = run_main(["db", "upgrade", "--db", url], capsys)
    assert code == 0, err
    code, err = run_main(_argv(READERS[command], url, scratch), capsys)
    assert code in (0, 1) and "Traceback" not in err, err


@pytest.mark.parametrize("command", list(READERS))
def test_reading_commands_create_no_database(
    scratch: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    url = f"sqlite:///{scratch / 'not' / 'there.db'}"
    code, err = run_main(_argv(READERS[command], url, scratch), capsys)
    assert_one_line_refusal(code, err, "there is no database")
    assert not (scratch / "not").exists()


@pytest.mark.parametrize("command", [*WRITERS, *READERS])
def test_a_database_of_a_newer_version_is_refused(
    scratch: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    import sqlite3

    url = migrated_database(scratch / "new.db")
    with sqlite3.connect(scratch / "new.db") as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    conn.close()
    before = snapshot(scratch)
    code, err = run_main(_argv({**WRITERS, **READERS}[command], url, scratch), capsys)
    assert_one_line_refusal(code, err, "newer mafiabot", "9999")
    assert snapshot(scratch) == before


def test_a_database_folder_that_cannot_be_made_is_one_line(
    scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (scratch / "file").write_text("x")
    code, err = run_main(
        ["db", "upgrade", "--db", f"sqlite:///{scratch / 'file' / 'm.db'}"], capsys
    )
    assert_one_line_refusal(code, err, "can't create the folder")


def test_copying_a_database_is_not_a_write(scratch: Path) -> None:
    """(the harness: a snapshot sees a changed byte)"""
    migrated_database(scratch / "a.db")
    before = snapshot(scratch)
    shutil.copy(scratch / "a.db", scratch / "b.db")
    assert snapshot(scratch) != before


def test_a_database_failing_midway_is_one_line(
    scratch: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database passed the checks, then fails during the command (another program holds
    its lock): one line naming it, not a traceback."""
    import sqlite3

    import sqlalchemy as sa

    url = migrated_database(scratch / "m.db")

    def locked(*args: object, **kwargs: object) -> None:
        raise sa.exc.OperationalError(
            "SELECT 1", {}, sqlite3.OperationalError("database is locked")
        )

    monkeypatch.setattr("bot.protection.dataset.export.run_export", locked)
    code, err = run_main(_argv(READERS["export"], url, scratch), capsys)
    assert_one_line_refusal(code, err, f"the database {scratch / 'm.db'} is locked")


def test_reading_an_empty_database_creates_no_table(
    db_url: str, scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On PostgreSQL too: an empty database stays empty (the old code migrated it)."""
    import sqlalchemy as sa

    from bot.store.db import make_engine

    code, err = run_main(_argv(READERS["export"], db_url, scratch), capsys)
    assert_one_line_refusal(code, err, "mafiabot db upgrade")
    if db_url.startswith("sqlite"):
        assert not (scratch / "db").exists()  # (db_url: a file in tmp_path/db)
        return
    engine = make_engine(db_url)
    try:
        assert sa.inspect(engine).get_table_names() == []
    finally:
        engine.dispose()
