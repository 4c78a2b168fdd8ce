"""Group commit (`bot.store.writer.GroupWriter`), on SQLite and PostgreSQL: calls that arrive
together share one transaction, each caller is released only after its commit, order is
kept, and one bad call never takes the others with it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.store.models import Server
from bot.store.writer import GroupWriter


@pytest.fixture
def writer(engine: Engine) -> Iterator[GroupWriter]:
    w = GroupWriter(engine)  # the default: no waiting, what is queued
    yield w
    w.close()


def add(external_id: str) -> Callable[[Session], str]:
    def fn(session: Session) -> str:
        session.add(Server(platform="test", external_id=external_id))
        return external_id

    return fn


async def hold(writer: GroupWriter) -> threading.Event:
    """Keep the writer busy until the returned event is set, so what is submitted meanwhile
    makes up one group."""
    running, release = threading.Event(), threading.Event()

    def holder(_: Session) -> None:
        running.set()
        release.wait(10)

    writer.submit(holder)
    assert await asyncio.to_thread(running.wait, 10)
    return release


def stored(engine: Engine) -> list[str]:
    """What another connection sees: only committed rows."""
    with Session(engine) as session:
        rows = session.exec(select(Server.external_id).order_by(col(Server.id))).all()
        return list(rows)


async def test_calls_arriving_together_share_one_commit_and_return_only_once_committed(
    engine: Engine, writer: GroupWriter
) -> None:
    seen_after: dict[str, bool] = {}

    async def one(i: int) -> None:
        name = f"s{i}"
        assert await writer.run(add(name)) == name
        seen_after[name] = name in await asyncio.to_thread(stored, engine)

    await asyncio.gather(*(one(i) for i in range(40)))
    assert all(seen_after.values()) and len(seen_after) == 40
    assert writer.calls == 40
    assert writer.commits < 10  # one transaction per line would be 40


async def test_calls_are_applied_in_the_order_they_were_submitted(
    engine: Engine, writer: GroupWriter
) -> None:
    futures = [writer.submit(add(f"o{i:02}")) for i in range(30)]
    await asyncio.gather(*(asyncio.wrap_future(f) for f in futures))
    assert stored(engine) == [f"o{i:02}" for i in range(30)]


async def test_a_call_submitted_after_awaited_ones_of_the_same_turn_comes_after_them(
    engine: Engine, writer: GroupWriter
) -> None:
    async def both() -> Any:
        awaited = asyncio.ensure_future(writer.run(add("first")))
        await asyncio.sleep(0)  # `run` has queued its call for the end of this turn
        return awaited, writer.submit(add("second"))

    awaited, submitted = await both()
    await asyncio.gather(awaited, asyncio.wrap_future(submitted))
    assert stored(engine) == ["first", "second"]


async def test_a_failing_call_fails_alone_and_the_others_commit(
    engine: Engine, writer: GroupWriter
) -> None:
    def broken(session: Session) -> None:
        session.add(Server(platform="test", external_id="never"))
        raise ValueError("refused")

    await writer.run(add("first"))
    calls = [add("a"), broken, add("first"), add("b")]  # "first" again: a unique violation
    release = await hold(writer)
    futures = [asyncio.wrap_future(writer.submit(c)) for c in calls]
    commits = writer.commits
    release.set()
    results = await asyncio.gather(*futures, return_exceptions=True)
    assert writer.commits == commits + 2  # the holder's, then one group for the rest
    assert results[0] == "a" and results[3] == "b"
    assert isinstance(results[1], ValueError)
    assert isinstance(results[2], sa.exc.IntegrityError)
    assert stored(engine) == ["first", "a", "b"]


async def test_a_failed_group_commit_is_retried_call_by_call(
    engine: Engine, writer: GroupWriter
) -> None:
    failed = threading.Event()

    def fail_first_commit(session: Session) -> None:
        if not failed.is_set():
            failed.set()
            raise sa.exc.OperationalError("COMMIT", {}, Exception("disk I/O error"))

    release = await hold(writer)
    sa.event.listen(Session, "before_commit", fail_first_commit)
    try:
        futures = [asyncio.wrap_future(writer.submit(add(f"r{i}"))) for i in range(5)]
        release.set()
        results = await asyncio.gather(*futures)
    finally:
        sa.event.remove(Session, "before_commit", fail_first_commit)
    assert failed.is_set()
    assert results == [f"r{i}" for i in range(5)]
    assert sorted(stored(engine)) == [f"r{i}" for i in range(5)]


async def test_close_writes_what_was_submitted_then_refuses_more(
    engine: Engine, writer: GroupWriter
) -> None:
    futures = [writer.submit(add(f"c{i}")) for i in range(10)]
    await asyncio.to_thread(writer.close)
    assert all(f.done() and f.exception() is None for f in futures)
    assert len(stored(engine)) == 10
    with pytest.raises(RuntimeError, match="closed"):
        writer.submit(add("late"))


async def test_the_callers_of_one_group_are_released_by_one_wake_up_of_their_loop(
    engine: Engine, writer: GroupWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each wake-up from the writer thread is a write to the loop's socket and a fight for
    the GIL: a group of 20 calls costs one, not 20."""
    loop = asyncio.get_running_loop()
    wakes: list[object] = []
    real = loop.call_soon_threadsafe

    def counted(callback: Any, *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is writer._thread:
            wakes.append(callback)
        return real(callback, *args, **kwargs)

    release = await hold(writer)
    monkeypatch.setattr(loop, "call_soon_threadsafe", counted)
    calls = [asyncio.create_task(writer.run(add(f"w{i}"))) for i in range(20)]
    await asyncio.sleep(0.05)  # every call queued behind the holder
    release.set()
    assert await asyncio.gather(*calls) == [f"w{i}" for i in range(20)]
    assert len(wakes) == 1  # the holder was submitted from no loop: only the group's


async def test_the_calls_of_one_turn_of_the_loop_reach_the_writer_together(
    engine: Engine, writer: GroupWriter
) -> None:
    """Calls made in one turn of the event loop share a group, even when the turn is long
    enough for the writer thread to have taken the first one alone (each group costs the
    writer a wake-up, a lease check and a commit)."""

    async def one(i: int) -> str:
        if i:
            time.sleep(0.05)  # noqa: ASYNC251 (a busy turn: the thread could run meanwhile)
        return await writer.run(add(f"t{i}"))

    calls = [asyncio.create_task(one(i)) for i in range(4)]  # all start in the next turn
    assert await asyncio.gather(*calls) == [f"t{i}" for i in range(4)]
    assert (writer.commits, writer.calls) == (1, 4)
    assert stored(engine) == [f"t{i}" for i in range(4)]
    late = await writer.run(add("late"))  # a quiet writer: a call of its own, at once
    assert (late, writer.commits) == ("late", 2)


async def test_a_call_cancelled_before_its_group_runs_is_not_run(
    engine: Engine, writer: GroupWriter
) -> None:
    release = await hold(writer)
    doomed = asyncio.create_task(writer.run(add("cancelled")))
    kept = asyncio.create_task(writer.run(add("kept")))
    await asyncio.sleep(0.05)
    doomed.cancel()
    with pytest.raises(asyncio.CancelledError):
        await doomed
    release.set()
    assert await kept == "kept"
    assert stored(engine) == ["kept"]


def backend_pid(session: Session) -> int:
    return int(session.connection().exec_driver_sql("select pg_backend_pid()").scalar_one())


async def test_the_writer_keeps_its_connection_and_replaces_one_the_database_dropped(
    engine: Engine, writer: GroupWriter
) -> None:
    """One connection for every group (no pool checkout, ping and reset per group); when the
    server drops it, the next call runs on a new one and nothing is lost."""
    if engine.dialect.name != "postgresql":
        pytest.skip("a SQLite connection cannot be dropped by a server")
    await writer.run(add("before"))
    pid = await writer.run(backend_pid)
    assert await writer.run(backend_pid) == pid
    with engine.connect() as other:
        other.exec_driver_sql(f"select pg_terminate_backend({pid})")
    assert await writer.run(add("after")) == "after"
    assert await writer.run(backend_pid) != pid
    assert stored(engine) == ["before", "after"]


async def test_on_sqlite_the_wal_is_copied_back_by_a_thread_of_its_own_not_inside_a_commit(
    engine: Engine, writer: GroupWriter
) -> None:
    if engine.dialect.name != "sqlite":
        pytest.skip("a WAL file is SQLite's")
    for i in range(20):
        await writer.run(add(f"s{i}"))
    # the writer's own connection never checkpoints inside a commit ...
    assert writer._conn is not None
    auto = await asyncio.to_thread(
        lambda: writer._conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar()  # type: ignore[union-attr]
    )
    assert auto == 0
    # ... the checkpointer does, after commits (it runs within CHECKPOINT_EVERY)
    checkpoints = writer._checkpoints
    assert checkpoints is not None

    def checkpointed() -> bool:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if checkpoints.runs >= 1:
                return True
            time.sleep(0.05)
        return False

    assert await asyncio.to_thread(checkpointed)
    # and everything committed is in the database file's pages: a checkpoint finds no frame
    # of the WAL left to copy
    with engine.connect() as conn:
        busy, log_frames, done = conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)").one()
    assert busy == 0 and log_frames == done
    assert stored(engine) == [f"s{i}" for i in range(20)]


async def test_runs_and_submits_of_one_turn_keep_their_order(
    engine: Engine, writer: GroupWriter
) -> None:
    """Awaited calls wait for the end of their turn; a submitted one is handed over at once,
    after the awaited ones made before it in the same turn."""

    async def turn() -> list[Any]:
        a = asyncio.ensure_future(writer.run(add("a")))
        c = asyncio.ensure_future(writer.run(add("c")))
        await asyncio.sleep(0)  # both `run`s have queued their call for the end of this turn
        b = asyncio.wrap_future(writer.submit(add("b")))
        e = asyncio.ensure_future(writer.run(add("e")))
        await asyncio.sleep(0)
        d = asyncio.wrap_future(writer.submit(add("d")))
        return [a, c, b, e, d]

    assert await asyncio.gather(*await turn()) == ["a", "c", "b", "e", "d"]
    assert stored(engine) == ["a", "c", "b", "e", "d"]


async def test_a_turn_larger_than_a_group_is_split_in_order(engine: Engine) -> None:
    writer = GroupWriter(engine, max_batch=3)
    try:
        calls = [asyncio.create_task(writer.run(add(f"m{i}"))) for i in range(8)]
        assert await asyncio.gather(*calls) == [f"m{i}" for i in range(8)]
        assert (writer.commits, writer.calls) == (3, 8)  # 3 + 3 + 2, one turn
        assert stored(engine) == [f"m{i}" for i in range(8)]
    finally:
        writer.close()


async def test_a_failing_call_of_a_turn_fails_alone_and_the_others_commit_in_order(
    engine: Engine, writer: GroupWriter
) -> None:
    def broken(session: Session) -> None:
        session.add(Server(platform="test", external_id="never"))
        raise ValueError("refused")

    calls = [add("x0"), add("x1"), broken, add("x3"), add("x1"), add("x5")]  # x1 again: unique
    results = await asyncio.gather(
        *(writer.run(c) for c in calls), return_exceptions=True
    )  # one turn: one group
    assert results[:2] == ["x0", "x1"] and results[3] == "x3" and results[5] == "x5"
    assert isinstance(results[2], ValueError)
    assert isinstance(results[4], sa.exc.IntegrityError)
    assert (writer.regrouped, writer.commits) == (1, 1)
    assert stored(engine) == ["x0", "x1", "x3", "x5"]


async def test_close_in_the_middle_of_a_turn_writes_the_calls_of_that_turn(
    engine: Engine, writer: GroupWriter
) -> None:
    """A call awaited but not handed over yet (its turn has not ended) when the writer closes
    is written before the thread stops: its caller is released with its result."""
    calls = [asyncio.create_task(writer.run(add(f"z{i}"))) for i in range(3)]
    await asyncio.sleep(0)  # each call waits for the end of this turn
    assert writer._turns  # (not handed over yet)
    writer.close()  # (blocks the loop: the turn cannot end before)
    assert stored(engine) == ["z0", "z1", "z2"]
    assert await asyncio.gather(*calls) == ["z0", "z1", "z2"]
    with pytest.raises(RuntimeError, match="closed"):
        await writer.run(add("late"))


async def test_after_a_group_of_several_calls_the_next_gathers_until_its_spacing(
    engine: Engine,
) -> None:
    """Under load (the previous group carried several calls) a call handed over alone waits
    for what arrives until ``spacing`` after the previous group started: one commit for both."""
    writer = GroupWriter(engine, spacing=1.0)
    try:
        pair = await asyncio.gather(writer.run(add("p0")), writer.run(add("p1")))
        assert list(pair) == ["p0", "p1"]
        assert writer.commits == 1  # one turn: a group of two
        first = writer.submit(add("a"))
        await asyncio.to_thread(taken, writer)  # the thread has "a" (alone in the queue)
        second = writer.submit(add("b"))
        assert await asyncio.gather(asyncio.wrap_future(first), asyncio.wrap_future(second))
        assert (writer.commits, writer.calls) == (2, 4)
        assert stored(engine) == ["p0", "p1", "a", "b"]
    finally:
        writer.close()


def taken(writer: GroupWriter) -> None:
    deadline = time.monotonic() + 10
    while not writer._queue.empty() and time.monotonic() < deadline:
        time.sleep(0.001)


async def test_after_a_group_of_one_call_the_next_goes_at_once_and_close_waits_for_nothing(
    engine: Engine,
) -> None:
    """A quiet bot, or one game awaiting its calls one by one, is never held by the spacing;
    nor is a writer that closes."""
    writer = GroupWriter(engine, spacing=600.0)
    try:
        for i in range(3):  # each a group of one: at once (600 s each otherwise)
            assert await asyncio.wait_for(writer.run(add(f"q{i}")), 30) == f"q{i}"
        assert await asyncio.gather(writer.run(add("q3")), writer.run(add("q4")))
        held = writer.submit(add("q5"))  # (would wait for the spacing)
        await asyncio.to_thread(taken, writer)
        await asyncio.wait_for(asyncio.to_thread(writer.close), 30)
        assert held.result() == "q5"
        assert stored(engine) == [f"q{i}" for i in range(6)]
    finally:
        writer.close()
