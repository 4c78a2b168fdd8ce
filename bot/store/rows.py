"""Rows a transaction writes at its end, all of a table's at once.

The service writes several rows for every line of chat (the action, its event, the message)
and sets a few columns (the game's last action, a phase's end). Through the ORM each of those
is an object to track and a statement of its own; here they are plain values kept on the
session until it writes: then every insert into one table is one ``executemany`` and every
update of the same columns is one ``executemany`` too, however many games and calls a group
commit (`bot.store.writer`) carries.

They are written when the session commits, when the writer wants a call's rows out
(`write`, so a failing call is known), and before any ORM query of the same session, so a
query never misses a row this transaction added. Inserts go first, in the order of the
tables' foreign keys, then the updates; so an update may set a row inserted in the same
transaction. Two updates of one row are merged (the later value of a column wins).

Before anything is written, the hook in ``session.info[WRITING]`` (the service's lease
fence, `bot.service.lease`) is told every game whose rows are about to go out, and may refuse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session, SessionTransaction

#: session.info key of the pending rows
PENDING = "mafiabot.pending"
#: session.info key of ``hook(session, game_ids)``, called before pending rows are written
WRITING = "mafiabot.writing"

Key = tuple[tuple[str, Any], ...]


@dataclass
class Pending:
    inserts: dict[sa.Table, list[dict[str, Any]]] = field(default_factory=dict)
    #: (table, primary key or unique key as (column, value) pairs) -> columns to set
    updates: dict[tuple[sa.Table, Key], dict[str, Any]] = field(default_factory=dict)
    games: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.inserts or self.updates)


def _pending(session: Session) -> Pending:
    found: Pending | None = session.info.get(PENDING)
    if found is None:
        found = session.info[PENDING] = Pending()
    return found


def insert(session: Session, table: sa.Table, values: dict[str, Any]) -> None:
    """Insert ``values`` (every column but an autoincrement id: rows of one table are written
    together, so they must name the same columns) when the session writes."""
    pending = _pending(session)
    pending.inserts.setdefault(table, []).append(values)
    game_id = values.get("game_id", values.get("id"))
    if isinstance(game_id, str):
        pending.games.add(game_id)


def update(session: Session, table: sa.Table, key: dict[str, Any], values: dict[str, Any]) -> None:
    """Set ``values`` on the row(s) of ``table`` matching ``key`` when the session writes."""
    pending = _pending(session)
    pending.updates.setdefault((table, tuple(sorted(key.items()))), {}).update(values)
    game_id = key.get("game_id", key.get("id") if table.name == "games" else None)
    if isinstance(game_id, str):
        pending.games.add(game_id)


def write(session: Session) -> None:
    """Flush the ORM's changes, then write the pending rows (the lease hook first)."""
    session.flush()
    pending: Pending | None = session.info.get(PENDING)
    if not pending:
        return
    hook: Callable[[Session, Iterable[str]], None] | None = session.info.get(WRITING)
    if hook is not None and pending.games:
        hook(session, pending.games)
    session.info[PENDING] = Pending()
    conn = session.connection()
    for table in _ordered(pending.inserts):
        _execute_many(conn, _insert(table), pending.inserts[table])
    shapes: dict[tuple[sa.Table, tuple[str, ...], tuple[str, ...]], list[dict[str, Any]]] = {}
    for (table, key), values in pending.updates.items():
        params = {f"k_{name}": value for name, value in key}
        params.update(values)  # (a column's own name: the SET clause is made of those)
        shape = (table, tuple(name for name, _ in key), tuple(sorted(values)))
        shapes.setdefault(shape, []).append(params)
    for (table, key_names, _), many in shapes.items():
        _execute_many(conn, _update(table, key_names), many)


_UPDATES: dict[tuple[sa.Table, tuple[str, ...]], sa.Update] = {}


def _update(table: sa.Table, key_names: tuple[str, ...]) -> sa.Update:
    """``UPDATE table WHERE key = :k_key``, built once per table and key (building a statement
    costs more than running it on SQLite); the columns to set come from the parameters."""
    stmt = _UPDATES.get((table, key_names))
    if stmt is None:
        stmt = _UPDATES[table, key_names] = sa.update(table).where(
            *(table.c[name] == sa.bindparam(f"k_{name}") for name in key_names)
        )
    return stmt


_INSERTS: dict[sa.Table, sa.Insert] = {}


def _insert(table: sa.Table) -> sa.Insert:
    stmt = _INSERTS.get(table)
    if stmt is None:
        stmt = _INSERTS[table] = table.insert()
    return stmt


_Bind = tuple[str, Callable[[Any], Any] | None]
#: (statement, the parameters' names) -> its SQL for SQLite and each parameter's name and bind
#: processor in the SQL's order, or None where a row needs more than the values given (a
#: default made in Python)
_PLAIN: dict[
    tuple[sa.Insert | sa.Update, tuple[str, ...]], tuple[str, tuple[_Bind, ...]] | None
] = {}


def execute(conn: sa.Connection, stmt: sa.Update, values: dict[str, Any]) -> sa.CursorResult[Any]:
    """``conn.execute(stmt, values)``, on SQLite through the statement compiled once (as
    `_execute_many`): for a statement every group commit runs (the lease fence)."""
    if conn.dialect.name != "sqlite":
        return conn.execute(stmt, values)
    plan = _plan(conn, stmt, tuple(values))
    if plan is None:
        return conn.execute(stmt, values)
    sql, binds = plan
    return conn.exec_driver_sql(
        sql, tuple(values[name] if bind is None else bind(values[name]) for name, bind in binds)
    )


def _plan(
    conn: sa.Connection, stmt: sa.Insert | sa.Update, names: tuple[str, ...]
) -> tuple[str, tuple[_Bind, ...]] | None:
    key = (stmt, names)
    if key not in _PLAIN:
        _PLAIN[key] = _plain(stmt, names, conn.dialect)
    return _PLAIN[key]


def _execute_many(
    conn: sa.Connection, stmt: sa.Insert | sa.Update, values: list[dict[str, Any]]
) -> None:
    """One executemany of ``stmt`` with ``values``. On SQLite the statement is compiled once and
    the rows handed to the driver as tuples, each value through its column type's own bind
    processor (what is stored is the same): SQLAlchemy's work per statement and per row of a
    compiled statement (its parameters built and processed again for each) was a fifth of the
    writer's time."""
    if conn.dialect.name != "sqlite":
        conn.execute(stmt, values)
        return
    plan = _plan(conn, stmt, tuple(values[0]))
    if plan is None:
        conn.execute(stmt, values)
        return
    sql, binds = plan
    conn.exec_driver_sql(
        sql,
        [
            tuple(row[name] if bind is None else bind(row[name]) for name, bind in binds)
            for row in values
        ],
    )


def _plain(
    stmt: sa.Insert | sa.Update, names: tuple[str, ...], dialect: sa.Dialect
) -> tuple[str, tuple[_Bind, ...]] | None:
    compiled = stmt.compile(dialect=dialect, column_keys=list(names))
    order = compiled.positiontup
    if (
        order is None
        or sorted(order) != sorted(names)
        or compiled.insert_prefetch
        or compiled.update_prefetch
    ):
        return None
    binds = tuple(
        (name, compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect))
        for name in order
    )
    return compiled.string, binds


_RANK: dict[sa.Table, int] = {}


def _ordered(inserts: dict[sa.Table, list[dict[str, Any]]]) -> list[sa.Table]:
    """The tables in foreign-key order (a parent's rows before its children's)."""
    if any(t not in _RANK for t in inserts):
        metadata = next(iter(inserts)).metadata
        _RANK.update({t: i for i, t in enumerate(metadata.sorted_tables)})
    return sorted(inserts, key=_RANK.__getitem__)


def discard(session: Session) -> None:
    session.info.pop(PENDING, None)


@sa.event.listens_for(Session, "before_commit")
def _before_commit(session: Session) -> None:
    write(session)


@sa.event.listens_for(Session, "do_orm_execute")
def _before_query(state: Any) -> None:
    session = state.session
    if session.info.get(PENDING):
        write(session)


@sa.event.listens_for(Session, "after_soft_rollback")
def _after_rollback(session: Session, _previous: SessionTransaction) -> None:
    discard(session)
