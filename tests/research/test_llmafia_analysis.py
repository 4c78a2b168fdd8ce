"""The llmafia/ export is read by LLMafia's own, unmodified analysis code (analyze.py, run in
its own Python 3.12 environment: see tests/research/llmafia_analysis.py), with the same
per-game figures as on the release's originals; and a game played here with one agent and
people's surveys loads too, with the figures the store holds."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.protection.consent import record_consent
from bot.protection.dataset.export import export_games
from bot.protection.dataset.stored import store_game_id
from bot.service.clock import GameClock
from bot.service.live import LiveGame
from bot.service.port import GameService
from bot.service.timers import make_scheduler
from bot.store import models as m
from bot.store.db import make_engine, session_scope
from bot.store.migrate import upgrade
from games.config import GameConfig
from games.state import PhaseKind
from research.importer import import_llmafia
from research.llmafia import read_game
from tests.bot.test_service_input import close_phase
from tests.bot.waiting import until_phase
from tests.research.llmafia_analysis import ON_CI, SHARED_GAMES, figures, python_for_tests

# Figures that must be equal on an original and its re-export: all of them. The importer
# replays typed backspaces for play and replays, and the LLMafia export writes LLMafia's own
# text back, so even a line that was all backspaces is there and counted as on the original.
EQUAL = [
    "llm",
    "players",
    "mafia",
    "humans",
    "survey",
    "comments",
    "phases",
    "votes",
    "was_llm_voted_out",
    "is_llm_mafia",
    "did_mafia_win",
    "did_llm_win",
    "messages",
    "llm_messages",
    "words",
    "timing_means",
]
#: the release's other 6 games (0016-0021; MIT, its LICENSE beside them), without the agent's
#: large log files, as the shared copy of the first 15 is
FURTHER_GAMES = Path(__file__).resolve().parents[1] / "vendor" / "llmafia_games"


def shared_games() -> Path:
    if not SHARED_GAMES.is_dir():
        if ON_CI:
            pytest.fail(f"the LLMafia games are not at {SHARED_GAMES} (../shared beside the repo)")
        pytest.skip("the shared LLMafia games (../shared/data/llmafia) are not beside the repo")
    return SHARED_GAMES


def all_games(dest: Path) -> Path:
    """The 15 shared games and the 6 further ones, in one folder."""
    shutil.copytree(shared_games(), dest)
    for game in sorted(p for p in FURTHER_GAMES.iterdir() if p.is_dir()):
        shutil.copytree(game, dest / game.name)
    return dest


def originals_with_logs(source: Path, dest: Path) -> Path:
    """A copy of the shared games in which every game has its LLM's log file: the shared copy
    keeps only 0013's (the release's logs are large), and analyze.py finds the LLM player only
    by that file. Nothing else is touched."""
    shutil.copytree(source, dest)
    for game in sorted(dest.iterdir()):
        config = json.loads((game / "config.json").read_text())
        for player in config["players"]:
            log = game / f"{player['name']}_log.txt"
            if player["is_llm"] and not log.exists():
                log.write_text("# the release's log, not in the shared copy\n")
    return dest


@pytest.fixture
def sqlite_engine(tmp_path: Path) -> Iterator[Engine]:
    """One store is enough here (the store's parity has its own tests): SQLite."""
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    upgrade(url)
    engine = make_engine(url)
    yield engine
    engine.dispose()


def test_reexported_release_games_give_the_originals_figures(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    source = all_games(tmp_path / "release")
    python = python_for_tests()
    engine = sqlite_engine
    folders = sorted(p.name for p in source.iterdir() if p.is_dir())
    assert len(folders) == 21
    import_llmafia(engine, source)
    ids = [store_game_id(f) for f in folders]
    report = export_games(engine, ids, tmp_path / "out", formats=["llmafia"])
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    # numeric folders, each the release's own number, mapped back to our ids by the manifest
    assert manifest["llmafia"] == dict(zip(folders, ids, strict=True))
    assert sorted(p.name for p in (tmp_path / "out" / "llmafia").iterdir()) == folders
    empty = {g["llmafia_folder"]: g["llmafia_empty_lines"] for g in manifest["games"]}
    # the lines that were all backspaces (0005 and 0016 Emerson, 0014 Gray) are kept
    assert {k: v for k, v in empty.items() if v} == {}
    assert [g.llmafia_left_out for g in report.exported] == [None] * 21

    # the two runs of analyze.py (subprocesses on folders and work directories of their own)
    # go side by side: most of this test's time is spent waiting for them
    originals = originals_with_logs(source, tmp_path / "orig")
    with ThreadPoolExecutor(2) as pool:
        runs = [
            pool.submit(figures, python, originals, tmp_path / "a", main=True),
            pool.submit(figures, python, tmp_path / "out" / "llmafia", tmp_path / "b", main=True),
        ]
        original, exported = (run.result() for run in runs)
    # analyze.py's main() over the whole folder (all but its embedding step) runs on the
    # export and prints what it prints on the originals, less the two empty lines left out:
    # the dataset line counts every message (1710 in the originals, 147 of them the agent's)
    main_before, main_after = original.pop("main"), exported.pop("main")
    assert "error" not in main_before, main_before
    assert "error" not in main_after, main_after
    # what main() prints over the 21 games is what it prints over the originals, word for word
    # (the dataset line counts every message and the agent's)
    assert any("21 games" in x for x in main_after["printed"]), main_after["printed"][:3]
    assert main_after["printed"] == main_before["printed"]
    assert set(original) == set(exported) == set(folders)
    for game in folders:
        before, after = original[game], exported[game]
        assert "error" not in before, (game, before)
        assert "error" not in after, (game, after)
        for key in EQUAL:
            assert after[key] == before[key], (game, key)
    # the figures are not vacuous: the 21 games hold real play
    assert sum(len(f["phases"]) for f in original.values()) > 80
    assert all(f["votes"] > 0 and f["survey"] for f in original.values())


# --- a game played here --------------------------------------------------------------------

SERVER = "G0ANALYSIS"
PEOPLE = ["U0ANNA", "U0BEN", "U0CLEO", "U0DARA", "U0EMIL", "U0FAYE"]
LONG = GameConfig(day_seconds=30, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600)


@pytest.fixture
async def service(engine: Engine) -> AsyncIterator[GameService]:
    scheduler = make_scheduler()
    scheduler.start()
    svc = GameService(engine, scheduler)
    yield svc
    await svc.close()
    scheduler.shutdown(wait=False)


def later(game: LiveGame, seconds: float = 4.0) -> None:
    """Move the game's clock on: the release's files keep whole seconds, and its analysis
    tells a phase's lines apart from the next phase's only by them, as in a game people play."""
    game.clock = GameClock(1.0, game.clock.now() + timedelta(seconds=seconds))


async def play_two_days(svc: GameService, agents: int = 1) -> str:
    """Five people (or fewer, with more agents) and the agent: day 1 votes a person out, the
    one mafia picks its victim at night (talk skipped: one mafia left), day 2 votes the mafia
    out. Everyone talks on the stage; four people answer the survey, one does not."""
    people = PEOPLE[: 6 - agents]
    for uid in people:
        record_consent(svc.engine, "discord", SERVER, uid, True)
    gid = await svc.create_game(LONG, platform="discord", server_external_id=SERVER, seed=5)
    for uid in people:
        await svc.join(gid, uid)
    for _ in range(agents):
        await svc.join(gid, None, is_agent=True, agent_kind="llm")
    await svc.start(gid)
    game = svc.games[gid]
    await close_phase(svc, game)  # the day's timer runs on the wall clock, not the game's
    state = await until_phase(game, PhaseKind.VOTE, tries=200)
    seats = state.seats
    mafia = next(s for s in seats if s.is_mafia)
    town = [s for s in seats if not s.is_mafia]
    for k, s in enumerate(seats):
        later(game)
        await svc.say(gid, s.index, f"day one line {k} from {s.name}, who is it")
        later(game)
        await svc.say(gid, s.index, f"second thought number {k}")
    first_out, victim = town[0], town[1]
    for s in seats:
        later(game)
        await svc.vote(gid, s.index, first_out.name if s is not first_out else mafia.name)
    await until_phase(game, PhaseKind.NIGHT_VOTE, tries=200)
    later(game)
    await svc.vote(gid, mafia.index, victim.name)
    if game.state is not None and game.state.phase.kind is PhaseKind.DAY:
        await close_phase(svc, game)
    state = await until_phase(game, PhaseKind.VOTE, tries=200)
    alive = [s for s in state.seats if s.alive]
    for s in alive:
        later(game)
        await svc.say(gid, s.index, f"day two from {s.name}: it must be {mafia.name}")
    for s in alive:
        later(game)
        await svc.vote(gid, s.index, mafia.name if s.index != mafia.index else town[2].name)
    await svc.wait_finished(gid)
    await svc.drain(gid)
    with session_scope(svc.engine) as db:
        rows = db.exec(select(m.Seat).where(m.Seat.game_id == gid)).all()
        agent_seats = [r.index for r in rows if r.is_agent]
        humans = [r for r in rows if not r.is_agent]
        for k, r in enumerate(humans[:-1]):  # the last person answers nothing
            db.add(
                m.SurveyResponse(
                    game_id=gid,
                    seat_index=r.index,
                    about_seat_index=agent_seats[0] if agent_seats else None,
                    identified_ai=k % 2 == 0,
                    similarity=float(1 + k),
                    timing=4.0,
                    relevance=2.0,
                    comments=f"comment {k}",
                    source="discord",
                    t=m.utcnow(),
                )
            )
        played = db.get(m.Game, gid)
        assert played is not None  # the AI was revealed after the answers: they count
        played.revealed_at = m.utcnow() + timedelta(minutes=1)
        for a in agent_seats:
            db.add(
                m.LLMCall(
                    game_id=gid,
                    seat_index=a,
                    kind="scheduler",
                    model="fake-model",
                    prompt="the prompt",
                    output="<send>",
                    decision="speak",
                )
            )
    return gid


async def test_played_game_loads_with_the_stores_figures(
    service: GameService, engine: Engine, tmp_path: Path
) -> None:
    python = python_for_tests()
    gid = await play_two_days(service)
    with Session(engine) as s:  # the person who rated similarity 4 takes back their consent
        held = s.exec(
            select(m.SurveyResponse).where(
                m.SurveyResponse.game_id == gid, m.SurveyResponse.similarity == 4.0
            )
        ).one()
        held_seat = s.exec(
            select(m.Seat).where(m.Seat.game_id == gid, m.Seat.index == held.seat_index)
        ).one()
    with session_scope(engine) as s:
        for row in s.exec(select(m.Consent).where(m.Consent.user_id == held_seat.user_id)):
            s.delete(row)
    report = export_games(engine, [gid], tmp_path / "out", with_agent_log=True)
    assert report.exported[0].withheld == ["[withheld]"]
    folder = report.exported[0].llmafia_folder
    assert folder == "1001"
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["llmafia"] == {"1001": gid}
    root = tmp_path / "out" / "llmafia" / folder

    with Session(engine) as s:
        seats = {r.index: r for r in s.exec(select(m.Seat).where(m.Seat.game_id == gid))}
        said = s.exec(
            select(m.Message).where(
                m.Message.game_id == gid, col(m.Message.seat_index).is_not(None)
            )
        ).all()
        votes = s.exec(select(m.Vote).where(m.Vote.game_id == gid)).all()
        out = s.exec(
            select(m.Event)
            .where(m.Event.game_id == gid, m.Event.kind == "player_eliminated")
            .order_by(col(m.Event.seq))
        ).all()
        game_row = s.get(m.Game, gid)
    assert game_row is not None
    agent = next(r for r in seats.values() if r.is_agent)
    label = {r.character_name: r.character_name for r in seats.values()}
    label[held_seat.character_name] = "[withheld]"  # a withheld person's label, everywhere
    got = figures(python, tmp_path / "out" / "llmafia", tmp_path / "run")[folder]
    assert "error" not in got, got
    assert got["llm"] == agent.character_name
    assert got["players"] == [label[seats[i].character_name] for i in sorted(seats)]
    assert got["mafia"] == [label[r.character_name] for r in seats.values() if r.role == "mafia"]
    assert got["did_mafia_win"] is (game_row.winner == "mafia") and game_row.winner == "bystanders"
    assert got["was_llm_voted_out"] is (not agent.alive)
    spoken = Counter(label[seats[x.seat_index or 0].character_name] for x in said)
    assert got["messages"] == dict(sorted(spoken.items()))
    assert got["votes"] == len([v for v in votes if v.target_index is not None])
    # day, night (its talk skipped: one mafia), day; who went out in each, as the store says
    assert [p[0] for p in got["phases"]] == ["day", "night", "day"]
    assert [p[1] for p in got["phases"]] == [6, 1, 4]  # players active in each
    assert [p[2] for p in got["phases"]] == [label[e.payload["name"]] for e in out]
    # the survey: four people answered (one of them withheld since: left out), the fifth has
    # an empty file; scores on 1-5 (not divided by 20 as the release's pilot games)
    assert got["survey"]["Was the LLM identified"] == [0, 1, 1]
    assert got["survey"]["similarity to human behavior"] == [1, 2, 3]
    assert got["comments"] == 3
    # the agent's log: its decisions, readable
    log = (root / f"{agent.character_name}_log.txt").read_text()
    assert "# NEW LOG" in log and "## DECISION: speak" in log and "fake-model" in log
    # LLMafia's own Game-Manager sentences, none of our narration
    manager = (root / "public_manager_chat.txt").read_text()
    assert "There is only one mafia member left" in manager
    everything = "".join(p.read_text() for p in root.glob("public_*_chat.txt"))
    for ours in ("The game begins", "Voting is open", "Mafia, vote now", "Roles:", "wins!"):
        assert ours not in everything
    assert read_game(root).winner == "bystanders"  # and our own reader still reads it


async def test_games_the_format_cannot_hold_are_left_out_with_the_reason(
    service: GameService, engine: Engine, tmp_path: Path
) -> None:
    two = await play_two_days(service, agents=2)
    none = await play_two_days(service, agents=0)
    one = await play_two_days(service, agents=1)
    report = export_games(engine, [two, none, one], tmp_path / "out", with_agent_log=False)
    manifest: dict[str, Any] = json.loads((tmp_path / "out" / "manifest.json").read_text())
    by_id = {g["game_id"]: g for g in manifest["games"]}
    assert by_id[two]["llmafia_folder"] is None
    assert "2 agents" in by_id[two]["llmafia_left_out"]
    assert by_id[none]["llmafia_folder"] is None
    assert "no agent" in by_id[none]["llmafia_left_out"]
    assert by_id[one]["llmafia_folder"] == "1001" and manifest["llmafia"] == {"1001": one}
    assert [p.name for p in (tmp_path / "out" / "llmafia").iterdir()] == ["1001"]
    # kept in the other formats
    assert (tmp_path / "out" / "jsonl" / f"{two}.jsonl").exists()
    assert two in (tmp_path / "out" / "csv" / "messages.csv").read_text()
    assert any("not in llmafia/" in line for line in report.summary())
    # without the agent log: a short marker in the agent's log file
    agent_logs = list((tmp_path / "out" / "llmafia" / "1001").glob("*_log.txt"))
    assert len(agent_logs) == 1 and "not in this export" in agent_logs[0].read_text()
