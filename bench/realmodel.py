"""The LLM agent on a real (tiny) model: SmolLM2-135M-Instruct served by llama-cpp-python's
OpenAI-compatible server on loopback, through the product's own ``openai:`` backend.

Plays ``mafiabot simulate --players 5 --agent llm`` at clock speed 1 with short phases (day
90 s, votes 30/20 s, night 30 s), once with structured output on its default (auto) and once
with it off, and prints for each:

- valid-answer rate per kind: valid answers of the model / answers;
- decided by the model: of the scheduler's decisions and the LLM seats' votes, those the model
  made itself (a fallback, whatever its cause, counts against it): the target's measure;
- fallbacks per kind, and who cast the LLM seats' votes (the model, a fallback, the baseline
  after a seat degraded);
- agent lines per day (per seat-day alive) against the table's median (the baseline seats'
  with ``--llm-seats`` below the player count, else every seat's), and silent seat-days;
- call latency p50/p95 (every call, retries included);
- event-loop lag p50/p99/max while the seats play.

Targets (issue 19): with structured output auto, >= 95% of the scheduler's decisions and of the
LLM seats' votes made by the model itself (a fallback counts against it), and no silent
seat-day; with it off, no silent seat-day and every vote legal; loop lag p99 <= 50 ms.
Exit status 1 when one is missed. Needs the realmodel dependency group:

    uv sync --group realmodel
    uv run --group realmodel python bench/realmodel.py [--modes auto,off] [--seed 7]
        [--players 5] [--llm-seats 5] [--threads N] [--timeout S] [--slow-callbacks MS]

A game takes 5-10 minutes of wall time. The model is a fixture that proves the plumbing; it
is not a player anyone should face.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

from tests.realmodel.play import Phases, Played, median, quantile, simulate
from tests.realmodel.server import LlamaServer, missing

#: the setting that picks structured output for the model's decisions ("auto" or "off")
STRUCTURED_ENV = "MAFIABOT_LLM_STRUCTURED"
KINDS = ("scheduler", "generator", "vote", "night_action", "reflection", "suspicion", "experience")
LAG_P99_TARGET_S = 0.050
VALID_TARGET = 0.95


def report(mode: str, played: Played) -> list[str]:
    """Print the figures of one game; return the targets it missed."""
    g = played.report
    print(
        f"\n== structured output: {mode} — game {g.game_id}, {played.wall_s / 60:.1f} min, "
        f"winner {g.winner}, LLM seats {len(g.llm_seats)}/{len(g.names)}"
    )
    print("valid answers of the model (valid/answered; fallbacks not counted):")
    for kind in KINDS:
        valid, answered = g.valid_rate(kind)
        calls = len(g.calls(kind))
        errors = sum(1 for r in g.calls(kind) if r.error is not None)
        if calls or g.fallbacks(kind):
            rate = f"{valid / answered:6.1%}" if answered else "   n/a"
            print(
                f"  {kind:<12} {rate}  ({valid}/{answered}; calls {calls}, errors {errors}, "
                f"fallbacks {g.fallbacks(kind)})"
            )
    print("decided by the model itself (model/decisions; a fallback counts against it):")
    for kind in ("scheduler", "vote", "night_action"):
        model, total = g.by_model(kind)
        if total:
            print(f"  {kind:<12} {model / total:6.1%}  ({model}/{total})")
    decisions = sum(1 for r in g.records if r.called or r.fallback)
    t0 = min((r.t for r in g.records), default=None)
    for r in g.records:  # why each decision fell back: what to mend next
        if r.fallback and r.kind in ("scheduler", "vote", "night_action") and t0 is not None:
            print(
                f"  fallback {r.kind:<12} seat {r.seat} at {(r.t - t0).total_seconds():6.1f} s: "
                f"{(r.error or r.decision or '')[:100]}"
            )
    print(
        f"fallback rate: {g.fallbacks()}/{decisions} decisions "
        f"({g.fallbacks() / max(1, decisions):.1%})"
    )
    votes = g.llm_votes()
    by = Counter(v.by or "unlogged" for v in votes)
    cast_by = ", ".join(f"{k} {n}" for k, n in sorted(by.items()))
    print(
        f"LLM seats' votes and night actions: {len(votes)} ({cast_by}); "
        f"illegal or unlogged {len(g.bad_votes())}; missed {len(g.unvoted())}"
    )
    llm_days = g.lines_per_day(g.llm_seats)
    others = [s for s in g.names if s not in g.llm_seats]
    table = g.lines_per_day(others) if others else g.lines_per_day(g.names)
    who = "baseline seats" if others else "every seat"
    print(
        f"agent lines per day: mean {sum(llm_days) / max(1, len(llm_days)):.1f}, "
        f"min {min(llm_days, default=0)}, over {len(llm_days)} seat-days; "
        f"table median ({who}) {median(table):.1f}; silent seat-days {len(g.silent_days())}"
        + (f" {g.silent_days()}" if g.silent_days() else "")
    )
    lat = g.latencies()
    print(
        f"call latency: p50 {quantile(lat, 0.5):.1f} s, p95 {quantile(lat, 0.95):.1f} s "
        f"({len(lat)} calls)"
    )
    lag = played.lag
    print(
        f"loop lag: p50 {lag.quantile(0.5) * 1000:.0f} ms, p99 {lag.quantile(0.99) * 1000:.0f} ms, "
        f"max {lag.worst * 1000:.0f} ms ({len(lag.samples)} samples)"
    )

    missed = []
    if not g.ended:
        missed.append(f"{mode}: the game did not end")
    if g.silent_days():
        missed.append(f"{mode}: silent seat-days {g.silent_days()}")
    if g.bad_votes() or g.unvoted():
        missed.append(f"{mode}: votes illegal/unlogged {g.bad_votes()} or missed {g.unvoted()}")
    if mode != "off":
        for kind in ("scheduler", "vote"):
            # "valid from the model itself (fallbacks not counted)": of the decisions, those
            # the model made; a fallback is not the model's valid answer
            model, total = g.by_model(kind)
            if not total or model / total < VALID_TARGET:
                missed.append(
                    f"{mode}: {kind} decided by the model {model}/{total} < {VALID_TARGET:.0%}"
                )
    if lag.quantile(0.99) > LAG_P99_TARGET_S:
        missed.append(f"{mode}: loop lag p99 {lag.quantile(0.99) * 1000:.0f} ms > 50 ms")
    return missed


class SlowCallbacks(logging.Handler):
    """asyncio debug mode's "Executing <...> took N seconds" warnings, tallied by where the
    callback (a task's coroutine, a handle's function) was when it ran long."""

    PATTERN = re.compile(r"Executing <(?P<what>.*?)> took (?P<s>[0-9.]+) seconds")
    CORO = re.compile(r"coro=<(?P<coro>[^ >]+)(?: running at (?P<at>[^ >]+))?")

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: list[tuple[str, float]] = []

    def emit(self, record: logging.LogRecord) -> None:
        m = self.PATTERN.search(record.getMessage())
        if m is None:
            return
        what = m["what"]
        coro = self.CORO.search(what)
        if coro is not None:
            where = coro["at"] or coro["coro"]
        else:
            where = what.split(" created at ")[0][:120]
        self.seen.append((where, float(m["s"])))

    def print(self) -> None:
        by: dict[str, list[float]] = {}
        for where, s in self.seen:
            by.setdefault(where, []).append(s)
        print(f"callbacks that held the loop past the threshold: {len(self.seen)}")
        for where, xs in sorted(by.items(), key=lambda kv: -max(kv[1]))[:12]:
            print(f"  {len(xs):4d}x max {max(xs) * 1000:5.0f} ms  {where}")


async def run(args: argparse.Namespace) -> int:
    lacking = missing()
    if lacking:
        print(f"needs {', '.join(lacking)}: uv sync --group realmodel", file=sys.stderr)
        return 2
    missed: list[str] = []
    with LlamaServer.start(threads=args.threads) as server:
        print(
            f"llama_cpp.server on {server.base_url}; load average "
            f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs"
        )
        for name in [n for n in os.environ if n.startswith("MAFIABOT_")]:
            del os.environ[name]
        os.environ.update(server.env())
        if args.timeout is not None:
            os.environ["MAFIABOT_LLM_TIMEOUT"] = str(args.timeout)
        slow = None
        if args.slow_callbacks:
            loop = asyncio.get_running_loop()
            loop.set_debug(True)
            loop.slow_callback_duration = args.slow_callbacks / 1000
            slow = SlowCallbacks()
            logging.getLogger("asyncio").addHandler(slow)
        for mode in args.modes.split(","):
            os.environ[STRUCTURED_ENV] = mode
            if slow is not None:
                slow.seen.clear()
            with tempfile.TemporaryDirectory(prefix=f"realmodel-{mode}-") as tmp:
                played = await simulate(
                    Path(tmp),
                    players=args.players,
                    seed=args.seed,
                    phases=Phases(),
                    llm_seats=args.llm_seats,
                )
            missed += report(mode, played)
            if slow is not None:
                slow.print()
    print()
    for line in missed:
        print("MISSED:", line)
    print("all targets met" if not missed else f"{len(missed)} target(s) missed")
    return 1 if missed else 0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--modes", default="auto,off", help="structured output settings to play")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--players", type=int, default=5)
    p.add_argument("--llm-seats", type=int, default=None, help="default: every seat")
    p.add_argument("--threads", type=int, default=None, help="the server's generation threads")
    p.add_argument("--timeout", type=float, default=None, help="MAFIABOT_LLM_TIMEOUT (default 20)")
    p.add_argument(
        "--slow-callbacks",
        type=float,
        default=0,
        metavar="MS",
        help="asyncio debug mode: list the callbacks that held the loop longer (slows it)",
    )
    sys.exit(asyncio.run(run(p.parse_args())))


if __name__ == "__main__":
    main()
