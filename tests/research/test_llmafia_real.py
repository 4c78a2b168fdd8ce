"""The LLMafia reader against all 15 real games of the release.

Numbers asserted here were checked independently with shell tools from the games folder
(/work/shared/data/llmafia/games); the command is next to each number.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

from research.llmafia import LLMafiaGame, read_game, read_games, write_game
from research.llmafia_log import SCHEDULING, VOTE, read_agent_log
from research.paths import llmafia_games_dir

DATA = llmafia_games_dir()
GAME_IDS = [f"{n:04d}" for n in range(1, 16)]
PILOTS = GAME_IDS[:6]

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="LLMafia data not present")


@pytest.fixture(scope="module")
def games() -> dict[str, LLMafiaGame]:
    return {g.game_id: g for g in read_games(DATA)}


def counts(game: LLMafiaGame, kind: str) -> list[int]:
    return [r.count for r in game.repairs_of(kind)]


def by_game(games: dict[str, LLMafiaGame], kind: str) -> dict[str, list[int]]:
    """Repair counts of one kind, for the games that have any."""
    return {gid: counts(g, kind) for gid, g in sorted(games.items()) if counts(g, kind)}


def test_all_fifteen_games_parse(games: dict[str, LLMafiaGame]) -> None:
    assert sorted(games) == GAME_IDS
    for g in games.values():
        assert g.players and g.phases and g.lines and g.eliminations
        assert sum(p.is_llm for p in g.players) == 1
        assert g.phases[0].label == "day-1"
        # every line has a known phase and lines run in time order within each phase
        labels = [p.label for p in g.phases]
        assert {line.phase for line in g.lines} <= set(labels)
        assert {line.shown_in for line in g.lines} <= set(labels)
        idx = [labels.index(line.phase) for line in g.lines]
        assert idx == sorted(idx)
    assert read_games(DATA / "0007")[0].lines == games["0007"].lines
    assert [g.game_id for g in read_games(DATA.parent)] == GAME_IDS


def test_dates_and_start_times(games: dict[str, LLMafiaGame]) -> None:
    # dates from the config names: pilot121224/..., config090125_1105, config140125_*, 100225_*
    assert games["0001"].start_time == datetime(2024, 12, 12, 14, 16, 47)
    assert games["0007"].start_time == datetime(2025, 1, 9, 11, 13, 1)
    assert games["0010"].start_time == datetime(2025, 1, 14, 14, 37, 12)
    # game_start_time.txt holds the last restart (20:58:39, 20:54:46); the first announcement
    # is the start: head -1 0014/public_manager_chat.txt
    assert games["0014"].start_time == datetime(2025, 2, 10, 20, 37, 51)
    assert games["0015"].start_time == datetime(2025, 2, 10, 20, 42, 18)
    assert [g for g in GAME_IDS if games[g].repairs_of("start_time")] == ["0014", "0015"]
    # 0004's file says 14:16:26, the announcement 14:16:27: one second is not a restart
    assert games["0004"].start_time.time().isoformat() == "14:16:26"
    assert all(not g.repairs_of("midnight") for g in games.values())


def test_restart_duplicates_removed(games: dict[str, LLMafiaGame]) -> None:
    # Only 0014 and 0015 have repeated lines, all in the day chat:
    #   for f in */public_*chat.txt; do echo $f $(sort $f | uniq -d | wc -l); done
    # lines removed = lines - unique lines:
    #   f=0014/public_daytime_chat.txt; echo $(( $(wc -l < $f) - $(sort -u $f | wc -l) ))  # 302
    #   f=0015/public_daytime_chat.txt; ...                                                # 79
    # night lines replayed into the day chat:
    #   comm -12 <(sort -u 0014/public_daytime_chat.txt) <(sort -u 0014/public_nighttime_chat.txt)
    #   | wc -l   # 3 (and 3 for 0015)
    assert by_game(games, "duplicate_lines") == {"0014": [302], "0015": [79]}
    assert counts(games["0014"], "leaked_night_lines") == [3]
    assert counts(games["0015"], "leaked_night_lines") == [3]
    # what is left: awk '!seen[$0]++' f | grep -vxFf <night chat> | wc -l   # 248 and 107
    assert len(games["0014"].place_lines("stage")) == 248
    assert len(games["0015"].place_lines("stage")) == 107
    for g in games.values():
        keys = [(x.t, x.place, x.speaker, x.text) for x in g.lines]
        assert len(keys) == len(set(keys))


def test_backwards_timestamps(games: dict[str, LLMafiaGame]) -> None:
    # backward steps in file order:
    #   awk '{t=substr($1,2,8); if (p!="" && t<p) c++; p=t} END{print c+0}' \
    #       00NN/public_daytime_chat.txt
    # gives 0002:1 0011:1 (an LLM line stamped before the votes it follows) and 0014:24 0015:12;
    # after de-duplication (awk '!seen[$0]++' | grep -vxFf night | awk ...) 0014:4 0015:2.
    assert by_game(games, "out_of_order") == {"0002": [1], "0011": [1], "0014": [4], "0015": [2]}
    late = datetime(2024, 12, 12, 13, 30, 3)
    rowan = next(x for x in games["0002"].lines if x.speaker == "Rowan" and x.t == late)
    # stamped in day-1, but written after day-1's votes: it appeared when day-2 opened
    assert (rowan.phase, rowan.shown_in) == ("day-1", "day-2")


def test_host_restarts(games: dict[str, LLMafiaGame]) -> None:
    # grep "Now it's" 0014/public_manager_chat.txt: 10 announcements for 6 eliminations
    g = games["0014"]
    assert [p.label for p in g.phases] == [
        "day-1", "night-1", "day-2", "night-2", "day-3", "night-3", "day-4"
    ]  # fmt: skip
    restarts = {p.label: [t.time().isoformat() for t in p.restarts] for p in g.phases if p.restarts}
    assert restarts == {"day-2": ["20:44:00", "20:50:43"], "day-3": ["20:58:39"]}
    assert len(g.repairs_of("host_restart")) == 3
    h = games["0015"]
    restarts = {p.label: [t.time().isoformat() for t in p.restarts] for p in h.phases if p.restarts}
    assert restarts == {"day-2": ["20:52:16", "20:54:46"]}
    assert all(not games[x].repairs_of("host_restart") for x in GAME_IDS[:13])


def test_stalled_games_and_winners(games: dict[str, LLMafiaGame]) -> None:
    # wc -c */who_wins.txt: only 0014 and 0015 are empty
    assert {g for g in GAME_IDS if not games[g].winner_declared} == {"0014", "0015"}
    # remaining_players.txt: Sutton+Harley (both mafia) and Eden+Kai+Morgan (2 mafia): mafia won
    assert games["0014"].winner == games["0015"].winner == "mafia"
    assert games["0014"].repairs_of("empty_winner") and games["0014"].repairs_of("stalled")
    # the rules (mafia >= bystanders) were met before the host noticed
    assert "Reese" in games["0014"].repairs_of("game_over_missed")[0].detail
    assert "Rowan" in games["0015"].repairs_of("game_over_missed")[0].detail
    # grep -l Bystanders */who_wins.txt
    bystanders = {g for g in GAME_IDS if games[g].winner == "bystanders"}
    assert bystanders == {"0006", "0009", "0011"}
    for g in games.values():
        assert not g.repairs_of("winner_mismatch")
        assert not g.repairs_of("remaining_mismatch")


def test_eliminations(games: dict[str, LLMafiaGame]) -> None:
    # grep "voted out" 0003/public_manager_chat.txt
    g = games["0003"]
    assert [(e.name, e.role, e.phase) for e in g.eliminations] == [
        ("Riley", "bystander", "day-1"),
        ("Jordan", "bystander", "night-1"),
        ("Ariel", "mafia", "day-2"),
        ("Lennon", "bystander", "night-2"),
        ("Morgan", "bystander", "day-3"),
        ("Lee", "bystander", "night-3"),
    ]
    night2 = g.phases[3]
    assert night2.start == night2.end  # one mafia left: cut straight to voting
    # status files contradict the manager chat (grep -l JOINED */Jamie_status.txt ...)
    assert "Jamie" in games["0004"].repairs_of("status_mismatch")[0].detail
    assert "Gray" in games["0014"].repairs_of("status_mismatch")[0].detail


def test_votes(games: dict[str, LLMafiaGame]) -> None:
    g = games["0001"]
    announced = [v for v in g.votes if v.source == "announced"]
    # grep -c "voted for" 0001/public_daytime_chat.txt 0001/public_nighttime_chat.txt: 13 + 4
    assert len(announced) == 17
    assert all(v.t is not None and v.phase is not None for v in announced)
    # pilot vote files keep only the last vote: cat 0001/Lee_vote.txt -> Winter, never announced
    assert [(v.voter, v.target, v.t) for v in g.votes if v.source == "file"] == [
        ("Lee", "Winter", None)
    ]
    # after restarts the host re-announced old votes of dead players: counted by hand from the
    # 20:46:00, 20:52:43 and 21:00:39 blocks of 0014 (6+2+4) and 20:54:16, 20:56:46 of 0015 (5+2)
    assert counts(games["0014"], "stale_votes") == [12]
    assert counts(games["0015"], "stale_votes") == [7]
    assert sum(v.valid is False for v in games["0014"].votes) == 12
    # grep -l _ */*_vote.txt: no "Daytime_X" style entries in this release
    assert all(not x.repairs_of("vote_prefix") for x in games.values())
    for x in games.values():
        assert {v.voter for v in x.votes} <= {p.name for p in x.players}


def test_text_cleaning(games: dict[str, LLMafiaGame]) -> None:
    # lines with a backspace (\x08) / escape (\x1b), after de-duplication:
    #   sort -u 00NN/public_*chat.txt | grep -c $'\x08'   -> 0001:6 0005:9 0006:3 0014:13
    #   sort -u 0014/public_*chat.txt | grep -c $'\x1b'   -> 2
    # (a second count is for survey comments: 0005/Emerson, 0006/Morgan)
    assert by_game(games, "backspaces") == {
        "0001": [6],
        "0005": [9, 1],
        "0006": [3, 1],
        "0014": [13],
    }
    assert counts(games["0014"], "escape_sequences") == [2]
    texts = [x.text for x in games["0014"].lines if x.speaker == "Gray"]
    assert "Hi im not an AI bot" in texts  # "Hi I\bim de\b\bnot an AI bot"
    assert "Hello, Here are the 2 most likely people to mafia:" in texts
    assert "}|" in texts
    for g in games.values():
        for x in g.lines:
            assert not any(ord(c) < 32 or 0x590 <= ord(c) <= 0x5FF for c in x.text)
    # the typographic apostrophe in 0004 is real text and stays
    assert any("can\u2019t" in x.text for x in games["0004"].lines)
    # 0014/0015 also ship *_original.txt, which still has the Hebrew letters (diff: 4 and 1)
    assert counts(games["0014"], "upstream_cleaned") == [4]
    assert counts(games["0015"], "upstream_cleaned") == [1]


def test_survey_scale_detected_from_answers(games: dict[str, LLMafiaGame]) -> None:
    assert [g for g in GAME_IDS if games[g].survey_scale == "0-100"] == PILOTS
    assert all(games[g].survey_scale == "1-5" for g in GAME_IDS[6:])
    for g in games.values():
        for s in g.surveys:
            assert s.original_scale == g.survey_scale
            for v in (s.similarity, s.timing, s.relevance):
                assert v is None or 1 <= v <= 5
        assert not any("ambiguous" in r.detail for r in g.repairs_of("survey_scale"))
    angel = next(s for s in games["0001"].surveys if s.player == "Angel")
    assert (angel.similarity, angel.timing, angel.relevance) == (3.8, 4.6, 4.2)  # 70, 90, 80
    assert angel.about == "Bailey" and angel.identified_llm is None


def test_survey_fields(games: dict[str, LLMafiaGame]) -> None:
    addison = next(s for s in games["0007"].surveys if s.player == "Addison")
    assert addison.identified_llm is True and addison.about == "Stevie"
    assert (addison.similarity, addison.timing, addison.relevance) == (3, 5, 5)
    assert addison.comments == "Confusing to play online, cannot get realy feel of the players"
    # cat -A 0002/Harley_survey.txt: no Comments section; 0004/Alex_survey.txt is empty
    harley = next(s for s in games["0002"].surveys if s.player == "Harley")
    assert harley.comments is None and harley.timing == 1.8
    alex = next(s for s in games["0004"].surveys if s.player == "Alex")
    assert alex.fields == {} and alex.similarity is None
    # grep -c similarity 0005/Kai_survey.txt -> 2: answered twice
    kai = [s for s in games["0005"].surveys if s.player == "Kai"]
    assert [(s.attempt, s.final, s.fields["timing of messaging"]) for s in kai] == [
        (1, False, "91"),
        (2, True, "80"),
    ]
    emerson = next(s for s in games["0005"].surveys if s.player == "Emerson")
    assert emerson.comments == "His massages were too long in compare to the rest"
    # the LLM player never answers: ls 00NN/*_survey.txt lacks exactly the is_llm player
    for g in games.values():
        assert {s.player for s in g.surveys} == {p.name for p in g.players if not p.is_llm}


def test_no_personal_data_in_outputs(games: dict[str, LLMafiaGame], tmp_path: Path) -> None:
    values = {
        p.get("real_name")
        for gid in GAME_IDS
        for p in json.loads((DATA / gid / "config.json").read_text())["players"]
    }
    assert values == {"ANONYMIZED"}
    for g in games.values():
        shown = repr(g)
        assert "ANONYMIZED" not in shown and "OneDrive" not in shown and "Maya" not in shown
        assert all(not hasattr(p, "real_name") for p in g.players)
        out = write_game(g, tmp_path / g.game_id)
        assert not (out / "real_names.txt").exists() and not (out / "notes.txt").exists()
        for f in out.iterdir():
            body = f.read_text()
            assert "real_name" not in body and "ANONYMIZED" not in body and "Users" not in body
        assert g.repairs_of("real_name_dropped")
        assert not g.repairs_of("personal_data_dropped")


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_round_trip(games: dict[str, LLMafiaGame], game_id: str, tmp_path: Path) -> None:
    g = games[game_id]
    again = read_game(write_game(g, tmp_path / "a" / game_id))
    # the de-duplicated public chat, every line (one that was all backspaces, in 0005 and 0014,
    # too: it is written with LLMafia's own text, and read back the same); lines of one second
    # may come back in another order
    assert Counter(again.lines) == Counter(g.lines)
    assert [x.t for x in again.lines] == [x.t for x in g.lines]
    for f in dataclasses.fields(LLMafiaGame):
        if f.name not in ("repairs", "lines"):
            assert getattr(again, f.name) == getattr(g, f.name), f.name
    # writing what was read back gives the same bytes
    second = write_game(again, tmp_path / "b" / game_id)
    first = tmp_path / "a" / game_id
    assert sorted(p.name for p in first.iterdir()) == sorted(p.name for p in second.iterdir())
    for p in first.iterdir():
        assert p.read_bytes() == (second / p.name).read_bytes(), p.name


def test_written_bytes_match_originals(games: dict[str, LLMafiaGame], tmp_path: Path) -> None:
    changed = {
        # sorted or de-duplicated day chats (a line's own text is written back: typed
        # backspaces and all); cleaned survey comments; restart start time
        "0002": {"public_daytime_chat.txt"},
        # the release's status says JOINED, though its host announced "Jamie was voted out"
        "0004": {"Jamie_status.txt"},  # (and Gray's in 0014 below)
        "0005": {"Emerson_survey.txt"},
        "0006": {"Morgan_survey.txt"},
        "0011": {"public_daytime_chat.txt"},
        "0014": {"public_daytime_chat.txt", "game_start_time.txt", "Gray_status.txt"},
        "0015": {"public_daytime_chat.txt", "game_start_time.txt"},
    }
    for gid, g in games.items():
        out = write_game(g, tmp_path / gid)
        differ = {
            f.name
            for f in out.iterdir()
            if f.name != "config.json"
            and not f.name.endswith("_log.txt")  # the agent's log: our marker (see below)
            and f.read_bytes() != (DATA / gid / f.name).read_bytes()
        }
        assert differ == changed.get(gid, set()), gid  # status files included
        llm = next(p.name for p in g.players if p.is_llm)
        assert [f.name for f in out.glob("*_log.txt")] == [f"{llm}_log.txt"]
        # config.json: the original minus real_name, notes and preparation_command
        original = json.loads((DATA / gid / "config.json").read_text())
        for p in original["players"]:
            del p["real_name"]
        del original["notes"], original["preparation_command"]
        assert (out / "config.json").read_text() == json.dumps(original, indent=4)


def test_agent_log(games: dict[str, LLMafiaGame]) -> None:
    log = read_agent_log(DATA / "0013" / "Charlie_log.txt", games["0013"])
    # grep -c "^# NEW LOG" 0013/Charlie_log.txt -> 2515
    assert len(log) == 2515
    # grep -A0 "^## OPERATION" ... | sort | uniq -c
    assert sum(e.operation == SCHEDULING for e in log) == 1956
    votes = [(e.t, e.content) for e in log if e.operation == VOTE]
    assert votes == [(datetime(2025, 2, 10, 20, 26, 46), "Blake")]
    # the log starts (20:22:05) before the game (20:24:46): dated the same day, earlier
    assert log[0].t == datetime(2025, 2, 10, 20, 22, 5) < games["0013"].start_time
    # and the announced vote matches: "[20:26:51] Game-Manager: Charlie voted for Blake"
    charlie = [v for v in games["0013"].votes if v.voter == "Charlie" and v.source == "announced"]
    assert [(v.target, v.phase) for v in charlie] == [("Blake", "day-1")]
