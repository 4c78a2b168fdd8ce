"""The LLMafia reader on small hand-made games: cases the real release does not contain
(midnight, prefixed votes, personal data, an ambiguous scale) and the parsing helpers."""

from __future__ import annotations

import json
from datetime import datetime, time
from pathlib import Path

from bot.protection.dataset.llmafia_survey import SurveyAnswers, detect_scale, parse_survey_text
from research.llmafia import parse_chat_line, read_game, write_game
from research.llmafia_log import read_agent_log
from research.llmafia_text import TextCleaner, apply_backspaces

DAY = "Now it's Daytime for 3 minutes, everyone can communicate and see messages and votes."
NIGHT = "Now it's Nighttime for 1 minutes, only mafia can communicate and see messages and votes."
DAY_END = "Daytime has ended, now it's time to vote! Waiting for all players to vote..."
NIGHT_END = "Nighttime has ended, now it's time to vote! Waiting for all players to vote..."
SECRET = "Zelda Quixote"


def make_game(
    folder: Path,
    *,
    config_path: str | None = "configurations/config311224_2350.json",
    real_name: str = "ANONYMIZED",
    survey: str = "similarity to human behavior - 4\ntiming of messaging - 2\n"
    "relevance of messages - 5\nComments:\nfine\n",
) -> Path:
    """A 4-player game across midnight: Bob is voted out by day, Cat killed at night."""
    folder.mkdir(parents=True)
    players = [("Ann", True, False), ("Bob", False, False), ("Cat", False, False)]
    players.append(("Dan", False, True))
    config: dict[str, object] = {
        "players": [
            {
                "name": n,
                "is_mafia": m,
                "is_llm": llm,
                "real_name": real_name if n == "Bob" else "ANONYMIZED",
                "llm_config": {"model_name": "tiny"} if llm else {},
            }
            for n, m, llm in players
        ],
        "daytime_minutes": 3,
        "nighttime_minutes": 1,
        "notes": f"played with {real_name}" if real_name != "ANONYMIZED" else "",
        "preparation_command": "C:\\Users\\zelda\\prepare_config.py",
    }
    if config_path is not None:
        config["config_original_path_when_game_created"] = config_path
    files = {
        "config.json": json.dumps(config, indent=4),
        "game_start_time.txt": "23:58:00",
        "player_names.txt": "Ann\nBob\nCat\nDan",
        "mafia_names.txt": "Ann",
        "real_names.txt": f"ANONYMIZED: Ann\n{real_name}: Bob\nANONYMIZED: Cat",
        "public_manager_chat.txt": (
            f"[23:58:00] Game-Manager: {DAY}\n"
            "[00:01:30] Game-Manager: Bob was voted out. Their role was bystander\n"
            f"[00:01:30] Game-Manager: {NIGHT}\n"
            "[00:02:40] Game-Manager: Cat was voted out. Their role was bystander\n"
        ),
        "public_daytime_chat.txt": (
            "[23:58:10] Ann: hi all\n"
            "[23:59:59] Bob: almost midnight\n"
            "[00:00:20] Dan: happy new year\n"
            f"[00:01:00] Game-Manager: {DAY_END}\n"
            "[00:01:10] Game-Manager: Ann voted for Bob\n"
            "[00:01:20] Game-Manager: Cat voted for Bob\n"
            "[00:01:30] Game-Manager: Dan voted for Bob\n"
        ),
        "public_nighttime_chat.txt": (
            "[00:01:40] Ann: bye cat\n"
            f"[00:02:30] Game-Manager: {NIGHT_END}\n"
            "[00:02:40] Game-Manager: Ann voted for Cat\n"
        ),
        "Ann_vote.txt": "Daytime_Bob\nCat\n",
        "Bob_vote.txt": "",
        "Cat_vote.txt": "Bob\n",
        "Dan_vote.txt": "Bob\n",
        "Bob_survey.txt": survey,
        "Cat_survey.txt": survey,
        "who_wins.txt": "Mafia wins!",
        "remaining_players.txt": "Ann\nDan",
        "phase_status.txt": "Nighttime_",
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def test_game_across_midnight(tmp_path: Path) -> None:
    g = read_game(make_game(tmp_path / "0100"))
    assert g.game_id == "0100"
    assert g.start_time == datetime(2024, 12, 31, 23, 58, 0)
    by_text = {x.text: x for x in g.lines}
    assert by_text["almost midnight"].t == datetime(2024, 12, 31, 23, 59, 59)
    assert by_text["happy new year"].t == datetime(2025, 1, 1, 0, 0, 20)
    assert by_text["happy new year"].phase == "day-1"
    assert by_text["bye cat"].phase == "night-1"
    assert [x.t for x in g.lines] == sorted(x.t for x in g.lines)
    # lines stamped after midnight: 3 manager + 5 day + 3 night
    assert [r.count for r in g.repairs_of("midnight")] == [11]
    assert [(e.name, e.phase, e.t) for e in g.eliminations] == [
        ("Bob", "day-1", datetime(2025, 1, 1, 0, 1, 30)),
        ("Cat", "night-1", datetime(2025, 1, 1, 0, 2, 40)),
    ]
    assert [p.end for p in g.phases] == [datetime(2025, 1, 1, 0, 1, 30), None]
    assert g.winner == "mafia" and g.winner_declared
    assert not g.repairs_of("out_of_order")


def test_votes_with_phase_prefix(tmp_path: Path) -> None:
    g = read_game(make_game(tmp_path / "g"))
    assert g.vote_files["Ann"] == ["Bob", "Cat"]
    assert [r.count for r in g.repairs_of("vote_prefix")] == [1]
    assert g.vote_files["Bob"] == []
    announced = [(v.voter, v.target, v.phase) for v in g.votes if v.source == "announced"]
    assert announced == [
        ("Ann", "Bob", "day-1"),
        ("Cat", "Bob", "day-1"),
        ("Dan", "Bob", "day-1"),
        ("Ann", "Cat", "night-1"),
    ]
    assert all(v.source == "announced" for v in g.votes)  # every file entry was announced


def test_personal_data_never_leaves(tmp_path: Path) -> None:
    g = read_game(make_game(tmp_path / "g", real_name=SECRET))
    assert SECRET not in repr(g) and "zelda" not in repr(g).lower()
    assert [r.count for r in g.repairs_of("personal_data_dropped")] == [2]  # config + txt
    assert g.repairs_of("free_text_dropped")
    out = write_game(g, tmp_path / "out")
    for f in out.iterdir():
        assert "zelda" not in f.read_text().lower(), f.name
    assert "real_name" not in (out / "config.json").read_text()


def test_round_trip_and_file_format(tmp_path: Path) -> None:
    src = make_game(tmp_path / "g")
    g = read_game(src)
    out = write_game(g, tmp_path / "out")
    again = read_game(out)
    assert again.lines == g.lines and again.votes == g.votes
    assert again.eliminations == g.eliminations
    # Ann answered nothing: she gets an empty survey file (LLMafia's analysis opens one for
    # every person), read back as an empty answer, as the release's own empty files are
    assert (out / "Ann_survey.txt").read_text() == ""
    assert [s for s in again.surveys if s.player != "Ann"] == g.surveys
    assert [s.fields for s in again.surveys if s.player == "Ann"] == [{}]
    # LLMafia's status files, and the agent's log file by which its analysis finds the LLM
    assert (out / "Bob_status.txt").read_text() == "VOTED_OUT\n"
    assert (out / "Cat_status.txt").read_text() == "VOTED_OUT\n"
    assert (out / "Ann_status.txt").read_text() == "JOINED\n"
    assert [p.name for p in out.glob("*_log.txt")] == ["Dan_log.txt"]
    for name in ("public_manager_chat.txt", "public_nighttime_chat.txt", "mafia_names.txt"):
        assert (out / name).read_bytes() == (src / name).read_bytes()
    assert (out / "who_wins.txt").read_text() == "Mafia wins!"
    assert (out / "remaining_players.txt").read_text() == "Ann\nDan"
    assert (out / "Ann_vote.txt").read_text() == "Bob\nCat\n"


def test_ambiguous_scale_is_flagged(tmp_path: Path) -> None:
    g = read_game(make_game(tmp_path / "g"))
    assert g.survey_scale == "1-5"
    assert "ambiguous" in g.repairs_of("survey_scale")[0].detail
    bob = next(s for s in g.surveys if s.player == "Bob")
    assert (bob.similarity, bob.timing, bob.relevance, bob.about) == (4, 2, 5, "Dan")


def test_scale_decided_per_game_not_per_survey() -> None:
    low = SurveyAnswers({"similarity to human behavior": "3", "timing of messaging": "4"})
    high = SurveyAnswers({"similarity to human behavior": "60", "timing of messaging": "70"})
    zero = SurveyAnswers({"relevance of messages": "0"})
    marked = SurveyAnswers({"Was the LLM identified": "1", "timing of messaging": "5"})
    assert detect_scale([low, high])[0] == "0-100"
    assert detect_scale([zero])[0] == "0-100"
    assert detect_scale([marked, low]) == (
        "1-5",
        "1-5 scale: every answer is within 1-5 and the survey asks 'Was the LLM identified' "
        "(the later form)",
    )
    scale, why = detect_scale([marked, high])
    assert scale == "0-100" and "although" in why
    assert detect_scale([]) == (None, "")


def test_survey_runs_and_comments() -> None:
    text = (
        "similarity to human behavior - 86\ntiming of messaging - 91\n"
        "relevance of messages - 95\nComments:\nLLM - too fast\n"
        "similarity to human behavior - 80\nComments:\nok\x08\x08fine\n"
    )
    runs, unparsed = parse_survey_text(text, TextCleaner().clean)
    assert unparsed == 0
    assert [r.fields for r in runs] == [
        {
            "similarity to human behavior": "86",
            "timing of messaging": "91",
            "relevance of messages": "95",
        },
        {"similarity to human behavior": "80"},
    ]
    assert [r.comments for r in runs] == ["LLM - too fast", "fine"]
    empty, _ = parse_survey_text("", TextCleaner().clean)
    assert [(r.fields, r.comments) for r in empty] == [({}, None)]


def test_dates_without_config_name_or_across_midnight(tmp_path: Path) -> None:
    g = read_game(make_game(tmp_path / "a", config_path=None))
    assert g.start_time == datetime(1970, 1, 1, 23, 58, 0)
    assert "no date" in g.repairs_of("date")[0].detail
    # a config made at 23:59 for a game that starts at 23:58 must be the next day's game
    g = read_game(make_game(tmp_path / "b", config_path="configurations/config311224_2359.json"))
    assert g.start_time == datetime(2025, 1, 1, 23, 58, 0)


def test_text_cleaner() -> None:
    c = TextCleaner()
    assert apply_backspaces("\x08abc\x08\x08d") == "ad"
    assert c.clean("Hi I\x08im de\x08\x08not an AI bot") == "Hi im not an AI bot"
    assert c.clean("}|\x1b[1;2C") == "}|"
    assert c.clean("a\x1b[2~b\x1b[Ac") == "abc"
    assert c.clean("H\u05e7ey") == "Hey"
    assert c.clean("\u05e9\u05dc\u05d5\u05dd") == "\u05e9\u05dc\u05d5\u05dd"  # all Hebrew: kept
    assert c.clean("can\u2019t") == "can\u2019t"
    assert dict(c.counts) == {"backspaces": 1, "escape_sequences": 2, "stray_hebrew": 1}


def test_parse_chat_line() -> None:
    assert parse_chat_line("[20:45:26] Gray: ") == (time(20, 45, 26), "Gray", "")
    assert parse_chat_line("[09:00:00] Game-Manager: a: b") == (
        time(9, 0, 0),
        "Game-Manager",
        "a: b",
    )
    assert parse_chat_line("hello") is None
    assert parse_chat_line("[25:00:00] X: y") is None


def test_agent_log_across_midnight(tmp_path: Path) -> None:
    log = tmp_path / "Dan_log.txt"
    log.write_text(
        "# NEW LOG\n## TIME: 23:59:59\n## OPERATION: prompt\n## CONTENT: line one\nline two\n\n"
        "# NEW LOG\n## TIME: 00:00:01\n## OPERATION: generated vote in get_vote\n"
        "## CONTENT: Bob\n\n"
    )
    entries = read_agent_log(log)
    assert [(e.t, e.operation, e.content) for e in entries] == [
        (datetime(1970, 1, 1, 23, 59, 59), "prompt", "line one\nline two"),
        (datetime(1970, 1, 2, 0, 0, 1), "generated vote in get_vote", "Bob"),
    ]
