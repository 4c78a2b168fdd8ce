"""Database faults during a game (SQLite and PostgreSQL): a refused write changes nothing, a
deadline tick is retried until it is stored, a lasting failure is reported once, and every
game still ends with nothing lost or duplicated.

Faults are real where that is cheap (another connection holding the write lock for as long as
the test wants), and otherwise the driver's own exception raised where the driver would raise
it (``before_cursor_execute``): "database is locked", "database or disk is full"."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.agents import make_agent_factory
from bot.service import GameService, LiveGame, StoreUnavailable
from bot.store import models as m
from bot.store.db import make_engine
from bot.store.migrate import upgrade
from bot.timers import Backoff, make_scheduler
from games.config import GameConfig
from games.events import Event, PhaseStarted, event_to_dict
from games.state import PhaseKind

#: a deadline write failing this long (real seconds) is reported
ALERT_AFTER = 0.4
#: phase lengths: the first day ends at once, everything after waits for the test
SHORT_DAY = GameConfig(
    day_seconds=0.05, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600
)


# --- plumbing ---------------------------------------------------------------------------------


class Watch:
    """Records every event and alert; tests wait on what they expect, never on a clock."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.alerts: list[str] = []
        self._changed = asyncio.Event()

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        self.events.extend(events)
        self._changed.set()

    async def on_alert(self, game: LiveGame, message: str) -> None:
        self.alerts.append(message)
        self._changed.set()

    async def until(self, pred: Callable[[], bool], within: float = 30) -> None:
        async with asyncio.timeout(within):
            while not pred():
                self._changed.clear()
                await self._changed.wait()

    def phases(self) -> list[str]:
        return [e.phase for e in self.events if isinstance(e, PhaseStarted)]


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

    def lift(self) -> None:
        for rule in self.rules:
            rule.times = 0

    def _check(
        self, conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool
    ) -> None:
        words = statement.split(None, 3)
        if len(words) < 3 or words[0] not in ("INSERT", "UPDATE"):
            return
        table = words[2] if words[0] == "INSERT" else words[1]
        rows = getattr(context, "compiled_parameters", None) or [{}]
        for rule in self.rules:
            if rule.times > 0 and rule.table == table and any(rule.match(p) for p in rows):
                rule.times -= 1
                rule.hits += 1
                raise conn.dialect.loaded_dbapi.OperationalError(rule.message)


def action(kind: str) -> Callable[[dict[str, Any]], bool]:
    return lambda p: p.get("kind") == kind


def game_end(p: dict[str, Any]) -> bool:
    return p.get("status") in ("finished", "aborted")


@pytest.fixture
def fast_engine(db_url: str) -> Iterator[Engine]:
    """An engine that gives up on a lock at once (the database's own busy wait is 5 s on
    SQLite, unbounded on PostgreSQL), so a held lock fails writes quickly."""
    upgrade(db_url)
    backend = sa.make_url(db_url).get_backend_name()
    args = {"timeout": 0.05} if backend == "sqlite" else {"options": "-c lock_timeout=100"}
    eng = make_engine(db_url, connect_args=args)
    try:
        yield eng
    finally:
        eng.dispose()


@contextmanager
def held_lock(db_url: str) -> Iterator[None]:
    """Another connection holds the database's write lock (SQLite) or locks the tables every
    game write goes through (PostgreSQL) until the block ends: a real outage."""
    url = sa.make_url(db_url)
    if url.get_backend_name() == "sqlite":
        conn = sqlite3.connect(str(url.database), isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            conn.execute("ROLLBACK")
            conn.close()
        return
    import psycopg

    plain = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(plain) as pg:
        pg.execute("LOCK TABLE game_leases, actions IN ACCESS EXCLUSIVE MODE")
        try:
            yield
        finally:
            pg.rollback()


@pytest.fixture
async def service(fast_engine: Engine) -> AsyncIterator[GameService]:
    scheduler = make_scheduler()
    scheduler.start()
    svc = GameService(
        fast_engine,
        scheduler,
        make_agent_factory(),
        alert_after=ALERT_AFTER,
        tick_backoff=Backoff(first=0.02, cap=0.15),
    )
    yield svc
    await svc.close()
    scheduler.shutdown(wait=False)


async def people_game(svc: GameService, watch: Watch, config: GameConfig = SHORT_DAY) -> LiveGame:
    svc.subscribe(watch)
    svc.add_alert_sink(watch)
    game_id = await svc.create_game(config, seed=7, host_user_id="host")
    for i in range(6):
        await svc.join(game_id, f"user{i}")
    await svc.start(game_id)
    return svc.games[game_id]


def rows(engine: Engine, model: type, game_id: str) -> list[Any]:
    with Session(engine) as s:
        return list(
            s.exec(
                select(model).where(model.game_id == game_id).order_by(col(model.id))  # type: ignore[attr-defined]
            ).all()
        )


def armed(game: LiveGame) -> bool:
    handle = game.deadline_handle
    return game.ticking or (handle is not None and handle.pending)


# --- the deadline tick --------------------------------------------------------------------------


async def test_a_tick_refused_once_is_retried(service: GameService, fast_engine: Engine) -> None:
    faults = Faults(fast_engine)
    tick = faults.refuse("actions", action("tick"))
    watch = Watch()
    game = await people_game(service, watch)
    await watch.until(lambda: "vote" in watch.phases())
    assert tick.hits == 1
    assert watch.alerts == []  # one retry is no lasting failure
    kinds = [a.kind for a in rows(fast_engine, m.Action, game.id)]
    assert kinds == ["tick"]  # stored once
    assert [p.kind for p in rows(fast_engine, m.Phase, game.id)] == ["day", "vote"]


async def test_a_lasting_outage_is_reported_once_and_the_game_goes_on(
    service: GameService, fast_engine: Engine, db_url: str
) -> None:
    watch = Watch()
    game = await people_game(service, watch, GameConfig(
        day_seconds=0.3, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600
    ))  # fmt: skip
    with held_lock(db_url):
        await watch.until(lambda: len(watch.alerts) == 1)
        assert armed(game), "the game waits on a timer that is not armed"
        assert game.state is not None and game.state.phase.kind is PhaseKind.DAY
        # a player's line meanwhile: refused with one clear line, nothing half-applied
        before = game.state
        with pytest.raises(StoreUnavailable, match="could not be saved just now"):
            await service.say(game.id, 0, "anyone there?", client_id="c1")
        assert game.state is before and game.action_seq == 0 and "c1" not in game.client_ids
    await watch.until(lambda: "vote" in watch.phases())
    # the line sent again once the database is back is stored once
    assert await service.say(game.id, 0, "anyone there?", client_id="c1")
    await service.drain(game.id)
    assert len(watch.alerts) == 1
    assert game.id in watch.alerts[0] and "keep retrying" in watch.alerts[0]
    assert [a.kind for a in rows(fast_engine, m.Action, game.id)] == ["tick", "say"]


async def test_a_full_disk_at_the_deadline(service: GameService, fast_engine: Engine) -> None:
    faults = Faults(fast_engine)
    full = "database or disk is full"
    faults.refuse("actions", message=full, times=float("inf"))
    watch = Watch()
    game = await people_game(service, watch)
    await watch.until(lambda: len(watch.alerts) == 1)
    assert full in watch.alerts[0]
    assert armed(game)
    with pytest.raises(StoreUnavailable, match=full):
        await service.say(game.id, 1, "hello?")
    assert rows(fast_engine, m.Action, game.id) == []
    faults.lift()
    await watch.until(lambda: "vote" in watch.phases())
    await service.drain(game.id)
    assert len(watch.alerts) == 1
    assert [a.kind for a in rows(fast_engine, m.Action, game.id)] == ["tick"]


async def test_an_overdue_deadline_with_nothing_armed_is_rearmed(fast_engine: Engine) -> None:
    """Whatever leaves a game without a timer (here: its job is lost), the watchdog that
    renews the leases notices the overdue deadline and arms it again."""
    scheduler = make_scheduler()
    scheduler.start()
    svc = GameService(fast_engine, scheduler, lease_seconds=0.3)
    try:
        watch = Watch()
        game = await people_game(svc, watch, GameConfig(
            day_seconds=0.2, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600
        ))  # fmt: skip
        assert game.deadline_handle is not None
        game.deadline_handle.cancel()  # the timer is gone
        await watch.until(lambda: "vote" in watch.phases())
    finally:
        await svc.close()
        scheduler.shutdown(wait=False)


# --- faults at each kind of write during whole games ---------------------------------------------

WRITES = {
    "say": ("actions", action("say")),
    "vote": ("actions", action("vote")),
    "night_act": ("actions", action("night_act")),
    "tick": ("actions", action("tick")),
    "game_end": ("games", game_end),
}
AGENT_GAME = GameConfig(
    day_seconds=40,
    vote_seconds=20,
    night_seconds=20,
    night_vote_seconds=20,
    roles=("detective", "doctor"),
)


@pytest.mark.parametrize("kind", sorted(WRITES))
async def test_faults_at_each_kind_of_write_still_end_the_game(
    kind: str, service: GameService, fast_engine: Engine
) -> None:
    """Three writes of one kind are refused during an agents' game: it still ends, and what
    is stored is exactly what was shown (nothing lost, nothing twice)."""
    table, match = WRITES[kind]
    faults = Faults(fast_engine)
    rule = faults.refuse(table, match, times=3)
    watch = Watch()
    service.subscribe(watch)
    service.add_alert_sink(watch)
    game_id = await service.create_game(AGENT_GAME, seed=12, speed=40.0)
    for _ in range(7):
        await service.join(game_id, None, is_agent=True)
    await service.start(game_id)
    game = service.games[game_id]
    await asyncio.wait_for(service.wait_finished(game_id), 120)
    await service.drain(game_id)
    assert rule.hits >= 1, f"no {kind} write was refused"
    assert game.state is not None and game.state.over
    assert_stored_as_shown(fast_engine, game, watch)
    replayed = await service.replay(game_id)
    assert replayed.state == game.state


def assert_stored_as_shown(engine: Engine, game: LiveGame, watch: Watch) -> None:
    actions = rows(engine, m.Action, game.id)
    assert [a.seq for a in actions] == list(range(1, game.action_seq + 1))
    with Session(engine) as s:
        stored = s.exec(
            select(m.Event).where(m.Event.game_id == game.id).order_by(col(m.Event.seq))
        ).all()
        row = s.get(m.Game, game.id)
    assert [e.seq for e in stored] == list(range(1, game.event_seq + 1))
    shown = json.loads(json.dumps([event_to_dict(e) for e in watch.events]))
    assert [dict(e.payload) for e in stored] == shown
    assert row is not None and row.status == game.status and row.winner == game.state.winner  # type: ignore[union-attr]
    speech = [
        (r.action_seq, r.place, r.seat_index, r.text) for r in rows(engine, m.Message, game.id)
    ]
    assert len(speech) == len(set(speech))
