"""The report against the 15 released LLMafia games, checked with an independent count.

``Raw`` below reads the game folders with deliberately simple code (no reader, no store): it
de-duplicates the chat files, puts every line in the phase whose announcement came last (host
re-announcements with nobody voted out are the same phase), and counts from there. The report
is built from the store after an import; the two must agree. A small hand-made game checks the
store-native path (day + vote phases, night kills, 0-100 survey answers) with numbers worked
out by hand.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console
from sqlalchemy.engine import Engine

from bot.protection.dataset.stored import resolve_game_ids
from bot.store.db import make_engine, session_scope
from bot.store.migrate import upgrade
from bot.store.models import Game, Message, Phase, Seat, SurveyResponse
from research.commands import run_import, run_report
from research.importer import import_llmafia
from research.paths import llmafia_games_dir
from research.report import build_report, render_markdown, write_report

DATA = llmafia_games_dir()
GAME_IDS = [f"{n:04d}" for n in range(1, 16)]
real_data = pytest.mark.skipif(not DATA.is_dir(), reason="LLMafia data not present")

# --- an independent reading of the raw files ------------------------------------------------

LINE = re.compile(r"^\[(\d\d):(\d\d):(\d\d)\] ([^:]+?): ?(.*)$")
MANAGER = "Game-Manager"


def _file_lines(path: Path) -> list[str]:
    if not path.is_file():
        return []
    lines = path.read_bytes().decode("utf-8", errors="replace").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def _parse(raw: str) -> tuple[int, str, str]:
    m = LINE.match(raw)
    assert m is not None, raw
    return int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3]), m[4].strip(), m[5]


def _typed(text: str) -> str:
    """Replay backspaces and drop escape sequences: what the player meant to type."""
    text = re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]", "", text)
    out: list[str] = []
    for ch in text:
        if ch == "\x08":
            if out:
                out.pop()
        elif ord(ch) >= 32:
            out.append(ch)
    return "".join(out)


@dataclass
class RawPhase:
    kind: str
    start: int
    alive: set[str]
    out: list[str] = field(default_factory=list)


@dataclass
class RawLine:
    t: int
    chat: str  # day | night | manager
    speaker: str
    text: str


@dataclass
class RawGame:
    gid: str
    players: list[str]
    llm: str
    mafia: set[str]
    winner: str
    phases: list[RawPhase]
    lines: list[tuple[int, RawLine]]  # (phase index, line), player and manager lines

    def player_lines(self) -> list[tuple[int, RawLine]]:
        return [(p, x) for p, x in self.lines if x.speaker != MANAGER]


def read_raw(folder: Path) -> RawGame:
    config = json.loads((folder / "config.json").read_text())
    players = [p["name"] for p in config["players"]]
    llm = next(p["name"] for p in config["players"] if p["is_llm"])
    mafia = {p["name"] for p in config["players"] if p["is_mafia"]}
    night_raw = list(dict.fromkeys(_file_lines(folder / "public_nighttime_chat.txt")))
    night_set = set(night_raw)
    day_raw = [
        x
        for x in dict.fromkeys(_file_lines(folder / "public_daytime_chat.txt"))
        if x not in night_set
    ]
    manager_raw = list(dict.fromkeys(_file_lines(folder / "public_manager_chat.txt")))

    phases: list[RawPhase] = []
    alive = set(players)
    lines: list[tuple[int, RawLine]] = []
    for raw in manager_raw:
        t, speaker, text = _parse(raw)
        m = re.match(r"Now it's (Daytime|Nighttime)", text)
        if m:
            kind = "day" if m[1] == "Daytime" else "night"
            if not (phases and phases[-1].kind == kind and not phases[-1].out):
                phases.append(RawPhase(kind, t, set(alive)))
        out = re.match(r"(.+?) was voted out\.", text)
        if out:
            phases[-1].out.append(out[1])
            alive.discard(out[1])
        lines.append((len(phases) - 1, RawLine(t, "manager", speaker, text)))
    starts = [p.start for p in phases]

    def phase_of(t: int, kind: str) -> int:
        idx = max(0, sum(1 for s in starts if s <= t) - 1)
        at_boundary = idx > 0 and starts[idx] == t and phases[idx].kind != kind
        if at_boundary and phases[idx - 1].kind == kind:
            return idx - 1
        return idx

    for chat, raws in (("day", day_raw), ("night", night_raw)):
        for raw in raws:
            t, speaker, text = _parse(raw)
            lines.append((phase_of(t, chat), RawLine(t, chat, speaker, _typed(text))))

    said = (folder / "who_wins.txt").read_text().strip().lower()
    if said:
        winner = "mafia" if said.startswith("mafia") else "bystanders"
    else:
        left = _file_lines(folder / "remaining_players.txt")
        bad = sum(1 for x in left if x in mafia)
        winner = "mafia" if bad >= len(left) - bad else "bystanders"
    return RawGame(folder.name, players, llm, mafia, winner, phases, lines)


def surveys_raw(folder: Path, llm: str) -> list[dict[str, float]]:
    """Each respondent's answers, the last value of each question winning (as the study)."""
    answers: list[dict[str, float]] = []
    for f in sorted(folder.glob("*_survey.txt")):
        got: dict[str, float] = {}
        for line in _file_lines(f):
            m = re.match(r"^(.*?) - (\d+(?:\.\d+)?)\s*$", line)
            if m:
                got[m[1]] = float(m[2])
        answers.append(got)
    return answers


def mean_std(values: Sequence[float]) -> tuple[float, float, int]:
    return statistics.fmean(values), statistics.pstdev(values), len(values)


# --- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def raw() -> dict[str, RawGame]:
    return {g: read_raw(DATA / g) for g in GAME_IDS}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    url = f"sqlite:///{tmp_path_factory.mktemp('report') / 'db.sqlite'}"
    upgrade(url)
    engine = make_engine(url)
    import_llmafia(engine, DATA)
    yield engine
    engine.dispose()


@pytest.fixture(scope="module")
def report(store: Engine) -> dict[str, Any]:
    return build_report(store)


def close(a: float | None, b: float) -> bool:
    return a is not None and abs(a - b) < 1e-9


# --- the real games ----------------------------------------------------------------------------


@real_data
def test_counts_match_the_raw_files(report: dict[str, Any], raw: dict[str, RawGame]) -> None:
    assert report["games"] == 15
    assert report["game_ids"] == [f"llmafia-{g}" for g in GAME_IDS]
    player = [x for g in raw.values() for _, x in g.player_lines()]
    agent = [x for g in raw.values() for _, x in g.player_lines() if x.speaker == g.llm]
    assert report["messages"] == len(player) == 1189
    assert report["agent_messages"] == len(agent) == 147
    assert report["all_lines"] == sum(len(g.lines) for g in raw.values()) == 1710
    t1 = report["table1"]
    assert close(
        t1["phases_per_game"]["mean"], statistics.fmean(len(g.phases) for g in raw.values())
    )
    assert close(
        t1["players_per_game"]["mean"], statistics.fmean(len(g.players) for g in raw.values())
    )
    assert close(t1["agent_messages_per_game"]["mean"], 147 / 15)


@real_data
def test_messages_per_player_per_day_phase(report: dict[str, Any], raw: dict[str, RawGame]) -> None:
    pairs: dict[str, list[int]] = {"human": [], "agent": []}
    for g in raw.values():
        counts: Counter[tuple[int, str]] = Counter((p, x.speaker) for p, x in g.player_lines())
        for i, phase in enumerate(g.phases):
            if phase.kind != "day":
                continue
            for name in phase.alive:
                pairs["agent" if name == g.llm else "human"].append(counts[(i, name)])
    got = report["messages_per_player_per_day_phase"]
    for kind in ("human", "agent"):
        mean, std, n = mean_std(pairs[kind])
        assert (got[kind]["n"], round(got[kind]["mean"], 9), round(got[kind]["std"], 9)) == (
            n,
            round(mean, 9),
            round(std, 9),
        ), kind
    assert (got["human"]["n"], got["agent"]["n"]) == (210, 30)


@real_data
def test_content_measures(report: dict[str, Any], raw: dict[str, RawGame]) -> None:
    words: dict[str, list[float]] = {"human": [], "agent": []}
    repeats: dict[str, list[float]] = {"human": [], "agent": []}
    for g in raw.values():
        texts: dict[str, list[str]] = defaultdict(list)
        for _, x in g.player_lines():
            texts[x.speaker].append(x.text)
        for name, mine in texts.items():
            kind = "agent" if name == g.llm else "human"
            words[kind].append(statistics.fmean(len(t.split()) for t in mine))
            repeats[kind].append(len(mine) - len(set(mine)))
    for kind in ("human", "agent"):
        mean, std, n = mean_std(words[kind])
        got = report["words_per_message"][kind]
        assert got["n"] == n and close(got["mean"], mean) and close(got["std"], std), kind
        mean, std, n = mean_std(repeats[kind])
        got = report["repeated_messages"][kind]
        assert got["n"] == n and close(got["mean"], mean) and close(got["std"], std), kind
    assert report["words_per_message"]["agent"]["n"] == 15


@real_data
def test_win_rates(report: dict[str, Any], raw: dict[str, RawGame]) -> None:
    tally: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for g in raw.values():
        for name in g.players:
            role = "mafia" if name in g.mafia else "bystander"
            won = (role == "mafia") == (g.winner == "mafia")
            tally[("agent" if name == g.llm else "human", role)].append(won)
    for (kind, role), wins in tally.items():
        assert close(report["win_rate"][kind][role], sum(wins) / len(wins))
        assert report["win_counts"][kind][role] == {"won": sum(wins), "n": len(wins)}
    assert report["games_without_winner"] == []


@real_data
def test_voted_out_rank(report: dict[str, Any], raw: dict[str, RawGame]) -> None:
    ranks: list[float] = []
    for g in raw.values():
        counts: Counter[tuple[int, str]] = Counter((p, x.speaker) for p, x in g.player_lines())
        for i, phase in enumerate(g.phases):
            if phase.kind != "day":
                continue
            for name in phase.out:
                mine = counts[(i, name)]
                others = [counts[(i, o)] for o in phase.alive if o != name]
                ranks.append(1 + sum(c > mine for c in others) + sum(c == mine for c in others) / 2)
    got = report["voted_out_rank"]
    assert got["n"] == len(ranks) == 38
    assert got["rank_counts"] == {f"{k:g}": v for k, v in sorted(Counter(ranks).items())}
    assert close(got["most_talkative_share"], ranks.count(1) / len(ranks))


@real_data
def test_timing_of_the_agent(report: dict[str, Any], raw: dict[str, RawGame]) -> None:
    own: list[float] = []
    bug: list[float] = []
    anyone: dict[str, list[float]] = {"human": [], "agent": []}
    for g in raw.values():
        by_phase: dict[int, list[RawLine]] = defaultdict(list)
        for p, x in g.lines:
            by_phase[p].append(x)
        for p, everything in by_phase.items():
            start = g.phases[p].start
            times = sorted(x.t for x in everything)
            mine = sorted(x.t for x in everything if x.speaker == g.llm)
            for k, t in enumerate(mine):
                own.append(t - (mine[k - 1] if k else start))
                bug.append(t - times[k])  # the study: the phase's k-th line, announcement first
            for chat in ("day", "night"):
                said = sorted(
                    (x for x in everything if x.chat == chat and x.speaker != MANAGER),
                    key=lambda x: x.t,
                )  # stable: file order breaks ties
                for j, x in enumerate(said):
                    kind = "agent" if x.speaker == g.llm else "human"
                    anyone[kind].append(x.t - (said[j - 1].t if j else start))
    t = report["timing"]
    got = t["since_own_previous_message"]["per_message"]["agent"]
    assert got["n"] == len(own) == 147 and close(got["mean"], statistics.fmean(own))
    got = t["since_own_previous_message_study_bug"]["per_message"]["agent"]
    assert got["n"] == len(bug) and close(got["mean"], statistics.fmean(bug))
    for kind in ("human", "agent"):
        got = t["since_previous_message"]["per_message"][kind]
        mean, std, n = mean_std(anyone[kind])
        assert got["n"] == n and close(got["mean"], mean) and close(got["std"], std), kind
    # the bug matters: it measures from lines that are not the player's own previous one
    assert statistics.fmean(bug) > 2 * statistics.fmean(own)


@real_data
def test_survey(report: dict[str, Any], raw: dict[str, RawGame]) -> None:
    names = {
        "similarity": "similarity to human behavior",
        "timing": "timing of messaging",
        "relevance": "relevance of messages",
    }
    ratings: dict[str, list[float]] = defaultdict(list)
    identified: list[float] = []
    for gid, g in raw.items():
        answers = surveys_raw(DATA / gid, g.llm)
        values = [a[q] for a in answers for q in names.values() if q in a]
        pilot = any(v == 0 or v > 5 for v in values)  # 0-100 form
        for a in answers:
            for key, q in names.items():
                if q in a:
                    ratings[key].append(a[q] / 20 if pilot else a[q])
            if "Was the LLM identified" in a:
                identified.append(a["Was the LLM identified"])
    sv = report["survey"]
    assert sv["identified_n"] == len(identified) == 56
    assert close(sv["identified_rate"], statistics.fmean(identified))
    for key in names:
        mean, std, n = mean_std(ratings[key])
        assert sv[key]["n"] == n and close(sv[key]["mean"], mean) and close(sv[key]["std"], std)
    assert sv["by_scale"] == {"0-100": 44, "1-5": 57}


@real_data
def test_json_has_every_required_key(report: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    write_report(report, None, path)
    data = json.loads(path.read_text())
    assert isinstance(data["games"], int) and isinstance(data["messages"], int)
    for k in ("human", "agent"):
        for measure in ("messages_per_player_per_day_phase", "words_per_message"):
            assert set(data[measure][k]) >= {"mean", "std", "n"}
            assert all(isinstance(data[measure][k][x], int | float) for x in ("mean", "std", "n"))
        for role in ("mafia", "bystander"):
            assert isinstance(data["win_rate"][k][role], float)
    assert isinstance(data["survey"]["identified_rate"], float)
    for q in ("similarity", "timing", "relevance"):
        assert set(data["survey"][q]) >= {"mean", "std", "n"}
    assert "NaN" not in path.read_text() and "Infinity" not in path.read_text()


@real_data
def test_markdown_and_figures(report: dict[str, Any], tmp_path: Path) -> None:
    written = write_report(report, tmp_path / "out", None)
    names = {p.name for p in written}
    assert "report.md" in names and len([n for n in names if n.endswith(".png")]) == 5
    assert "spot_the_ai.png" in names
    for p in written:
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (tmp_path / "out" / "report.md").read_text()
    for title in ("Table 1", "Table 2", "Table 3", "Table 4", "Table 5", "Figure 4", "Figure 5"):
        assert f"## {title}" in md
    assert "## Spot-the-AI rate" in md and "![Spot-the-AI rate](spot_the_ai.png)" in md
    assert "(bug-fixed)" in md and "study's buggy variant" in md
    assert "÷ 20" in md and "![Figure 7](figure7_voted_out_rank.png)" in md


@real_data
def test_a_subset_of_games(store: Engine) -> None:
    one = build_report(store, ["llmafia-0013"])
    assert one["games"] == 1 and one["messages"] == 50  # grep -vc Game-Manager 0013 chats
    with pytest.raises(LookupError):
        build_report(store, ["nope"])
    assert resolve_game_ids(store, ["0013", "llmafia-0001"]) == ["llmafia-0013", "llmafia-0001"]


# --- a hand-made game in the store's own format ------------------------------------------------

T0 = datetime(2025, 5, 1, 18, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _native_game(engine: Engine) -> None:
    """Four seats (0 agent/bystander, 1 human/mafia, 2 and 3 human/bystanders); town wins.

    day 1 (0-60 talk, 60-90 vote): 0 says 2 lines, 1 says 1, 2 says 3, 3 nothing; 2 voted out.
    night 1 (90-120 talk, 120-130 vote): 1 says 1 line in the den; 3 killed.
    day 2 (130-190, vote 190-200): 0 says 1 line, 1 says 2; 1 voted out. Town wins.
    """
    with session_scope(engine) as s:
        s.add(Game(id="native", seed=1, status="finished", winner="bystanders", config={}))
        s.flush()
        for i, (name, role, agent) in enumerate(
            [
                ("Ada", "bystander", True),
                ("Bo", "mafia", False),
                ("Cy", "bystander", False),
                ("Di", "doctor", False),
            ]
        ):
            s.add(Seat(game_id="native", index=i, character_name=name, role=role, is_agent=agent))
        for seq, (kind, number, start) in enumerate(
            [
                ("day", 1, 0),
                ("vote", 1, 60),
                ("night", 1, 90),
                ("night_vote", 1, 120),
                ("day", 2, 130),
                ("vote", 2, 190),
            ],
            start=1,
        ):
            s.add(Phase(game_id="native", seq=seq, kind=kind, number=number, started_at=at(start)))
        lines = [
            (1, None, "stage", "Now it's Daytime 1", 0),
            (1, 0, "stage", "hi all", 5),
            (1, 2, "stage", "hello", 7),
            (1, 2, "stage", "who is it", 20),
            (1, 1, "stage", "not me", 21),
            (1, 0, "stage", "hi all", 40),
            (2, 2, "stage", "vote Bo", 70),
            (2, None, "stage", "Cy was voted out. Their role was bystander", 90),
            (3, None, "den", "Now it's Nighttime", 90),
            (3, 1, "den", "kill Di", 100),
            (4, None, "den", "Di was killed during the night. Their role was doctor", 130),
            (5, None, "stage", "Now it's Daytime 2", 130),
            (5, 1, "stage", "so", 140),
            (5, 0, "stage", "Bo did it obviously", 150),
            (6, 1, "stage", "no", 195),
            (6, None, "stage", "Bo was voted out. Their role was mafia", 200),
        ]
        for seq, seat, place, text, t in lines:
            name = ["Ada", "Bo", "Cy", "Di"][seat] if seat is not None else "Game-Manager"
            s.add(
                Message(
                    game_id="native",
                    phase_seq=seq,
                    place=place,
                    seat_index=seat,
                    speaker=name,
                    text=text,
                    t=at(t),
                )
            )
        s.add(
            SurveyResponse(
                game_id="native",
                seat_index=2,
                about_seat_index=0,
                identified_ai=True,
                similarity=3.8,
                timing=4.6,
                relevance=None,
                original_scale="0-100",
                source="discord",
            )
        )
        s.add(
            SurveyResponse(
                game_id="native",
                seat_index=3,
                about_seat_index=0,
                identified_ai=False,
                similarity=2,
                timing=5,
                relevance=4,
                original_scale="1-5",
                source="discord",
            )
        )


@pytest.fixture
def native(tmp_path: Path) -> Iterator[Engine]:
    url = f"sqlite:///{tmp_path / 'n.db'}"
    upgrade(url)
    engine = make_engine(url)
    _native_game(engine)
    yield engine
    engine.dispose()


def test_native_game_by_hand(native: Engine) -> None:
    r = build_report(native)
    assert r["game_ids"] == ["native"] and r["messages"] == 10 and r["agent_messages"] == 3
    assert r["table1"]["phases_per_game"]["mean"] == 3  # day 1, night 1, day 2
    # day 1 alive: Ada 2, Bo 1, Cy 3, Di 0; day 2 alive: Ada 1, Bo 2 (Cy out, Di killed)
    per_day = r["messages_per_player_per_day_phase"]
    assert per_day["agent"] == {"mean": 1.5, "std": 0.5, "n": 2}
    human = [1, 3, 0, 2]
    assert per_day["human"]["n"] == 4
    assert per_day["human"]["mean"] == pytest.approx(np.mean(human))
    assert per_day["human"]["std"] == pytest.approx(np.std(human))
    assert [d["per_player"]["mean"] for d in r["messages_per_player_by_day"]] == [1.5, 1.5]
    # words: Ada (2+2+4)/3, Bo (2+2+1+1)/4, Cy (1+3+2)/3; Ada repeats "hi all" once
    assert r["words_per_message"]["agent"]["mean"] == pytest.approx(8 / 3)
    assert r["words_per_message"]["human"]["mean"] == pytest.approx((1.5 + 2) / 2)
    assert r["repeated_messages"]["agent"]["mean"] == 1
    # timing, agent: day 1 lines at 5 and 40 (prev any: 5-0, 40-21), day 2 at 150 (150-140)
    t = r["timing"]
    assert t["since_previous_message"]["per_message"]["agent"]["mean"] == pytest.approx(
        (5 + 19 + 10) / 3
    )
    # own previous: 5-0, 40-5, 150-130 (bug-fixed)
    assert t["since_own_previous_message"]["per_message"]["agent"]["mean"] == pytest.approx(
        (5 + 35 + 20) / 3
    )
    # the study's variant: k-th own line minus the round's k-th line (announcement first):
    # day 1: 5-0, 40-5; day 2: 150-130
    assert t["since_own_previous_message_study_bug"]["per_message"]["agent"][
        "mean"
    ] == pytest.approx((5 + 35 + 20) / 3)
    # Cy's k-th lines in day 1 (7, 20, 70) against round lines (0, 5, 7): 7, 15, 63
    cy_bug = [7, 15, 63]
    cy_fixed = [7, 13, 50]
    bo = {"fixed": [21, 10, 55, 10], "bug": [21, 10, 10, 55]}  # day1 21; night 10; day2 10, 55
    humans_fixed = [*cy_fixed, *bo["fixed"]]
    humans_bug = [*cy_bug, *bo["bug"]]
    got = t["since_own_previous_message"]["per_message"]["human"]
    assert got["mean"] == pytest.approx(np.mean(humans_fixed)) and got["n"] == 7
    got = t["since_own_previous_message_study_bug"]["per_message"]["human"]
    assert got["mean"] == pytest.approx(np.mean(humans_bug))
    # wins: town won; Di the doctor is town
    assert r["win_counts"]["human"] == {
        "mafia": {"won": 0, "n": 1},
        "bystander": {"won": 2, "n": 2},
    }
    assert r["win_rate"]["agent"] == {"mafia": None, "bystander": 1.0}
    # voted out by day: Cy on day 1 (3 lines, most of 4: rank 1), Bo on day 2 (2 vs Ada 1)
    vr = r["voted_out_rank"]
    assert [(e["name"], e["rank"], e["normalized"]) for e in vr["events"]] == [
        ("Cy", 1, 1.0),
        ("Bo", 1, 1.0),
    ]
    # survey: 0-100 answers 70, 90 (stored 3.8, 4.6) become 3.5, 4.5 by the study's division
    sv = r["survey"]
    assert sv["identified_rate"] == 0.5
    assert sv["similarity"]["mean"] == pytest.approx((3.5 + 2) / 2)
    assert sv["timing"]["mean"] == pytest.approx((4.5 + 5) / 2)
    assert sv["relevance"] == {"mean": 4.0, "std": 0.0, "n": 1}
    assert sv["linear"]["similarity"]["mean"] == pytest.approx((3.8 + 2) / 2)
    assert sv["only_1_5_answers"]["similarity"]["n"] == 1
    assert r["separability"] is None


class _ByWord:
    """Embeds texts by whether they contain a marker word: a perfectly separable space."""

    name = "by-word"

    def embed(self, texts: Sequence[str]) -> Any:
        rng = np.random.default_rng(1)
        out = rng.normal(0, 0.05, (len(texts), 4))
        for i, text in enumerate(texts):
            out[i, 0] += 1.0 if ("Bo" in text or "obviously" in text or "hi" in text) else 0.0
        return out


def test_separability_with_a_given_embedder(native: Engine) -> None:
    r = build_report(native, embedder=_ByWord())
    sep = r["separability"]
    assert sep["embedder"] == "by-word"
    # 10 lines, 3 of them the agent's: too few for 5 stratified folds -> not computed
    assert sep["agent_vs_human"]["in_sample"] is None
    md = render_markdown(r)
    assert "Embedder: by-word" in md


def test_lda_separates_separable_classes() -> None:
    from research.report import _separate

    rng = np.random.default_rng(0)
    shift = np.array([4.0, 0, 0, 0, 0])
    x = np.vstack([rng.normal(0, 1, (60, 5)), rng.normal(0, 1, (40, 5)) + shift])
    y = np.array([False] * 60 + [True] * 40)
    got = _separate(x, y, folds=5, ridge=1e-3)
    assert got["in_sample"]["f1_positive"] > 0.95
    assert got["cross_validated"]["f1_positive"] > 0.9
    noise = _separate(rng.normal(0, 1, (100, 5)), y, folds=5, ridge=1e-3)
    assert noise["cross_validated"]["f1_weighted"] < 0.75


def test_empty_store_reports_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'e.db'}"
    console = Console(record=True, width=200)
    r = run_report(url, None, tmp_path / "out", tmp_path / "r.json", console, embeddings=False)
    assert r["games"] == 0 and r["messages"] == 0
    assert (tmp_path / "out" / "report.md").is_file()
    assert "nothing to report" in console.export_text()


@real_data
def test_commands(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    console = Console(record=True, width=300)
    results = run_import(url, DATA / "0014", console)
    text = console.export_text()
    assert [r.game_id for r in results] == ["llmafia-0014"]
    assert "0014 -> llmafia-0014 (imported)" in text
    assert "repaired [duplicate_lines] (x302)" in text  # markup off: brackets survive
    assert "12 stale reannounced votes" in text
    run_import(url, DATA / "0014", console)
    assert "(replaced)" in console.export_text()
    report = run_report(
        url, ["0014"], tmp_path / "out", tmp_path / "r.json", console, embeddings=False
    )
    assert report["game_ids"] == ["llmafia-0014"]
    assert json.loads((tmp_path / "r.json").read_text())["messages"] == 215
    assert (tmp_path / "out" / "figure6_win_rates.png").is_file()
    with pytest.raises(ValueError):
        run_report(url, None, None, None, console)
