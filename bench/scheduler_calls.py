"""How often the LLM agent consults its scheduler, and how big those prompts get, in a real
game's chat.

Replays the human lines of a recorded LLMafia game at their recorded times (compressed by the
game clock's ``--speed``) through the real GameService (temporary SQLite database, APScheduler
timers), with our LLMPlayer in the seat the study's LLM player had, answering from an
in-process fake model (instant; ``<send>`` ~30% of the time, short lines, votes naming a legal
player). The research agent polled its scheduler once a second (60 calls a minute) with the
whole history; ours is event-driven with a bounded window, so it should stay under 12 calls a
minute and under 2,000 prompt tokens a call, flat as the chat grows.

The game's day chats are played back to back as one long day (cut at each day's vote call) and
looped until ``--minutes`` of day chat have been played; a recorded game is 5-20 minutes of
day chat, so it is usually extended. Only day chat matters here: the scheduler is consulted by
day (and in the den, which this seat may not be in), and one long day keeps the agent's share
of the phase and the window growing for the whole run, the hardest case for both numbers.
The real service rather than a leaner harness: the agent then gets exactly the events,
ordering and timer behaviour it gets in production (the harness is research/replay_harness.py,
shared with ``mafiabot replay``). The agent's per-phase cap on its own
lines (a safety net for 2-3 minute phases) is lifted for the one long day.

The agent runs with its memory (``--memory``, the default: MiniLM retrieval memory, key moments
and the rest of the memory block in every prompt, reflection at phase starts); ``--no-memory``
measures the bare agent.

    uv run python bench/scheduler_calls.py [--game 0006] [--speed 20] [--minutes 20]

Prompt tokens are estimated as characters / 4. *Cacheable* is the share of prompt tokens that
repeat the seat's previous call from its first character (any kind of call: what a provider's
prompt cache, or a local server's KV cache, can serve instead of reading it again); it is
printed over all calls and as the share of calls whose own cacheable part is at least 60%.
Targets: tokens in total <= 100,000 and cacheable >= 60% for a 20-minute day (the totals scale
with ``--minutes``: the target is 5,000 a minute). An AI that talks markedly less (or more)
than the table is a tell: the bench counts the stage lines each seat posted in those minutes
and prints the AI's beside people's per-player counts (target: between their 25th and 75th
percentile), and why drafts were dropped. Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

from agent.decisions import DecisionRecord, InMemoryDecisionLog, summarize
from agent.llm import LLMRequest, LLMResponse
from agent.llm_player import LLMPlayerSettings
from agent.memory.cache import CachedEmbedder
from agent.memory.embeddings import default_minilm
from agent.prompting import estimate_tokens, render_request
from bot.seats.llm_agents import AgentLearning, LLMAgentConfig, LLMClients, llm_player_factory
from bot.service.live import LiveGame
from games.config import GameConfig
from games.events import Event, MessageAccepted
from games.state import PhaseKind
from research.llmafia import LLMafiaGame, read_game
from research.paths import llmafia_games_dir
from research.replay_harness import (
    Cue,
    PhaseWatch,
    ScriptPlayer,
    recorded_table,
    seat_recorded_game,
    temporary_service,
)

DATA = llmafia_games_dir()
POLLING_PER_MIN = 60.0
TARGET_CALLS_PER_MIN = 12.0
TARGET_TOKENS = 2000
#: prompt tokens of all the seat's calls per minute of day chat (100,000 for 20 minutes)
TARGET_TOTAL_PER_MIN = 5000
TARGET_CACHEABLE = 0.60
BUCKET_MIN = 2.0

WORDS = (
    "who", "is", "quiet", "today", "hmm", "i", "think", "sus", "not", "me", "vote", "why",
    "so", "fast", "lol", "wait", "really", "that", "was", "weird", "maybe", "honestly", "ok",
    "we", "need", "to", "talk", "about", "it", "nobody", "said", "anything", "yet",
)  # fmt: skip


class BenchLLM:
    """An instant fake model: sends ~``send_rate`` of the time, short random lines, legal votes."""

    name = "bench:fake"

    def __init__(self, seed: int, send_rate: float) -> None:
        self.rng = random.Random(seed)
        self.send_rate = send_rate
        self._last = ""  # the previous request (one LLM seat), for what a cache would serve

    async def complete(self, req: LLMRequest) -> LLMResponse:
        if req.kind == "scheduler":
            text = "<send>" if self.rng.random() < self.send_rate else "<wait>"
        elif req.kind == "generator":
            text = " ".join(self.rng.sample(WORDS, self.rng.randint(3, 8)))
        elif req.kind == "reflect_questions":
            text = "PICK: 1, 3, 5\nASK: who is steering the vote?"
        elif req.kind == "reflect_answers":
            text = "1. day\n2. nobody\nNOTE: " + " ".join(self.rng.choices(WORDS, k=60))
        elif req.kind == "suspicion":
            found = re.search(r"Players to rate: (.+)", req.messages[-1][1])
            names = re.split(r", | and ", found.group(1)) if found else []
            text = json.dumps({n: {"score": self.rng.random(), "why": "quiet"} for n in names})
        else:
            found = re.search(r"(?:one of|nothing else): (.+)", req.messages[-1][1])
            options = [n.strip() for n in found.group(1).split(",")] if found else ["nobody"]
            text = self.rng.choice(options)
        prompt = req.system + "".join(content for _, content in req.messages)
        sent = render_request(req)
        shared, self._last = common_prefix(sent, self._last), sent
        return LLMResponse(
            text=text,
            model=self.name,
            input_tokens=estimate_tokens(prompt),
            output_tokens=estimate_tokens(text),
            cached_input_tokens=shared // 4,
            latency_s=0.0,
            finish_reason="stop",
            attempts=1,
            cost_usd=0.0,
        )


class StageLines:
    """A service listener: the stage lines each seat of one game posted, and when."""

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        self.lines: list[tuple[str, datetime]] = []

    def by_name(self, until: datetime) -> Counter[str]:
        """Lines per player posted before ``until``."""
        return Counter(name for name, t in self.lines if t < until)

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        if game.id != self.game_id:
            return
        for e in events:
            if isinstance(e, MessageAccepted) and e.place == "stage":
                self.lines.append((e.name, e.t))


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (linear between order statistics)."""
    xs = sorted(values)
    at = q * (len(xs) - 1)
    lo = int(at)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (at - lo)


def talk_spread(ai: int, people: Counter[str], minutes: float) -> tuple[str, bool]:
    """The AI's line count against people's per-player counts at the table: (a report line,
    whether it lies between their 25th and 75th percentile)."""
    counts = sorted(people.values())
    if not counts:
        return "no people's lines to compare with", False
    q1, med, q3 = quantile(counts, 0.25), quantile(counts, 0.5), quantile(counts, 0.75)
    ok = q1 <= ai <= q3
    line = (
        f"lines in {minutes:g} min: the AI {ai}; people (per player) "
        f"{', '.join(str(c) for c in counts)}: range {counts[0]}-{counts[-1]}, "
        f"25th-75th percentile {q1:g}-{q3:g}, median {med:g}"
    )
    return line, ok


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b``."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def cacheable(records: Sequence[DecisionRecord]) -> tuple[float, float]:
    """(share of all prompt characters that repeat the same seat's previous call from the
    start, share of calls for which that part is at least ``TARGET_CACHEABLE``)."""
    last: dict[int, str] = {}
    shared = total = 0
    good = calls = 0
    for r in records:
        if not r.called:
            continue
        prefix = common_prefix(r.prompt, last.get(r.seat, ""))
        last[r.seat] = r.prompt
        shared += prefix
        total += len(r.prompt)
        calls += 1
        good += prefix >= TARGET_CACHEABLE * len(r.prompt)
    return (shared / total if total else 0.0), (good / calls if calls else 0.0)


def day_script(game: LLMafiaGame, minutes: float) -> tuple[list[Cue], int, float]:
    """Human stage lines of every day, back to back, looped to ``minutes``, as cues of the
    live game's one long first day.

    Returns (cues, loops, seconds of day chat in one pass through the recording).
    """
    llm = set(game.llm_players)
    humans = {p.name for p in game.players} - llm
    one_pass: list[Cue] = []
    base = 0.0
    for phase in game.phases:
        if phase.kind != "day":
            continue
        day_lines = [
            (i, line)
            for i, line in enumerate(game.lines)
            if line.phase == phase.label and line.place == "stage" and line.speaker in humans
        ]
        end = phase.voting_start or phase.end
        if end is None:
            end = max((line.t for _, line in day_lines), default=phase.start)
        length = max((end - phase.start).total_seconds(), 1.0)
        for i, line in day_lines:
            offset = min(max((line.t - phase.start).total_seconds(), 0.0), length)
            one_pass.append(Cue(PhaseKind.DAY, 1, base + offset, line.speaker, "say", line.text, i))
        base += length
    if not one_pass:
        raise SystemExit(f"game {game.game_id} has no day chat to replay")
    cues: list[Cue] = []
    loops = 0
    while not cues or cues[-1].offset_s < minutes * 60:
        shift = loops * base
        cues.extend(replace(x, offset_s=x.offset_s + shift) for x in one_pass)
        loops += 1
    return [x for x in cues if x.offset_s < minutes * 60], loops, base


async def replay(args: argparse.Namespace) -> int:
    game = read_game(args.data / args.game)
    table = recorded_table(game)
    script, loops, pass_s = day_script(game, args.minutes)

    log = InMemoryDecisionLog()
    fake = BenchLLM(args.seed, args.send_rate)
    # one long day: lift the per-phase safety cap on own lines, meant for 2-3 minute phases
    player = LLMPlayerSettings(max_lines_per_phase=10_000)
    learning = AgentLearning(CachedEmbedder(default_minilm())) if args.memory else None
    factory = llm_player_factory(
        LLMAgentConfig(llm="bench:fake", llm_token_budget=0, player=player),
        log,
        clients=LLMClients(fake, fake),
        learning=learning,
    )
    day_s = args.minutes * 60 + 5
    config = GameConfig(deal=table.deal, day_seconds=day_s, vote_seconds=30)
    async with temporary_service(factory) as service:
        game_id = await seat_recorded_game(service, table, config, speed=args.speed, seed=args.seed)
        watch = PhaseWatch(game_id)
        service.subscribe(watch)
        lines = StageLines(game_id)
        service.subscribe(lines)
        await service.start(game_id)
        live = service.games[game_id]
        assert live.state is not None
        start = live.state.phase.started_at
        print(
            f"game {game.game_id}: {len(table.names)} players; our agent plays "
            f"{table.agent_name} ({table.deal[table.agent_seat]}); {len(script)} human lines "
            f"over {args.minutes:g} min of day chat (the recording's {pass_s / 60:.1f} min "
            f"looped {loops}x) at {args.speed:g}x",
            flush=True,
        )
        real0 = time.monotonic()
        humans = ScriptPlayer(service, game_id, watch)
        await humans.play(script)
        skipped = sum(n for outcome, n in humans.counts().items() if outcome != "played")
        await asyncio.sleep(live.clock.real_delay_until(start + timedelta(seconds=day_s)))
        await service.drain(game_id)
        real = time.monotonic() - real0
        await service.end(game_id, "benchmark finished")
        await service.wait_finished(game_id)
    said = lines.by_name(start + timedelta(minutes=args.minutes))
    # every person at the table, one who said nothing too
    people = Counter({n: said[n] for n in table.names if n != table.agent_name})
    spread = talk_spread(said[table.agent_name], people, args.minutes)
    return report(log.records, start, args.minutes, real, skipped, spread)


def report(records: Sequence[DecisionRecord], start: datetime, minutes: float, real: float,
           skipped: int, spread: tuple[str, bool]) -> int:  # fmt: skip
    sched = [r for r in records if r.kind == "scheduler" and r.called]
    day = [r for r in sched if (r.t - start).total_seconds() < minutes * 60]
    per_min = len(day) / minutes
    summary = summarize(records)
    posted = sum(1 for r in records if r.kind == "generator" and r.valid)
    print(f"replayed in {real:.1f} s real; {skipped} recorded lines refused by the rules\n")
    print(f"{'':24}{'ours':>10}{'1/s polling':>14}")
    print(f"{'scheduler calls/min':24}{per_min:>10.1f}{POLLING_PER_MIN:>14.0f}")
    print(f"{'scheduler calls total':24}{len(day):>10}{POLLING_PER_MIN * minutes:>14.0f}")
    print()
    print(f"{'minutes':>10}{'calls':>7}{'calls/min':>11}{'tokens/call mean':>18}{'max':>7}")
    buckets = int(-(-minutes // BUCKET_MIN))
    means: list[float] = []
    worst = 0
    for b in range(buckets):
        lo, hi = b * BUCKET_MIN, min((b + 1) * BUCKET_MIN, minutes)
        inside = [r for r in day if lo * 60 <= (r.t - start).total_seconds() < hi * 60]
        tokens = [r.input_tokens for r in inside]
        mean = sum(tokens) / len(tokens) if tokens else 0.0
        peak = max(tokens, default=0)
        worst = max(worst, peak)
        if tokens:
            means.append(mean)
        print(
            f"{f'{lo:g}-{hi:g}':>10}{len(inside):>7}{len(inside) / (hi - lo):>11.1f}"
            f"{mean:>18.0f}{peak:>7}"
        )
    settled = means[1:] or means
    growth = (settled[-1] / settled[0] - 1.0) if settled and settled[0] else 0.0
    print()
    print(
        f"agent: {posted} lines generated, {summary.discards} drafts discarded, "
        f"{summary.calls_by_kind.get('generator', 0)} generator calls; "
        f"prompt tokens in total {summary.input_tokens}"
    )
    by_kind: dict[str, list[int]] = {}
    for r in records:
        if r.called:
            by_kind.setdefault(r.kind, []).append(r.input_tokens)
    print(
        "prompt tokens by kind: "
        + ", ".join(
            f"{kind} {sum(t)} ({len(t)} calls, {sum(t) / len(t):.0f}/call)"
            for kind, t in sorted(by_kind.items())
        )
    )
    discards = Counter(
        (r.decision or "").removeprefix("discard: ").split(" (")[0]
        for r in records
        if (r.decision or "").startswith("discard: ")
    )
    if discards:
        print("drafts discarded: " + ", ".join(f"{why} {n}" for why, n in discards.most_common()))
    talk, ok_talk = spread
    print(talk)
    share, calls_ok = cacheable(records)
    print(
        f"cacheable {share:.0%} of prompt tokens (a prefix identical to the seat's previous "
        f"call's); {calls_ok:.0%} of calls at least {TARGET_CACHEABLE:.0%} cacheable"
    )
    budget = TARGET_TOTAL_PER_MIN * minutes
    ok_rate = per_min <= TARGET_CALLS_PER_MIN
    ok_size = worst <= TARGET_TOKENS
    ok_flat = abs(growth) <= 0.15
    ok_total = summary.input_tokens <= budget
    ok_cache = share >= TARGET_CACHEABLE
    print(
        f"targets: calls/min <= {TARGET_CALLS_PER_MIN:g}: {'PASS' if ok_rate else 'FAIL'} "
        f"({per_min:.1f}); tokens/call <= {TARGET_TOKENS}: {'PASS' if ok_size else 'FAIL'} "
        f"(max {worst}); flat after the first {BUCKET_MIN:g} min: "
        f"{'PASS' if ok_flat else 'FAIL'} ({growth:+.0%} first to last bucket); "
        f"tokens in total <= {budget:,.0f}: {'PASS' if ok_total else 'FAIL'} "
        f"({summary.input_tokens:,}); cacheable >= {TARGET_CACHEABLE:.0%}: "
        f"{'PASS' if ok_cache else 'FAIL'} ({share:.0%}); the AI's lines within people's "
        f"25th-75th percentile: {'PASS' if ok_talk else 'FAIL'}"
    )
    ok = ok_rate and ok_size and ok_flat and ok_total and ok_cache and ok_talk
    return 0 if ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="0006", help="game folder under --data")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--speed", type=float, default=20.0, help="game clock speed")
    parser.add_argument("--minutes", type=float, default=20.0, help="minutes of day chat")
    parser.add_argument("--send-rate", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--memory",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the agent's memory and reflection (default: on)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    return asyncio.run(replay(args))


if __name__ == "__main__":
    sys.exit(main())
