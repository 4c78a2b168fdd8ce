"""What a new player trips over in the first hour (issue 22, items 1-7), as they meet it: the
``mafiabot`` command in a real subprocess (stdin piped, or a pseudo-terminal for the status
bar), loopback fakes only."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import re
import select
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlmodel import Session
from sqlmodel import select as sql_select

from bot import invocation
from bot.local.terminal import handle_line
from bot.service.port import GameService
from bot.store import models as m
from bot.store.db import make_engine
from games.config import GameConfig
from games.errors import RuleError
from tests.bot.local.test_play import Terminal
from tests.bot.test_cli import QUICK, run_cli
from tests.bot.test_llm_agents import Table
from tests.fakes.llm_servers import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[3]
LONG = ["--day-seconds", "600", "--vote-seconds", "600", "--night-seconds", "600",
        "--night-vote-seconds", "600"]  # fmt: skip


def llm_env(server: FakeOpenAIServer) -> dict[str, str]:
    return {
        "MAFIABOT_LLM": "openai:gpt-4o-mini",
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-test",
    }


def seat_kinds(db: str) -> list[str | None]:
    engine = make_engine(db)
    try:
        with Session(engine) as s:
            return [r.agent_kind for r in s.exec(sql_select(m.Seat)).all() if r.is_agent]
    finally:
        engine.dispose()


async def start_play(*args: str, env: dict[str, str] | None = None) -> Terminal:
    """``mafiabot play`` with stdin piped (no status bar) and extra environment."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mafiabot.cli", "play", *args,
        cwd=ROOT,
        env={**os.environ, "MAFIABOT_LLM": "", "PYTHONUNBUFFERED": "1", "COLUMNS": "200",
             **(env or {})},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    return Terminal(proc)


# --- 1. a configured model plays, and the banner says which --------------------------------------


@pytest.mark.slow
async def test_play_seats_the_llm_agent_when_a_model_is_configured(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.responder = Table(seed=3)
    db = f"sqlite:///{tmp_path / 'p.db'}"
    term = await start_play("--players", "5", "--seed", "2", *LONG, "--db", db,
                            env=llm_env(fake_openai))  # fmt: skip
    at = await term.expect(r"The other 4 players are AI agents", within=120)
    assert "the LLM agent (openai:gpt-4o-mini)" in term.lines[at], term.lines[at]
    term.type("/quit")
    assert await term.exit_code() == 0, term.text()
    assert seat_kinds(db) == ["llm"] * 4

    # --agent baseline still chooses the offline agent, and says so
    db2 = f"sqlite:///{tmp_path / 'b.db'}"
    term = await start_play("--players", "5", "--agent", "baseline", *LONG, "--db", db2,
                            env=llm_env(fake_openai))  # fmt: skip
    at = await term.expect(r"The other 4 players are AI agents", within=120)
    assert "the offline baseline agent" in term.lines[at]
    term.type("/quit")
    assert await term.exit_code() == 0
    assert seat_kinds(db2) == ["baseline"] * 4


@pytest.mark.slow
async def test_simulate_seats_the_llm_agent_when_a_model_is_configured(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.responder = Table(seed=5)
    db = f"sqlite:///{tmp_path / 's.db'}"
    code, out, err = await run_cli(
        "simulate", "--players", "5", "--seed", "4", "--speed", "40", *QUICK, "--db", db,
        "--json", env=llm_env(fake_openai),
    )  # fmt: skip
    assert code == 0, err[-3000:]
    assert "5 AI agents play: the LLM agent (openai:gpt-4o-mini)." in err
    assert json.loads(out)["agents"]["calls"] > 0
    assert seat_kinds(db) == ["llm"] * 5


# --- 2. the commands we suggest are the ones the person can type -------------------------------


def test_suggested_commands_follow_how_mafiabot_was_started(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    script = tmp_path / "bin" / "mafiabot"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(script.parent))
    monkeypatch.delenv("UV_RUN_RECURSION_DEPTH", raising=False)
    assert invocation.command("play --resume") == "mafiabot play --resume"  # an activated venv
    monkeypatch.setenv("UV_RUN_RECURSION_DEPTH", "1")  # `make play`, `uv run mafiabot play`
    assert invocation.command("play --resume") == "uv run mafiabot play --resume"
    monkeypatch.delenv("UV_RUN_RECURSION_DEPTH")
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on the PATH
    assert invocation.command("db upgrade") == "uv run mafiabot db upgrade"


@pytest.mark.slow
async def test_help_and_quit_say_uv_run_after_make_play(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    term = await start_play("--players", "5", *LONG, "--db", db,
                            env={"UV_RUN_RECURSION_DEPTH": "1"})  # fmt: skip
    await term.expect(r"The other 4 players", within=120)
    term.type("/help")
    await term.expect(r"continue with: uv run mafiabot play --resume$")
    term.type("/quit")
    await term.expect(r"^Saved\. Continue with: uv run mafiabot play --resume \S+ --db \S+$")
    assert await term.exit_code() == 0


# --- 3. a mafia player trying /act is told the kill is a /vote ---------------------------------


async def test_mafia_act_points_to_vote(service: GameService) -> None:
    game_id = await service.create_game(GameConfig(), seed=7)
    for i in range(6):
        await service.join(game_id, f"user{i}")
    await service.start(game_id)
    game = service.games[game_id]
    assert game.state is not None
    mafia = next(s for s in game.state.seats if s.is_mafia)
    other = next(s for s in game.state.seats if not s.is_mafia and s.role == "bystander")
    reply = await handle_line(service, game, mafia.index, f"/act {other.name}")
    assert reply is not None and "/vote NAME" in reply and "mafia" in reply, reply
    # a bystander still gets the engine's own answer
    with pytest.raises(RuleError, match="no night action"):
        await handle_line(service, game, other.index, f"/act {mafia.name}")


# --- 4. play --mafia --------------------------------------------------------------------------


@pytest.mark.slow
async def test_play_takes_mafia(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'm.db'}"
    term = await start_play("--players", "7", "--mafia", "3", *LONG, "--db", db)
    await term.expect(r"The other 6 players", within=120)
    term.type("/quit")
    assert await term.exit_code() == 0, term.text()
    engine = make_engine(db)
    with Session(engine) as s:
        (game,) = s.exec(sql_select(m.Game)).all()
        mafia = [r for r in s.exec(sql_select(m.Seat)).all() if r.role == "mafia"]
    engine.dispose()
    assert game.config["mafia"] == 3 and len(mafia) == 3
    # too many is the engine's one-line refusal, nothing created
    code, _, err = await run_cli("play", "--players", "7", "--mafia", "4", "--db", db)
    assert code == 2 and err.strip().count("\n") == 0 and "mafia" in err, err


# --- 5. with the status bar, no printed "N seconds left" --------------------------------------


def _read_pty(fd: int, until: re.Pattern[str], within: float) -> str:
    got = b""
    end = time.monotonic() + within
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            got += chunk
            if until.search(got.decode(errors="replace")):
                break
    return got.decode(errors="replace")


@pytest.mark.slow
def test_no_printed_countdown_beside_the_status_bar(tmp_path: Path) -> None:
    """In a terminal the bar counts down; the piped path's reminders must not print too."""
    db = f"sqlite:///{tmp_path / 't.db'}"
    main, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mafiabot.cli", "play", "--players", "5", "--day-seconds", "70",
         "--vote-seconds", "600", "--db", db],
        cwd=ROOT, stdin=child, stdout=child, stderr=child, close_fds=True,
        env={**os.environ, "MAFIABOT_LLM": "", "MAFIABOT_CLOCK_SPEED": "10", "TERM": "xterm",
             "COLUMNS": "200", "LINES": "50", "PROMPT_TOOLKIT_NO_CPR": "1"},
    )  # fmt: skip
    os.close(child)
    try:
        # the day (70 game s = 7 s) holds both reminders' moments (at 40 and 60 game seconds);
        # wait for the vote, which comes after them
        seen = _read_pty(main, re.compile(r"Voting is open"), 90)
        assert "The other 4 players" in seen, seen[-2000:]
        assert "Voting is open" in seen, seen[-2000:]
        assert "seconds left" not in seen, seen[-2000:]
        os.write(main, b"/quit\r")
        seen += _read_pty(main, re.compile(r"Continue with"), 30)
        assert "Continue with" in seen
    finally:
        proc.kill()
        proc.wait()
        os.close(main)


# --- 6. every refusal reads the same: "mafiabot <command>: <what is wrong>", exit 2 -------------

ONE_WORDING = re.compile(r"^mafiabot [a-z][a-z -]*: \S")


@pytest.mark.parametrize(
    "args",
    [
        ["simulate", "--speed", "0"],
        ["simulate", "--players", "5", "--mafia", "3"],
        ["play", "--players", "4"],
        ["simulate", "--resume", "nosuch"],
        ["export", "--game", "nosuch", "--out", "OUT"],
        ["report", "--games", "nosuch", "--out", "OUT"],
        ["consent", "status", "--platform", "irc", "--server", "s", "--user", "u"],
        ["run"],
    ],
)
async def test_errors_are_worded_one_way(args: list[str], tmp_path: Path) -> None:
    from bot.store.migrate import upgrade

    db = f"sqlite:///{tmp_path / 'e.db'}"
    upgrade(db)  # (a current database, as `mafiabot db upgrade` leaves it; only the refusal
    # itself needs a process of its own)
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    code, _, err = await run_cli(*args, "--db", db) if args != ["run"] else await run_cli("run")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    command = " ".join(a for a in args[:2] if not a.startswith("-"))
    assert ONE_WORDING.match(lines[0]) and lines[0].startswith(f"mafiabot {command}"), lines[0]
    assert "(see " not in lines[0] and "Can't set up this game" not in lines[0], lines[0]


# --- 7. start-up and failure lines an operator reads -------------------------------------------


async def test_unreachable_discord_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),  # (the script's own folder comes first otherwise)
        "FAKE_DISCORD_API": "http://127.0.0.1:9/api/v10",  # (the discard port: refused)
        "FAKE_DISCORD_WS": "ws://127.0.0.1:9/",
        "MAFIABOT_DISCORD_TOKEN": "abc.def.ghi",
        "MAFIABOT_HTTP_ADDR": "",
        "MAFIABOT_LLM": "openai:gpt-4o-mini",  # the agent's memory loads faiss at start
        "OPENAI_API_KEY": "sk-test",
        "MAFIABOT_DATA_DIR": str(tmp_path),
        "MAFIABOT_DATABASE_URL": f"sqlite:///{tmp_path / 'd.db'}",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "tests/bot/ops/runproc.py"), "run", "--discord",
        cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err_bytes = await asyncio.wait_for(proc.communicate(), 120)
    err = err_bytes.decode()
    assert proc.returncode == 1, err
    assert "Traceback" not in err and "faiss" not in err and "PyNaCl" not in err, err
    lines = [line for line in err.splitlines() if "mafiabot run:" in line]
    assert len(lines) == 1 and "Can't reach Discord (127.0.0.1:9" in lines[0], err
    assert len(err.splitlines()) <= 3, err  # that line, and discord.py's "logging in"


async def test_json_logs_from_the_first_line(tmp_path: Path) -> None:
    """The image's start: `db upgrade` first, then the command; with MAFIABOT_LOG_FORMAT=json
    every line on stderr is a JSON object, the migration's included."""
    env = {"MAFIABOT_LOG_FORMAT": "json", "MAFIABOT_DATA_DIR": str(tmp_path),
           "MAFIABOT_DATABASE_URL": f"sqlite:///{tmp_path / 'j.db'}"}  # fmt: skip
    code, _, err = await run_cli("db", "upgrade", env=env)
    assert code == 0, err
    records = [json.loads(line) for line in err.splitlines() if line.strip()]
    assert any(r["message"].startswith("Database at revision") for r in records), err
