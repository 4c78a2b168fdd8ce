"""A drawn game (issue 33, item 1) is a finished game everywhere after the engine: the store
says "finished" with no winner and the draw as its reason, the status line says so, the
export takes it, and the research report counts it apart from the games stopped."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from bot.protection.consent import record_consent
from bot.protection.dataset.export import export_games
from bot.service.port import GameService
from bot.service.timers import make_scheduler
from bot.store import models as m
from bot.store.db import session_scope
from bot.table.status import status_text
from games.config import GameConfig
from games.engine import draw_reason
from research.report import build_report

SERVER = "G0DRAW"
PEOPLE = [f"U0DRAW{i}" for i in range(5)]
SHORT = GameConfig(
    day_seconds=1, vote_seconds=1, night_seconds=1, night_vote_seconds=1, draw_after_quiet_days=2
)


@pytest.fixture
async def service(engine: Engine) -> AsyncIterator[GameService]:
    scheduler = make_scheduler()
    scheduler.start()
    svc = GameService(engine, scheduler)
    yield svc
    await svc.close()
    scheduler.shutdown(wait=False)


async def test_people_who_never_vote_end_in_a_recorded_draw(
    service: GameService, engine: Engine, tmp_path: Path
) -> None:
    for uid in PEOPLE:
        record_consent(engine, "discord", SERVER, uid, True)
    gid = await service.create_game(
        SHORT, platform="discord", server_external_id=SERVER, seed=3, speed=20
    )
    for uid in PEOPLE:
        await service.join(gid, uid)
    await service.start(gid)
    await service.wait_finished(gid)
    await service.drain(gid)
    game = service.games[gid]
    assert game.status == "finished"
    assert game.state is not None and game.state.winner is None
    assert "Winner: nobody (a draw)." in status_text(game, 0)
    with session_scope(engine) as s:
        row = s.get(m.Game, gid)
        assert row is not None
        assert (row.status, row.winner, row.end_reason) == ("finished", None, draw_reason(2))

    report = export_games(engine, [gid], tmp_path / "out", formats=["jsonl", "csv"])
    assert [g.game_id for g in report.exported] == [gid]
    events = (tmp_path / "out" / "jsonl" / f"{gid}.jsonl").read_text().splitlines()
    over = [json.loads(e) for e in events if '"kind": "game_over"' in e]
    assert [(o["winner"], o["reason"]) for o in over] == [(None, draw_reason(2))]

    figures = build_report(engine)
    assert figures["draws"] == [gid] and figures["games_without_winner"] == [gid]
