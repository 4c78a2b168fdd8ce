"""Learning across games (experience pool, suggestions, strategy notes) and personas.

The pool's logic (scores, contrast, names kept out) is checked directly; the agent's use of it
on the hand-cranked table of test_llm_player with an in-memory pool: advice drawn from similar
experiences reaches the prompts, and a finished game hands its experience over and rewrites the
role's note, only when the game may feed the pool.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from agent.decisions import InMemoryDecisionLog
from agent.experience import (
    Experience,
    GameDebrief,
    InMemoryExperiencePool,
    contrast,
    experience_score,
    named_players,
    parse_lessons,
    parse_strategy,
    parse_suggestion,
    rank_similar,
    strip_names,
)
from agent.llm import LLMRequest
from agent.llm_player import LLMPlayer
from agent.memory import HashingEmbedder
from agent.memory.seatmind import MindSettings
from agent.personas import MAFIA_PERSONAS, TOWN_PERSONAS, persona_for
from agent.prompting import load_prompts, rate_instruction
from games.actions import Vote
from games.state import PhaseKind
from tests.agent.test_llm_player import StubLLM
from tests.agent.test_reflection import (
    NOTE,
    idle,
    run,
    table_with_mind,
    thinking_llm,
    until,
)

ADVICE = "You should back a believable detective claim and vote with it early"
LESSONS = (
    "- When Drew claims detective early, test the claim before following it.\n"
    "- Vote with the table early so the mafia cannot split the vote.\n"
    "- ask blake direct questions when he is quiet\n"
    "- a fourth lesson that should be dropped"
)


# --- scores, contrast, names ---------------------------------------------------------------------


def test_scores_reward_winning_fast_and_losing_slowly() -> None:
    assert experience_score(True, 2) == 998 > experience_score(True, 5) == 995
    assert experience_score(False, 5) == 5 > experience_score(False, 2) == 2


def exp(score: float, sim: float = 0.9, ident: int = 0) -> Experience:
    return Experience(f"thought {ident}", f"did {ident}", score, "bystander", sim, ident)


def test_contrast_takes_the_worst_and_those_around_the_median() -> None:
    pool = [exp(998, ident=1), exp(3, ident=2), exp(997, ident=3), exp(4, ident=4), exp(5, ident=5)]
    pair = contrast(pool, band=2)
    assert pair is not None
    worst, good = pair
    assert worst.id == 2
    assert [g.id for g in good] == [5, 4]  # median 5: closest first
    assert contrast([exp(998), exp(998, ident=1)]) is None  # nothing tells them apart
    assert contrast([exp(3)]) is None


def test_names_are_stripped_from_lessons_notes_and_advice() -> None:
    names = ["Ari", "Blake", "Drew"]
    assert strip_names("Blake and blake's friend @drew", names) == (
        "a player and a player's friend a player"
    )
    # names dealt in other games only when written as names; ordinary words stay
    assert (
        strip_names("Sage said the winter was grim", names) == "a player said the winter was grim"
    )
    assert named_players("trust Rowan, not ari", names) == ["ari", "Rowan"]
    lessons = parse_lessons(LESSONS, names)
    assert len(lessons) == 3
    assert all(named_players(lesson, names) == [] for lesson in lessons)
    assert lessons[0].startswith("When a player claims detective early")
    note = parse_strategy("1. Trust Blake less.\n2. Vote early.", names, chars=600)
    assert note == "Trust a player less. Vote early."
    assert parse_strategy("x" * 900, names, chars=100) is not None
    assert len(parse_strategy("Vote early. " * 100, names, chars=100) or "") <= 101
    assert parse_suggestion("No useful experience.", names) is None
    assert parse_suggestion('"You should doubt Drew."', names) == "You should doubt a player."


def test_similar_experiences_pass_the_threshold_only() -> None:
    embedder = HashingEmbedder(64)
    texts = ["blake pushed the quiet ones", "blake pushed the quiet ones hard", "nice weather"]
    matrix = embedder.embed(texts)
    rows = [(i, "bystander", t, "said hi", float(i)) for i, t in enumerate(texts)]
    found = rank_similar(rows, matrix, embedder.embed([texts[0]])[0], 0.6, 10)
    assert [e.id for e in found] == [0, 1]
    assert found[0].similarity == pytest.approx(1.0, abs=1e-5)
    assert rank_similar(rows, matrix, matrix[0], 0.6, 1) == found[:1]


async def test_the_in_memory_pool_honours_consent_and_keeps_note_versions() -> None:
    embedder = HashingEmbedder(32)
    debrief = GameDebrief(
        "g", 0, "bystander", "bystanders", True, 3, (), embedder.embed([]), embedder.name
    )
    closed = InMemoryExperiencePool(consent=False)
    assert await closed.record(debrief) == 0

    async def rewrite(current: str | None) -> str | None:
        return "note"

    assert await closed.update_strategy("bystander", rewrite, []) is None
    pool = InMemoryExperiencePool()
    assert await pool.update_strategy("bystander", rewrite, ["x"]) == "note"
    assert await pool.strategy_note("bystander") == "note"
    assert np.allclose(embedder.embed(["a"]), embedder.embed(["a"]))


# --- the agent draws advice from the pool --------------------------------------------------------


def seeded_pool(embedder: HashingEmbedder) -> InMemoryExperiencePool:
    pool = InMemoryExperiencePool()
    vector = embedder.embed([NOTE])[0]
    for i, score in enumerate((3.0, 500.0, 997.0)):
        pool.add(
            "bystanders", "bystander", NOTE, f"voted for someone {i}", score, vector, embedder.name
        )
    return pool


def learning_llm() -> StubLLM:
    def strategy(req: LLMRequest) -> str:
        return "Test early claims, then vote with the table. Trust Drew less."

    return thinking_llm(
        suggestion=ADVICE,
        lessons=LESSONS,
        strategy=strategy,
        generator="ok so who do we trust",
        scheduler="<send>",
    )


async def test_advice_from_similar_experiences_reaches_the_prompts() -> None:
    llm = learning_llm()
    table, player, log, mind = table_with_mind(llm)
    mind.pool = seeded_pool(HashingEmbedder(128))
    await run(table, player, 3)
    table.say(4, "i'm the detective, blake is mafia")
    await until(table, player, PhaseKind.VOTE)
    await run(table, player, 5)
    (ask,) = llm.of("suggestion")
    text = ask.messages[0][1]
    assert "The bad example:" in text and "voted for someone 0" in text.split("may be good")[0]
    assert "voted for someone 1" in text.split("may be good")[1]
    assert mind.suggestion == ADVICE
    prompts = [r.messages[0][1] for r in llm.requests if r.kind in ("vote", "generator")]
    assert any(f"Advice from your past games: {ADVICE}" in p for p in prompts)
    assert any(r.kind == "experience" and r.valid for r in log.records)


# --- the end of a game ---------------------------------------------------------------------------


async def play_to_a_town_win(
    consent: bool, *, slow_background: bool = False
) -> tuple[StubLLM, LLMPlayer, InMemoryDecisionLog, InMemoryExperiencePool]:
    llm = learning_llm()
    table, player, log, mind = table_with_mind(llm, settings=MindSettings(keep_after_game=True))
    if slow_background:  # a whole reflection is known to take longer than any phase
        player.latency.add("background", 500.0)
    pool = InMemoryExperiencePool(consent=consent)
    mind.pool = pool
    await run(table, player, 3)
    table.say(4, "i'm the detective, blake is mafia")
    await until(table, player, PhaseKind.VOTE)
    await run(table, player, 3)
    for voter in (1, 3, 4, 5, 6):
        table.act(Vote(voter, 2, table.now))  # Blake out
    await until(table, player, PhaseKind.NIGHT_VOTE)  # Casey alone: no night talk
    table.act(Vote(3, 1, table.now))  # Casey kills Ariel
    await until(table, player, PhaseKind.DAY)
    table.say(4, "casey is the last one")
    await until(table, player, PhaseKind.VOTE)
    await run(table, player, 3)
    table.act(Vote(3, 4, table.now))  # Casey votes Drew, everyone else Casey: the town wins
    for voter in (4, 5, 6):
        table.act(Vote(voter, 3, table.now))
    await idle(table, player)
    assert table.state.over and table.state.winner == "bystanders"
    assert player.debrief_task is not None
    await player.debrief_task
    return llm, player, log, pool


async def test_a_finished_game_feeds_the_pool_and_rewrites_the_note() -> None:
    llm, _, log, pool = await play_to_a_town_win(consent=True)
    (debrief,) = pool.debriefs
    assert (debrief.role, debrief.team, debrief.won, debrief.days) == (
        "bystander",
        "bystanders",
        True,
        2,
    )
    assert debrief.score == 998
    assert len(debrief.steps) >= 2 and debrief.steps[0].reflection == NOTE
    assert "voted for Blake" in debrief.steps[0].response
    assert debrief.vectors is not None and debrief.vectors.shape[0] == len(debrief.steps)
    assert len(debrief.lessons) == 3
    assert all(named_players(lesson, ["Drew", "Blake"]) == [] for lesson in debrief.lessons)
    note = await pool.strategy_note("bystander")
    assert note == "Test early claims, then vote with the table. Trust a player less."
    (ask,) = llm.of("strategy")
    assert "(none yet" in ask.messages[0][1]
    kinds = [r.decision for r in log.records if r.kind == "experience"]
    assert any(d and d.startswith("lessons:") for d in kinds)
    assert any(d and d.startswith("strategy note:") for d in kinds)


async def test_a_seat_whose_reflections_were_all_skipped_reflects_when_the_game_ends() -> None:
    """Every reflection in play would have run past its phase (skipped, not retried); at the
    end of the game no critical call is left to delay, so the seat reflects then, and the
    pool gets its experience (the old code debriefed with no reflection at all)."""
    llm, player, log, pool = await play_to_a_town_win(consent=True, slow_background=True)
    skipped = [r for r in log.records if (r.decision or "").startswith("reflection skipped")]
    assert skipped, "the reflections in play were skipped"
    (debrief,) = pool.debriefs
    assert len(debrief.steps) == 1 and debrief.steps[0].reflection == NOTE
    assert debrief.vectors is not None and debrief.vectors.shape[0] == 1
    assert player.mind is not None and player.mind.latest_reflection is not None
    # the note and the seat's read of the table, but no advice for prompts of a game that
    # is over
    assert len(llm.of("suspicion")) == 1 and llm.of("suggestion") == []
    assert len(debrief.lessons) == 3


async def test_a_game_that_may_not_feed_the_pool_costs_nothing() -> None:
    llm, _, log, pool = await play_to_a_town_win(consent=False)
    assert pool.debriefs == [] and pool.notes == {}
    assert llm.of("lessons") == [] and llm.of("strategy") == []
    notes = [r.decision for r in log.records if r.kind == "experience"]
    assert notes == ["experience: not kept (the game may not feed the pool)"]


# --- personas ------------------------------------------------------------------------------------


def test_personas_per_side_configured_or_seeded() -> None:
    assert len(TOWN_PERSONAS) >= 4 and len(MAFIA_PERSONAS) >= 4
    for personas, side in ((TOWN_PERSONAS, "bystanders"), (MAFIA_PERSONAS, "mafia")):
        assert {p.side for p in personas} == {side}
        assert {"observer", "skeptic", "leader", "charmer"} <= {p.key for p in personas}
        assert len({p.text for p in personas}) == len(personas)
    quiet = persona_for("bystanders", random.Random(1), "the quiet observer")
    assert quiet.key == "observer" and quiet.talkativeness < 1
    assert persona_for("mafia", random.Random(1), "Leader").side == "mafia"
    written = persona_for("mafia", random.Random(1), "  You love  puns. ")
    assert written in MAFIA_PERSONAS  # free text is never a persona (tests/agent/test_personas)
    picks = [persona_for("mafia", random.Random(f"seed:{i}")).key for i in range(40)]
    assert picks == [persona_for("mafia", random.Random(f"seed:{i}")).key for i in range(40)]
    assert len(set(picks)) >= 4
    assert "mafia" not in " ".join(p.text.casefold() for p in TOWN_PERSONAS)


def test_talkativeness_moves_the_fair_share() -> None:
    book = load_prompts()
    # 1 of 8 messages with 7 players: below 1/7, above a quiet observer's 0.7/7
    assert rate_instruction(book, 1, 8, 7)[0] == "talkative"
    assert rate_instruction(book, 1, 8, 7, talkativeness=0.7)[0] == "listen"
    assert rate_instruction(book, 2, 12, 7, talkativeness=1.3)[0] == "talkative"
