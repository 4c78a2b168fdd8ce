"""Database faults during a game (SQLite and PostgreSQL): a refused write changes nothing, a
deadline tick is retried until it is stored, a lasting failure is reported once, and every
game still ends with nothing lost or duplicated.

Faults are real where that is cheap (another connection holding the write lock for as long as
the test wants), and otherwise the driver's own exception raised where the driver would raise
it (``before_cursor_execute``): "database is locked", "database or disk is full"."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.errors import StoreUnavailable
from bot.seats.agents import make_agent_factory
from bot.service.live import LiveGame
from bot.service.port import GameService
from bot.service.timers import Backoff, make_scheduler
from bot.store import models as m
from bot.store.db import make_engine
from bot.store.migrate import upgrade
from games.config import GameConfig
from games.events import event_to_dict
from games.state import PhaseKind
from tests.bot.db_faults import Faults, action, game_end
from tests.bot.waiting import Watch

ROOT = Path(__file__).resolve().parents[3]
#: a deadline write failing this long (real seconds) is reported
ALERT_AFTER = 0.4
#: SQLite's busy wait (seconds) in the CLI's database URL (`test_the_cli_prints_...`)
BUSY_TIMEOUT = 0.2
#: phase lengths: the first day ends at once, everything after waits for the test
SHORT_DAY = GameConfig(
    day_seconds=0.05, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600
)


# --- plumbing ---------------------------------------------------------------------------------


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
            await service.say(game.id, 0, "anyone there?", platform_id="c1")
        assert game.state is before and game.action_seq == 0 and "c1" not in game.client_ids
    await watch.until(lambda: "vote" in watch.phases())
    # the line sent again once the database is back is stored once
    assert await service.say(game.id, 0, "anyone there?", platform_id="c1")
    await service.drain(game.id)
    assert len(watch.alerts) == 1
    assert "keep retrying" in watch.alerts[0] and "database" in watch.alerts[0]
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


# --- the terminal ---------------------------------------------------------------------------------


@pytest.mark.slow
async def test_the_cli_prints_a_lasting_failure_once_on_one_line(tmp_path: Path) -> None:
    """``mafiabot simulate`` while another program holds the SQLite file's write lock for
    longer than the alert threshold: one ``mafiabot: Game ...`` line on stderr, and the game
    still ends once the lock is released.

    The database URL sets SQLite's busy wait short, as `fast_engine` does (its default is
    5 s a statement): each agent's line and lease renewal refused under the lock would
    otherwise hold the game's clock for 5 s, and the day's end wait a minute behind them."""
    db = tmp_path / "sim.db"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mafiabot.cli", "simulate", "--players", "5", "--seed", "2",
        "--speed", "50", "--day-seconds", "100", "--vote-seconds", "20",
        "--night-seconds", "20", "--night-vote-seconds", "20",
        "--db", f"sqlite:///{db}?timeout={BUSY_TIMEOUT}", "--json",
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "MAFIABOT_DATA_DIR": str(tmp_path)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    lines: list[str] = []

    async def read_until(pred: Callable[[str], bool]) -> None:
        assert proc.stderr is not None
        while True:
            raw = await proc.stderr.readline()
            assert raw, "simulate ended early:\n" + "\n".join(lines[-30:])
            lines.append(raw.decode().rstrip("\n"))
            if pred(lines[-1]):
                return

    try:
        async with asyncio.timeout(120):
            await read_until(lambda line: line.startswith("[") and "Game-Manager" in line)
            with held_lock(f"sqlite:///{db}"):
                await read_until(lambda line: line.startswith("mafiabot: Game"))
            out, rest = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    lines.extend(rest.decode().splitlines())
    assert proc.returncode == 0, "\n".join(lines[-30:])
    alerts = [line for line in lines if line.startswith("mafiabot: ")]
    assert len(alerts) == 1, alerts
    assert "database is locked" in alerts[0] and "keep retrying" in alerts[0]
    assert json.loads(out)["winner"] in ("mafia", "bystanders")
