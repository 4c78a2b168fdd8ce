"""Consent withdrawals requested from a platform (``/mafia consent withdraw``) run as background
jobs: the command answers at once (the consent is withdrawn and the person taken out of open
lobbies in one small transaction), the rest goes through the ended games one small
transaction at a time, so a person with a thousand ended games never holds up a running
game's writes, and the person is told when it is done.

How the games' writes are kept free (SQLite has one writer; every write waits for it):

- Nothing is read inside a write transaction. Each ended game's cleaning is worked out on a
  read-only snapshot (`bot.protection.privacy.plan_seat` / `plan_game`; an ended game's rows no
  longer
  change), in a low-priority process of its own (no share of this process's interpreter lock),
  a batch of games ahead of the one being written.
- On SQLite the writes go through the bot's own writer (``write``:
  `bot.service.port.GameService.write`), one game per call, queued with the games' own writes
  rather than racing them for SQLite's one lock: a game's write waits for at most one such
  call (a few milliseconds: set-wise DELETEs and UPDATEs by id), never for SQLite's busy-wait
  back-off or a low-priority process holding the lock. On PostgreSQL, which locks rows, each
  game is written in a transaction of its own beside the games' writes. Between two
  transactions the event loop turns (``pause``).
- Files (agents' memories) are removed before each game's transaction, not inside it.

A withdrawal under way is recorded (`bot.store.models.WithdrawalJob`, with its first step) until
every game is cleaned; at start each adapter takes up its platform's (`Withdrawals.resume`),
so a stop half-way loses nothing, and the person is still told.

One person may start a withdrawal once every `bot.limits.WITHDRAW_COOLDOWN` seconds per server
(it costs a pass over every game of the server); a second request while theirs is still
running is answered with that, not started again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any, TypeVar

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from bot.errors import ServiceError
from bot.limits import WITHDRAW_COOLDOWN, Cooldowns
from bot.protection.plan_check import REPLANS, replannable
from bot.protection.privacy import (
    FirstStep,
    Plan,
    WithdrawalReport,
    apply_plan,
    first_step,
    job_done,
    plan_game,
    plan_open_game,
    plan_seat,
    run_file_hooks,
    steps_left,
)
from bot.store.db import session_scope
from bot.store.models import WithdrawalJob

log = logging.getLogger(__name__)

T = TypeVar("T")
Done = Callable[[WithdrawalReport], Awaitable[None]]
#: tells a person (server, user id) that their withdrawal taken up after a restart is done
Tell = Callable[[str, str, WithdrawalReport], Awaitable[None]]
#: runs ``fn(session)`` in a transaction of the bot's writer, returns once committed
Write = Callable[[Callable[[Session], Any]], Awaitable[Any]]

#: ended games worked out per call of the planning process
BATCH = 25


class Withdrawals:
    def __init__(
        self,
        engine: Engine,
        *,
        write: Write | None = None,
        cooldown: float = WITHDRAW_COOLDOWN,
        pause: float = 0.0,
        processes: bool = True,
    ) -> None:
        self.engine = engine
        #: the bot's writer, on SQLite (one writer for the whole database: a transaction of
        #: our own would race the games' for it); elsewhere (PostgreSQL locks rows: the ended
        #: games' rows are not the running games'), or None: a transaction of its own on
        #: ``engine`` per step, in a thread
        self.write = write if engine.dialect.name == "sqlite" else None
        self._url = engine.url.render_as_string(hide_password=False)
        #: the planning runs in a process of its own (no share of this process's interpreter
        #: lock: the games' event loop and writer are never starved); False: in a thread here
        #: (SQLite in memory)
        self.processes = processes and engine.url.database not in (None, "", ":memory:")
        self._executor: ProcessPoolExecutor | None = None
        self.cooldowns = Cooldowns(cooldown)
        #: seconds between two transactions of a withdrawal (0: a turn of the event loop)
        self.pause = pause
        self._running: dict[tuple[str, str, str], asyncio.Task[None]] = {}

    async def _write(self, fn: Callable[[Session], T]) -> T:
        if self.write is not None:
            return await self.write(fn)  # type: ignore[no-any-return]

        def alone() -> T:
            with session_scope(self.engine) as session:
                return fn(session)

        return await asyncio.to_thread(alone)

    async def start(self, platform: str, server: str, user_id: str, done: Done) -> WithdrawalReport:
        """Withdraw ``user_id`` on ``server``: their consent, the games they host and their
        seats in open games at once (one small transaction; the report says which lobbies to
        take them out of), the ended games in the background; ``done`` is then called with
        the whole report (to tell the person). Raises `ServiceError` (a `CoolingDown` one when
        too soon) with the line to show them; nothing is done then."""
        key = (platform, server, user_id)
        if key in self._running:
            raise ServiceError(
                "Your withdrawal is already under way; I'll tell you when it's done."
            )
        self.cooldowns.check(key, time.monotonic(), "withdraw your consent")
        return await self._begin(key, done)

    async def resume(
        self, platform: str, tell: Tell, mine: Callable[[str], bool] | None = None
    ) -> int:
        """Take up again every withdrawal on ``platform`` that a stop cut short (its
        `bot.store.models.WithdrawalJob` is still there: the first step is done again, which
        changes nothing, then every game is looked at again); each person is told when theirs
        is done with ``tell(server, user, report)``. ``mine``: whether a server is this
        process's (another process's shards take up theirs). Returns how many were taken up."""
        jobs = await asyncio.to_thread(_jobs, self.engine, platform)
        jobs = [(server, user) for server, user in jobs if mine is None or mine(server)]
        for server, user_id in jobs:
            key = (platform, server, user_id)
            if key in self._running:
                continue

            async def done(
                report: WithdrawalReport, server: str = server, user: str = user_id
            ) -> None:
                await tell(server, user, report)

            try:
                await self._begin(key, done)
            except Exception:
                log.exception("taking up a consent withdrawal on %s server %s failed", *key[:2])
        if jobs:
            log.info("took up %d consent withdrawal(s) a stop had cut short", len(jobs))
        return len(jobs)

    async def _begin(self, key: tuple[str, str, str], done: Done) -> WithdrawalReport:
        platform, server, user_id = key
        report = WithdrawalReport(platform, server, user_id)
        try:
            first = await self._write(partial(first_step, platform=platform, server=server,
                                              user_id=user_id))  # fmt: skip
        except Exception:
            self.cooldowns.clear(key)
            raise
        try:
            await asyncio.to_thread(steps_left, self.engine, first, platform, server, user_id)
        except Exception:
            self.cooldowns.clear(key)  # (the first step is done again at the next try)
            raise
        first.into(report)
        task = asyncio.create_task(
            self._rest(key, first, report, done), name=f"withdraw:{platform}:{server}"
        )
        self._running[key] = task
        task.add_done_callback(lambda _t: self._running.pop(key, None))
        return report

    async def _rest(
        self, key: tuple[str, str, str], first: FirstStep, report: WithdrawalReport, done: Done
    ) -> None:
        user_id = key[2]
        try:
            jobs: list[tuple[str | None, str, int | None]] = [
                (game_id, game_id, seat_id) for game_id, seat_id in first.ended_seats
            ]
            jobs += [(None, game_id, None) for game_id in first.ended_games]
            async for (scrubbed, game_id, seat_id), plan in self._plans(user_id, jobs):
                redo = (
                    partial(plan_game, self.engine, user_id, game_id)
                    if seat_id is None
                    else partial(plan_seat, self.engine, user_id, game_id, seat_id)
                )
                await self._apply(plan, report, redo)
                if scrubbed is not None:
                    report.scrubbed.append(scrubbed)
                await asyncio.sleep(self.pause)
            for game_id in first.open_games:  # (planned last: a running game's rows change)
                redo = partial(plan_open_game, self.engine, user_id, game_id)
                await self._apply(await asyncio.to_thread(redo), report, redo)
                await asyncio.sleep(self.pause)
            await self._write(partial(job_done, platform=key[0], server=key[1], user_id=user_id))
        except Exception:
            log.exception("a consent withdrawal on %s server %s failed", key[0], key[1])
            self.cooldowns.clear(key)  # they may try again at once
            return
        try:
            await done(report)
        except Exception:
            log.exception("telling a person their withdrawal is done failed")

    async def _plans(self, user_id: str, jobs: list[tuple[str | None, str, int | None]]) -> Any:
        """(job, plan) for each job, in order; the planning of the next batch runs while this
        one is applied."""
        batches = [jobs[i : i + BATCH] for i in range(0, len(jobs), BATCH)]
        if not self.processes:
            for batch in batches:
                plans = await asyncio.to_thread(_plan_batch, self.engine, user_id, batch)
                for job, plan in zip(batch, plans, strict=True):
                    yield job, plan
            return
        loop = asyncio.get_running_loop()
        pool = self._pool()

        def ask(batch: list[tuple[str | None, str, int | None]]) -> asyncio.Future[list[Plan]]:
            return loop.run_in_executor(pool, _plan_in_process, self._url, user_id, batch)

        ahead = ask(batches[0]) if batches else None
        for i, batch in enumerate(batches):
            assert ahead is not None
            plans = await ahead
            ahead = ask(batches[i + 1]) if i + 1 < len(batches) else None
            for job, plan in zip(batch, plans, strict=True):
                yield job, plan

    async def _apply(self, plan: Plan, report: WithdrawalReport, redo: Callable[[], Plan]) -> None:
        """Write ``plan``; if another withdrawal changed its rows since it was worked out
        (`StalePlan`: nothing written), work it out again with ``redo`` and write that."""
        for attempt in range(REPLANS + 1):
            hook_rows = 0
            if plan.hooks is not None:
                hook_rows += await asyncio.to_thread(run_file_hooks, plan)
            if plan.writes():
                try:
                    hook_rows += await self._write(partial(apply_plan, plan=plan))
                except Exception as err:
                    if not replannable(err):
                        raise
                    if attempt == REPLANS:
                        raise
                    plan = await asyncio.to_thread(redo)
                    continue
            report.counts.update(plan.counts)
            report.counts["hook_rows"] += hook_rows
            return

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_lower_priority,
            )
        return self._executor

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    def running(self) -> int:
        return len(self._running)

    async def wait(self) -> None:
        """Wait for every withdrawal started so far (tests, a graceful stop)."""
        while self._running:
            await asyncio.gather(*list(self._running.values()), return_exceptions=True)


def _plan_batch(
    engine: Engine, user_id: str, batch: list[tuple[str | None, str, int | None]]
) -> list[Plan]:
    return [
        plan_game(engine, user_id, game_id)
        if seat_id is None
        else plan_seat(engine, user_id, game_id, seat_id)
        for _scrubbed, game_id, seat_id in batch
    ]


def _jobs(engine: Engine, platform: str) -> list[tuple[str, str]]:
    with Session(engine) as session:
        rows = session.exec(select(WithdrawalJob).where(WithdrawalJob.platform == platform)).all()
        return [(r.server_external_id, r.user_id) for r in rows]


def _lower_priority() -> None:
    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)  # the games' process comes first when the machine is busy


_ENGINES: dict[str, Engine] = {}


def _plan_in_process(
    url: str, user_id: str, batch: list[tuple[str | None, str, int | None]]
) -> list[Plan]:
    """`_plan_batch` in the planning process (reads only; its engine is kept between calls)."""
    from bot.store.db import make_engine

    engine = _ENGINES.get(url)
    if engine is None:
        engine = _ENGINES[url] = make_engine(url)
    return _plan_batch(engine, user_id, batch)


def withdrawn_reply(report: WithdrawalReport) -> str:
    """What a person who has just withdrawn their consent is told (the work goes on in the
    background; `Withdrawals.start`)."""
    lines = report.summary()
    running = [g for g in report.pending if g not in report.lobby]
    extra = (
        f"\nYou are still seated in {len(running)} running game(s); what you say there is "
        "removed when they end."
        if running
        else ""
    )
    return (
        "Withdrawn: you will be asked again before your next game.\n"
        + "\n".join(lines[1:6])
        + extra
        + "\nYour data in ended games is being removed now; I'll tell you when it's done."
    )
