"""How many whole baseline games per second one core plays at maximum speed.

Runs ``--games`` 8-player games (different seeds) through :func:`agent.fastsim.simulate_fast`
and prints games/s, mean messages and votes per game and the win rates. It then replays the
same games' actions through the rules engine alone, so the split between engine and policy
time is visible. ``--profile`` prints the top functions by own time.

    uv run python bench/engine.py [--games 400] [--players 8] [--roles detective,doctor]
    uv run python bench/engine.py --setup largest   # the largest shipped setup at its size
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import sys
import time
from collections import Counter

from agent.fastsim import EPOCH, FastResult, simulate_fast
from games import GameConfig, apply, new_game
from games.actions import Action, NightAct, Say, Tick, Vote
from games.events import MessageAccepted, NightActionRecorded, PhaseEnded, VoteCast
from games.names import pick_names

#: games per second of CPU time on one core, for the largest shipped setup (the roles issue
#: asks fastsim for 150 games/s of it)
TARGET = 150.0


def _actions(result: FastResult) -> list[Action]:
    """The actions that produced ``result`` (rebuilt from its events)."""
    out: list[Action] = []
    for e in result.events or ():
        if isinstance(e, MessageAccepted):
            out.append(Say(e.seat, e.text, e.t))
        elif isinstance(e, VoteCast):
            out.append(Vote(e.voter, e.target, e.t))
        elif isinstance(e, NightActionRecorded):
            out.append(NightAct(e.seat, e.target, e.t))
        elif isinstance(e, PhaseEnded) and e.reason == "deadline":
            out.append(Tick(e.t))
    return out


def run(games: int, players: int, config: GameConfig, seed0: int = 0) -> dict[str, float]:
    results: list[FastResult] = []
    wall, cpu = time.perf_counter(), time.process_time()
    for seed in range(seed0, seed0 + games):
        results.append(simulate_fast(config, players, seed))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    wins = Counter(r.winner for r in results)
    return {
        "games_per_s": games / wall,
        "games_per_cpu_s": games / cpu,
        "messages": sum(r.messages for r in results) / games,
        "votes": sum(r.votes for r in results) / games,
        "phases": sum(r.phases for r in results) / games,
        "refused": sum(r.refused for r in results) / games,
        "mafia": wins["mafia"] / games,
        "bystanders": wins["bystanders"] / games,
    }


def engine_only(games: int, players: int, config: GameConfig, seed0: int = 0) -> float:
    """Seconds the engine alone needs for the same games (actions replayed, no policies)."""
    logs = []
    for seed in range(seed0, seed0 + games):
        result = simulate_fast(config, players, seed, keep_events=True)
        logs.append((seed, _actions(result)))
    start = time.perf_counter()
    for seed, actions in logs:
        state, _ = new_game(config, pick_names(players, random.Random(seed)), seed, EPOCH)
        for action in actions:
            state, _ = apply(state, action)
        assert state.over, f"replay of seed {seed} did not finish"
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument("--roles", default="", help="extra roles, e.g. detective,doctor")
    parser.add_argument(
        "--setup", default="", help="a shipped setup (at its balance size), or 'largest'"
    )
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    roles = tuple(r for r in args.roles.split(",") if r)
    config = GameConfig(roles=roles)
    if args.setup:
        from games.setups import SETUPS

        name = args.setup
        if name == "largest":
            name = max(SETUPS.values(), key=lambda s: (s.balance_players, len(s.slots))).name
        config = GameConfig(setup=name)
        args.players = SETUPS[name].balance_players
        roles = (f"setup {name}",)

    simulate_fast(config, args.players, 10**6)  # warm caches and imports
    stats = run(args.games, args.players, config)
    label = f"{args.players}-player baseline games" + (f" with {', '.join(roles)}" if roles else "")
    print(f"{args.games} {label} (seeds 0..{args.games - 1}), one core:")
    print(
        f"  {stats['games_per_s']:.0f} games/s wall clock, "
        f"{stats['games_per_cpu_s']:.0f} games/s of CPU time (target {TARGET:.0f})"
    )
    print(
        f"  per game: {stats['messages']:.1f} messages, {stats['votes']:.1f} votes, "
        f"{stats['phases']:.1f} phases, {stats['refused']:.2f} refused intents"
    )
    print(f"  wins: mafia {stats['mafia']:.1%}, bystanders {stats['bystanders']:.1%}")
    if hasattr(os, "getloadavg"):
        # on a busy machine the wall clock counts other processes' turns too
        print(f"  machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")

    sample = min(args.games, 200)
    engine_s = engine_only(sample, args.players, config)
    share = (engine_s / sample) * stats["games_per_s"]
    print(
        f"  engine alone: {sample / engine_s:.0f} games/s "
        f"({share:.0%} of the simulation's time; the rest is policies and the event loop)"
    )

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        run(min(args.games, 100), args.players, config)
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(20)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
