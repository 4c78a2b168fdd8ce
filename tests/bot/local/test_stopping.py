"""How ``play`` and ``simulate`` end when they are stopped (issue 34, items 3 and 6): a closed
pipe, Ctrl-C, SIGTERM, Ctrl-D and /quit, in real subprocesses."""

from __future__ import annotations

import os
import pty
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.bot.local.test_first_hour import _read_pty

ROOT = Path(__file__).resolve().parents[3]
LONG = ["--day-seconds", "600", "--vote-seconds", "600", "--night-seconds", "600",
        "--night-vote-seconds", "600"]  # fmt: skip
ENV = {**os.environ, "MAFIABOT_LLM": "", "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}


def _ctrl_c_as_in_a_terminal() -> None:
    """A test run in the background inherits SIGINT ignored; a person's shell has it on."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(*args: str, stdin: int | None = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "mafiabot.cli", *args], cwd=ROOT, env=ENV, stdin=stdin,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_ctrl_c_as_in_a_terminal,
    )  # fmt: skip


def ended_within(proc: subprocess.Popen[bytes], seconds: float) -> float:
    """How long ``proc`` took to end (killed after a generous hard limit: never hangs)."""
    began = time.monotonic()
    try:
        proc.wait(timeout=max(60.0, seconds * 4))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("the command did not end")
    return time.monotonic() - began


def two_lines_then_close(proc: subprocess.Popen[bytes]) -> list[bytes]:
    """``| head -2``: read two lines, then close the pipe."""
    assert proc.stdout is not None
    lines = [proc.stdout.readline(), proc.stdout.readline()]
    proc.stdout.close()
    return lines


# --- 3. a closed pipe ends the command quietly ------------------------------------------------


@pytest.mark.slow
def test_simulate_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    proc = start("simulate", "--speed", "1000", "--seed", "1", "--db",
                 f"sqlite:///{tmp_path / 's.db'}")  # fmt: skip
    lines = two_lines_then_close(proc)
    took = ended_within(proc, 2.0)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert lines[0].startswith(b"Game "), lines
    assert took < 2.0, f"still running {took:.1f} s after its output closed"
    assert "Traceback" not in err and "Error" not in err, err
    assert proc.returncode == 141  # as a shell reports a command ended by SIGPIPE


@pytest.mark.slow
def test_play_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """``echo /quit | mafiabot play | head -2``."""
    proc = start("play", "--db", f"sqlite:///{tmp_path / 'p.db'}", stdin=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(b"/quit\n")
    proc.stdin.close()
    two_lines_then_close(proc)
    took = ended_within(proc, 2.0)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert took < 2.0, f"still running {took:.1f} s after its output closed"
    assert "Traceback" not in err and "Error" not in err, err


# --- 6. the resume hint carries --db, and every way out gives it ------------------------------


def resume_args(text: str) -> list[str]:
    found = re.search(r"Continue with: (?:uv run )?mafiabot (.+)", text)
    assert found, text
    return shlex.split(found.group(1))


@pytest.mark.slow
def test_quit_hint_carries_the_database_and_resumes(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    proc = start("play", "--players", "5", *LONG, "--db", db, stdin=subprocess.PIPE)
    out, _ = proc.communicate(b"/quit\n", timeout=120)
    args = resume_args(out.decode())
    assert args[:2] == ["play", "--resume"] and args[3:] == ["--db", db], args
    again = subprocess.run(
        [sys.executable, "-m", "mafiabot.cli", *args], cwd=ROOT, env=ENV, input=b"/quit\n",
        capture_output=True, timeout=120,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr.decode()
    assert f"Resumed game {args[2]}" in again.stdout.decode(), again.stdout.decode()


def wait_for(proc: subprocess.Popen[bytes], pattern: bytes, within: float = 120) -> bytes:
    assert proc.stdout is not None
    seen = b""
    timer = threading.Timer(within, proc.kill)  # (a hung command ends the read: no hang here)
    timer.start()
    try:
        while not re.search(pattern, seen):
            line = proc.stdout.readline()
            assert line, seen
            seen += line
    finally:
        timer.cancel()
    return seen


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stopped_simulation_says_how_to_continue(
    sig: signal.Signals, code: int, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    proc = start("simulate", "--players", "5", *LONG, "--db", db)
    wait_for(proc, rb"The game begins")
    proc.send_signal(sig)
    ended_within(proc, 30)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert "Traceback" not in err, err
    assert proc.returncode == code
    args = resume_args(err)
    assert args[:2] == ["simulate", "--resume"] and args[3:] == ["--db", db], err


@pytest.mark.slow
def test_ctrl_c_in_piped_play_says_how_to_continue(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'p.db'}"
    proc = start("play", "--players", "5", *LONG, "--db", db, stdin=subprocess.PIPE)
    wait_for(proc, rb"The game begins")
    proc.send_signal(signal.SIGINT)
    ended_within(proc, 30)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert resume_args(err)[3:] == ["--db", db], err


@pytest.mark.slow
@pytest.mark.parametrize("key", [b"\x04", b"\x03"], ids=["ctrl-d", "ctrl-c"])
def test_ctrl_d_and_ctrl_c_at_the_prompt_say_what_quit_says(key: bytes, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 't.db'}"
    main, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mafiabot.cli", "play", "--players", "5", *LONG, "--db", db],
        cwd=ROOT, stdin=child, stdout=child, stderr=child, close_fds=True,
        preexec_fn=_ctrl_c_as_in_a_terminal,
        env={**ENV, "TERM": "xterm", "LINES": "50", "PROMPT_TOOLKIT_NO_CPR": "1"},
    )  # fmt: skip
    os.close(child)
    try:
        # the prompt drawn (bracketed paste on): the terminal is raw, the key goes to it
        seen = _read_pty(main, re.compile(r"Type /help[\s\S]*\x1b\[\?2004h"), 90)
        assert "Type /help" in seen, seen[-2000:]
        os.write(main, key)
        seen = _read_pty(main, re.compile(r"Continue with.*\n"), 30)
        assert "Traceback" not in seen, seen
        assert "--db" in seen and db in seen.replace("\r\n", ""), seen
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main)
