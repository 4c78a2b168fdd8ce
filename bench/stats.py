"""``/mafia stats`` and ``/mafia leaderboard`` on a server with a long history (issue 35).

Builds a server with ``--games`` revealed games (six seats each: one AI, one mafia, a doctor,
people drawn from a pool of ``--people``, every one of them consenting, each with a survey
guess), then prints:

- how long the start-up count took (`bot.players.stats.catch_up_all`: the whole history once into
  ``player_ratings``, in the background at start-up, as after the upgrade that added them), and
  how long a query took that found it all uncounted (it counts one bounded batch at most);
- p50 / p99 / max of ``--queries`` stats answers and leaderboard answers after that (the words
  included), against the target of 100 ms p99;
- how long counting one more revealed game took (at its reveal), and the query after it.

    uv run python bench/stats.py [--games 10000] [--people 52] [--queries 200]
                                 [--db postgresql://...  (an empty database)]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGET_MS = 100.0
PLATFORM, SERVER = "discord", "G0BENCH"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] if ordered else float("nan")


def populate(
    engine: Any,
    games: int,
    people: int,
    *,
    seed: int = 7,
    platform: str = PLATFORM,
    server: str = SERVER,
    start: int = 0,
    since: datetime | None = None,
) -> list[str]:
    """``games`` revealed games on one server (created if needed), the first beginning at
    ``since`` (default: 2026-01-01), twenty minutes apart; returns their ids."""
    import sqlalchemy as sa
    from sqlmodel import Session, select

    from bot.store.models import Consent, Game, Seat, Server, SurveyResponse

    rng = random.Random(seed + start)
    users = [f"U{n:05d}" for n in range(people)]
    t0 = since or datetime(2026, 1, 1, tzinfo=UTC)
    with Session(engine) as session:
        row = session.exec(
            select(Server).where(Server.platform == platform, Server.external_id == server)
        ).first()
        if row is None:
            row = Server(platform=platform, external_id=server, name="bench")
            session.add(row)
            session.flush()
            for user in users:
                session.add(
                    Consent(
                        platform=platform,
                        server_external_id=server,
                        user_id=user,
                        version="1",
                        agreed=True,
                        t=t0,
                    )
                )
        server_id = row.id
        session.commit()
    ids: list[str] = []
    game_rows: list[dict[str, Any]] = []
    seat_rows: list[dict[str, Any]] = []
    answer_rows: list[dict[str, Any]] = []
    names = ["Avery", "Blake", "Casey", "Drew", "Emery", "Finley"]
    for g in range(start, start + games):
        game_id = f"bench{g:06d}"
        ids.append(game_id)
        began = t0 + timedelta(minutes=20 * (g - start if since else g))
        winner = rng.choice(["bystanders", "mafia"])
        game_rows.append(
            {
                "id": game_id,
                "server_id": server_id,
                "status": "finished",
                "config": {},
                "seed": g,
                "created_at": began,
                "started_at": began,
                "ended_at": began + timedelta(minutes=15),
                "revealed_at": began + timedelta(minutes=18),
                "winner": winner,
                "clock_speed": 1.0,
                "last_seq": 0,
            }
        )
        roles = ["mafia", "doctor", "bystander", "bystander", "bystander", "bystander"]
        rng.shuffle(roles)
        agent = rng.randrange(6)
        players = rng.sample(users, 5)
        for i in range(6):
            is_agent = i == agent
            seat_rows.append(
                {
                    "game_id": game_id,
                    "index": i,
                    "character_name": names[i],
                    "role": roles[i],
                    "alive": rng.random() < 0.5,
                    "user_id": None if is_agent else players.pop(),
                    "is_agent": is_agent,
                    "joined_at": began,
                    "withdrawn": False,
                }
            )
            if not is_agent:
                right = rng.random() < 0.4
                answer_rows.append(
                    {
                        "game_id": game_id,
                        "seat_index": i,
                        "identified_ai": right,
                        "guessed_name": names[agent] if right else names[(agent + 1) % 6],
                        "original_scale": "1-5",
                        "t": began + timedelta(minutes=16),
                        "source": "discord",
                    }
                )
    with engine.begin() as conn:
        conn.execute(sa.insert(Game.__table__), game_rows)  # type: ignore[attr-defined]
        conn.execute(sa.insert(Seat.__table__), seat_rows)  # type: ignore[attr-defined]
        conn.execute(sa.insert(SurveyResponse.__table__), answer_rows)  # type: ignore[attr-defined]
    return ids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--people", type=int, default=52)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--db", default=None, help="an empty database (default: SQLite file)")
    args = parser.parse_args()
    if args.games < 1 or args.people < 5 or args.queries < 1:
        print("--games and --queries must be at least 1, --people at least 5", file=sys.stderr)
        return 2

    from bot.players.stats import (
        QUERY_BATCH,
        board,
        catch_up_all,
        count_revealed,
        leaderboard_text,
        stats_text,
    )
    from bot.store.db import make_engine
    from bot.store.migrate import upgrade

    with tempfile.TemporaryDirectory() as tmp:
        url = args.db or f"sqlite:///{Path(tmp) / 'bench.db'}"
        upgrade(url)
        engine = make_engine(url)
        t = time.perf_counter()
        populate(engine, args.games, args.people)
        print(f"server: {args.games} revealed games, {args.people} people "
              f"(built in {time.perf_counter() - t:.1f} s)")  # fmt: skip

        def stats_once(user: str) -> str:
            b = board(engine, PLATFORM, SERVER)
            rank = b.rank_of(user)
            place = (rank, len(b.ranked)) if rank is not None else None
            return stats_text(b.of(user), user, rank=place)

        def board_once(user: str, page: int) -> str:
            b = board(engine, PLATFORM, SERVER)
            return leaderboard_text(b, lambda u: u, page=page, me=user)

        t = time.perf_counter()
        stats_once("U00000")
        first = time.perf_counter() - t
        print(
            f"a query before the start-up count (counts {QUERY_BATCH} games at most): "
            f"{first * 1000:.0f} ms"
        )
        t = time.perf_counter()
        n = catch_up_all(engine)
        print(f"start-up count, in the background: {n} games in {time.perf_counter() - t:.1f} s")
        rng = random.Random(1)

        def someone() -> str:
            return f"U{rng.randrange(args.people):05d}"

        def one_stats() -> str:
            return stats_once(someone())

        def one_board() -> str:
            return board_once(someone(), 1 + rng.randrange(4))

        runs: list[tuple[str, Callable[[], str]]] = [
            ("stats", one_stats),
            ("leaderboard", one_board),
        ]
        for label, run in runs:
            times: list[float] = []
            for _ in range(args.queries):
                t = time.perf_counter()
                run()
                times.append((time.perf_counter() - t) * 1000)
            p99 = pct(times, 99)
            verdict = "ok" if p99 <= TARGET_MS else f"OVER the {TARGET_MS:.0f} ms target"
            print(
                f"{label}: p50 {pct(times, 50):.1f} ms, p99 {p99:.1f} ms, "
                f"max {max(times):.1f} ms over {args.queries} queries ({verdict})"
            )
        [one] = populate(engine, 1, args.people, start=args.games)
        t = time.perf_counter()
        count_revealed(engine, one)
        print(f"counting one more game at its reveal: {(time.perf_counter() - t) * 1000:.1f} ms")
        t = time.perf_counter()
        stats_once("U00000")
        print(f"the query after it: {(time.perf_counter() - t) * 1000:.1f} ms")
        engine.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
