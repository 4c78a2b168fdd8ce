"""Group commit: the service's database calls that arrive within a few milliseconds of each
other share one transaction.

The service keeps its rule "committed before anyone sees it": every caller awaits its call and
is released only once the transaction holding it has committed. What changes is the price: a
busy bot used to pay one transaction (and one commit) per line; now one commit carries every
line, vote and tick that arrived meanwhile, so the writer keeps up with many games at once.

One writer thread runs the calls in the order they were submitted (SQLite stays single-writer;
the calls of one game keep their order). It takes the first waiting call and every call queued
behind it (up to ``max_batch``), runs them all in one session, flushes once (the rows of one
table go out in one statement: `bot.store.rows`) and commits. Calls that arrive while a group
commits make up the next group: under load one commit carries many calls, while a quiet bot
adds no delay at all (``window`` > 0 would also wait that long for more). The calls an event
loop makes during one of its turns reach the thread together at the end of that turn (`run`):
one wake-up and one group for them, not a thread woken for the first and committing it alone
(a group's statements, lease check and commit cost the same for one call as for twenty).
With ``spacing`` (a running bot's: `BUSY_SPACING`), a group that follows one of several calls
starts no sooner than ``spacing`` after it, gathering what arrives meanwhile: under load a
commit carries several turns' calls, for a delay of at most ``spacing`` that every call pays
alike (a person's line, the agent's, a vote, a tick); a call that follows a group of one
(a quiet bot, one game awaiting its calls one by one) goes at once.

If anything in a group fails, it is rolled back and run again flushing after each call, so the
failing call is known; it is failed alone and the others run again without it, so one bad call
never takes the others with it (the service's calls only touch the session, so running one
again is safe). A connection the database dropped is replaced and the group run once more; if
the commit itself fails otherwise, each call is tried in a transaction of its own.

The writer keeps one connection from the engine's pool (psycopg 3 on PostgreSQL) for all its
groups, and takes a fresh one when the database dropped it; one writer is enough, since a group
costs one commit however many calls it carries.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlmodel import Session

from bot.store import rows

log = logging.getLogger(__name__)
T = TypeVar("T")

#: how long the writer waits for more calls once it has one (seconds); 0: it takes what is
#: queued (the calls that arrived during the previous commit)
DEFAULT_WINDOW = 0.0
DEFAULT_MAX_BATCH = 512
#: a running bot's ``spacing`` (`bot.runtime`): while calls come in together, a group starts
#: at most this long after the previous one (seconds); none in tests' writers. At 1,000 games
#: (bench/discord_relay.py) 20 ms: 8.5 calls a commit and 0.94-0.98 ms of CPU a line, relay p99
#: 25 ms in the bot; 10 ms: 3.6 calls a commit, 1.05 ms a line, relay p99 13 ms
BUSY_SPACING = 0.02


@dataclass
class _Call:
    fn: Callable[[Session], Any]
    future: Future[Any]
    #: the event loop awaiting the call (`run`), and its future there
    loop: asyncio.AbstractEventLoop | None = None
    waiter: asyncio.Future[Any] | None = None


class GroupWriter:
    def __init__(
        self,
        engine: sa.Engine,
        *,
        window: float = DEFAULT_WINDOW,
        max_batch: int = DEFAULT_MAX_BATCH,
        spacing: float = 0.0,
        name: str = "mafiabot-db",
    ) -> None:
        self.engine = engine
        self.window = window
        self.max_batch = max_batch
        self.spacing = spacing
        #: a call, the calls of one turn of a loop, or None (stop)
        self._queue: queue.SimpleQueue[_Call | list[_Call] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self._started = False
        self._closed = False
        self._lock = threading.Lock()
        #: each event loop's calls of its running turn, handed to the thread at its end
        self._turns: dict[asyncio.AbstractEventLoop, list[_Call]] = {}
        self._conn: sa.Connection | None = None
        #: SQLite in a file: the WAL is copied into the database by a thread of its own
        self._checkpoints = _Checkpointer(engine) if _wal_file(engine) else None
        #: transactions committed, and calls they carried (a batch is one commit)
        self.commits = 0
        self.calls = 0
        #: groups that failed as a whole and were run again call by call
        self.regrouped = 0

    async def run(self, fn: Callable[[Session], T]) -> T:
        """Run ``fn(session)`` in the next group transaction; return once it has committed.

        The loop is woken once per group, not once per call: every caller of a group is
        released by one callback (a wake-up is a write to the loop's socket and a fight for
        the GIL). The other way round too: the calls made during one turn of the loop reach
        the thread together, at the end of that turn (no later: nothing waits for a timer),
        so the thread is woken once for them and they share a group."""
        loop = asyncio.get_running_loop()
        call = _Call(fn, Future(), loop, loop.create_future())
        with self._lock:
            self._check_open()
            turn = self._turns.get(loop)
            if turn is None:
                turn = self._turns[loop] = []
                loop.call_soon(self._end_of_turn, loop)
            turn.append(call)
        assert call.waiter is not None
        try:
            return await call.waiter  # type: ignore[no-any-return]
        except asyncio.CancelledError:
            call.future.cancel()  # not run if it has not started yet
            raise

    def submit(self, fn: Callable[[Session], T]) -> Future[T]:
        future: Future[T] = Future()
        self._put(_Call(fn, future))
        return future

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the database writer is closed")

    def _put(self, call: _Call) -> None:
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._lock:
            self._check_open()
            # (after the calls this loop made earlier in its turn: the order is kept)
            turn = self._turns.pop(loop, []) if loop is not None else []
            self._hand_over([*turn, call])

    def _end_of_turn(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            turn = self._turns.pop(loop, None)
            if turn:
                self._hand_over(turn)

    def _hand_over(self, calls: list[_Call]) -> None:
        """Queue ``calls`` for the thread, in their order (the caller holds the lock)."""
        if not self._started:
            self._thread.start()
            if self._checkpoints is not None:
                self._checkpoints.start()
            self._started = True
        self._queue.put(calls[0] if len(calls) == 1 else calls)

    def close(self) -> None:
        """Run everything submitted so far, then stop the thread (blocking)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for turn in self._turns.values():  # (calls of a turn not handed over yet go first)
                self._hand_over(turn)
            self._turns.clear()
            started = self._started
            self._queue.put(None)
        if started:
            self._thread.join()
            if self._checkpoints is not None:
                self._checkpoints.stop()

    # --- the writer thread -------------------------------------------------------------------

    def _work(self) -> None:
        try:
            self._groups()
        finally:
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    if self._checkpoints is not None:  # back to the pool as it came
                        self._conn.exec_driver_sql(f"PRAGMA wal_autocheckpoint={AUTO_PAGES}")
                    self._conn.close()
                self._conn = None

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Session]:
        """One transaction on the writer's own connection, kept from group to group: taking
        one from the pool for each group would cost a ping and a reset (two more round trips
        on PostgreSQL). A connection the database dropped, or one a rollback could not
        clean, is replaced by the next group."""
        conn = self._conn
        if conn is None or conn.closed or conn.invalidated:
            conn = self._conn = self.engine.connect()
            if self._checkpoints is not None:
                # never copy the WAL into the database inside one of our commits: that write
                # (and its fsync) is the checkpointer thread's, off the commit path
                conn.exec_driver_sql("PRAGMA wal_autocheckpoint=0")
                conn.commit()
        session = Session(bind=conn, expire_on_commit=False)
        try:
            yield session
            session.commit()
        except BaseException:
            try:
                session.rollback()
            except Exception:
                conn.invalidate()
            if conn.invalidated:
                with contextlib.suppress(Exception):
                    conn.close()
                self._conn = None
            raise
        finally:
            session.close()

    def _groups(self) -> None:
        waiting: list[_Call] = []  # taken from the queue, not run yet (beyond a full group)
        stop = False
        started = float("-inf")  # when the previous group started
        together = False  # it carried more than one call
        while True:
            if not waiting:
                if stop:
                    return
                first = self._queue.get()
                if first is None:
                    return
                waiting = [first] if isinstance(first, _Call) else first
            batch, waiting = waiting[: self.max_batch], waiting[self.max_batch :]
            now = time.monotonic()
            deadline = now + self.window
            if together:  # calls come in together: gather them until `spacing` is up
                deadline = max(deadline, started + self.spacing)
            while len(batch) < self.max_batch and not stop and not waiting:
                remaining = deadline - time.monotonic()
                try:
                    item = (
                        self._queue.get(timeout=remaining)
                        if remaining > 0
                        else (self._queue.get_nowait())
                    )
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                more = [item] if isinstance(item, _Call) else item
                room = self.max_batch - len(batch)
                batch.extend(more[:room])
                waiting = more[room:]
            started, together = time.monotonic(), len(batch) > 1
            self._commit(batch)
            if self._checkpoints is not None:
                self._checkpoints.due.set()

    def _commit(self, batch: list[_Call]) -> None:
        try:
            pending = [c for c in batch if c.future.set_running_or_notify_cancel()]
            if len(pending) > 1 and self._all_at_once(pending):
                return
            self._one_by_one(pending)
        finally:
            self._wake(batch)

    @staticmethod
    def _wake(batch: list[_Call]) -> None:
        """Hand the outcomes to the awaiting loops: one callback per loop and group."""
        by_loop: dict[asyncio.AbstractEventLoop, list[_Call]] = {}
        for call in batch:
            if call.loop is not None:
                by_loop.setdefault(call.loop, []).append(call)
        for loop, calls in by_loop.items():
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
                loop.call_soon_threadsafe(_settle, calls)

    def _all_at_once(self, pending: list[_Call]) -> bool:
        """The usual case: every call, then one flush (same-table rows go out together) and
        one commit. False when anything failed: nothing was committed."""
        try:
            with self._transaction() as session:
                results = [call.fn(session) for call in pending]
        except BaseException:
            self.regrouped += 1
            return False
        self.commits += 1
        self.calls += len(pending)
        for call, result in zip(pending, results, strict=True):
            call.future.set_result(result)
        return True

    def _one_by_one(self, pending: list[_Call]) -> None:
        """Flushing after each call, so a failing one is known and failed alone."""
        reconnected = False
        while pending:
            results: list[Any] = []
            failed: int | None = None
            error: BaseException | None = None
            try:
                with self._transaction() as session:
                    for i, call in enumerate(pending):
                        try:
                            results.append(call.fn(session))
                            rows.write(session)
                        except BaseException as exc:
                            failed, error = i, exc
                            raise
            except BaseException as exc:
                if _dropped(exc) and not reconnected:
                    reconnected = True
                    continue  # a new connection from the pool; the whole group again
                if failed is None:  # the commit failed: each call on its own
                    if len(pending) == 1:
                        pending[0].future.set_exception(exc)
                    else:
                        log.warning("a group commit of %d calls failed (%r); retrying one by one",
                                    len(pending), exc)  # fmt: skip
                        for call in pending:
                            self._retry_alone(call)
                    return
                assert error is not None
                pending.pop(failed).future.set_exception(error)
                continue  # nothing was committed: the others again, without it
            self.commits += 1
            self.calls += len(pending)
            for call, result in zip(pending, results, strict=True):
                call.future.set_result(result)
            return

    def _retry_alone(self, call: _Call) -> None:
        for attempt in (1, 2):
            try:
                with self._transaction() as session:
                    result = call.fn(session)
                break
            except BaseException as exc:
                if (
                    attempt == 1
                    and isinstance(exc, sa.exc.DBAPIError)
                    and exc.connection_invalidated
                ):
                    continue
                call.future.set_exception(exc)
                return
        self.commits += 1
        self.calls += 1
        call.future.set_result(result)


def _settle(calls: list[_Call]) -> None:
    """On the awaiting loop: each caller gets its call's result or exception."""
    for call in calls:
        waiter, future = call.waiter, call.future
        if waiter is None or waiter.done():
            continue  # its caller was cancelled
        if not future.done():  # (the writer failed unexpectedly: never leave a caller hanging)
            waiter.set_exception(RuntimeError("the database writer stopped"))
        elif future.cancelled():
            waiter.cancel()
        elif (error := future.exception()) is not None:
            waiter.set_exception(error)
        else:
            waiter.set_result(future.result())


def _dropped(exc: BaseException) -> bool:
    """The database connection was lost (the pool replaces it): worth one more try."""
    return isinstance(exc, sa.exc.DBAPIError) and bool(exc.connection_invalidated)


#: SQLite's own automatic checkpoint, in pages of WAL (its default)
AUTO_PAGES = 1000
#: how often the checkpointer copies the WAL into the database while commits come in (seconds)
CHECKPOINT_EVERY = 1.0


def _wal_file(engine: sa.Engine) -> bool:
    return engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:")


class _Checkpointer:
    """SQLite's WAL is copied back into the database file by a checkpoint. Left to SQLite, the
    commit that crosses ``AUTO_PAGES`` runs it, on the writer thread: that commit (and every
    call of its group, and every group queued behind it) waits for a write of megabytes and
    its fsync, a pause of a tenth of a second or more under load. Here a thread of its own
    runs a PASSIVE checkpoint (it never blocks the writer or readers) at most every
    ``CHECKPOINT_EVERY`` seconds after commits, on its own connection; SQLite releases the
    GIL meanwhile. If it fails it says so once and keeps trying; the WAL only grows until it
    succeeds, nothing is lost (the WAL is the database's journal either way)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.due = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name="mafiabot-wal", daemon=True)
        self._failing = False
        #: checkpoints run (tests, benches)
        self.runs = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.due.set()
        self._thread.join()

    def _work(self) -> None:
        conn: sa.Connection | None = None
        try:
            while not self._stop.is_set():
                self.due.wait()
                if self._stop.wait(CHECKPOINT_EVERY):
                    break
                self.due.clear()
                try:
                    if conn is None:
                        conn = self.engine.connect()
                    conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    conn.commit()
                    self.runs += 1
                    if self._failing:
                        log.info("SQLite checkpoints work again")
                    self._failing = False
                except Exception:
                    if not self._failing:
                        log.warning("SQLite checkpoint failed; retrying", exc_info=True)
                    self._failing = True
                    if conn is not None:
                        with contextlib.suppress(Exception):
                            conn.close()
                    conn = None
        finally:
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()
