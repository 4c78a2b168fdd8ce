"""Plain rows written at the end of a transaction (`bot.store.rows`), on SQLite and
PostgreSQL: one statement a table however many rows, queries of the same transaction see
them, a rollback drops them, and the write hook (the lease fence) can refuse them all."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.service.clock import utcnow
from bot.store import models as m
from bot.store import rows
from bot.store.db import session_scope

GAMES: Any = m.Game.__table__  # type: ignore[attr-defined]
MESSAGES: Any = m.Message.__table__  # type: ignore[attr-defined]
PHASES: Any = m.Phase.__table__  # type: ignore[attr-defined]


@pytest.fixture
def statements(engine: Engine) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(_c: Any, _cur: Any, statement: str, *_: Any) -> None:
        if statement.split(None, 1)[0] in ("INSERT", "UPDATE", "DELETE"):
            seen.append(statement)

    sa.event.listen(engine, "before_cursor_execute", record)
    yield seen
    sa.event.remove(engine, "before_cursor_execute", record)


def make_games(engine: Engine, ids: Iterable[str]) -> None:
    with session_scope(engine) as s:
        for gid in ids:
            s.add(m.Game(id=gid, seed=1, status="running"))


def line(gid: str, n: int) -> dict[str, Any]:
    return {
        "game_id": gid, "phase_seq": 1, "place": "stage", "seat_index": 0, "speaker": "Ann",
        "text": f"line {n}", "t": utcnow(), "action_seq": n, "client_id": f"{gid}-{n}",
    }  # fmt: skip


def texts(engine: Engine) -> list[str]:
    with Session(engine) as s:
        return sorted(s.exec(select(m.Message.text)).all())


def test_rows_of_many_games_go_out_in_one_statement_a_table(
    engine: Engine, statements: list[str]
) -> None:
    make_games(engine, [f"g{i}" for i in range(10)])
    statements.clear()
    with session_scope(engine) as s:
        for i in range(10):
            rows.insert(s, MESSAGES, line(f"g{i}", i))
            rows.insert(s, PHASES, {
                "game_id": f"g{i}", "seq": 1, "kind": "day", "number": 1,
                "started_at": utcnow(), "deadline": None, "ended_at": None,
            })  # fmt: skip
            rows.update(s, GAMES, {"id": f"g{i}"}, {"last_seq": i})
            rows.update(s, GAMES, {"id": f"g{i}"}, {"last_seq": i + 100})  # the later wins
        assert statements == []  # nothing before the commit
    assert len(statements) == 3  # phases, messages, games: one each
    assert texts(engine) == sorted(f"line {i}" for i in range(10))
    with Session(engine) as s:
        assert {g.id: g.last_seq for g in s.exec(select(m.Game)).all()} == {
            f"g{i}": i + 100 for i in range(10)
        }
        assert len(s.exec(select(m.Phase)).all()) == 10


def test_an_update_may_set_a_row_inserted_in_the_same_transaction(engine: Engine) -> None:
    make_games(engine, ["g1"])
    end = utcnow()
    with session_scope(engine) as s:
        rows.update(s, PHASES, {"game_id": "g1", "seq": 1}, {"ended_at": end})
        rows.insert(s, PHASES, {
            "game_id": "g1", "seq": 1, "kind": "day", "number": 1,
            "started_at": end, "deadline": None, "ended_at": None,
        })  # fmt: skip
    with Session(engine) as s:
        assert s.exec(select(m.Phase.ended_at)).one() == end


def test_a_query_in_the_same_transaction_sees_the_pending_rows(engine: Engine) -> None:
    make_games(engine, ["g1"])
    with session_scope(engine) as s:
        rows.insert(s, MESSAGES, line("g1", 1))
        assert s.exec(select(m.Message.text)).all() == ["line 1"]


def test_a_rollback_drops_the_pending_rows(engine: Engine) -> None:
    make_games(engine, ["g1"])
    with pytest.raises(ValueError), session_scope(engine) as s:
        rows.insert(s, MESSAGES, line("g1", 1))
        raise ValueError("changed my mind")
    with session_scope(engine) as s:  # (a fresh transaction writes only its own)
        rows.insert(s, MESSAGES, line("g1", 2))
    assert texts(engine) == ["line 2"]


def test_the_write_hook_is_told_the_games_and_may_refuse_everything(engine: Engine) -> None:
    make_games(engine, ["g1", "g2"])
    told: list[set[str]] = []

    def hook(_s: Session, games: Iterable[str]) -> None:
        told.append(set(games))
        raise PermissionError("g2 moved")

    with pytest.raises(PermissionError), session_scope(engine) as s:
        s.info[rows.WRITING] = hook
        rows.insert(s, MESSAGES, line("g1", 1))
        rows.update(s, GAMES, {"id": "g2"}, {"last_seq": 5})
    assert told == [{"g1", "g2"}]
    assert texts(engine) == []


def test_a_refused_row_is_known_to_the_call_that_wrote_it(engine: Engine) -> None:
    """`rows.write` puts a call's rows out now, so a unique violation surfaces in that call
    (the group writer's call-by-call retry relies on it)."""
    make_games(engine, ["g1"])
    with session_scope(engine) as s:
        rows.insert(s, MESSAGES, line("g1", 1))
    with pytest.raises(sa.exc.IntegrityError), session_scope(engine) as s:
        rows.insert(s, MESSAGES, line("g1", 2))
        rows.write(s)
        rows.insert(s, MESSAGES, line("g1", 1))  # the same client id again
        rows.write(s)
    assert texts(engine) == ["line 1"]


def test_rows_are_stored_as_sqlalchemy_stores_them(engine: Engine) -> None:
    """On SQLite the rows go to the driver as tuples (`rows._execute_many`): each value the
    same as SQLAlchemy's own insert stores (JSON, an aware time made naive UTC, NULLs)."""
    events: Any = m.Event.__table__  # type: ignore[attr-defined]
    make_games(engine, ["mine", "theirs"])
    east = datetime.timezone(datetime.timedelta(hours=2))
    at = datetime.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=east)

    def row(gid: str, n: int, visible: list[int] | None) -> dict[str, Any]:
        payload = {"text": 'é "quoted"', "seats": [1, 2], "none": None}
        return {
            "game_id": gid, "seq": n, "kind": "message", "payload": payload, "t": at,
            "visible_to": visible,
        }  # fmt: skip

    seen = [None, [0, 3], []]
    with session_scope(engine) as s:
        for n, visible in enumerate(seen):
            rows.insert(s, events, row("mine", n, visible))
    with engine.begin() as conn:
        conn.execute(events.insert(), [row("theirs", n, v) for n, v in enumerate(seen)])

    def stored(gid: str) -> list[tuple[Any, ...]]:
        with engine.connect() as conn:
            return [
                tuple(r)
                for r in conn.exec_driver_sql(
                    "SELECT seq, kind, payload, t, visible_to FROM events WHERE game_id = "
                    f"'{gid}' ORDER BY seq"
                )
            ]

    assert stored("mine") == stored("theirs")
    with Session(engine) as s:
        got = s.exec(select(m.Event).where(m.Event.game_id == "mine").order_by(col(m.Event.seq)))
        back = [(e.payload, e.t, e.visible_to) for e in got.all()]
    assert back == [(row("mine", 0, None)["payload"], at, v) for v in seen]
