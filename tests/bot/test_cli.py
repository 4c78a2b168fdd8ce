"""The ``mafiabot`` command as a user runs it: real subprocesses, loopback fakes only."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import cast

import pytest

from bot.store.db import make_engine
from bot.store.decisions import records_for_game
from tests.bot.hostile.harness import run_main
from tests.bot.test_llm_agents import Table
from tests.fakes.llm_servers import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
QUICK = ["--day-seconds", "40", "--vote-seconds", "20", "--night-seconds", "20",
         "--night-vote-seconds", "15"]  # fmt: skip


async def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mafiabot.cli", *args,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 180)
    except TimeoutError:
        proc.kill()  # a hung command must not outlive its test
        await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.slow
async def test_simulate_with_llm_agents_against_a_fake_openai_server(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.responder = Table(seed=5)
    db = f"sqlite:///{tmp_path / 'llm.db'}"
    env = {
        "MAFIABOT_LLM": "openai:gpt-4o-mini",
        "OPENAI_BASE_URL": fake_openai.base_url,
        "OPENAI_API_KEY": "sk-test",
        "MAFIABOT_DATA_DIR": str(tmp_path),  # its memory folder, not the repository's data/
    }
    code, out, err = await run_cli(
        "simulate", "--agent", "llm", "--players", "5", "--seed", "4", "--speed", "10",
        *QUICK, "--db", db, "--json", env=env,
    )  # fmt: skip
    assert code == 0, err[-3000:]
    result = json.loads(out)
    assert result["winner"] in ("mafia", "bystanders")
    assert all(p["is_agent"] for p in result["players"])
    summary = result["agents"]
    assert summary["calls"] > 0 and summary["calls_by_kind"].get("scheduler", 0) > 0
    assert summary["valid_rate"] is not None and summary["valid_rate"] > 0.5
    assert "LLM calls:" in err  # the summary is printed
    # every when-to-speak call the server saw is in the stored log; the log may hold one more
    # per call cut short when the game ended (sent or not: the cancel can beat the request out)
    sched = [r for r in fake_openai.requests if "<send> or <wait>" in json.dumps(r.json)]
    records = records_for_game(make_engine(db), result["game_id"])
    cut = [
        r
        for r in records
        if r.kind == "scheduler" and cast(str, r.decision).startswith("cancelled")
    ]
    logged = summary["calls_by_kind"]["scheduler"]
    assert logged == len([r for r in records if r.kind == "scheduler" and r.called])
    assert len(sched) <= logged <= len(sched) + len(cut)


async def test_simulate_without_llm_says_the_baseline_plays(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'b.db'}"
    env = {"MAFIABOT_LLM": "", "MAFIABOT_DATA_DIR": str(tmp_path)}
    code, out, err = await run_cli(
        "simulate", "--agent", "llm", "--players", "5", "--speed", "400", *QUICK,
        "--db", db, "--json", env=env,
    )  # fmt: skip
    assert code == 0, err[-2000:]
    assert "offline baseline agent plays" in err
    assert json.loads(out)["winner"] in ("mafia", "bystanders")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["simulate", "--players", "4"], "at least 5 players"),
        (["simulate", "--players", "6", "--mafia", "3"], "too many"),
        (["simulate", "--role", "wizard"], "Unknown extra role"),
        (["simulate", "--resume", "gnothere"], "no game"),
        (["simulate", "--bogus"], "No such option"),
        (["simulate", "--speed", "0"], "more than 0"),
    ],
)
def test_bad_setups_get_one_clear_error_and_create_nothing(
    tmp_path: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """(The CLI's entry point in this process, `run_main`: no interpreter started a case.)"""
    db_file = tmp_path / "bad.db"
    code, err = run_main([*args, "--db", f"sqlite:///{db_file}"], capsys)
    assert code == 2, err
    assert message.lower() in err.lower()
    assert "Traceback" not in err
    if db_file.exists():
        import sqlite3

        with sqlite3.connect(db_file) as conn:
            assert conn.execute("select count(*) from games").fetchone()[0] == 0


@pytest.mark.slow
async def test_replay_command_compares_the_agent_with_the_humans(tmp_path: Path) -> None:
    from research.paths import llmafia_games_dir

    game = llmafia_games_dir() / "0001"
    if not game.exists():
        pytest.skip("the LLMafia games are not beside the repository")
    code, out, err = await run_cli("replay", str(game), "--speed", "120", "--seed", "1", "--json")
    assert code == 0, err[-3000:]
    result = json.loads(out)
    assert result["game"] == "0001" and result["agent"]["kind"] == "baseline"
    assert result["lines"]["replayed"] > 0 and result["votes"]["replayed"] > 0
    assert result["measures"]["messages"]["agent"] > 0  # our agent spoke in the LLM's seat
    assert result["measures"]["messages"]["human"] == result["lines"]["replayed"]


async def test_resume_picks_a_game_of_its_own_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`simulate --resume` never takes over the terminal game someone paused with /quit (it
    would play on without them), and points to `play --resume` instead; and vice versa."""
    from bot.service.port import GameService
    from bot.service.timers import make_scheduler
    from bot.store.migrate import upgrade
    from games.config import GameConfig

    db = f"sqlite:///{tmp_path / 'r.db'}"
    upgrade(db)
    engine = make_engine(db)
    scheduler = make_scheduler()
    scheduler.start()
    svc = GameService(engine, scheduler)
    long = GameConfig(day_seconds=3600, vote_seconds=60, night_seconds=60, night_vote_seconds=60)
    paused = await svc.create_game(long, seed=1, server_external_id="terminal")
    await svc.join(paused, "local:you")
    for i in range(4):
        await svc.join(paused, f"u{i}")
    await svc.start(paused)
    await svc.close()
    scheduler.shutdown(wait=False)

    # (the CLI's entry point in this process, in a thread: it runs an event loop of its own)
    code, err = await asyncio.to_thread(run_main, ["simulate", "--resume", "--db", db], capsys)
    assert code == 2
    assert f"mafiabot play --resume {paused}" in " ".join(err.split())
    code, err = await asyncio.to_thread(
        run_main, ["simulate", "--resume", paused, "--db", db], capsys
    )
    assert code == 2
    assert re.search(r"was started with (uv run )?mafiabot play", " ".join(err.split())), err
