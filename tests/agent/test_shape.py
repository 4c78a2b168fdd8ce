"""The shape of the agent's talk (agent/shape.py): people's line lengths (tail included) and
limit, a person's reading and typing time before every line (answers to a direct question
included), and votes cast when people cast them, not in step with other agents."""

from __future__ import annotations

import dataclasses
import random
import statistics

from agent.baseline.timing import draw
from agent.decisions import InMemoryDecisionLog
from agent.llm_player import LLMPlayer, LLMPlayerSettings
from agent.shape import (
    MIN_TYPING_S_PER_CHAR,
    PEOPLE_CHARS,
    fit_length,
    target_chars,
)
from games import GameConfig
from games.state import PhaseKind
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


async def test_line_lengths_follow_peoples_tail_included() -> None:
    """A model that always writes three long sentences: the posted lines' lengths follow
    people's (KS distance), with lines past people's 95th percentile, none past their max."""
    rng = random.Random(3)

    vocabulary = sorted(set(LONG.replace(",", "").replace(".", "").split()))

    def answer(_req: object) -> str:
        sentences = [" ".join(rng.choices(vocabulary, k=rng.randint(8, 16))) for _ in range(3)]
        return ". ".join(sentences)

    llm = StubLLM(scheduler="<send>", generator=answer)
    config = GameConfig(deal=DEAL, roles=ROLES, day_seconds=20_000, vote_seconds=30,
                        night_seconds=30, night_vote_seconds=20)  # fmt: skip
    settings = dataclasses.replace(QUICK, people_lengths=True, max_lines_per_phase=1000)
    table, _, _ = make_table(llm, settings=settings, config=config)
    for i in range(400):
        table.say(1 + i % 6, f"line {i} from a person")
        await table.advance(12)
    lengths = [float(len(e.text)) for e in table.said(0)]
    people = [float(draw(PEOPLE_CHARS, (i + 0.5) / 2000)) for i in range(2000)]
    assert len(lengths) >= 100
    assert ks(lengths, people) <= 0.15, (statistics.median(lengths), ks(lengths, people))
    assert sum(x > 58 for x in lengths) >= 2  # the tail: past people's 95th percentile
    assert max(lengths) <= PEOPLE_CHARS[-1] * 1.3
    hints = [r for r in llm.of("generator") if "keep it to about" in r.messages[-1][1]]
    assert len(hints) == len(llm.of("generator"))


def test_target_lengths_are_peoples() -> None:
    rng = random.Random(1)
    drawn = [float(target_chars(rng)) for _ in range(4000)]
    people = [float(draw(PEOPLE_CHARS, (i + 0.5) / 2000)) for i in range(2000)]
    assert ks(drawn, people) < 0.05


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
        assert answer.startswith(line.text)
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
