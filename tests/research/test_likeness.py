"""The likeness measure: figures known by construction, each source of days (engine events,
the store, LLMafia folders), the LLM agent's games, and the command line."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from agent.decisions import InMemoryDecisionLog
from agent.fastsim import simulate_fast
from bot.seats.llm_agents import LLMAgentConfig, LLMClients, llm_player_factory
from bot.store import models as m
from games.config import GameConfig
from games.events import MessageAccepted, VoteResolved
from research.importer import import_llmafia
from research.likeness import (
    LLMAFIA,
    PEOPLE,
    Day,
    Said,
    classifier_auc,
    days_from_events,
    days_from_llmafia,
    days_from_store,
    figures,
    ks_distance,
    likeness,
    meets,
    render,
)
from research.llmafia import read_games
from research.paths import llmafia_games_dir

DATA = llmafia_games_dir()
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="LLMafia data not present")


def day(kinds: dict[str, str], seconds: float, *lines: tuple[str, float, str]) -> Day:
    return Day("t", seconds, kinds, tuple(Said(*x) for x in lines), tuple(kinds))


def test_figures_known_by_construction() -> None:
    bots = {"A": "bot", "B": "bot", "P": PEOPLE}
    days = [
        # 60 s, 2 bots: A at 0, 10, 30 (gaps 10, 20); B once, 35 s before the result
        day(bots, 60.0, ("A", 0, "one two"), ("A", 10, "x"), ("A", 30, "one two"),
            ("B", 25, "a b c d"), ("P", 59, "late person")),
        # 120 s, 2 bots: B at 100 (20 s before the result), 110 (gap 10)
        day(bots, 120.0, ("B", 100, "ONE  two"), ("B", 110, "y z")),
    ]  # fmt: skip
    f = figures(days, "bot")
    assert f["lines"] == 6 and f["days"] == 2
    assert f["rate"] == pytest.approx(6 / (2 * 1 + 2 * 2))  # lines / living bot-minutes
    assert f["words"] == pytest.approx((2 + 1 + 2 + 4 + 2 + 2) / 6)
    assert f["gap_median_s"] == pytest.approx(10.0)  # gaps 10, 20, 10
    # day 1: the bots' last line is 30 s before the result (a lull; the person's line is not
    # theirs); day 2: 10 s before (no lull)
    assert f["lull"] == pytest.approx(0.5)
    # "one two" twice and "ONE  two" are one line: 4 distinct of 6
    assert f["distinct"] == pytest.approx(4 / 6)
    # a kind holding one seat of three has no lull figure
    assert figures(days, PEOPLE)["lull"] is None


def test_ks_distance() -> None:
    assert ks_distance([1, 2, 3], [1, 2, 3]) == 0.0
    assert ks_distance([1, 2, 3], [10, 20]) == 1.0
    assert ks_distance([1, 2, 3, 4], [3, 4, 5, 6]) == pytest.approx(0.5)
    assert ks_distance([], [1.0]) is None


def test_classifier_auc_tells_styles_apart_and_not_samples_of_one_style() -> None:
    rng = random.Random(3)
    words = ["maybe", "sus", "idk", "vote", "quiet", "hmm", "why", "ok", "wait", "no"]
    people = [" ".join(rng.sample(words, 3)) for _ in range(200)]
    same = [" ".join(rng.sample(words, 3)) for _ in range(200)]
    shouting = [" ".join(rng.sample(words, 3)).upper() + "!!!" for _ in range(200)]
    assert classifier_auc(shouting, people) == pytest.approx(1.0, abs=0.01)
    auc = classifier_auc(same, people)
    assert auc is not None and 0.35 < auc < 0.65
    assert classifier_auc(same[:3], people) is None  # too few lines for 5 folds


def test_meets_the_targets() -> None:
    people = {"rate": 1.0, "lull": 0.7}
    good = {"rate": 1.15, "gap_ks": 0.1, "lull": 0.6, "distinct": 0.9, "auc": 0.8}
    assert all(meets(good, people).values())
    bad = {"rate": 1.25, "gap_ks": 0.2, "lull": 0.5, "distinct": 0.8, "auc": 0.95}
    assert not any(meets(bad, people).values())


def test_a_simulated_game_gives_its_days() -> None:
    result = simulate_fast(GameConfig(), 8, 5, keep_events=True)
    assert result.events is not None
    days = days_from_events(result.events, "baseline")
    resolved = [e for e in result.events if isinstance(e, VoteResolved) and not e.night]
    assert len(days) == len(resolved) >= 1
    stage = [e for e in result.events if isinstance(e, MessageAccepted) and e.place == "stage"]
    assert 0 < sum(len(d.lines) for d in days) <= len(stage)
    for d in days:
        assert all(0 <= x.t <= d.seconds and x.speaker in d.kinds for x in d.lines)
    assert len(days[0].kinds) == 8 and all(len(b.kinds) < 8 for b in days[1:])
    table = likeness(days, days)  # a kind against itself is not people: only its column
    assert [c["kind"] for c in table["columns"]] == [PEOPLE, "baseline"]


@needs_data
def test_folder_and_import_agree_and_reproduce_the_issue(engine: Engine) -> None:
    games = read_games(DATA)
    import_llmafia(engine, DATA)
    from_folder = days_from_llmafia(games)
    from_store = days_from_store(engine)
    assert len(from_store) == len(from_folder)
    by_source = {d.source: d for d in from_folder}
    for d in from_store:
        mine = by_source[d.source.removeprefix("llmafia-")]
        assert (
            d.seconds == mine.seconds
            and d.lines == mine.lines
            and d.kinds == {n: "human" if k == PEOPLE else k for n, k in mine.kinds.items()}
        )
    table = likeness(from_store, from_folder)
    cols = {c["kind"]: c for c in table["columns"]}
    # the issue's "people" (1.1 messages/min and 74% lulls in these 15 games, 4.0 words,
    # 17 s over all 21) and "LLMafia's agent" (10.4 words, 22 s, KS 0.14, AUC 0.97)
    people, agent = cols[PEOPLE], cols[LLMAFIA]
    assert 0.9 < people["rate"] < 1.2 and 0.65 < people["lull"] < 0.8
    assert 3.5 < people["words"] < 5 and 15 <= people["gap_median_s"] <= 22
    assert 0.88 < people["distinct"] < 0.95
    assert 9 < agent["words"] < 13 and 18 <= agent["gap_median_s"] <= 25
    assert 0.08 < agent["gap_ks"] < 0.2 and agent["auc"] > 0.93
    # the imported copy of those people, measured as "people here", is the same people
    here = cols["human"]
    assert here["rate"] == pytest.approx(people["rate"]) and here["auc"] < 0.6


async def test_the_llm_agents_games_go_through_it(engine: Engine) -> None:
    from bot.service.timers import make_scheduler
    from tests.bot.test_llm_agents import PLAYER, Table, play

    table = Table()

    class Local:
        name = "local"

        async def complete(self, req: Any) -> Any:
            from agent.llm import LLMResponse

            messages = [{"role": r, "content": c} for r, c in req.messages]
            text = table({"system": req.system, "messages": messages})
            return LLMResponse(text, "local", 100, 5, 0, 0.0, "stop", 1, 0.0)

    factory = llm_player_factory(
        LLMAgentConfig(llm="local:x", player=PLAYER),
        InMemoryDecisionLog(),
        clients=LLMClients(Local(), Local()),
    )
    sched = make_scheduler()
    sched.start()
    try:
        played = await play(engine, sched, factory)
    finally:
        sched.shutdown(wait=False)
    with Session(engine) as s:  # seated as `mafiabot simulate --agent llm` seats them
        for seat in s.exec(select(m.Seat).where(m.Seat.game_id == played.game_id)):
            seat.agent_kind = "llm"
            s.add(seat)
        s.commit()
    days = days_from_store(engine)
    assert days and all(set(d.kinds.values()) == {"llm"} for d in days)
    people = [day({"P": PEOPLE, "Q": PEOPLE}, 60.0, *[("PQ"[i % 2], i, f"line {i} hm")
                                                        for i in range(40)])]  # fmt: skip
    table_ = likeness(days, people)
    llm = next(c for c in table_["columns"] if c["kind"] == "llm")
    assert llm["lines"] == sum(len(d.lines) for d in days) > 0
    assert llm["rate"] > 0 and llm["gap_ks"] is not None and llm["auc"] is not None
    assert "LLM agent" in render(table_)


@needs_data
def test_the_command(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    run = [sys.executable, "-m", "mafiabot.cli", "likeness", "--db", db]
    done = subprocess.run([*run, "--json", "--people-games", "0001,0002"], capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    table = json.loads(done.stdout)
    assert table["people_days"] == 4 and table["columns"][0]["kind"] == PEOPLE
    missing = subprocess.run([*run, "--people", str(tmp_path / "nope")], capture_output=True,
                             text=True, timeout=300)  # fmt: skip
    assert missing.returncode == 2 and "no human games" in missing.stderr
    assert missing.stdout == ""
    (tmp_path / "file.txt").write_text("x")
    bad = subprocess.run([*run, "--people", str(tmp_path / "file.txt")], capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert bad.returncode == 2 and "is a file" in bad.stderr and bad.stdout == ""
    unknown = subprocess.run([*run, "--people-games", "9999"], capture_output=True, text=True,
                             timeout=300)  # fmt: skip
    assert unknown.returncode == 2 and "no human game 9999" in unknown.stderr


def test_length_reply_and_vote_rows_known_by_construction() -> None:
    kinds = {"A": "bot", "P": PEOPLE, "Q": PEOPLE}
    days = [
        Day("t", 100.0, kinds, tuple(Said(*x) for x in (
            ("P", 0, "hey A what do you think"),  # names A: A answers 2 s later
            ("A", 2, "x" * 10),
            ("Q", 10, "and you P?"),  # names P: P answers 20 s later
            ("A", 20, "y" * 30),
            ("P", 30, "z" * 200),
        )), tuple(kinds), (("A", 1.0), ("P", 14.0), ("Q", 30.0))),
    ]  # fmt: skip
    bot = figures(days, "bot", people_shape={"chars": [10.0, 200.0], "reply": [20.0],
                                             "vote": [14.0, 30.0]})  # fmt: skip
    assert bot["chars_median"] == 20 and bot["chars_max"] == 30
    assert bot["reply_median_s"] == 2.0 and bot["vote_median_s"] == 1.0
    assert bot["chars_ks"] == 0.5 and bot["reply_ks"] == 1.0 and bot["vote_ks"] == 1.0
    people = figures(days, PEOPLE)
    assert people["chars_max"] == 200 and people["reply_median_s"] == 20.0
    assert people["vote_median_s"] == 22.0 and people["chars_ks"] is None
    shown = render(likeness(days, days))
    for row in (
        "characters per message, 99th percentile",
        "reply after a line naming",
        "first vote after the vote opens",
    ):
        assert row in shown


def test_simulated_days_carry_first_votes() -> None:
    result = simulate_fast(GameConfig(), 8, 5, keep_events=True)
    assert result.events is not None
    days = days_from_events(result.events, "baseline")
    assert days and all(d.votes for d in days)
    for d in days:
        voters = [who for who, _ in d.votes]
        assert len(voters) == len(set(voters)) and set(voters) <= set(d.kinds)
        assert all(t >= 0 for _, t in d.votes)


@needs_data
def test_llmafia_days_give_the_new_rows() -> None:
    table = likeness([], days_from_llmafia(read_games(DATA)))
    cols = {c["kind"]: c for c in table["columns"]}
    people, agent = cols[PEOPLE], cols[LLMAFIA]
    assert 15 <= people["chars_median"] <= 20 and people["chars_max"] > 100
    assert agent["chars_median"] > 40 and agent["chars_ks"] > 0.5  # the agent wrote longer
    assert people["reply_median_s"] is not None and people["vote_median_s"] is not None
    assert agent["vote_ks"] is not None and agent["vote_ks"] > 0.3
