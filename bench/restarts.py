"""Is the agent quiet after a restart? Whole games on the fake Discord and the fake Slack (two
baseline agents among five people, a fast game clock), the bot in a process of its own killed
with SIGKILL at random moments while people type through it; for each platform the agents'
share of the stage's character lines in the minute (game time) after each catch-up, beside
their share in the rest of the games, and the 95% interval the first should fall in if a
restart changes nothing (the binomial spread of as many lines at the second's share).

    uv run python bench/restarts.py [--restarts 20] [--speed 4] [--line-every 40]
                                    [--platform discord slack] [--budget 900] [--seed 1]
                                    [--save PART.json] [--add PART.json ...]

A slow machine may run it in parts (other seeds, one platform at a time): ``--save`` adds
each platform's counts to a file, ``--add`` prints the figures of the parts' sums.

Each person types a line every ``--line-every`` game seconds on average (1.5 a minute: the
LLMafia games' people say 1.3 a minute at the median). The clock's speed-up does not speed
up the platforms' own posting limits (a Slack channel takes about a message a second), so
people's real rate (five of them, ``speed / line_every`` lines a second each) must stay well
under them, or the stage falls behind and every line comes late. Each platform's run stops
at ``--budget`` real seconds even if fewer restarts were made.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.bot.restarts import (  # noqa: E402
    DiscordPlatform,
    Platform,
    Run,
    Shares,
    SlackPlatform,
    by_phase,
    interval,
    measure,
    phase_table,
    shares,
)


async def one(
    name: str,
    restarts: int,
    speed: float,
    budget: float,
    seed: int,
    line_every: float,
    save: Path | None = None,
) -> bool:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        if name == "discord":
            from tests.fakes.discord import FakeDiscord

            fake_cm: object = FakeDiscord()
        else:
            from tests.fakes.slack import FakeSlack

            fake_cm = FakeSlack()
        async with fake_cm as fake:  # type: ignore[attr-defined]
            platform: Platform = (
                DiscordPlatform(fake, tmp, speed)
                if name == "discord"
                else SlackPlatform(fake, tmp, speed)
            )
            try:
                run = await measure(
                    platform,
                    restarts=restarts,
                    speed=speed,
                    rng=random.Random(seed),
                    budget_s=budget,
                    line_every_s=line_every,
                    report=lambda line: print(f"  {name}: {line}", flush=True),
                )
            finally:
                await platform.close()
            if save is not None:
                keep(save, name, run)
            return figures(name, run)
    return False


def keep(save: Path, name: str, run: Run) -> None:
    """Add this run's counts to the parts in ``save``."""
    parts = json.loads(save.read_text()) if save.exists() else []
    s = shares(run)
    parts.append(
        {
            "platform": name,
            "restarts": len(run.restarts),
            "games": run.games,
            "lines": len(run.posts),
            "counts": [s.after_agent, s.after_all, s.rest_agent, s.rest_all],
            "phases": phase_table(run),
        }
    )
    save.write_text(json.dumps(parts, indent=1))


def added(files: list[Path]) -> bool:
    """The figures of the parts' sums, per platform."""
    sums: dict[str, list[int]] = {}
    phases: dict[str, dict[str, list[int]]] = {}
    for f in files:
        for part in json.loads(f.read_text()):
            row = sums.setdefault(part["platform"], [0, 0, 0, 0, 0, 0, 0])
            for i, v in enumerate(
                [part["restarts"], part["games"], part["lines"], *part["counts"]]
            ):
                row[i] += int(v)
            mine = phases.setdefault(part["platform"], {})
            for phase, counts in part.get("phases", {}).items():
                kept = mine.setdefault(phase, [0, 0, 0, 0])
                for i, v in enumerate(counts):
                    kept[i] += int(v)
    ok = True
    for name, (restarts, games, lines, a_agent, a_all, r_agent, r_all) in sums.items():
        rest = r_agent / r_all if r_all else 0.0
        low, high = interval(rest, a_all)
        ok &= report(
            name, restarts, games, lines, Shares(a_agent, a_all, r_agent, r_all, low, high)
        )
        table = {k: (v[0], v[1], v[2], v[3]) for k, v in phases.get(name, {}).items()}
        if table:
            ok &= report_phases(table)
    return ok


def figures(name: str, run: Run) -> bool:
    raw = report(name, len(run.restarts), run.games, len(run.posts), shares(run))
    return report_phases(phase_table(run)) and raw


def report_phases(table: dict[str, tuple[int, int, int, int]]) -> bool:
    """The after-share against the rest's share stratum by stratum: the phase's kind and how
    far into it (a catch-up's minute is in the phase the kill hit, the restart extends it,
    and it comes later in that phase than the kill; the agents say most of a day's lines
    early in it)."""
    p = by_phase(table)
    rows = ", ".join(
        f"{k} {a}/{n} after, {ra}/{rn} elsewhere" for k, (a, n, ra, rn) in sorted(table.items())
    )
    print(
        f"  by phase and game seconds into it: {rows}\n"
        f"  agents' share after a catch-up {p.after:.3f} against {p.expected:.3f} expected "
        f"from the same phases elsewhere, 95% interval [{p.low:.3f}, {p.high:.3f}] -> "
        f"{'within' if p.matches else 'OUTSIDE'}",
        flush=True,
    )
    return p.matches


def report(name: str, restarts: int, games: int, lines: int, s: Shares) -> bool:
    print(
        f"{name}: {restarts} restarts in {games} games, {lines} stage lines\n"
        f"  agents' share in the minute after a catch-up: {s.after:.3f} "
        f"({s.after_agent} of {s.after_all})\n"
        f"  agents' share in the rest of the games:       {s.rest:.3f} "
        f"({s.rest_agent} of {s.rest_all})\n"
        f"  95% interval for {s.after_all} lines at that share: [{s.low:.3f}, {s.high:.3f}] "
        f"-> {'within' if s.matches else 'OUTSIDE'}",
        flush=True,
    )
    return s.matches


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--restarts", type=int, default=20)
    ap.add_argument("--speed", type=float, default=4.0)
    ap.add_argument("--line-every", type=float, default=40.0)
    ap.add_argument("--budget", type=float, default=900.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--platform", nargs="+", default=["discord", "slack"])
    ap.add_argument("--save", type=Path, help="add each platform's counts to this file")
    ap.add_argument("--add", type=Path, nargs="+", help="print the sums of these parts")
    args = ap.parse_args()
    if args.add:
        sys.exit(0 if added(args.add) else 1)
    ok = True
    for name in args.platform:
        ok &= asyncio.run(
            one(
                name,
                args.restarts,
                args.speed,
                args.budget,
                args.seed,
                args.line_every,
                args.save,
            )
        )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
