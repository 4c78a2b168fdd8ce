"""Running ``mafiabot`` on hostile input and checking the answer: one line on stderr, exit 2,
no traceback, nothing changed.

Most cases call the CLI's entry point in-process (``mafiabot.cli.main``: the same parsing, checks
and error handling as the installed command, without a new interpreter per case); the
behaviour that belongs to the process (what Python prints as it dies, a hang) is checked
with real subprocesses in the tests that need it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """(exit code, stderr) of ``mafiabot ARGV`` run in this process (through ``sys.argv``, as
    the installed command does)."""
    code, _, err = run_main_io(argv, capsys)
    return code, err


def run_main_io(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``mafiabot ARGV`` run in this process (`run_main`)."""
    import sys

    from mafiabot.cli import main

    capsys.readouterr()
    saved = sys.argv
    sys.argv = ["mafiabot", *argv]
    try:
        with pytest.raises(SystemExit) as stopped:
            main()
    finally:
        sys.argv = saved
    code = stopped.value.code
    got = capsys.readouterr()
    return (code if isinstance(code, int) else 1), got.out, got.err


def assert_one_line_refusal(code: int, err: str, *fragments: str) -> None:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, f"want one line on stderr, got {len(lines)}:\n{err}"
    assert code == 2, err
    for fragment in fragments:
        assert fragment.lower() in lines[0].lower(), lines[0]


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` by relative path, with its digest (SQLite's -wal/-shm
    companions aside: merely opening a database may make them)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith(("-wal", "-shm"))
    }


def migrated_database(path: Path) -> str:
    """A current mafiabot SQLite database at ``path`` with one row in it; its URL."""
    from bot.store.db import make_engine, session_scope
    from bot.store.migrate import upgrade
    from bot.store.models import Server

    url = f"sqlite:///{path}"
    upgrade(url)
    engine = make_engine(url)
    try:
        with session_scope(engine) as session:
            session.add(Server(platform="discord", external_id="1", name="a server"))
    finally:
        engine.dispose()
    return url


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make ``path`` (a file or folder) read-only for this process, even as root (where file
    modes do not bind: the immutable attribute is used); skips the test when neither works."""
    if os.geteuid() == 0:
        made = subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0
        try:
            if not made:
                pytest.skip("root without chattr +i: cannot make anything read-only")
            yield
        finally:
            if made:
                subprocess.run(["chattr", "-i", str(path)], check=True)
        return
    mode = path.stat().st_mode
    path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        yield
    finally:
        path.chmod(mode)


ROOT = Path(__file__).resolve().parents[3]


async def run_process(
    *args: str, env: dict[str, str] | None = None, within: float = 120.0
) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of a real ``mafiabot`` process; one that is still running
    after ``within`` seconds is killed and fails the test (a hang is a bug too)."""
    import asyncio
    import sys

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mafiabot.cli", *args,
        cwd=ROOT,
        env={**os.environ, "MAFIABOT_LLM": "", **(env or {})},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(proc.communicate(), within)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise AssertionError(f"mafiabot {' '.join(args)} still running after {within} s") from None
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()
