"""Consent withdrawal as a background job (issue 21): one small transaction per ended game (the
games' writes are never held behind a whole server's cleaning), a cooldown per person, the
person told when it is done; the result is the same as before (tests/bot/test_privacy.py)."""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.limits import CoolingDown
from bot.protection.privacy import Plan, WithdrawalReport, withdraw
from bot.protection.withdrawals import Withdrawals
from bot.service.port import GameService
from bot.store import models as m
from tests.bot.test_privacy import ALICE, SERVER, play_table, service  # noqa: F401


async def test_each_ended_game_is_cleaned_in_its_own_transaction(
    service: GameService,  # noqa: F811
    engine: Engine,
) -> None:
    games = [(await play_table(service)).game_id for _ in range(3)]
    commits: list[int] = []

    def count(_conn: object) -> None:
        commits.append(1)

    sa.event.listen(engine, "commit", count)
    try:
        report = await asyncio.to_thread(withdraw, engine, "discord", SERVER, ALICE)
    finally:
        sa.event.remove(engine, "commit", count)
    assert sorted(report.scrubbed) == sorted(games)
    # the consent and the seats first, then every ended game in a transaction of its own
    assert len(commits) >= 1 + len(games), len(commits)


async def test_a_withdrawal_job_tells_when_done_and_has_a_cooldown(
    service: GameService,  # noqa: F811
    engine: Engine,
) -> None:
    table = await play_table(service)
    jobs = Withdrawals(engine, cooldown=60.0, processes=False)  # (the Slack test: a process)
    told: list[WithdrawalReport] = []
    finished = asyncio.Event()

    async def done(report: WithdrawalReport) -> None:
        told.append(report)
        finished.set()

    first = await jobs.start("discord", SERVER, ALICE, done)
    # the consent is withdrawn when start returns; the games follow in the background
    with Session(engine) as s:
        rows = s.exec(select(m.Consent).where(m.Consent.user_id == ALICE)).all()
    assert rows and all(r.withdrawn_at is not None for r in rows)
    assert first.counts["consent_answers_withdrawn"] >= 1
    await asyncio.wait_for(finished.wait(), 30)
    assert told and told[0].scrubbed == [table.game_id]
    with Session(engine) as s:
        seat = s.exec(
            select(m.Seat).where(
                m.Seat.game_id == table.game_id, m.Seat.index == table.seat_of[ALICE]
            )
        ).one()
    assert seat.user_id is None and seat.scrubbed_at is not None
    with pytest.raises(CoolingDown):
        await jobs.start("discord", SERVER, ALICE, done)
    assert len(told) == 1


async def test_memory_files_are_removed_outside_any_write_transaction(
    service: GameService,  # noqa: F811
    engine: Engine,
    tmp_path: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Disk work (an agent's memory folder) never runs while the withdrawal holds SQLite's
    write lock: another connection can take the lock while the folder is removed."""
    import sqlite3
    from pathlib import Path

    from bot.seats import experience_store
    from bot.store.db import sqlite_file

    path = sqlite_file(engine.url)
    if path is None:
        pytest.skip("SQLite's one-writer lock is what is probed")
    table = await play_table(service)
    root = Path(str(tmp_path)) / "memory"
    (root / table.game_id / "5").mkdir(parents=True)
    monkeypatch.setattr(experience_store, "MEMORY_ROOTS", {root.resolve()})
    locked: list[bool] = []
    rmtree = shutil.rmtree

    def probing_rmtree(folder: Any, **kwargs: Any) -> None:
        probe = sqlite3.connect(path, timeout=0)
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.rollback()
            locked.append(False)
        except sqlite3.OperationalError:
            locked.append(True)
        finally:
            probe.close()
        rmtree(folder, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", probing_rmtree)
    report = await asyncio.to_thread(withdraw, engine, "discord", SERVER, ALICE)
    assert report.scrubbed == [table.game_id]
    assert not (root / table.game_id).exists()
    assert locked == [False]


async def test_a_background_withdrawal_writes_only_through_the_given_writer(
    service: GameService,  # noqa: F811
    engine: Engine,
) -> None:
    """Every write of a withdrawal started from a platform goes through the bot's writer
    (queued with the games' writes), none through a connection of its own: on SQLite, where
    there is one writer for the whole database."""
    import threading

    if engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL locks rows: a withdrawal writes beside the games")

    games = [(await play_table(service)).game_id for _ in range(2)]
    writer_calls = 0

    async def write(fn: object) -> object:
        nonlocal writer_calls
        writer_calls += 1
        return await service.write(fn)  # type: ignore[arg-type]

    committed_on: list[str] = []

    def note(_conn: object) -> None:
        committed_on.append(threading.current_thread().name)

    jobs = Withdrawals(engine, write=write, processes=False)
    finished = asyncio.Event()

    async def done(_report: WithdrawalReport) -> None:
        finished.set()

    sa.event.listen(engine, "commit", note)
    try:
        await jobs.start("discord", SERVER, ALICE, done)
        await asyncio.wait_for(finished.wait(), 60)
    finally:
        sa.event.remove(engine, "commit", note)
    assert writer_calls >= 1 + len(games)
    # (the writer's WAL checkpointer commits on a connection of its own too: it copies the
    # log into the database and writes no row)
    assert committed_on and set(committed_on) - {"mafiabot-wal"} == {"mafiabot-db"}, committed_on


async def test_two_withdrawals_at_once_keep_each_others_redactions(
    service: GameService,  # noqa: F811
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Alice and Bob withdraw at the same moment; a line of Dave's names them both. Each
    withdrawal works out its rewrite of that line on a snapshot before either writes: the one
    written second must not put back the id the first removed (it is worked out again)."""
    import threading

    from bot.protection import privacy
    from tests.bot.test_privacy import BOB, dump

    table = await play_table(service)
    planned = privacy.plan_game
    both_read = threading.Barrier(2, timeout=30)
    waited: set[str] = set()

    def plan_then_wait(engine_: Engine, user_id: str, game_id: str) -> privacy.Plan:
        plan = planned(engine_, user_id, game_id)
        if game_id == table.game_id and user_id not in waited:
            waited.add(user_id)
            both_read.wait()  # both have read the game before either writes
        return plan

    monkeypatch.setattr(privacy, "plan_game", plan_then_wait)
    alice, bob = await asyncio.gather(
        asyncio.to_thread(withdraw, engine, "discord", SERVER, ALICE),
        asyncio.to_thread(withdraw, engine, "discord", SERVER, BOB),
    )
    assert alice.scrubbed == [table.game_id] and bob.scrubbed == [table.game_id]
    tables = dump(engine)
    tables.pop("consents")
    for name, text in tables.items():
        for uid in (ALICE, BOB):
            assert uid not in text, f"{uid} left in table {name}"
    with Session(engine) as s:
        dave = s.exec(
            select(m.Message.text).where(
                m.Message.game_id == table.game_id,
                m.Message.seat_index == table.seat_of["U0SECRETDAVE"],
            )
        ).all()
    assert dave == ["[withdrawn] and [withdrawn] look shifty to me"]


async def test_two_withdrawal_jobs_at_once_keep_each_others_redactions(
    service: GameService,  # noqa: F811
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same race through the bot's background jobs and its writer: the plan written
    second was read before the first was written, so it is worked out again."""
    import threading

    from bot.protection import withdrawals
    from tests.bot.test_privacy import BOB, dump

    await play_table(service)
    batch = withdrawals._plan_batch
    both_read = threading.Barrier(2, timeout=30)
    calls = 0

    def plan_then_wait(*args: object) -> list[Plan]:
        nonlocal calls
        plans = batch(*args)  # type: ignore[arg-type]
        calls += 1
        if calls <= 2:
            both_read.wait()
        return plans

    monkeypatch.setattr(withdrawals, "_plan_batch", plan_then_wait)
    jobs = Withdrawals(engine, write=service.write, processes=False)
    finished: list[WithdrawalReport] = []
    both = asyncio.Event()

    async def done(report: WithdrawalReport) -> None:
        finished.append(report)
        if len(finished) == 2:
            both.set()

    await jobs.start("discord", SERVER, ALICE, done)
    await jobs.start("discord", SERVER, BOB, done)
    await asyncio.wait_for(both.wait(), 30)
    tables = dump(engine)
    tables.pop("consents")
    for name, text in tables.items():
        for uid in (ALICE, BOB):
            assert uid not in text, f"{uid} left in table {name}"


def test_only_the_databases_rollbacks_for_another_transaction_are_tried_again() -> None:
    """A deadlock or serialization failure (PostgreSQL rolled the whole transaction back for a
    concurrent one) is worked out again like a stale plan; any other error is not."""
    import sqlalchemy as sa

    from bot.protection.plan_check import lock_conflict

    class Orig(Exception):
        def __init__(self, sqlstate: str | None) -> None:
            super().__init__(sqlstate)
            self.sqlstate = sqlstate

    def failed(sqlstate: str | None) -> sa.exc.DBAPIError:
        return sa.exc.OperationalError("UPDATE ...", {}, Orig(sqlstate))

    assert lock_conflict(failed("40P01")) and lock_conflict(failed("40001"))
    assert not lock_conflict(failed("23505")) and not lock_conflict(failed(None))
    assert not lock_conflict(ValueError("40P01"))


async def test_a_withdrawal_cut_short_by_a_stop_is_taken_up_at_the_next_start(
    service: GameService,  # noqa: F811
    engine: Engine,
) -> None:
    """Nothing of a withdrawal is lost to a restart: the process stops after the first of
    three ended games; at the next start the job is taken up again, every game is cleaned
    and the person is told."""
    games = [(await play_table(service)).game_id for _ in range(3)]
    stopped = asyncio.Event()

    class Dying(Withdrawals):
        applied = 0

        async def _apply(self, *args: object) -> None:
            if self.applied >= 1:
                stopped.set()
                await asyncio.Event().wait()  # the process stops here
            self.applied += 1
            await super()._apply(*args)  # type: ignore[arg-type]

    async def never(report: WithdrawalReport) -> None:
        raise AssertionError("told before it was done")

    first = Dying(engine, processes=False)
    await first.start("discord", SERVER, ALICE, never)
    await asyncio.wait_for(stopped.wait(), 30)
    for task in list(first._running.values()):
        task.cancel()
    await first.wait()

    def scrubbed() -> int:
        with Session(engine) as s:
            return len(
                s.exec(
                    select(m.Seat).where(
                        col(m.Seat.game_id).in_(games), col(m.Seat.scrubbed_at).is_not(None)
                    )
                ).all()
            )

    assert scrubbed() == 1
    told: list[tuple[str, str, WithdrawalReport]] = []
    finished = asyncio.Event()

    async def tell(server: str, user: str, report: WithdrawalReport) -> None:
        told.append((server, user, report))
        finished.set()

    again = Withdrawals(engine, processes=False)  # the next start
    assert await again.resume("slack", tell) == 0  # (another platform's jobs are not ours)
    assert await again.resume("discord", tell) == 1
    await asyncio.wait_for(finished.wait(), 30)
    assert [(s, u) for s, u, _ in told] == [(SERVER, ALICE)]
    assert scrubbed() == 3
    with Session(engine) as s:
        assert not s.exec(select(m.WithdrawalJob)).all()  # done: not taken up again
    assert await Withdrawals(engine, processes=False).resume("discord", tell) == 0
