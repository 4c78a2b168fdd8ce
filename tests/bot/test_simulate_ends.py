"""A whole `mafiabot simulate` ends at any speed (issue 33, item 1): at `--speed 10000` the
agents' decisions come later than the phases they were meant for, nobody is ever voted out,
and the game used to run on for tens of thousands of phases. The draw rule ends it."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.bot.test_cli import run_cli


def closed_port() -> int:
    """A loopback port nobody listens on: an LLM server that is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
    if result["winner"] is None:  # nobody out for 3 days in a row: a draw, said as such
        assert result["end_reason"].startswith("draw:")
        assert "The game ends in a draw" in err
    else:
        assert result["winner"] in ("mafia", "bystanders")
    assert result["phases"] < 100


async def test_simulate_at_speed_10000_with_the_baseline_ends(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'base.db'}"
    code, out, err = await run_cli(
        "simulate", "--players", "5", "--seed", "5", "--speed", "10000", "--db", db, "--json",
        env={"MAFIABOT_LLM": ""},
    )  # fmt: skip
    assert code == 0, err[-2000:]
    result = json.loads(out)
    assert result["winner"] in ("mafia", "bystanders") or result["end_reason"].startswith("draw:")
