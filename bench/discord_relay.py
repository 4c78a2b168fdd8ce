"""Relay latency of the Discord adapter under load: many concurrent games on the fake Discord.

Two processes, like production (where Discord is far away): this one runs the loopback fake
Discord and plays every human; a child process runs the real bot (discord.py client, service,
SQLite, baseline agents, the garbage-collector settings of ``mafiabot run``: `bot.heap`)
pointed at it. The child never shares an event loop or a GIL with the
fake, so its loop lag is the bot's own.

Each of ``--games`` games (``--players`` seats, one of them the baseline agent) goes through
setup, the lobby (consent, join) and start, then for ``--seconds`` every human types a line in
their booth every ``--interval`` seconds on average (random; the default 20 s is 3 lines a
minute, the rate of the busiest LLMafia games, whose median is about 1.3). Printed:

- relay latency end to end: the fake dispatches the booth message -> the fake receives the
  stage webhook request carrying it (gateway, bot, service, DB commit, renderer, delivery, HTTP);
- relay latency inside the bot: ``on_message`` -> just before the webhook request is sent;
- the bot's event-loop lag (a 50 ms sleeper's overshoot), p50/p99/max;
- lines relayed, lost (never arrived) and duplicated;
- the service's DB calls: time queued for its writer, and time running on it; how many calls
  each group commit carried;
- the bot's CPU time per relayed line, and the part of it spent on its database writer thread;
  its garbage-collector pauses.

    uv run python bench/discord_relay.py [--games 200] [--players 8] [--seconds 60]
                                         [--interval 20] [--guilds 20] [--profile out.pstats]
                                         [--db sqlite|postgres]

``--profile out.pstats`` profiles the bot's event loop there, and its database writer thread
in ``out.pstats.writer``, each in CPU time of its own thread (a wall-clock profile of a loaded
machine charges a function for the time it waited for a core or the GIL).

``--db postgres`` runs on a fresh database on the server named by ``--postgres-url`` (default:
``$MAFIABOT_TEST_POSTGRES_URL``, e.g. from ``.ci/pg-start``), dropped afterwards.

Targets on a 2-core machine: relay p99 <= 100 ms, loop lag p99 <= 50 ms; bot CPU per relayed
line <= 1.0 ms.

Where the bot's CPU goes (``--profile``, CPU time of each thread): about 70% on the event
loop, a quarter on the database writer thread. Of the loop's, at first: 28% posting the lines
(discord.py's ``Webhook.send``, aiohttp), 18% receiving the gateway's messages (a
`discord.Message`, its author and an event task built for every booth line), 14% the relay,
the service and the engine (`GameService.say`), 6% queueing in the lanes, 5% the renderers,
3% the agents, the rest asyncio itself. Of the writer's, about 80% was paid once per group
commit whatever the number of calls in it (SQLAlchemy executing the group's statements, the
lease check, SQLite's commit), and the groups were small: 1.5 to 2 calls when the machine is
quiet. So:

- the writer is handed the calls of one turn of the event loop together, and under load a
  group starts at most every 20 ms (`bot.store.writer.BUSY_SPACING`, a running bot's): about
  8.5 calls a commit at 1,000 games, the writer's part from about 0.5 ms a line to 0.24, for a
  wait of at most 20 ms that every call pays alike (a person's line, the agent's, a vote, a
  tick; relay p99 in the bot 25 ms, where 10 ms gave 13 ms and 4 to 6 calls a commit);
- a booth line is taken from the gateway's payload (`Relay.on_raw_message`): the gateway's
  part per line fell by 40% (profiled CPU time);
- a line is one prepared webhook request (`bot.discord.hooks`: URL, query and headers made
  once, the body encoded once, discord.py's rate limits kept): posting fell by 15%;
- lanes whose policy never waits skip the pacing look; the stage webhook handle is made once;
- then, profiled again (a profile saturates the loop at 1,000 games, so also at 500): of the
  writer's time, about a fifth was SQLAlchemy's work per row of the group's inserts and
  updates and another fifth its work for the one lease-fence statement of every group.
  On SQLite those statements are compiled once and their rows handed to the driver as tuples
  through the columns' own bind processors (`bot.store.rows`; the fence of several games a
  statement per number of games): the writer's part from 0.36-0.42 ms a line to 0.30-0.36
  (runs taken in turn with the code before), the whole 6 to 9% less than the run beside it.
  Lanes send a job inline (one coroutine less per hop; an unpaced lane keeps no per-seat
  counts), a webhook's lock is kept, and a game with people in it makes no hold context per
  line: the loop's part did not move measurably (0.74-0.84 ms a line against 0.75-0.87).

What is left, measured: a webhook post through aiohttp costs about 150 µs of CPU (a bare
keep-alive stream the same request about 40 µs): posting is still about a quarter of the
loop's profile; receiving the gateway's frames (the booth line, and the echo of every post)
about 13%, a third of it aiohttp's read timeout made for every frame. A lane hop (put, task,
send) is about 5 µs: tasks are no longer where the time goes. SQLAlchemy's session and commit per
group, and SQLite's own statements and commit, are most of the writer's. Figures: see
docs/operating.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SELF = Path(__file__).resolve()
ROOT = SELF.parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bot.store.writer import BUSY_SPACING  # noqa: E402 (after the path is set)

TARGET_RELAY_P99_MS = 100.0
TARGET_LAG_P99_MS = 50.0


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    return (
        f"p50 {pct(values, 50) * 1000:6.1f} ms  p99 {pct(values, 99) * 1000:6.1f} ms  "
        f"max {max(values) * 1000:6.1f} ms  (n={len(values)})"
    )


def machine_speed() -> float:
    """Milliseconds this machine takes for a fixed piece of pure-Python work (best of 5): runs
    of the bench on a shared or throttled machine differ by a fifth or more in CPU per line,
    and the tail follows; this says which kind of run it was."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        total = 0
        for i in range(300_000):
            total += i % 7
        best = min(best, time.perf_counter() - start)
    return best * 1000


# --- the bot process ----------------------------------------------------------------------------


async def child(config: dict[str, Any]) -> None:
    import discord.gateway
    import discord.http
    import yarl

    from bot import heap

    heap.tune()  # as `mafiabot run` does
    discord.http.Route.BASE = config["api_base"]
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(config["ws_url"])

    from bot.discord.app import MafiaBot
    from bot.discord.options import DiscordOptions
    from bot.discord.relay import RelayMetrics
    from bot.seats.agents import make_agent_factory
    from bot.service.port import GameService
    from bot.service.timers import make_scheduler
    from bot.settings import Settings
    from bot.store.db import make_engine
    from bot.store.migrate import upgrade

    url = config["db_url"]
    upgrade(url)
    engine = make_engine(url)
    scheduler = make_scheduler()
    scheduler.start()
    # the writer's spacing under load as `mafiabot run`'s (`bot.runtime`), unless told
    service = GameService(
        engine, scheduler, make_agent_factory(), commit_spacing=config["commit_spacing"]
    )
    service._db.max_batch = config.get("max_batch") or service._db.max_batch
    db_times: list[tuple[float, float]] = []  # (waited for the DB thread, ran on it)
    run_db = service._run_db

    async def timed_run_db(fn: Any) -> Any:
        queued = time.perf_counter()
        started: list[float] = []

        def work(session: Any) -> Any:
            started.append(time.perf_counter())
            return fn(session)

        try:
            return await run_db(work)
        finally:
            end = time.perf_counter()
            if started:
                db_times.append((started[0] - queued, end - started[0]))

    service._run_db = timed_run_db  # type: ignore[method-assign]
    # The writer thread: its CPU time, and (with --profile) its own profile, since cProfile
    # only sees the thread it was enabled in.
    writer_cpu = [0.0]
    writer_profile: list[Any] = []
    commit = service._db._commit

    def timed_commit(batch: Any) -> None:
        start = time.thread_time()
        profiler = writer_profile[0] if writer_profile else None
        if profiler is not None:
            profiler.enable()
        try:
            commit(batch)
        finally:
            if profiler is not None:
                profiler.disable()
            writer_cpu[0] += time.thread_time() - start

    service._db._commit = timed_commit  # type: ignore[method-assign]
    # The bot's garbage-collector pauses (a full collection of a big heap stops everything).
    import gc

    gc_pauses: list[tuple[int, float]] = []  # (generation, seconds)
    gc_started = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            gc_started[0] = time.perf_counter()
        else:
            gc_pauses.append((info["generation"], time.perf_counter() - gc_started[0]))

    gc.callbacks.append(on_gc)
    metrics = RelayMetrics()
    options = DiscordOptions(_env_file=None, afk_reminder_minutes=0)
    settings = Settings(_env_file=None, database_url=url)
    bot = MafiaBot(service, settings, options, metrics=metrics, guild_ready_timeout=0.5)
    runner = asyncio.create_task(bot.start(config["token"]))
    await bot.caught_up.wait()
    print("READY", flush=True)

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    lags: list[float] = []
    sampler: asyncio.Task[None] | None = None
    profiler: Any = None
    cpu0 = wall0 = 0.0
    sent0 = commits0 = calls0 = 0

    async def sample() -> None:
        while True:
            t = loop.time()
            await asyncio.sleep(0.05)
            lags.append(max(0.0, loop.time() - t - 0.05))

    while True:
        command = (await reader.readline()).decode().strip()
        if command == "MEASURE":
            metrics.latencies.clear()
            lags.clear()
            db_times.clear()
            sampler = asyncio.create_task(sample())
            cpu0, wall0 = time.process_time(), time.perf_counter()
            sent0 = bot.delivery.sent
            commits0, calls0 = service._db.commits, service._db.calls
            writer_cpu[0] = 0.0
            gc_pauses.clear()
            if config.get("profile"):
                import cProfile

                # CPU time of each thread, not wall time: a wall-clock profile of a loaded
                # machine charges a function for the time it waited for the GIL or a core
                writer_profile.append(cProfile.Profile(time.thread_time))
                profiler = cProfile.Profile(time.thread_time)
                profiler.enable()
        elif command in ("STOP", ""):
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(config["profile"])
                writer_profile.pop().dump_stats(config["profile"] + ".writer")
            if sampler is not None:
                sampler.cancel()
            # What the clock's next full collection would find and cost (`bot.heap`): the
            # cycles young collections left behind since the bot started.
            gc.callbacks.remove(on_gc)
            full_at = time.perf_counter()
            unreachable = gc.collect()
            full_ms = (time.perf_counter() - full_at) * 1000
            report = {
                "relay": metrics.latencies,
                "lag": lags,
                "db_wait": [w for w, _ in db_times],
                "db_run": [r for _, r in db_times],
                "cpu": time.process_time() - cpu0,
                "writer_cpu": writer_cpu[0],
                "gc": gc_pauses,
                "full_gc": [unreachable, full_ms, len(gc.get_objects())],
                "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "wall": time.perf_counter() - wall0,
                "sent": bot.delivery.sent - sent0,
                "retried": bot.delivery.retried,
                "failed": bot.delivery.failed,
                "games": len(bot.rooms.rooms),
                "commits": service._db.commits - commits0,
                "db_calls": service._db.calls - calls0,
                "regrouped": service._db.regrouped,
            }
            print(json.dumps(report), flush=True)
            break
    await bot.close()
    runner.cancel()
    with contextlib.suppress(BaseException):
        await runner
    await service.close()
    scheduler.shutdown(wait=False)
    engine.dispose()


# --- the fake Discord and the humans ----------------------------------------------------------


class Stamped(list):  # type: ignore[type-arg]
    """The fake's webhook execution log, stamped with the arrival time of each request."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived: dict[str, float] = {}
        self.seen: dict[str, int] = {}

    def append(self, item: Any) -> None:
        now = time.perf_counter()
        self.arrived.setdefault(item.content, now)
        self.seen[item.content] = self.seen.get(item.content, 0) + 1
        super().append(item)


async def parent(args: argparse.Namespace) -> int:
    from tests.fakes.discord import FakeDiscord
    from tests.fakes.discord.model import PERMISSIONS, iter_components

    speed_before = machine_speed()
    fake = FakeDiscord(heartbeat_interval=30.0)
    await fake.start()
    stamped = Stamped()
    fake.webhook_executions = stamped
    rng = random.Random(1)
    humans_per_game = args.players - 1
    per_guild = -(-args.games // args.guilds)
    tables: list[dict[str, Any]] = []
    for g in range(args.guilds):
        guild = fake.add_guild(f"Club {g}")
        mods = fake.add_role(guild, "Mods", PERMISSIONS["manage_guild"])
        mod = fake.add_member(guild, f"mod{g}", roles=[mods])
        for c in range(per_guild):
            if len(tables) == args.games:
                break
            channel = fake.add_channel(guild, f"mafia-{c}")
            people = [fake.add_member(guild, f"p{g}-{c}-{i}") for i in range(humans_per_game)]
            tables.append({"guild": guild, "channel": channel, "mod": mod, "humans": people})

    tmp = tempfile.mkdtemp(prefix="mafiabot-bench-")
    db_url = f"sqlite:///{tmp}/bench.db"
    if args.db == "postgres":
        db_url = postgres_database(args.postgres_url)
    config = {
        "api_base": fake.api_base,
        "ws_url": fake.ws_url,
        "token": fake.token,
        "db_url": db_url,
        "profile": args.profile,
        "max_batch": args.max_batch,
        "commit_spacing": args.commit_spacing,
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAFIABOT_")}
    env["PYTHONPATH"] = str(ROOT)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SELF),
        "--child",
        json.dumps(config),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=env,
        cwd=ROOT,
        limit=1 << 26,
    )
    assert proc.stdout is not None and proc.stdin is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 120)
    if line.strip() != b"READY":
        print("bot process failed to start", file=sys.stderr)
        return 2

    def ids(message: dict[str, Any]) -> list[str]:
        return [
            c["custom_id"]
            for c in iter_components(message.get("components") or [])
            if c.get("custom_id")
        ]

    async def answer(inter: Any) -> Any:
        callback = await inter.response(within=60)
        if callback.type == 5:
            await inter.followup(0, within=60)
        return callback

    async def set_up(table: dict[str, Any]) -> None:
        channel, mod = table["channel"], table["mod"]
        await answer(await fake.slash("mafia setup", {}, user=mod, channel=channel))
        await answer(
            await fake.slash("mafia new", {"day_minutes": 60.0}, user=mod, channel=channel)
        )
        lobby = await fake.wait_for_message(
            channel, lambda m: bool(m["components"]), from_bot=True, within=60
        )
        gid = ids(lobby)[0].split(":")[2]
        for person in table["humans"]:
            inter = await fake.click(lobby, f"mafia:lobby:{gid}:join", user=person)
            callback = await inter.response(within=60)
            notice = inter.original
            if callback.type == 4 and notice is not None and notice.get("components"):
                agree = next(i for i in ids(notice) if ":yes:" in i)
                await (await fake.click(notice, agree, user=person)).response(within=60)
        await (await fake.click(lobby, f"mafia:lobby:{gid}:start", user=mod)).response(within=60)
        table["game"] = gid

    t0 = time.perf_counter()
    limit = asyncio.Semaphore(32)

    async def limited(table: dict[str, Any]) -> None:
        async with limit:
            await set_up(table)

    await asyncio.gather(*(limited(t) for t in tables))
    everyone = {h.id for t in tables for h in t["humans"]}
    booth_of: dict[int, Any] = {}

    def all_booths() -> bool:
        booth_of.clear()
        for ch in fake.channels.values():
            if ch.is_thread and (ch.name or "").startswith("booth"):
                for uid in ch.member_ids:
                    booth_of[uid] = ch
        return everyone <= set(booth_of)

    await fake.wait_until(all_booths, 300)
    setup_s = time.perf_counter() - t0
    print(
        f"{args.games} games of {args.players} ({humans_per_game} humans + 1 agent) on "
        f"{args.guilds} servers set up in {setup_s:.1f} s",
        flush=True,
    )
    await asyncio.sleep(2.0)  # let the start-of-game burst (role cards, timers) drain
    # The fake runs with the bot's collector settings too: with CPython's defaults its own
    # full collections (a heap of 8,000 members) stopped it for up to a second, after which
    # it dispatched a second's worth of lines at once, a burst no real gateway sends.
    from bot import heap

    heap.tune()

    proc.stdin.write(b"MEASURE\n")
    await proc.stdin.drain()
    sent_at: dict[str, float] = {}
    fake_lag: list[float] = []
    loop = asyncio.get_running_loop()
    stop_at = loop.time() + args.seconds

    async def person(table: dict[str, Any], who: Any, n0: int) -> None:
        booth = booth_of[who.id]
        n = 0
        await asyncio.sleep(rng.uniform(0, min(args.interval, args.seconds)))
        while loop.time() < stop_at:
            text = f"{table['game']} {who.id} line {n0 + n}: I keep thinking about the vote"
            sent_at[text] = time.perf_counter()
            await fake.send_message(booth, who, text)
            n += 1
            await asyncio.sleep(
                min(rng.expovariate(1 / args.interval), max(0.0, stop_at - loop.time()))
            )

    async def fake_lag_sampler() -> None:
        while True:
            t = loop.time()
            await asyncio.sleep(0.05)
            fake_lag.append(max(0.0, loop.time() - t - 0.05))

    sampler = asyncio.create_task(fake_lag_sampler())
    await asyncio.gather(*(person(t, h, 0) for t in tables for h in t["humans"]))
    await asyncio.sleep(3.0)  # stragglers
    sampler.cancel()
    proc.stdin.write(b"STOP\n")
    await proc.stdin.drain()
    report = json.loads((await asyncio.wait_for(proc.stdout.readline(), 120)).decode())
    await asyncio.wait_for(proc.wait(), 60)
    await fake.stop()
    if args.db == "postgres":
        drop_postgres_database(args.postgres_url, db_url)

    speed_after = machine_speed()
    e2e = [stamped.arrived[t] - s for t, s in sent_at.items() if t in stamped.arrived]
    lost = [t for t in sent_at if t not in stamped.arrived]
    dup = [t for t in sent_at if stamped.seen.get(t, 0) > 1]
    relay_p99 = pct(report["relay"], 99) * 1000
    lag_p99 = pct(report["lag"], 99) * 1000
    print(
        f"booth lines typed {len(sent_at)} in {args.seconds:.0f} s "
        f"({len(sent_at) / args.seconds:.0f}/s), relayed {len(e2e)}, lost {len(lost)}, "
        f"duplicated {len(dup)}; posts by the bot in the window (all kinds): "
        f"{report['sent']}"
    )
    print(f"relay end to end (fake -> bot -> fake):   {ms(e2e)}")
    print(f"relay inside the bot (on_message -> POST): {ms(report['relay'])}")
    print(f"bot event-loop lag:                        {ms(report['lag'])}")
    print(f"fake's own event-loop lag (for context):   {ms(fake_lag)}")
    print(f"service DB calls ({args.db}): queued {ms(report['db_wait'])}")
    print(f"                  ran    {ms(report['db_run'])}")
    print(
        f"group commits: {report['commits']} carrying {report['db_calls']} calls "
        f"({report['db_calls'] / max(report['commits'], 1):.1f} a commit); groups run again "
        f"call by call after a failure: {report['regrouped']}"
    )
    print(
        f"bot CPU: {report['cpu']:.1f} s over {report['wall']:.1f} s "
        f"({100 * report['cpu'] / max(report['wall'], 1e-9):.0f}% of one core); "
        f"retried posts {report['retried']}, failed {report['failed']}"
    )
    lines = max(len(report["relay"]), 1)
    print(
        f"bot CPU per relayed line: {1000 * report['cpu'] / lines:.2f} ms, of which the "
        f"database writer thread {1000 * report['writer_cpu'] / lines:.2f} ms"
    )
    for generation in (0, 1, 2):
        pauses = [t for g, t in report["gc"] if g == generation]
        if pauses:
            print(
                f"bot GC pauses, generation {generation}: {len(pauses)}, "
                f"total {sum(pauses) * 1000:.0f} ms, max {max(pauses) * 1000:.1f} ms"
            )
    unreachable, full_ms, tracked = report["full_gc"]
    print(
        f"a full collection at the end: {unreachable} unreachable objects freed, {tracked} "
        f"tracked objects left (frozen ones aside), {full_ms:.0f} ms; "
        f"bot peak RSS {report['rss_mb']:.0f} MB"
    )
    print(
        f"machine speed (a fixed pure-Python loop, idle machine): {speed_before:.1f} ms before, "
        f"{speed_after:.1f} ms after"
    )
    if report["relay"]:
        print(f"mean relay inside the bot {statistics.fmean(report['relay']) * 1000:.1f} ms")
    ok = relay_p99 <= TARGET_RELAY_P99_MS and lag_p99 <= TARGET_LAG_P99_MS and not lost and not dup
    print(
        f"{args.db}, {args.games} games: relay p99 {relay_p99:.1f} ms, loop lag p99 "
        f"{lag_p99:.1f} ms, lost {len(lost)}, duplicated {len(dup)}"
    )
    print(
        f"targets (relay p99 <= {TARGET_RELAY_P99_MS:.0f} ms, loop lag p99 <= "
        f"{TARGET_LAG_P99_MS:.0f} ms, nothing lost or duplicated): {'met' if ok else 'NOT met'}"
    )
    return 0 if ok else 1


def postgres_database(server_url: str) -> str:
    """A fresh database on ``server_url``; its URL."""
    import psycopg
    from sqlalchemy import make_url

    if not server_url:
        raise SystemExit("--db postgres needs --postgres-url or MAFIABOT_TEST_POSTGRES_URL")
    server = make_url(server_url).set(drivername="postgresql")
    name = f"mafiabot_bench_{os.getpid()}"
    with psycopg.connect(server.render_as_string(hide_password=False), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return server.set(database=name).render_as_string(hide_password=False)


def drop_postgres_database(server_url: str, db_url: str) -> None:
    import psycopg
    from sqlalchemy import make_url

    server = make_url(server_url).set(drivername="postgresql")
    name = make_url(db_url).database
    with psycopg.connect(server.render_as_string(hide_password=False), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=200)
    p.add_argument("--players", type=int, default=8)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument(
        "--interval", type=float, default=20.0, help="mean seconds between two lines of one human"
    )
    p.add_argument("--guilds", type=int, default=20)
    p.add_argument("--profile", default="", help="write a cProfile of the bot here")
    p.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    p.add_argument(
        "--max-batch",
        type=int,
        default=0,
        help="calls a group commit may carry (1: one transaction a call, as before group commit)",
    )
    p.add_argument(
        "--commit-spacing",
        type=float,
        default=BUSY_SPACING,
        help="seconds between two group commits while calls come in together (0: none)",
    )
    p.add_argument(
        "--postgres-url",
        default=os.environ.get("MAFIABOT_TEST_POSTGRES_URL", ""),
        help="PostgreSQL server for --db postgres (a fresh database is made on it)",
    )
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child is not None:
        asyncio.run(child(json.loads(args.child)))
        return 0
    return asyncio.run(parent(args))


if __name__ == "__main__":
    sys.exit(main())
