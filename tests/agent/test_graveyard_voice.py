"""A dead agent's graveyard talk (`agent.graveyard`): it answers greetings and its name most
of the time, at an answer's latency, seldom anything else, a few lines a game at most, and
never a word about anyone's role."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta

from agent.baseline.timing import ANSWER_S
from agent.graveyard import _DIED, _GREET_BACK, _NAMED, _OTHER, MOST_LINES, GraveyardVoice
from agent.guard import check_line
from agent.knowledge import SeatKnowledge

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _answers(text: str, n: int = 400) -> list[float]:
    delays = []
    for seed in range(n):
        voice = GraveyardVoice("Robin", random.Random(seed))
        line = voice.heard(T0, "Drew", text)
        if line is not None:
            delays.append((line.at - T0).total_seconds())
    return delays


def test_a_greeting_is_answered_most_of_the_time_at_an_answers_latency() -> None:
    for text in ("hey anyone here?", "hello??", "who's here", "hi all"):
        delays = _answers(text)
        assert 0.55 * 400 <= len(delays) <= 0.85 * 400, (text, len(delays))
        assert min(delays) >= ANSWER_S[0] and max(delays) <= ANSWER_S[-1], text
    assert len(_answers("robin you there")) >= 0.75 * 400
    assert len(_answers("that vote was wild")) <= 0.15 * 400  # other lines: seldom


def test_sparse_a_few_lines_a_game_never_two_at_once() -> None:
    voice = GraveyardVoice("Robin", random.Random(1))
    said = 0
    t = T0
    for _ in range(100):
        t += timedelta(0, 30)
        line = voice.heard(t, "Drew", "hey robin")
        if line is not None:
            assert voice.heard(t, "Sam", "hi robin") is None  # one answer pending at a time
            voice.said(line)
            said += 1
    assert said == MOST_LINES


def test_its_words_pass_the_guard_and_name_no_role() -> None:
    k = SeatKnowledge(3, "Robin")
    k.players = ("Drew", "Sam", "Casey")
    roles = re.compile(r"\b(mafia|detective|doctor|bystander|town|role|cop|medic)\b", re.I)
    for text in (*_GREET_BACK, *_NAMED, *_OTHER, *_DIED):
        assert check_line(text, k) is None, text
        assert not roles.search(text), text


def test_an_answer_comes_before_its_own_later_word() -> None:
    for seed in range(200):
        voice = GraveyardVoice("Robin", random.Random(seed))
        own = voice.died(T0)
        answer = voice.heard(T0 + timedelta(0, 5), "Drew", "robin hey")
        if own is not None and answer is not None:
            assert answer.at < own.at and voice.planned is answer
            return
    raise AssertionError("no seed planned both")
