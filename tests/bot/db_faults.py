"""Making the database refuse chosen writes, the way the driver itself would refuse them."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine


@dataclass
class Rule:
    table: str
    match: Callable[[dict[str, Any]], bool]
    message: str
    times: float  # how many statements to refuse (inf: until lifted)
    hits: int = 0


@dataclass
class Faults:
    """Refuses chosen writes with the driver's own OperationalError."""

    engine: Engine
    rules: list[Rule] = field(default_factory=list)
    #: set by `outage`: every statement, reads included, fails with this until `lift`
    down: str | None = None

    def __post_init__(self) -> None:
        sa.event.listen(self.engine, "before_cursor_execute", self._check)

    def refuse(
        self,
        table: str,
        match: Callable[[dict[str, Any]], bool] = lambda p: True,
        *,
        message: str = "database is locked",
        times: float = 1,
    ) -> Rule:
        rule = Rule(table, match, message, times)
        self.rules.append(rule)
        return rule

    def outage(self, message: str = "could not connect to server: Connection refused") -> None:
        """The database is gone: every statement fails, as the driver fails it."""
        self.down = message

    def lift(self) -> None:
        self.down = None
        for rule in self.rules:
            rule.times = 0

    def _check(
        self, conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool
    ) -> None:
        if self.down is not None:
            raise conn.dialect.loaded_dbapi.OperationalError(self.down)
        words = statement.split(None, 3)
        if len(words) < 3 or words[0] not in ("INSERT", "UPDATE"):
            return
        table = words[2] if words[0] == "INSERT" else words[1]
        rows = getattr(context, "compiled_parameters", None) or _plain_rows(statement, params, many)
        for rule in self.rules:
            if rule.times > 0 and rule.table == table and any(rule.match(p) for p in rows):
                rule.times -= 1
                rule.hits += 1
                raise conn.dialect.loaded_dbapi.OperationalError(rule.message)


def _plain_rows(statement: str, params: Any, many: bool) -> list[dict[str, Any]]:
    """The rows of a statement run as plain SQL (`bot.store.rows` on SQLite: no compiled
    parameters), by the names in its SQL, in the order of its parameters."""
    if statement.startswith("INSERT"):
        names = [
            c.strip() for c in statement[statement.index("(") + 1 : statement.index(")")].split(",")
        ]
    else:
        names = re.findall(r"(\w+)\s*=\s*\?", statement)
    sets = params if many else [params]
    return [dict(zip(names, p, strict=False)) for p in sets if isinstance(p, tuple | list)] or [{}]


def action(kind: str) -> Callable[[dict[str, Any]], bool]:
    return lambda p: p.get("kind") == kind


def game_end(p: dict[str, Any]) -> bool:
    return p.get("status") in ("finished", "aborted")
