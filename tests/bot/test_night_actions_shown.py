"""Night actions and their results where they should show, on a game of a custom setup played
by the baseline in every seat (`mafiabot simulate --setup`): the replay page says each role's
action and result in its own words, the export has a ``night_actions`` table (and the actor on
each night row of the JSON lines), and ``mafiabot report`` counts the night actions by role."""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
import subprocess
import sys
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.players.replay_page import page_bytes
from bot.protection.dataset.export import export_zip
from bot.store.db import make_engine
from bot.store.models import Event, Seat
from research.report import build_report, render_markdown

ROOT = Path(__file__).resolve().parents[2]
SETUP = "mafia,consort,escort,tracker,lookout,vigilante,investigator,bystander"
#: each verb as the page should say it (this test's own words, not the module's table)
SAID = {
    "block": "blocked",
    "track": "followed",
    "watch": "watched the house of",
    "investigate": "investigated",
    "shoot": "shot at",
}


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, str]]:
    db = f"sqlite:///{tmp_path_factory.mktemp('night') / 'g.db'}"
    args = ["simulate", "-n", "8", "--seed", "3", "--setup", SETUP, "--speed", "200"]
    done = subprocess.run(
        [sys.executable, "-m", "mafiabot.cli", *args, "--agent", "baseline", "--db", db, "--json"],
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    game_id = json.loads(done.stdout.strip().splitlines()[-1])["game_id"]
    engine = make_engine(db)
    yield engine, game_id
    engine.dispose()


def stored(engine: Engine, game_id: str, *kinds: str) -> list[Event]:
    with Session(engine) as s:
        return list(
            s.exec(
                select(Event)
                .where(Event.game_id == game_id, col(Event.kind).in_(kinds))
                .order_by(col(Event.seq))
            ).all()
        )


def names_of(engine: Engine, game_id: str) -> dict[int, str]:
    with Session(engine) as s:
        return {
            r.index: r.character_name for r in s.exec(select(Seat).where(Seat.game_id == game_id))
        }


def last_actions(engine: Engine, game_id: str) -> dict[tuple[int, int], dict[str, object]]:
    """(night, seat) -> the seat's last night action that night."""
    out: dict[tuple[int, int], dict[str, object]] = {}
    night = 0
    for e in stored(engine, game_id, "phase_started", "night_action"):
        p = dict(e.payload)
        if e.kind == "phase_started":
            night = int(p["number"]) if str(p["phase"]).startswith("night") else night
        else:
            out[(night, int(p["seat"]))] = p
    assert out, "the simulated game had no night action"
    return out


def test_the_replay_page_says_each_action_and_result(game: tuple[Engine, str]) -> None:
    engine, game_id = game
    page = page_bytes(engine, game_id).decode("utf-8")
    said = [html.unescape(s) for s in re.findall(r"<div class='action'>(.*?)</div>", page)]
    names = names_of(engine, game_id)
    for e in stored(engine, game_id, "night_action"):
        p = e.payload
        line = f"{names[p['seat']]} ({p['role']}) {SAID[p['verb']]} {p['target_name']}."
        assert line in said, (line, said)
    roles = {
        n: p["role"] for (_, s), p in last_actions(engine, game_id).items() for n in [names[s]]
    }
    for e in stored(engine, game_id, "private_note"):
        p = e.payload
        who = f"{names[p['seat']]} ({roles.get(names[p['seat']], '')})"
        if p["verb"] == "track" and p["names"]:
            assert f"{who} saw {p['target_name']} visit {' and '.join(p['names'])}." in said
        if p["verb"] == "watch" and p["names"]:
            assert f"{who} saw {' and '.join(p['names'])} visit {p['target_name']}." in said
        if p["verb"] == "investigate":
            assert any(s.startswith(f"{who} learned that {p['target_name']} is ") for s in said)
    assert not any("chose to" in s for s in said)  # no generic words for a known role


def test_the_export_has_a_night_actions_table(game: tuple[Engine, str]) -> None:
    engine, game_id = game
    data, _ = export_zip(engine, [game_id], formats=["csv", "jsonl"])
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        rows = list(csv.DictReader(io.StringIO(zf.read("csv/night_actions.csv").decode())))
        lines = [json.loads(x) for x in zf.read(f"jsonl/{game_id}.jsonl").decode().splitlines()]
    assert list(rows[0]) == ["game_id", "night", "actor", "role", "verb", "target", "result"]
    names = names_of(engine, game_id)
    want = {
        (f"night-{n}", names[s], str(p["role"]), str(p["verb"]), str(p["target_name"]))
        for (n, s), p in last_actions(engine, game_id).items()
    }
    assert {(r["night"], r["actor"], r["role"], r["verb"], r["target"]) for r in rows} == want
    assert len(rows) == len(want)
    for r in rows:  # a dawn result on its actor's row, in words
        if r["verb"] == "track" and r["result"] not in ("", "blocked"):
            assert r["result"].startswith("visited ")
        if r["verb"] == "watch" and r["result"] not in ("", "blocked"):
            assert r["result"].startswith("visited by ")
    night = [x for x in lines if x["kind"] in ("night_action", "private_note")]
    assert night and all(x["actor"] in names.values() for x in night)
    assert not any("seats" in x for x in night)  # seat indexes never leave


def test_the_report_counts_night_actions_by_role(game: tuple[Engine, str]) -> None:
    engine, game_id = game
    report = build_report(engine, [game_id])
    counts = report["night_actions"]
    want = Counter(str(p["role"]) for p in last_actions(engine, game_id).values())
    assert {role: r["actions"] for role, r in counts["by_role"].items()} == dict(want)
    assert counts["total"] == sum(want.values())
    for r in counts["by_role"].values():  # every seat is an agent here
        assert r["agent"] == r["actions"] and r["human"] == 0 and r["games"] == 1
    assert "## Night actions by role" in render_markdown(report)
