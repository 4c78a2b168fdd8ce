"""A whole `mafiabot simulate` ends at any speed (issue 33, item 1): at `--speed 10000` the
agents' decisions came later than the phases they were meant for, nobody was ever voted out,
and the game ran on for tens of thousands of phases (then, with the draw rule, ended in a
draw after 3 quiet days). A game of agents only now holds its clock for its agents
(`bot.service.clock.GameClock.hold`), so its votes count and vote players out."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from tests.bot.test_cli import run_cli


def closed_port() -> int:
    """A loopback port nobody listens on: an LLM server that is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def assert_players_voted_out(result: dict[str, Any]) -> None:
    """A played-out game whose votes counted: a side won (not a draw by quiet days), and the
    players the day votes put out (the Game-Manager's "X was voted out.") are out."""
    assert result["winner"] in ("mafia", "bystanders"), result["end_reason"]
    said = [line.get("text", "") for line in result["transcript"]]
    out = [t.split(" was voted out")[0] for t in said if " was voted out" in t]
    assert out, "nobody was voted out"
    alive = {p["name"]: p["alive"] for p in result["players"]}
    assert all(not alive[name] for name in out)
    assert any(line.get("voter") for line in result["transcript"])  # votes cast


async def test_simulate_at_speed_10000_with_its_llm_down_ends(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'fast.db'}"
    env = {
        "MAFIABOT_LLM": "openai:gpt-4o-mini",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{closed_port()}/v1",
        "OPENAI_API_KEY": "sk-test",
    }
    # run_cli bounds the run (it kills a command still running after 180 s)
    code, out, err = await run_cli(
        "simulate", "--agent", "llm", "--players", "5", "--seed", "5", "--speed", "10000",
        "--db", db, "--json", env=env,
    )  # fmt: skip
    assert code == 0, err[-2000:]
    result = json.loads(out)
    assert_players_voted_out(result)  # (old: every vote late, a draw after 3 quiet days)
    assert result["phases"] < 100


async def test_simulate_at_speed_10000_with_the_baseline_ends(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'base.db'}"
    code, out, err = await run_cli(
        "simulate", "--players", "5", "--seed", "5", "--speed", "10000", "--db", db, "--json",
        env={"MAFIABOT_LLM": ""},
    )  # fmt: skip
    assert code == 0, err[-2000:]
    result = json.loads(out)
    assert_players_voted_out(result)
