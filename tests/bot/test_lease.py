"""One process drives a game at a time (SQLite and PostgreSQL): the lease is taken, renewed,
released and taken over; a process that lost it cannot write; two real processes racing for
one game end with exactly one driving it, and ``kill -9`` of the holder frees the game."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from bot.service import lease
from bot.service.clock import utcnow
from bot.service.ownership import GameHeld, GameMoved
from bot.service.port import GameService
from bot.store import models as m
from bot.store.db import session_scope
from games.config import GameConfig
from tests.bot.hostile.harness import run_main

ROOT = Path(__file__).resolve().parents[2]
LONG = GameConfig(day_seconds=3600, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600)
QUICK = GameConfig(day_seconds=60, vote_seconds=20, night_seconds=20, night_vote_seconds=20)


def other_process(host: str | None = None, pid: int = 1) -> lease.Holder:
    me = lease.Holder.this_process()
    return lease.Holder(f"other-{pid}", host or me.host, pid)


def lease_row(engine: Engine, game_id: str) -> m.GameLease | None:
    with Session(engine) as s:
        return s.get(m.GameLease, game_id)


async def until(pred: Callable[[], bool], within: float = 30) -> None:
    """Polls a condition on the database (no event to wait on across processes)."""
    async with asyncio.timeout(within):
        while not pred():  # noqa: ASYNC110 (another process's row: no event to wait on)
            await asyncio.sleep(0.02)


async def started(svc: GameService, *, server: str = "local", speed: float = 1.0) -> str:
    game_id = await svc.create_game(LONG, seed=3, server_external_id=server, speed=speed)
    for i in range(6):
        await svc.join(game_id, f"user{i}")
    await svc.start(game_id)
    return game_id


# --- the lease rules ----------------------------------------------------------------------------


def test_lease_is_taken_refused_expires_and_fences(engine: Engine) -> None:
    a, b = other_process("far-away", 100), other_process("elsewhere", 200)
    now = utcnow()
    with session_scope(engine) as s:
        s.add(m.Game(id="g1", seed=1, status="running"))
    with engine.begin() as conn:
        got = lease.acquire(conn, "g1", a, now, ttl=30)
    assert isinstance(got, lease.Lease) and got.epoch == 1
    with engine.begin() as conn:
        held = lease.acquire(conn, "g1", b, now + timedelta(seconds=29), ttl=30)
    assert isinstance(held, lease.HeldBy) and held.pid == 100
    assert "pid 100 on far-away" in held.describe()
    # renewed: still held past the first expiry
    with engine.begin() as conn:
        assert lease.renew(conn, a, {"g1": 1}, now + timedelta(seconds=20), ttl=30) == set()
    with engine.begin() as conn:
        assert isinstance(lease.acquire(conn, "g1", b, now + timedelta(seconds=40)), lease.HeldBy)
    # the holder stops renewing (it died on another machine): after the expiry b takes over
    with engine.begin() as conn:
        taken = lease.acquire(conn, "g1", b, now + timedelta(seconds=51), ttl=30)
    assert isinstance(taken, lease.Lease) and taken.epoch == 2
    with engine.begin() as conn:
        assert not lease.fence(conn, "g1", a, 1)  # a may no longer write
        assert lease.fence(conn, "g1", b, 2)
        assert lease.renew(conn, a, {"g1": 1}, now + timedelta(seconds=52)) == {"g1"}
    # released: free at once
    with engine.begin() as conn:
        lease.release(conn, b, ["g1"], now + timedelta(seconds=53))
    with engine.begin() as conn:
        again = lease.acquire(conn, "g1", a, now + timedelta(seconds=54))
    assert isinstance(again, lease.Lease) and again.epoch == 3


def test_a_dead_holder_on_this_machine_frees_the_game_at_once(engine: Engine) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with session_scope(engine) as s:
        s.add(m.Game(id="g2", seed=1, status="running"))
    now = utcnow()
    me = lease.Holder.this_process()
    with engine.begin() as conn:
        lease.acquire(conn, "g2", other_process(me.host, gone.pid), now, ttl=3600)
    with engine.begin() as conn:
        got = lease.acquire(conn, "g2", me, now)
    assert isinstance(got, lease.Lease) and got.epoch == 2
    # ... but a live one on this machine keeps it
    with engine.begin() as conn:
        held = lease.acquire(conn, "g2", other_process(me.host, os.getppid()), now)
    assert isinstance(held, lease.HeldBy)


# --- the service ------------------------------------------------------------------------------


async def test_a_second_service_cannot_resume_a_held_game(
    engine: Engine, scheduler: object
) -> None:
    first = GameService(engine, scheduler)
    second = GameService(engine, scheduler)
    try:
        game_id = await started(first)
        with pytest.raises(GameHeld, match=f"Game {game_id} is being run by another"):
            await second.resume(game_id)
        assert game_id not in second.games
        assert await first.say(game_id, 0, "still mine")  # the holder is not disturbed
        await first.close()  # a clean stop releases the game
        game = await second.resume(game_id)
        assert game.action_seq == 1
        assert await second.say(game_id, 1, "mine now")
    finally:
        await first.close()
        await second.close()


async def test_the_lease_is_renewed_while_held(engine: Engine, scheduler: object) -> None:
    holder = GameService(engine, scheduler, lease_seconds=0.6)
    other = GameService(engine, scheduler)
    try:
        game_id = await started(holder)
        first = lease_row(engine, game_id)
        assert first is not None
        # wait until the first expiry has passed and the row was renewed beyond it
        await until(
            lambda: utcnow() > first.expires_at and lease_row(engine, game_id).expires_at > utcnow()  # type: ignore[union-attr]
        )
        with pytest.raises(GameHeld):
            await other.resume(game_id)
    finally:
        await holder.close()
        await other.close()


async def test_a_process_that_lost_its_lease_cannot_write(
    engine: Engine, scheduler: object
) -> None:
    """The holder stalls past its expiry (here: its lease is made to look expired and to
    belong to a machine we cannot check) and another process takes the game over. The stalled
    one's next write is refused as a whole, and it stops driving the game."""
    stalled = GameService(engine, scheduler)
    taker = GameService(engine, scheduler)
    try:
        game_id = await started(stalled)
        assert await stalled.say(game_id, 0, "before")
        with session_scope(engine) as s:
            row = s.get(m.GameLease, game_id)
            assert row is not None
            row.host, row.expires_at = "another machine", utcnow() - timedelta(seconds=1)
        game = await taker.resume(game_id)
        with pytest.raises(GameMoved, match="now run by another"):
            await stalled.say(game_id, 1, "after the takeover")
        assert game_id not in stalled.games
        with Session(engine) as s:
            texts = s.exec(select(m.Message.text).where(m.Message.seat_index == 1)).all()
            actions = s.exec(select(sa.func.count()).select_from(m.Action)).one()
        assert "after the takeover" not in texts and actions == 1
        assert await taker.say(game_id, 1, "the new holder writes") and game.action_seq == 2
    finally:
        await stalled.close()
        await taker.close()


async def hold_writer(svc: GameService) -> threading.Event:
    """Keep the service's database writer busy until the returned event is set, so the calls
    made meanwhile make up one group commit."""
    running, release = threading.Event(), threading.Event()

    def holder(_: Session) -> None:
        running.set()
        release.wait(10)

    svc._db.submit(holder)
    assert await asyncio.to_thread(running.wait, 10)
    return release


async def test_lines_of_many_games_in_one_group_cost_a_few_statements_not_a_few_a_line(
    engine: Engine, scheduler: object
) -> None:
    """A group commit carrying one line from each of 8 games fences the 8 games in one
    statement and writes each table's rows in one statement: a handful in all (the ORM wrote
    several statements for every line)."""
    svc = GameService(engine, scheduler)
    seen: list[str] = []

    def record(_c: object, _cur: object, statement: str, *_: object) -> None:
        seen.append(statement.split(None, 1)[0])

    try:
        games = [await started(svc, server=f"s{i}") for i in range(8)]
        release = await hold_writer(svc)
        commits = svc._db.commits
        lines = [asyncio.create_task(svc.say(g, 0, f"hello from {g}")) for g in games]
        await asyncio.sleep(0)
        sa.event.listen(engine, "before_cursor_execute", record)
        release.set()
        assert all(await asyncio.gather(*lines))
        sa.event.remove(engine, "before_cursor_execute", record)
        assert svc._db.commits == commits + 2  # the holder's, then one for the 8 lines
        writes = [w for w in seen if w in ("INSERT", "UPDATE", "DELETE")]
        assert len(writes) <= 5, seen  # fence, actions, events, messages, games' last seq
        with Session(engine) as s:
            texts = set(s.exec(select(m.Message.text)).all())
        assert {f"hello from {g}" for g in games} <= texts
    finally:
        await svc.close()


async def test_a_game_taken_over_fails_alone_in_its_group_commit(
    engine: Engine, scheduler: object
) -> None:
    """One fence statement checks every game of a group; the game another process took over
    is refused (`GameMoved`, nothing of it written) and the other games' lines commit."""
    svc = GameService(engine, scheduler)
    taker = GameService(engine, scheduler)
    try:
        games = [await started(svc, server=f"s{i}") for i in range(4)]
        moved = games[2]
        with session_scope(engine) as s:
            row = s.get(m.GameLease, moved)
            assert row is not None
            row.host, row.expires_at = "another machine", utcnow() - timedelta(seconds=1)
        await taker.resume(moved)
        release = await hold_writer(svc)
        lines = [asyncio.create_task(svc.say(g, 0, f"hello from {g}")) for g in games]
        await asyncio.sleep(0)
        release.set()
        results = await asyncio.gather(*lines, return_exceptions=True)
        assert isinstance(results[2], GameMoved) and results[2].game_id == moved
        assert [r for i, r in enumerate(results) if i != 2] == [True, True, True]
        assert moved not in svc.games
        with Session(engine) as s:
            texts = set(s.exec(select(m.Message.text)).all())
            moved_actions = s.exec(
                select(sa.func.count()).select_from(m.Action).where(m.Action.game_id == moved)
            ).one()
        assert {f"hello from {g}" for g in games if g != moved} <= texts
        assert f"hello from {moved}" not in texts and moved_actions == 0
    finally:
        await svc.close()
        await taker.close()


# --- real processes -----------------------------------------------------------------------------


async def cli(*args: str, db_url: str, stdin: bool = False) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mafiabot.cli", *args, "--db", db_url,
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "80"},
        stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def finish(proc: asyncio.subprocess.Process, within: float = 120) -> tuple[int, str]:
    try:
        _, err = await asyncio.wait_for(proc.communicate(), within)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, err.decode()


def refusal(err: str) -> list[str]:
    return [line for line in err.splitlines() if "being run by another mafiabot" in line]


@pytest.mark.slow
async def test_two_processes_race_for_one_game_and_kill_9_frees_it(
    engine: Engine, db_url: str, scheduler: object
) -> None:
    svc = GameService(engine, scheduler)
    game_id = await svc.create_game(QUICK, seed=8, server_external_id="simulate", speed=40.0)
    for _ in range(7):
        await svc.join(game_id, None, is_agent=True)
    await svc.start(game_id)
    await svc.close()  # an interrupted simulation, free to resume

    racers = [await cli("simulate", "--resume", game_id, db_url=db_url) for _ in range(2)]
    await asyncio.wait(
        [asyncio.create_task(r.wait()) for r in racers], return_when=asyncio.FIRST_COMPLETED
    )
    loser = next(r for r in racers if r.returncode is not None)
    winner = next(r for r in racers if r is not loser)
    code, err = await finish(loser)
    assert code == 2, err
    assert len(refusal(err)) == 1 and "Traceback" not in err, err
    assert f"pid {winner.pid}" in refusal(err)[0]
    row = lease_row(engine, game_id)
    assert row is not None and row.pid == winner.pid and winner.returncode is None

    winner.kill()  # kill -9: no release, no renewal
    await winner.wait()
    code, err = await finish(await cli("simulate", "--resume", game_id, db_url=db_url))
    assert code == 0, err[-2000:]
    with Session(engine) as s:
        game = s.get(m.Game, game_id)
        seqs = s.exec(select(m.Action.seq).where(m.Action.game_id == game_id)).all()
    assert game is not None and game.status == "finished"
    assert sorted(seqs) == list(range(1, len(seqs) + 1))  # one writer at a time: no gap, no twin


@pytest.mark.slow
async def test_play_resume_of_a_game_held_elsewhere_says_so(
    engine: Engine,
    db_url: str,
    scheduler: object,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The holder is a ``mafiabot`` process; the second ``play --resume`` is the CLI's entry
    point in this process (`run_main`, in a thread: it runs a loop of its own), a process of
    another pid all the same."""
    from bot.local.terminal import HUMAN_ID

    svc = GameService(engine, scheduler)
    game_id = await svc.create_game(LONG, seed=5, server_external_id="terminal")
    await svc.join(game_id, HUMAN_ID)
    for _ in range(5):
        await svc.join(game_id, None, is_agent=True)
    await svc.start(game_id)
    await svc.close()

    holder = await cli("play", "--resume", game_id, db_url=db_url, stdin=True)
    try:
        await until(lambda: getattr(lease_row(engine, game_id), "pid", None) == holder.pid)
        monkeypatch.setenv("COLUMNS", "80")
        code, err = await asyncio.to_thread(
            run_main, ["play", "--resume", game_id, "--db", db_url], capsys
        )
        assert code == 2 and len(refusal(err)) == 1 and "Traceback" not in err, err
    finally:
        holder.kill()
        await holder.wait()
