"""Whole `mafiabot simulate` games at the fastest clock, several at once on a busy machine.

At ``--speed 10000`` a phase lasts milliseconds, less than the agents' own work; a game of
agents only holds its clock for them (`bot.service.clock.GameClock.hold`), so its votes count. This
runs ``--copies`` games at once (each its own process and SQLite database, the way a user
starting several would) and prints, for each, how long it took, how it ended, how many
phases it had and how many players were voted out. Target: every game ends in under a
minute with someone voted out (not a draw by quiet days).

    uv run python bench/simulate_speed.py [--copies 6] [--players 5] [--seed 5] [--speed 10000]

Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 60.0


async def one(args: argparse.Namespace, folder: Path, i: int) -> tuple[float, dict[str, Any]]:
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mafiabot.cli", "simulate", "--players", str(args.players),
        "--seed", str(args.seed + i), "--speed", str(args.speed), "--agent", "baseline",
        "--db", f"sqlite:///{folder / f'game{i}.db'}", "--json",
        cwd=ROOT, env={**os.environ, "MAFIABOT_LLM": ""},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    out, _ = await proc.communicate()
    took = time.monotonic() - started
    if proc.returncode != 0:
        return took, {"end_reason": f"exit {proc.returncode}", "transcript": [], "phases": 0}
    result: dict[str, Any] = json.loads(out)
    return took, result


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=6)
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--speed", type=float, default=10000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = await asyncio.gather(*(one(args, Path(tmp), i) for i in range(args.copies)))
    missed = 0
    for i, (took, result) in enumerate(runs):
        said = [line.get("text", "") for line in result["transcript"]]
        out = sum(" was voted out" in t for t in said)
        ok = took < TARGET_S and out > 0 and result.get("winner") is not None
        missed += not ok
        print(
            f"game {i} (seed {args.seed + i}): {took:5.1f} s, {result['phases']:3d} phases, "
            f"{out} voted out; {result['end_reason']}{'' if ok else '  << missed'}"
        )
    print(f"{args.copies} games at once at {args.speed:g}x: {missed} missed the target")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
