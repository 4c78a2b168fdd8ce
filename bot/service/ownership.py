"""Ownership: one process drives a game at a time.

The service takes a game's lease (`bot.service.lease`) when it creates or resumes it, renews it
while
it holds it, and lets it go when the game ends or the process stops. Every transaction that
writes a held game's rows is fenced with the lease's epoch (`Ownership.fence_games`, run by the
store as rows are written and by every ORM flush of a service transaction), so a process that
lost a game cannot write to it: the write is refused with `GameMoved`, and the service stops
driving that game (``on_lost``).

`Ownership` does not know the service: it is given the service's way to run a transaction
(`RunDb`), what to do when a game was lost, and what else to do each time it renews.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from datetime import datetime
from typing import Any, Protocol, TypeVar

import sqlalchemy as sa
from sqlmodel import Session

from bot.errors import ServiceError, db_reason
from bot.service import lease
from bot.service.clock import utcnow
from bot.store import models as m

log = logging.getLogger(__name__)
T = TypeVar("T")

#: the session keys of a service transaction: its `Ownership`, and the games fenced so far
FENCE, _FENCED = "mafiabot.service", "mafiabot.fenced"


class GameHeld(ServiceError):
    """Another live process drives this game (see `bot.service.lease`)."""

    def __init__(self, held: lease.HeldBy) -> None:
        super().__init__(
            f"Game {held.game_id} is being run by another mafiabot process "
            f"({held.describe()}); stop that one first."
        )
        self.held = held


class GameMoved(ServiceError):
    """This process lost the game's lease to another one: it may no longer write to it."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"Game {game_id} is now run by another mafiabot process.")
        self.game_id = game_id


class RunDb(Protocol):
    """Run a function in a service transaction (fenced), return once it committed."""

    def __call__(self, fn: Callable[[Session], T], /) -> Awaitable[T]: ...


@sa.event.listens_for(Session, "before_flush")
def _fence_flush(session: Session, _context: Any, _instances: Any) -> None:
    """Every flush of a service transaction checks the leases of the games it writes."""
    ownership = session.info.get(FENCE)
    if ownership is not None:
        ownership.fence(session)


class Ownership:
    """The games one service holds (id -> fencing epoch), kept renewed while it runs."""

    def __init__(
        self,
        run_db: RunDb,
        lease_seconds: float = lease.LEASE_SECONDS,
        *,
        on_lost: Callable[[str], None],
        each_round: Callable[[], None] = lambda: None,
    ) -> None:
        #: this service as a lease holder
        self.holder = lease.Holder.this_process()
        self.lease_seconds = lease_seconds
        #: the games held, id -> fencing epoch
        self.held: dict[str, int] = {}
        #: game id -> when its previous holder's lease ran out, as taken (bot.service.outages)
        self.previous_expiry: dict[str, datetime] = {}
        self._run_db = run_db
        self._on_lost = on_lost
        self._each_round = each_round
        self._keeper: asyncio.Task[None] | None = None

    # --- fencing --------------------------------------------------------------------------

    def fence(self, session: Session) -> None:
        """Inside a transaction about to flush ORM objects: fence the games they belong to."""
        touched = set()
        for obj in (*session.new, *session.dirty, *session.deleted):
            gid = obj.id if isinstance(obj, m.Game) else getattr(obj, "game_id", None)
            if isinstance(gid, str):
                touched.add(gid)
        self.fence_games(session, touched)

    def fence_games(self, session: Session, game_ids: Iterable[str]) -> None:
        """Inside a transaction about to write rows of ``game_ids``: check the lease of each
        held one, once per transaction (a group commit: once per game, in one statement).
        See `bot.service.lease.fence`."""
        checked: set[str] = session.info.setdefault(_FENCED, set())
        held = {
            gid: epoch
            for gid in game_ids
            if gid not in checked and (epoch := self.held.get(gid)) is not None
        }  # (a game this process does not drive is not fenced: an import, a tool)
        if not held:
            return
        lost = lease.fence_all(session.connection(), self.holder, held)
        if lost:
            raise GameMoved(min(lost))
        checked.update(held)

    # --- holding --------------------------------------------------------------------------

    def create(self, session: Session, game_id: str) -> None:
        """Inside the transaction creating a game: its lease, epoch 1 (then `hold` it)."""
        lease.create(session.connection(), game_id, self.holder, utcnow(), self.lease_seconds)

    def hold(self, game_id: str, epoch: int) -> None:
        self.held[game_id] = epoch
        if self._keeper is None or self._keeper.done():
            self._keeper = asyncio.create_task(self._keep(), name="mafiabot:leases")

    def drop(self, game_id: str) -> bool:
        """Stop holding the game here (its lease is not released); False if it was not held."""
        return self.held.pop(game_id, None) is not None

    async def _keep(self) -> None:
        """Renew our leases every third of their length; stop driving games taken over by
        another process; then the round's other work (the service re-arms overdue deadlines)."""
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            await self.renew()
            self._each_round()

    async def renew(self) -> None:
        held = dict(self.held)
        if not held:
            return
        try:
            lost = await self._run_db(
                lambda s: lease.renew(
                    s.connection(), self.holder, held, utcnow(), self.lease_seconds
                )
            )
        except Exception as exc:  # an outage: the fence keeps us safe, try again next round
            log.warning("could not renew %d game lease(s): %s", len(held), db_reason(exc))
            return
        for game_id in lost:
            if self.held.get(game_id) == held[game_id]:
                self._on_lost(game_id)

    async def take(self, game_id: str) -> int:
        """Take the game's lease for this service, or raise `GameHeld` / a `ServiceError`
        naming why there is nothing to take."""

        def take(session: Session) -> lease.Lease | lease.HeldBy:
            conn = session.connection()
            lease.touch(conn, game_id)  # SQLite: the write lock first, then read
            row = session.get(m.Game, game_id)
            if row is None:
                raise ServiceError(f"There is no game {game_id!r} in the database.")
            if row.status not in ("lobby", "running"):
                raise ServiceError(f"Game {game_id} is {row.status}; there is nothing to resume.")
            return lease.acquire(conn, game_id, self.holder, utcnow(), self.lease_seconds)

        for attempt in (1, 2, 3):
            try:
                got = await self._run_db(take)
            except sa.exc.IntegrityError:  # another process created the lease just now
                if attempt == 3:
                    raise
                continue
            if isinstance(got, lease.HeldBy):
                raise GameHeld(got)
            if got.previous_expiry is not None:
                self.previous_expiry[game_id] = got.previous_expiry
            self.hold(game_id, got.epoch)
            return got.epoch
        raise AssertionError("unreachable")

    @contextlib.asynccontextmanager
    async def taken(self, game_id: str) -> AsyncIterator[datetime | None]:
        """Take the game's lease (`take`) for what the block does, and let it go again if that
        fails. Yields when the previous holder's lease ran out (None: it was released)."""
        await self.take(game_id)
        try:
            yield self.previous_expiry.pop(game_id, None)
        except BaseException:
            await self.let_go(game_id)
            raise

    async def let_go(self, game_id: str) -> None:
        """Stop holding the game and release its lease (if it was held)."""
        if self.drop(game_id):
            await self.release([game_id])

    async def release(self, game_ids: list[str]) -> None:
        if not game_ids:
            return
        try:
            await self._run_db(
                lambda s: lease.release(s.connection(), self.holder, game_ids, utcnow())
            )
        except Exception as exc:  # it expires by itself
            log.warning("could not release game lease(s) %s: %s", game_ids, db_reason(exc))

    async def stop_keeping(self) -> None:
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeper

    async def release_all(self) -> None:
        """Release every game held here, for the next process."""
        held, self.held = list(self.held), {}
        await self.release(held)
