"""Importing the 15 released LLMafia games into the store, and exporting them back.

Expected numbers come from the raw files with shell tools (the command is next to each), or
from plain re-counts written here, not from the importer's own helpers.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, func, select

from bot.protection.dataset.stored import game_from_store, store_game_id
from bot.store.db import make_engine, session_scope
from bot.store.migrate import upgrade
from bot.store.models import (
    GAME_MANAGER,
    Game,
    Message,
    Phase,
    Seat,
    Server,
    SurveyResponse,
    Vote,
)
from research.importer import ImportResult, import_game, import_llmafia
from research.llmafia import LLMafiaGame, read_game, read_games, write_game
from research.paths import llmafia_games_dir

DATA = llmafia_games_dir()
GAME_IDS = [f"{n:04d}" for n in range(1, 16)]
CHATS = ("public_daytime_chat.txt", "public_nighttime_chat.txt", "public_manager_chat.txt")
# day chats the reader changes (cleaned, re-ordered or de-duplicated lines; see
# test_llmafia_real.test_written_bytes_match_originals); every other chat file is byte-identical
CHANGED_DAY_CHATS = {"0001", "0002", "0005", "0006", "0011", "0014", "0015"}

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="LLMafia data not present")


def _engine(path: Path) -> Engine:
    url = f"sqlite:///{path}"
    upgrade(url)
    return make_engine(url)


@pytest.fixture(scope="module")
def games() -> dict[str, LLMafiaGame]:
    return {g.game_id: g for g in read_games(DATA)}


@pytest.fixture(scope="module")
def imported(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Engine, list[ImportResult]]]:
    engine = _engine(tmp_path_factory.mktemp("imp") / "db.sqlite")
    report = import_llmafia(engine, DATA)
    assert report.skipped == []
    yield engine, report.imported
    engine.dispose()


def _count(engine: Engine, model: type, gid: str | None = None) -> int:
    with Session(engine) as s:
        q = select(func.count()).select_from(model)
        if gid is not None:
            q = q.where(model.game_id == gid)  # type: ignore[attr-defined]
        return s.exec(q).one()


def _chat_lines(gid: str) -> tuple[int, int]:
    """(player lines, Game-Manager lines) in the three chats after de-duplication, the day
    chat without copies of night lines: awk '!seen[$0]++' | grep -vxFf <night chat>."""
    night = list(dict.fromkeys((DATA / gid / CHATS[1]).read_text().splitlines()))
    day = [
        x
        for x in dict.fromkeys((DATA / gid / CHATS[0]).read_text().splitlines())
        if x not in set(night)
    ]
    manager = list(dict.fromkeys((DATA / gid / CHATS[2]).read_text().splitlines()))
    every = day + night + manager
    managers = sum(1 for x in every if "] Game-Manager: " in x)
    return len(every) - managers, managers


def test_every_game_imported(imported: tuple[Engine, list[ImportResult]]) -> None:
    engine, results = imported
    assert [r.source_id for r in results] == GAME_IDS
    assert [r.game_id for r in results] == [f"llmafia-{g}" for g in GAME_IDS]
    assert not any(r.replaced for r in results)
    with Session(engine) as s:
        servers = s.exec(select(Server)).all()
        assert [(x.platform, x.external_id) for x in servers] == [("import", "llmafia")]
        rows = {g.id: g for g in s.exec(select(Game)).all()}
    assert sorted(rows) == [r.game_id for r in results]
    for r in results:
        g = rows[r.game_id]
        assert g.status == "finished" and g.server_id == servers[0].id
        assert g.config["source"] == "llmafia" and g.config["game_id"] == r.source_id
        config = json.loads((DATA / r.source_id / "config.json").read_text())
        assert g.config["day_minutes"] == config["daytime_minutes"]
        assert g.config["night_minutes"] == config["nighttime_minutes"]
        player, manager = _chat_lines(r.source_id)
        assert (r.counts["player_lines"], r.counts["manager_lines"]) == (player, manager)
        assert _count(engine, Message, r.game_id) == player + manager == r.counts["messages"]
        assert r.counts["seats"] == len(config["players"]) == _count(engine, Seat, r.game_id)
        assert r.repairs and r.repairs[0].kind == "real_name_dropped"
        assert any("UTC" in n for n in r.notes)


def test_winners_and_seats(imported: tuple[Engine, list[ImportResult]]) -> None:
    engine, _ = imported
    with Session(engine) as s:
        winners = {g.id: g.winner for g in s.exec(select(Game)).all()}
        seats = s.exec(
            select(Seat).where(Seat.game_id == "llmafia-0003").order_by(col(Seat.index))
        ).all()
    # grep -l Bystanders */who_wins.txt; 0014/0015 stalled with the mafia ahead
    assert {g for g, w in winners.items() if w == "bystanders"} == {
        "llmafia-0006",
        "llmafia-0009",
        "llmafia-0011",
    }
    assert all(w == "mafia" for g, w in winners.items() if g[-4:] not in ("0006", "0009", "0011"))
    config = json.loads((DATA / "0003" / "config.json").read_text())
    assert [(x.index, x.character_name) for x in seats] == list(
        enumerate(p["name"] for p in config["players"])
    )
    assert [x.role == "mafia" for x in seats] == [p["is_mafia"] for p in config["players"]]
    assert [x.is_agent for x in seats] == [p["is_llm"] for p in config["players"]]
    assert all(x.user_id is None for x in seats)
    # grep "voted out" 0003/public_manager_chat.txt: Riley Jordan Ariel Lennon Morgan Lee
    out = {"Riley", "Jordan", "Ariel", "Lennon", "Morgan", "Lee"}
    assert {x.character_name for x in seats if not x.alive} == out


def test_times_are_utc_and_phases_split_at_the_vote(
    imported: tuple[Engine, list[ImportResult]],
) -> None:
    engine, _ = imported
    with Session(engine) as s:
        g = s.get_one(Game, "llmafia-0014")
        phases = s.exec(
            select(Phase).where(Phase.game_id == "llmafia-0014").order_by(col(Phase.seq))
        ).all()
        msgs = s.exec(select(Message).where(Message.game_id == "llmafia-0014")).all()
    # head -1 0014/public_manager_chat.txt: the first announcement is the start (20:37:51)
    assert g.started_at == datetime(2025, 2, 10, 20, 37, 51, tzinfo=UTC)
    # grep "Now it's" 0014/public_manager_chat.txt and grep "time to vote" 0014/public_*:
    # day 2 was re-announced at 20:44:00 and 20:50:43 (host restarts) and its vote called at
    # 20:46:00 and again at 20:52:43; day 3 was voted at 20:55:42, restarted at 20:58:39
    assert [(p.kind, p.number, p.started_at.strftime("%H:%M:%S")) for p in phases] == [
        ("day", 1, "20:37:51"),
        ("vote", 1, "20:39:51"),
        ("night", 1, "20:42:21"),
        ("night_vote", 1, "20:43:06"),
        ("day", 2, "20:43:25"),
        ("day", 2, "20:44:00"),
        ("vote", 2, "20:46:00"),
        ("day", 2, "20:50:43"),
        ("vote", 2, "20:52:43"),
        ("night", 2, "20:52:43"),
        ("night_vote", 2, "20:53:28"),
        ("day", 3, "20:53:42"),
        ("vote", 3, "20:55:42"),
        ("day", 3, "20:58:39"),
        ("vote", 3, "21:00:39"),
        ("night", 3, "21:00:39"),
        ("night_vote", 3, "21:01:24"),
        ("day", 4, "21:01:38"),
        ("vote", 4, "21:03:38"),
    ]
    by_seq = {p.seq: p for p in phases}
    for m in msgs:
        p = by_seq[m.phase_seq or 0]
        assert m.t.tzinfo is not None
        if re.match(r"\S+ voted for \S+$", m.text) and m.speaker == GAME_MANAGER:
            assert p.kind in ("vote", "night_vote"), m.text
        if m.seat_index is not None and p.kind in ("vote", "night_vote"):
            assert m.t >= p.started_at
        if m.speaker == GAME_MANAGER:
            assert m.seat_index is None
    for a, b in itertools.pairwise(phases):
        assert a.ended_at == b.started_at
    for p in phases:
        if p.kind in ("day", "night"):  # 2 and 0.75 minutes in 0014/config.json
            assert p.deadline is not None
            assert (p.deadline - p.started_at).total_seconds() == (120 if p.kind == "day" else 45)
        else:
            assert p.deadline is None
    with Session(engine) as s:
        votes = s.exec(select(Vote).where(Vote.game_id == "llmafia-0014")).all()
    for v in votes:
        assert by_seq[v.phase_seq].kind in ("vote", "night_vote")
        assert by_seq[v.phase_seq].started_at <= v.t


def test_votes(imported: tuple[Engine, list[ImportResult]]) -> None:
    engine, results = imported
    by_id = {r.source_id: r for r in results}
    # grep -c "voted for" 0001/public_daytime_chat.txt 0001/public_nighttime_chat.txt: 13 + 4
    assert by_id["0001"].counts["votes"] == 17 == _count(engine, Vote, "llmafia-0001")
    assert by_id["0001"].skipped == {"untimed_vote_file_entries": 1}  # cat 0001/Lee_vote.txt
    # 0014: 42 "voted for" lines, 12 of them re-announce votes of players already out
    assert by_id["0014"].counts["votes"] == 30
    assert by_id["0014"].skipped == {"stale_reannounced_votes": 12}
    with Session(engine) as s:
        votes = s.exec(select(Vote).where(Vote.game_id == "llmafia-0013")).all()
        phases = {
            p.seq: p.kind for p in s.exec(select(Phase).where(Phase.game_id == "llmafia-0013"))
        }
        seats = {
            x.index: x.character_name
            for x in s.exec(select(Seat).where(Seat.game_id == "llmafia-0013"))
        }
    # "[20:26:51] Game-Manager: Charlie voted for Blake"
    charlie = [v for v in votes if seats[v.voter_index] == "Charlie"]
    assert next((seats[v.target_index or 0], v.kind, v.t) for v in charlie) == (
        "Blake",
        "day",
        datetime(2025, 2, 10, 20, 26, 51, tzinfo=UTC),
    )
    assert all(phases[v.phase_seq] == ("vote" if v.kind == "day" else "night_vote") for v in votes)


def test_surveys(imported: tuple[Engine, list[ImportResult]]) -> None:
    engine, results = imported
    # ls 00NN/*_survey.txt | wc -l -> 101; 0005/Kai answered twice (grep -c similarity -> 2)
    assert sum(r.counts["surveys"] for r in results) == 101 == _count(engine, SurveyResponse)
    assert {
        r.source_id: r.skipped.get("earlier_survey_attempts")
        for r in results
        if r.skipped.get("earlier_survey_attempts")
    } == {"0005": 1}
    with Session(engine) as s:
        rows = s.exec(select(SurveyResponse)).all()
        seats = {(x.game_id, x.index): x for x in s.exec(select(Seat)).all()}
    assert all(r.source == "llmafia" and r.t is None and r.guessed_name is None for r in rows)
    for r in rows:
        assert seats[(r.game_id, r.about_seat_index or 0)].is_agent
        assert not seats[(r.game_id, r.seat_index)].is_agent
        assert r.original_scale == ("0-100" if r.game_id <= "llmafia-0006" else "1-5")
    kai = next(
        r
        for r in rows
        if seats[(r.game_id, r.seat_index)].character_name == "Kai" and r.game_id == "llmafia-0005"
    )
    assert kai.timing == pytest.approx(1 + 4 * 80 / 100)  # the second answer, 80 (not 91)
    # 0013/Blake_survey.txt: identified 0, similarity 1, timing 2, relevance 2, "too long ..."
    blake = next(
        r
        for r in rows
        if r.game_id == "llmafia-0013"
        and seats[(r.game_id, r.seat_index)].character_name == "Blake"
    )
    assert (blake.identified_ai, blake.similarity, blake.timing, blake.relevance) == (
        False,
        1,
        2,
        2,
    )
    assert blake.comments == "too long comments"


def test_no_personal_data_stored(imported: tuple[Engine, list[ImportResult]]) -> None:
    engine, _ = imported
    dump: list[str] = []
    with engine.connect() as conn:
        for table in sa.inspect(engine).get_table_names():
            for row in conn.execute(sa.text(f'SELECT * FROM "{table}"')):
                dump.append(repr(tuple(row)))
    text = "\n".join(dump)
    # real_name values (all ANONYMIZED in the release) and real_names.txt never get in; the
    # word "real_name" only appears in the repair note saying it was dropped
    assert "ANONYMIZED" not in text and '"real_name":' not in text
    for gid in GAME_IDS:
        config = json.loads((DATA / gid / "config.json").read_text())
        for key in ("preparation_command", "notes"):  # local paths and free text
            value = str(config.get(key) or "")
            if value:
                assert value not in text, (gid, key)
                assert not any(
                    part in text for part in re.split(r"[\\/ ]", value) if len(part) > 20
                ), (gid, key)
        notes = DATA / gid / "notes.txt"
        for line in notes.read_text().splitlines() if notes.is_file() else []:
            if len(line.strip()) > 12:
                assert line.strip() not in text
    assert "Users" not in text and "OneDrive" not in text


@pytest.mark.parametrize("gid", GAME_IDS)
def test_round_trip_through_the_store(
    imported: tuple[Engine, list[ImportResult]],
    games: dict[str, LLMafiaGame],
    gid: str,
    tmp_path: Path,
) -> None:
    engine, _ = imported
    rebuilt = game_from_store(engine, store_game_id(gid))
    out = write_game(rebuilt, tmp_path / gid)
    direct = write_game(games[gid], tmp_path / "direct" / gid)
    for name in CHATS:
        # the store gives back exactly the chat the reader gave it ...
        assert (out / name).read_bytes() == (direct / name).read_bytes(), name
        # ... which is the release's own file unless the reader had to repair it
        if name != CHATS[0] or gid not in CHANGED_DAY_CHATS:
            assert (out / name).read_bytes() == (DATA / gid / name).read_bytes(), name
    again = read_game(out)
    # every line, one that was all backspaces too (same-second lines may change places)
    assert Counter(again.lines) == Counter(games[gid].lines)
    assert rebuilt.phases == games[gid].phases
    assert rebuilt.players == games[gid].players
    assert rebuilt.eliminations == games[gid].eliminations
    assert (rebuilt.winner, rebuilt.winner_declared) == (
        games[gid].winner,
        games[gid].winner_declared,
    )
    assert rebuilt.vote_files == games[gid].vote_files
    assert rebuilt.start_time == games[gid].start_time
    assert [r.kind for r in rebuilt.repairs] == [r.kind for r in games[gid].repairs]
    # surveys come back too, except a second answer's first attempt (0005/Kai)
    if gid != "0005":
        for f in direct.glob("*_survey.txt"):
            assert (out / f.name).read_bytes() == f.read_bytes(), f.name


def test_reimport_replaces(tmp_path: Path, games: dict[str, LLMafiaGame]) -> None:
    engine = _engine(tmp_path / "db.sqlite")
    first = import_game(engine, games["0013"])
    counts = {
        m.__name__: _count(engine, m)
        for m in (Game, Seat, Phase, Message, Vote, SurveyResponse, Server)
    }
    again = import_llmafia(engine, DATA / "0013").imported
    assert not first.replaced and again[0].replaced
    assert again[0].counts == first.counts
    assert {
        m.__name__: _count(engine, m)
        for m in (Game, Seat, Phase, Message, Vote, SurveyResponse, Server)
    } == counts
    import_game(engine, games["0012"])
    assert _count(engine, Server) == 1 and _count(engine, Game) == 2
    engine.dispose()


def test_never_replaces_a_game_played_here(tmp_path: Path, games: dict[str, LLMafiaGame]) -> None:
    engine = _engine(tmp_path / "db.sqlite")
    with session_scope(engine) as s:
        s.add(Game(id="llmafia-0013", seed=1, config={"players": 5}))
    with pytest.raises(ValueError, match="not imported"):
        import_game(engine, games["0013"])
    assert _count(engine, Seat) == 0
    engine.dispose()


def test_bad_paths(tmp_path: Path) -> None:
    engine = _engine(tmp_path / "db.sqlite")
    with pytest.raises(FileNotFoundError):
        import_llmafia(engine, tmp_path)
    with pytest.raises(LookupError):
        game_from_store(engine, "llmafia-9999")
    engine.dispose()


def test_survey_table_takes_live_answers(tmp_path: Path) -> None:
    """The table is for the Discord/Slack survey too: a 1-5 answer with a guessed name."""
    engine = _engine(tmp_path / "db.sqlite")
    with session_scope(engine) as s:
        s.add(Game(id="g1", seed=1))
        s.flush()
        s.add(
            SurveyResponse(
                game_id="g1",
                seat_index=2,
                about_seat_index=4,
                identified_ai=False,
                guessed_name="Rowan",
                similarity=4,
                timing=3.5,
                relevance=None,
                original_scale="1-5",
                comments=None,
                t=datetime(2025, 6, 1, 12, 0, tzinfo=UTC),
                source="discord",
            )
        )
    with Session(engine) as s:
        row = s.exec(select(SurveyResponse)).one()
        assert (row.guessed_name, row.similarity, row.t) == (
            "Rowan",
            4.0,
            datetime(2025, 6, 1, 12, 0, tzinfo=UTC),
        )
    with session_scope(engine) as s:  # answers go with their game
        s.execute(sa.delete(Game).where(col(Game.id) == "g1"))
    assert _count(engine, SurveyResponse) == 0
    engine.dispose()


def test_export_a_game_played_here(tmp_path: Path) -> None:
    """game_from_store also turns a store-native game (day/vote/night/night_vote rows,
    Game-Manager lines on the stage) into the release's layout."""
    engine = _engine(tmp_path / "db.sqlite")
    t0 = datetime(2025, 5, 1, 23, 59, 0, tzinfo=UTC)

    def at(s: int) -> datetime:
        return t0 + timedelta(seconds=s)

    with session_scope(engine) as s:
        s.add(
            Game(
                id="k3x9",
                seed=1,
                status="finished",
                winner="mafia",
                started_at=t0,
                config={"day_seconds": 120, "night_seconds": 45},
            )
        )
        s.flush()
        for i, (name, role, agent) in enumerate(
            [("Ada", "mafia", True), ("Bo", "bystander", False), ("Cy", "detective", False)]
        ):
            s.add(Seat(game_id="k3x9", index=i, character_name=name, role=role, is_agent=agent))
        for seq, (kind, number, start) in enumerate(
            [("day", 1, 0), ("vote", 1, 60), ("night", 1, 70), ("night_vote", 1, 80)], start=1
        ):
            s.add(Phase(game_id="k3x9", seq=seq, kind=kind, number=number, started_at=at(start)))
        for seq, seat, place, text, t in [
            (1, None, "stage", "Now it's Daytime 1 for 1 minute", 0),
            (1, 1, "stage", "hi", 10),
            (2, 0, "stage", "vote Cy", 61),
            (2, None, "stage", "Cy was voted out. Their role was detective", 70),
            (3, 0, "den", "alone now", 75),
            (4, None, "den", "Bo was killed during the night. Their role was bystander", 90),
        ]:
            name = GAME_MANAGER if seat is None else ["Ada", "Bo", "Cy"][seat]
            s.add(
                Message(
                    game_id="k3x9",
                    phase_seq=seq,
                    place=place,
                    seat_index=seat,
                    speaker=name,
                    text=text,
                    t=at(t),
                )
            )
    g = game_from_store(engine, "k3x9")
    assert [(p.label, p.start.strftime("%H:%M:%S"), p.voting_start) for p in g.phases] == [
        ("day-1", "23:59:00", datetime(2025, 5, 2, 0, 0, 0)),
        ("night-1", "00:00:10", datetime(2025, 5, 2, 0, 0, 20)),
    ]
    assert (g.day_minutes, g.night_minutes, g.winner) == (2.0, 0.75, "mafia")
    assert [(p.name, p.is_mafia, p.is_llm) for p in g.players] == [
        ("Ada", True, True),
        ("Bo", False, False),
        ("Cy", False, False),
    ]
    assert [(e.name, e.role, e.phase) for e in g.eliminations] == [
        ("Cy", "bystander", "day-1"),
        ("Bo", "bystander", "night-1"),
    ]
    out = write_game(g, tmp_path / "export")
    assert (out / "public_nighttime_chat.txt").read_text() == (
        "[00:00:15] Ada: alone now\n"
        "[00:00:30] Game-Manager: Bo was killed during the night. Their role was bystander\n"
    )
    assert read_game(out).winner == "mafia"
    engine.dispose()
