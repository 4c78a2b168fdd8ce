"""A withdrawal's plan is written only over the very rows it was worked out from
(`bot.protection.privacy.apply_plan`): two withdrawals at once (a line naming both people) would
otherwise each write back the id the other had removed."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlmodel import SQLModel

__all__ = ["REPLANS", "StalePlan", "check_fresh", "lock_conflict", "replannable"]


class StalePlan(Exception):
    """A row a plan rewrites changed after the plan was worked out (another withdrawal wrote
    it meanwhile): written over, that withdrawal's redaction would be undone. Nothing of the
    plan was written; work it out again."""


def check_fresh(conn: sa.Connection, before: dict[tuple[str, Any], dict[str, Any]]) -> None:
    """Raise `StalePlan` when a row a plan rewrites has changed since the plan was worked out
    (``before``: (table, row id) -> the values it was worked out from). The rows are locked
    before they are read, so nobody can change them between this check and the plan's
    writes: PostgreSQL locks them for the read, table by table in name order and each
    table's rows in id order (two withdrawals at once lock their shared rows in the same order:
    no deadlock between them); SQLite (whose driver begins the transaction only at a write)
    takes its write lock first, with a write that matches no row."""
    tables = SQLModel.metadata.tables
    by_table: dict[str, dict[Any, dict[str, Any]]] = {}
    for (name, row_id), old in before.items():
        by_table.setdefault(name, {})[row_id] = old
    postgres = conn.dialect.name == "postgresql"
    if by_table and not postgres:
        # a write that matches no row: SQLite's write lock, and the latest snapshot, at no cost
        table = tables[next(iter(by_table))]
        conn.execute(sa.update(table).where(sa.false()).values(id=table.c.id))
    for name, rows in sorted(by_table.items()):
        table = tables[name]
        cols = sorted({c for old in rows.values() for c in old})
        ids = sorted(rows)
        for i in range(0, len(ids), 500):
            query = (
                sa.select(table.c.id, *(table.c[c] for c in cols))
                .where(table.c.id.in_(ids[i : i + 500]))
                .order_by(table.c.id)
            )
            if postgres:
                query = query.with_for_update()
            for found in conn.execute(query).mappings():
                old = rows[found["id"]]
                if any(found[c] != v for c, v in old.items()):
                    raise StalePlan(f"{name} row {found['id']} changed after it was planned")


#: PostgreSQL's deadlock and serialization failures: the transaction was rolled back whole
#: for another one's sake, and may simply be tried again
_CONFLICTS = frozenset({"40P01", "40001"})


def lock_conflict(err: BaseException) -> bool:
    """Whether ``err`` is the database rolling the transaction back for a concurrent one
    (another withdrawal's rows locked in another order): nothing was written, try again."""
    orig = getattr(err, "orig", None)
    return isinstance(err, sa.exc.DBAPIError) and getattr(orig, "sqlstate", None) in _CONFLICTS


def replannable(err: BaseException) -> bool:
    """Whether a plan's write that raised ``err`` wrote nothing and is worth working out
    again: its rows changed meanwhile (`StalePlan`), or the database rolled it back for a
    concurrent withdrawal (`lock_conflict`)."""
    return isinstance(err, StalePlan) or lock_conflict(err)


#: times a step is worked out again when its rows changed meanwhile (another withdrawal)
REPLANS = 5
