"""``export --out`` and ``report --out`` never delete or overwrite what they did not write
(issue 12, item 2), and a bad output or input path is one line and exit 2 (item 11).

The commands run in-process through the real typer app (``mafiabot.cli.app``), on a SQLite store
holding one imported game."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from bot.protection.dataset.outdir import MARKER
from mafiabot.cli import app
from research.commands import run_import
from tests.research.test_llmafia_synthetic import make_game

GAME = "0100"


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    run_import(url, make_game(tmp_path / "games" / GAME), Console(file=io.StringIO()))
    return url


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def one_line_refusal(code: int, err: str) -> str:
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def export(db: str, out: Path, *extra: str) -> tuple[int, str, str]:
    return cli("export", "--db", db, "--game", GAME, "--out", str(out), *extra)


def users_folder(root: Path) -> dict[str, bytes]:
    """A folder of the user's that happens to use the bundle's names."""
    for rel, text in {
        "manifest.json": '{"mine": true}',
        "csv/messages.csv": "my,own,table\n",
        "jsonl/notes.jsonl": "{}\n",
        "llmafia/keep.txt": "keep",
        "agent_log/a.jsonl": "{}\n",
        "notes.txt": "my notes",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return snapshot(root)


def test_export_refuses_a_users_folder_and_changes_nothing(db: str, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    before = users_folder(out)
    for extra in ((), ("--force",)):
        code, _, err = export(db, out, *extra)
        line = one_line_refusal(code, err)
        assert "not empty" in line and "no earlier export" in line
        assert snapshot(out) == before


def test_export_replaces_only_its_own_earlier_bundle_and_only_with_force(
    db: str, tmp_path: Path
) -> None:
    out = tmp_path / "bundle"
    code, _, err = export(db, out, "--format", "llmafia,jsonl,csv")
    assert code == 0, err
    marker = json.loads((out / MARKER).read_text())
    assert marker["kind"] == "export" and marker["version"] == 1
    assert "csv/messages.csv" in marker["files"] and "manifest.json" in marker["files"]
    first = snapshot(out)

    code, _, err = export(db, out)
    assert "add --force" in one_line_refusal(code, err)
    assert snapshot(out) == first

    (out / "notes.txt").write_text("mine")  # the user's, beside the bundle
    (out / "csv" / "mine.csv").write_text("mine")  # ... and inside one of its folders
    code, _, err = export(db, out, "--force", "--format", "llmafia")
    assert code == 0, err
    assert not (out / "jsonl").exists()  # the earlier bundle's own files went
    assert not (out / "csv" / "messages.csv").exists()
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "csv" / "mine.csv").read_text() == "mine"
    assert (out / "llmafia" / GAME / "config.json").is_file()  # the release's number
    assert not [p for p in out.iterdir() if p.name.startswith(".mafiabot-staging")]


def test_force_never_overwrites_a_users_file_at_a_bundle_path(db: str, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    assert export(db, out, "--format", "llmafia")[0] == 0
    (out / "csv").mkdir()
    (out / "csv" / "messages.csv").write_text("the user's own table")
    before = snapshot(out)
    code, _, err = export(db, out, "--force", "--format", "llmafia,csv")
    assert "not overwriting" in one_line_refusal(code, err)
    assert snapshot(out) == before


def test_a_bundle_folder_replaced_by_a_link_is_not_written_through(db: str, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    assert export(db, out, "--format", "csv")[0] == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "llmafia").symlink_to(elsewhere, target_is_directory=True)  # where it would write
    before = snapshot(out)
    code, _, err = export(db, out, "--force", "--format", "csv,llmafia")
    assert "outside" in one_line_refusal(code, err)
    assert list(elsewhere.iterdir()) == [] and snapshot(out) == before
    # a folder of the earlier bundle itself turned into a link: not a bundle any more
    for f in (out / "csv").iterdir():
        f.unlink()
    (out / "csv").rmdir()
    (out / "csv").symlink_to(elsewhere, target_is_directory=True)
    code, _, err = export(db, out, "--force", "--format", "csv")
    assert "no earlier export" in one_line_refusal(code, err)
    assert list(elsewhere.iterdir()) == []


def test_a_forged_marker_cannot_delete_outside_the_folder(db: str, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "bundle"
    out.mkdir()
    forged = {"kind": "export", "version": 1, "files": ["../victim.txt"]}
    (out / MARKER).write_text(json.dumps(forged))
    code, _, err = export(db, out, "--force")
    assert "no earlier export" in one_line_refusal(code, err)
    assert victim.read_text() == "precious"


def test_report_folder_is_treated_the_same_way(db: str, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    before = users_folder(mine)
    code, _, err = cli("report", "--db", db, "--out", str(mine), "--no-embeddings")
    assert "no earlier report" in one_line_refusal(code, err)
    assert snapshot(mine) == before

    out = tmp_path / "report"
    assert cli("report", "--db", db, "--out", str(out), "--no-embeddings")[0] == 0
    assert (out / "report.md").is_file()
    code, _, err = cli("report", "--db", db, "--out", str(out), "--no-embeddings")
    assert "add --force" in one_line_refusal(code, err)
    code, _, err = cli("report", "--db", db, "--out", str(out), "--no-embeddings", "--force")
    assert code == 0, err
    # a report folder is not an export bundle, even with --force
    code, _, err = export(db, out, "--force")
    assert "holds a report" in one_line_refusal(code, err)


@pytest.mark.parametrize("command", ["export", "report"])
def test_bad_output_paths_are_one_line(db: str, tmp_path: Path, command: str) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("the user's")

    def run(*args: str) -> str:
        base = ["export", "--game", GAME] if command == "export" else ["report", "--no-embeddings"]
        code, _, err = cli(*base, "--db", db, *args)
        return one_line_refusal(code, err)

    assert "is a file" in run("--out", str(a_file))
    assert "cannot create" in run("--out", str(a_file / "sub"))
    assert a_file.read_text() == "the user's"
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        try:
            assert "cannot write" in run("--out", str(locked))
        finally:
            locked.chmod(0o700)
    if command == "report":
        assert "is a folder" in run("--out", str(tmp_path / "r"), "--json", str(tmp_path))
        assert "exists" in run("--out", str(tmp_path / "r"), "--json", str(a_file))
        assert a_file.read_text() == "the user's"


def test_bad_identities_files_are_one_line(db: str, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    for path, why in (
        (tmp_path / "missing.json", "cannot read"),
        (tmp_path, "cannot read"),
    ):
        code, _, err = export(db, out, "--identities", str(path))
        assert why in one_line_refusal(code, err)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = export(db, out, "--identities", str(bad))
    assert "not a JSON file" in one_line_refusal(code, err)
    bad.write_text("[1, 2]")
    code, _, err = export(db, out, "--identities", str(bad))
    assert "expected a JSON object" in one_line_refusal(code, err)
    code, _, err = export(db, out, "--game", "nope")  # an unknown game: also nothing made
    assert code == 2 and "no game" in err
    assert not out.exists()
