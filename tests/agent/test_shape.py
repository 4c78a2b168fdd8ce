"""The shape of the agent's talk (agent/shape.py): people's line lengths (tail included) and
limit, a person's reading and typing time before every line (answers to a direct question
included), and votes cast when people cast them, not in step with other agents."""

from __future__ import annotations

import dataclasses
import random
import statistics

import pytest

from agent.baseline.timing import draw
from agent.decisions import InMemoryDecisionLog
from agent.llm.base import LLMRequest
from agent.llm_player import LLMPlayer, LLMPlayerSettings
from agent.shape import (
    MIN_TYPING_S_PER_CHAR,
    PEOPLE_CHARS,
    PEOPLE_ENDINGS,
    Endings,
    ending_of,
    fit_ending,
    fit_length,
    target_chars,
)
from games import GameConfig
from games.state import PhaseKind
from research.llmafia import read_games
from research.paths import llmafia_games_dir
from tests.agent.test_llm_player import (
    DEAL,
    NAMES,
    QUICK,
    ROLES,
    StubLLM,
    make_table,
)

LONG = (
    "ok so here is the thing, i have been watching drew all day and the votes do not add up. "
    "casey keeps pushing eden with no reason at all, which is exactly what mafia would do. "
    "i say we vote casey today and see what flips, and if i am wrong, vote me tomorrow"
)
HUMAN_SHAPE = dataclasses.replace(QUICK, people_lengths=True, human_timing=True)


def ks(a: list[float], b: list[float]) -> float:
    xs = sorted(set(a) | set(b))
    sa, sb = sorted(a), sorted(b)

    def cdf(s: list[float], x: float) -> float:
        lo, hi = 0, len(s)
        while lo < hi:
            mid = (lo + hi) // 2
            if s[mid] <= x:
                lo = mid + 1
            else:
                hi = mid
        return lo / len(s)

    return max(abs(cdf(sa, x) - cdf(sb, x)) for x in xs)


def test_the_agents_limit_is_peoples() -> None:
    assert LLMPlayerSettings().max_line_chars == GameConfig().max_message_chars


async def test_a_long_line_is_not_cut_below_peoples_limit() -> None:
    text = " ".join(["word"] * 150)  # 749 characters: a person may post it
    llm = StubLLM(scheduler="<send>", generator=text)
    table, _, _ = make_table(llm)
    await table.advance(12)
    await table.advance(30)
    # (the same line again would be a repeat: the seat's next line is the baseline's own)
    assert [len(e.text) for e in table.said(0)][:1] == [len(text)]


def test_fit_length_cuts_at_a_boundary() -> None:
    assert fit_length("short", 20, 1000) == "short"
    cut = fit_length(LONG, 40, 1000)
    assert 30 <= len(cut) <= 52 and LONG.startswith(cut) and not cut.endswith(" ")
    assert fit_length("so. " + "word " * 20, 20, 1000) == "so. word word word"
    assert fit_length("a" * 50, 10, 1000) == "a" * 13
    assert fit_length("b" * 50, 1000, 30) == "b" * 30


def model_answer(rng: random.Random, req: LLMRequest, questions: float = 0.4) -> str:
    """A wordy model's line: sentences ending in "." (a question now and then), as long as
    the request's tokens allow (about 4 characters a token) and never much more."""
    vocabulary = sorted(set(LONG.replace(",", "").replace(".", "").split()))
    budget = 4 * req.max_tokens
    sentences: list[str] = []
    while sum(len(x) + 1 for x in sentences) < budget:
        words = " ".join(rng.choices(vocabulary, k=rng.randint(4, 16)))
        sentences.append(words + ("?" if rng.random() < questions else "."))
    return " ".join(sentences)[:budget]


def shares(lines: list[str]) -> dict[str, float]:
    ends = [ending_of(x) for x in lines]
    return {mark: ends.count(mark) / len(ends) for mark in PEOPLE_ENDINGS}


async def test_line_lengths_and_endings_follow_peoples() -> None:
    """A wordy model whose sentences end in "." or, 60% of them, "?": the posted lines'
    lengths follow people's (KS distance), with lines past people's 95th percentile, and they
    end as people's do ("?" as often as people ask, "." rarely; a line cut inside a sentence
    has no mark of its own)."""
    rng = random.Random(3)
    llm = StubLLM(scheduler="<send>", generator=lambda req: model_answer(rng, req, 0.6))
    config = GameConfig(deal=DEAL, roles=ROLES, day_seconds=20_000, vote_seconds=30,
                        night_seconds=30, night_vote_seconds=20)  # fmt: skip
    settings = dataclasses.replace(QUICK, people_lengths=True, max_lines_per_phase=1000)
    table, _, _ = make_table(llm, settings=settings, config=config)
    for i in range(400):
        table.say(1 + i % 6, f"line {i} from a person")
        await table.advance(12)
    texts = [e.text for e in table.said(0)]
    lengths = [float(len(x)) for x in texts]
    people = [float(target_chars(random.Random(i))) for i in range(4000)]
    assert len(lengths) >= 100
    assert ks(lengths, people) <= 0.15, (statistics.median(lengths), ks(lengths, people))
    assert sum(x > 54 for x in lengths) >= 2  # the tail: past people's 95th percentile
    got = shares(texts)
    assert abs(got["?"] - PEOPLE_ENDINGS["?"]) <= 0.06, got
    assert abs(got[""] - PEOPLE_ENDINGS[""]) <= 0.08, got
    assert got["."] <= 0.06, got
    hints = [r for r in llm.of("generator") if "about" in r.messages[-1][1]]
    assert len(hints) == len(llm.of("generator"))


async def test_a_long_target_gets_the_tokens_and_the_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the draw is a long line (people write them now and then, up to the table's
    limit), the model is asked for one and given the tokens for it, and it is posted whole."""
    monkeypatch.setattr("agent.llm_seat.talk.target_chars", lambda rng, limit: 700)
    rng = random.Random(5)
    llm = StubLLM(scheduler="<send>", generator=lambda req: model_answer(rng, req))
    settings = dataclasses.replace(QUICK, people_lengths=True)
    table, _, _ = make_table(llm, settings=settings)
    await table.advance(12)
    await table.advance(30)
    said = table.said(0)
    assert said, "the seat said nothing"
    assert 700 / 1.3 <= len(said[0].text) <= 700 * 1.3, len(said[0].text)
    req = llm.of("generator")[0]
    assert req.max_tokens * 3.5 >= 700
    assert "longer message, about 127 words" in req.messages[-1][1]


def test_target_lengths_are_peoples_tail_included() -> None:
    """Up to people's 90th percentile the draws are the table's; above it a tail that goes
    on past the longest line in the games (110 characters of chat), up to the table's limit."""
    rng = random.Random(1)
    drawn = [target_chars(rng) for _ in range(100_000)]
    body = [float(x) for x in drawn if x <= PEOPLE_CHARS[-1]]
    people = [float(draw(PEOPLE_CHARS, (i + 0.5) / 2000)) for i in range(2000)]
    assert ks(body, people) < 0.05
    share = sum(x > 83 for x in drawn) / len(drawn)  # people's 99th percentile
    assert 0.005 <= share <= 0.02, share
    assert max(drawn) > 300  # the old table stopped at 110
    assert max(drawn) <= GameConfig().max_message_chars
    assert max(target_chars(random.Random(i), limit=120) for i in range(5000)) == 120


@pytest.mark.skipif(not llmafia_games_dir().is_dir(), reason="LLMafia data not present")
def test_lengths_and_endings_match_the_games() -> None:
    """Against people's stage lines in the shared LLMafia games: the agent's target lengths
    within 15% (or 3 characters) of people's quantiles, a longest draw past people's longest,
    and a wordy model's endings (always ".", a question in 40%) within 2 points of people's."""
    people: list[str] = []
    for g in read_games(llmafia_games_dir()):
        humans = {p.name for p in g.players if not p.is_llm}
        people += [
            " ".join(x.text.split()) for x in g.lines if x.place == "stage" and x.speaker in humans
        ]
    chars = sorted(len(x) for x in people)
    rng = random.Random(2)
    drawn = sorted(target_chars(rng) for _ in range(100_000))
    for q in (0.25, 0.5, 0.75, 0.9, 0.95, 0.99):
        ours, theirs = drawn[int(q * len(drawn))], chars[int(q * len(chars))]
        assert abs(ours - theirs) <= max(3, 0.15 * theirs), (q, ours, theirs)
    assert drawn[-1] > chars[-1]
    endings = Endings()
    lines = [
        fit_ending(f"line {i} here{'?' if rng.random() < 0.4 else '.'}", rng, endings)
        for i in range(20_000)
    ]
    got, want = shares(lines), shares(people)
    for mark in PEOPLE_ENDINGS:
        assert abs(got[mark] - want[mark]) <= 0.02, (mark, got, want)


def test_fit_ending_keeps_the_words() -> None:
    rng = random.Random(0)
    for text in ("why ari?", "ok drew.", "hmm...", "so sus!!", "yes"):
        out = fit_ending(text, rng)
        assert out.rstrip(".!?") == text.rstrip(".!?"), (text, out)
    assert fit_ending("lol :)", rng) == "lol :)"
    assert ending_of("wait…") == "..." and ending_of("what?!") == "?" and ending_of("ok") == ""


async def test_a_direct_answer_waits_for_reading_and_typing() -> None:
    """The model answers at once; the line still waits a person's reading and typing time for
    the question and the answer, drawn (so it varies), never below a fast typist's."""
    answer = "not me, ask drew why he voted eden"
    question = "Ari why did you vote like that? who is mafia?"
    delays: list[float] = []
    paces: list[float] = []
    for seed in range(30):
        llm = StubLLM(scheduler="<send>", generator=answer)
        quiet_start = dataclasses.replace(HUMAN_SHAPE, open_delay_s=(500.0, 500.0))
        config = GameConfig(deal=DEAL, roles=ROLES, day_seconds=600, vote_seconds=30,
                            night_seconds=30, night_vote_seconds=20)  # fmt: skip
        table, player, _ = make_table(llm, settings=quiet_start, config=config)
        player.rng = random.Random(f"answer:{seed}")
        await table.advance(0.5)
        table.say(1, question)
        asked = table.now
        await table.advance(200)
        line = table.said(0)[0]
        assert answer.startswith(line.text.rstrip(".!?"))  # (its ending is people's)
        delays.append((line.t - asked).total_seconds())
        assert delays[-1] >= MIN_TYPING_S_PER_CHAR * len(line.text) - 1e-6
        paces.append(delays[-1] / (len(line.text) + len(question)))
    quartiles = statistics.quantiles(delays, n=4)
    assert quartiles[2] - quartiles[0] > 3.0, delays  # drawn, not a constant
    assert 0.08 <= statistics.median(paces) <= 0.45, sorted(zip(paces, delays, strict=True))


async def test_agents_votes_are_not_in_step() -> None:
    """Three LLM seats in the same vote phases: their first votes land when people's do (a
    few seconds to a minute in), and hardly ever within a second of each other."""
    close = pairs = 0
    firsts: list[float] = []
    for seed in range(12):
        llm = StubLLM(scheduler="<wait>", generator="hm", vote=lambda r: "Blake")
        config = GameConfig(deal=DEAL, roles=ROLES, day_seconds=30, vote_seconds=90,
                            night_seconds=30, night_vote_seconds=20)  # fmt: skip
        table, _, _ = make_table(llm, settings=HUMAN_SHAPE, config=config)
        for seat in (1, 6):
            table.players[seat] = LLMPlayer(
                seat=seat, name=NAMES[seat], persona="calm", port=table.port(seat),
                clock=table.clock, timers=table.timers, generator=llm,
                scheduler=llm,
                decisions=InMemoryDecisionLog(), rng=random.Random(f"{seed}:{seat}"),
                settings=HUMAN_SHAPE, game_id="g",
            )  # fmt: skip
        table.players[0].rng = random.Random(f"{seed}:0")  # type: ignore[attr-defined]
        await table.until_phase(PhaseKind.VOTE)
        opened = table.now
        await table.advance(90)
        times = [(table.votes_by(s)[0].t - opened).total_seconds() for s in (0, 1, 6)]
        firsts += times
        for i in range(3):
            for j in range(i + 1, 3):
                pairs += 1
                close += abs(times[i] - times[j]) < 1.0
    assert close / pairs < 0.15, (close, pairs)
    assert statistics.median(firsts) > 8.0
    assert max(firsts) - min(firsts) > 20.0
