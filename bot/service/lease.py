"""One process drives a game at a time: a lease per game in the database, with a fencing token.

Why: two processes driving one game (a second ``simulate --resume``, a bot started twice, two
shards that both think a guild is theirs, the old and the new process of a rolling restart)
would each replay the log, each run the deadlines and each write the next action: lines posted
twice, a unique key failing, a game stuck. A lock held in memory or in a file does not work
across machines; a row in the database everybody already shares does, on SQLite and PostgreSQL
alike.

These are the rows and their rules; `bot.service.ownership` is the service's side (what it holds,
the renewal, the fence on its transactions). The ``game_leases`` row of a game says who
holds it (``holder``: a random token per `GameService`, with the ``host`` and ``pid`` for
people to read), until when (``expires_at``) and since which *epoch*. The rules:

- **Taking** a game (`acquire`): allowed when nobody holds it, when the lease has expired, or
  when the holder is a process on this machine that is gone (``kill -9``: no need to wait for
  the expiry). The taker bumps ``epoch`` with a compare-and-set on the epoch it read, so of two
  processes racing for one game exactly one wins; the other learns who holds it.
- **Holding** it: the holder renews ``expires_at`` every third of the lease time (`renew`). A
  holder that dies stops renewing; after ``LEASE_SECONDS`` anyone may take over.
- **Fencing** (`fence`): every transaction that writes a game's rows first updates its lease
  row *where holder and epoch are still ours*. If another process took the game over (a higher
  epoch), the update matches nothing and the whole transaction is rolled back, so a process
  that lost its lease (it stalled past the expiry, it was partitioned from the database)
  cannot write a single row, even if it still believes it holds the game. The same update
  locks the lease row on PostgreSQL (and takes SQLite's write lock), so a takeover waits for a
  write in progress and never interleaves with it. Expiry alone never fences: a holder that
  renews late but was not taken over simply carries on.
- **Releasing** (`release`): a process that stops cleanly (or whose game has ended) expires its
  leases at once, so the next process need not wait.

Building on this (several processes on one PostgreSQL, rolling restarts): a process that wants
a game calls ``GameService.resume``; `bot.service.ownership.GameHeld` (a `ServiceError`) says who
holds it and until when, so a new process in a rolling restart retries after ``expires_at``,
or as soon as the old one releases its games on SIGTERM. Clocks: expiry times are written by the
holder's clock and read by the taker's, so machines sharing a database need clocks within a
few seconds of each other (NTP); the fencing token, not the clock, is what keeps two writers
apart.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from bot.store import models as m
from bot.store import rows

#: how long a lease lasts without renewal (a dead holder's games wait this long at most)
LEASE_SECONDS = 30.0

_T = m.GameLease.__table__  # type: ignore[attr-defined]


def _machine() -> str:
    """This machine as far as process ids go: the host name, and the pid namespace where the
    system has one (two containers may share a host name but not their process ids)."""
    name = socket.gethostname()
    with contextlib.suppress(OSError):
        return f"{name} {os.readlink('/proc/self/ns/pid')}"
    return name


@dataclass(frozen=True)
class Holder:
    """Who holds leases: one per `GameService` (a token), with where it runs for people."""

    token: str
    host: str
    pid: int

    @classmethod
    def this_process(cls) -> Holder:
        return cls(secrets.token_hex(8), _machine(), os.getpid())


@dataclass(frozen=True)
class Lease:
    """A lease we hold: writes to the game carry ``epoch`` (the fencing token)."""

    game_id: str
    epoch: int
    expires_at: datetime
    #: when the previous holder's lease ran out (or was released): a bound on when that
    #: process was last known to drive the game (`bot.service.outages`, after a restart)
    previous_expiry: datetime | None = None


@dataclass(frozen=True)
class HeldBy:
    """Somebody else's lease on a game."""

    game_id: str
    host: str
    pid: int
    expires_at: datetime

    def describe(self) -> str:
        where = self.host.split(" ", 1)[0]
        return f"pid {self.pid} on {where}"


def pid_alive(pid: int) -> bool:
    """Whether a process of this machine still runs (a zombie, killed but not yet reaped by
    its parent, counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # somebody else's process
    with contextlib.suppress(OSError, IndexError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    return True


def _live(row: sa.Row[tuple[object, ...]], me: Holder, now: datetime) -> bool:
    """Whether ``row`` (somebody else's lease) still holds."""
    if row.expires_at <= now:
        return False
    return not (row.host == me.host and row.pid != me.pid and not pid_alive(row.pid))


def free(row: Any, me: Holder, now: datetime) -> bool:
    """Whether a game whose lease row is ``row`` (None: no lease yet) may be taken by ``me``
    now: nobody holds it, the lease expired or was released, or its holder on this machine is
    gone. (`acquire` decides for good; this only says whether asking is worth it.)"""
    if row is None or row.holder == me.token:
        return True
    return not _live(row, me, now)


def touch(conn: Connection, game_id: str) -> None:
    """Start the transaction with a write to the lease row: SQLite then takes its write lock
    before anything is read (two acquirers are serialised instead of failing on a stale
    snapshot), and PostgreSQL locks the row if it exists."""
    conn.execute(sa.update(_T).where(_T.c.game_id == game_id).values(epoch=_T.c.epoch))


def acquire(
    conn: Connection, game_id: str, me: Holder, now: datetime, ttl: float = LEASE_SECONDS
) -> Lease | HeldBy:
    """Take the game's lease (a new epoch) unless another live holder has it. Run it in a
    transaction of its own: two processes inserting the first lease at once make one of them
    fail with an IntegrityError, and a retry then sees the winner."""
    expires = now + timedelta(seconds=ttl)
    row = conn.execute(sa.select(_T).where(_T.c.game_id == game_id).with_for_update()).first()
    mine = {"holder": me.token, "host": me.host, "pid": me.pid, "expires_at": expires}
    if row is None:
        conn.execute(sa.insert(_T).values(game_id=game_id, epoch=1, acquired_at=now, **mine))
        return Lease(game_id, 1, expires)
    if row.holder == me.token:  # ours already: just extend it
        conn.execute(sa.update(_T).where(_T.c.game_id == game_id).values(expires_at=expires))
        return Lease(game_id, row.epoch, expires)
    if _live(row, me, now):
        return HeldBy(game_id, row.host, row.pid, row.expires_at)
    taken = conn.execute(
        sa.update(_T)
        .where(_T.c.game_id == game_id, _T.c.epoch == row.epoch)
        .values(epoch=row.epoch + 1, acquired_at=now, **mine)
    )
    if taken.rowcount != 1:  # somebody took it between our read and our write
        other = conn.execute(sa.select(_T).where(_T.c.game_id == game_id)).one()
        return HeldBy(game_id, other.host, other.pid, other.expires_at)
    return Lease(game_id, row.epoch + 1, expires, row.expires_at)


def create(
    conn: Connection, game_id: str, me: Holder, now: datetime, ttl: float = LEASE_SECONDS
) -> Lease:
    """The lease of a game being created in this transaction (nobody else knows its id)."""
    expires = now + timedelta(seconds=ttl)
    conn.execute(
        sa.insert(_T).values(
            game_id=game_id,
            holder=me.token,
            host=me.host,
            pid=me.pid,
            epoch=1,
            acquired_at=now,
            expires_at=expires,
        )
    )
    return Lease(game_id, 1, expires)


# The fences run in every transaction that writes a game (every line of chat): built once,
# not per call (building a statement costs more than running it on SQLite).
_FENCE_ONE = (
    sa.update(_T)
    .where(
        _T.c.game_id == sa.bindparam("fence_game"),
        _T.c.holder == sa.bindparam("fence_holder"),
        _T.c.epoch == sa.bindparam("fence_epoch"),
    )
    .values(epoch=_T.c.epoch)
)
_FENCE_MANY = (
    sa.update(_T)
    .where(
        _T.c.game_id.in_(sa.bindparam("fence_games", expanding=True)),
        _T.c.holder == sa.bindparam("fence_holder"),
    )
    .values(epoch=_T.c.epoch)
    .returning(_T.c.game_id, _T.c.epoch)
)

#: `fence_all` of up to this many games uses a statement of that many parameters, made once
_FENCE_SIZES = 64


@functools.cache
def _fence_many(n: int) -> sa.Update:
    """`_FENCE_MANY` for ``n`` games, without the expanding parameter (a statement that a
    group commit runs can then be compiled once: `bot.store.rows.execute`)."""
    return (
        sa.update(_T)
        .where(
            _T.c.game_id.in_([sa.bindparam(f"fence_game_{i}") for i in range(n)]),
            _T.c.holder == sa.bindparam("fence_holder"),
        )
        .values(epoch=_T.c.epoch)
        .returning(_T.c.game_id, _T.c.epoch)
    )


def fence(conn: Connection, game_id: str, me: Holder, epoch: int) -> bool:
    """True when we still hold the game at ``epoch``; locks the lease row until the end of the
    transaction, so no takeover can commit in between."""
    hit = rows.execute(
        conn, _FENCE_ONE, {"fence_game": game_id, "fence_holder": me.token, "fence_epoch": epoch}
    )
    return hit.rowcount == 1


def fence_all(conn: Connection, me: Holder, held: dict[str, int]) -> set[str]:
    """`fence` for several games (id -> epoch) in one statement; returns the games we no
    longer hold at that epoch (the caller rolls back). A group commit fences each game it
    writes once, whatever the number of its lines."""
    if len(held) == 1:
        ((game_id, epoch),) = held.items()
        return set() if fence(conn, game_id, me, epoch) else {game_id}
    ids = sorted(held)
    if len(ids) <= _FENCE_SIZES:  # (the statement of that many games: compiled once)
        params = {f"fence_game_{i}": gid for i, gid in enumerate(ids)}
        params["fence_holder"] = me.token
        hit = rows.execute(conn, _fence_many(len(ids)), params).all()
    else:
        hit = conn.execute(_FENCE_MANY, {"fence_games": ids, "fence_holder": me.token}).all()
    ours = {row.game_id for row in hit if row.epoch == held[row.game_id]}
    return set(ids) - ours


def renew(
    conn: Connection,
    me: Holder,
    held: dict[str, int],
    now: datetime,
    ttl: float = LEASE_SECONDS,
) -> set[str]:
    """Extend every lease in ``held`` (game id → epoch) that is still ours; returns the games
    that were taken over (lost)."""
    if not held:
        return set()
    ids = sorted(held)
    conn.execute(
        sa.update(_T)
        .where(_T.c.game_id.in_(ids), _T.c.holder == me.token)
        .values(expires_at=now + timedelta(seconds=ttl))
    )
    rows = conn.execute(
        sa.select(_T.c.game_id, _T.c.holder, _T.c.epoch).where(_T.c.game_id.in_(ids))
    ).all()
    ours = {r.game_id for r in rows if r.holder == me.token and r.epoch == held[r.game_id]}
    return set(ids) - ours


def release(conn: Connection, me: Holder, game_ids: list[str], now: datetime) -> None:
    """Give the leases up now (the epoch stays: the next holder bumps it)."""
    if game_ids:
        conn.execute(
            sa.update(_T)
            .where(_T.c.game_id.in_(sorted(game_ids)), _T.c.holder == me.token)
            .values(expires_at=now)
        )
