"""The shape of the agent's talk: how long its lines are and when they and its votes land,
drawn from people's figures so that neither marks it.

- **Length.** Each line gets a target length drawn from people's line lengths in the LLMafia
  games (:data:`PEOPLE_CHARS`, tail included); the model is asked for about that many words,
  and a longer answer is cut back to it at a sentence, clause or word boundary
  (:func:`fit_length`). The hard limit is the game's, the same as people's.
- **Reading and typing.** A line is posted no sooner than a person could have read the latest
  line it answers and typed it: seconds per character (of both) drawn from people's answers to
  a question naming them (:data:`PACE_S_PER_CHAR`), never faster than a very fast typist
  (:data:`MIN_TYPING_S_PER_CHAR`). Direct answers are no exception.
- **Votes.** The first vote comes when people's did (:data:`agent.baseline.timing.VOTE_S`),
  within the phase; the heuristic's deadline vote is jittered per seat, so agents' votes are
  never cast together.

Each seat draws from its own random generator, so two agents' lines and votes are not in step
with each other, nor with a person's line. ``bench/people_shape.py`` prints the tables.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta

from agent.baseline.timing import VOTE_S, draw
from agent.knowledge import SeatKnowledge

__all__ = [
    "MIN_TYPING_S_PER_CHAR",
    "PACE_S_PER_CHAR",
    "PEOPLE_CHARS",
    "earliest_post",
    "fallback_fraction",
    "fit_length",
    "length_hint",
    "target_chars",
    "vote_delay",
]

#: percentiles 0, 2.5, ..., 100 of the characters in people's stage lines (LLMafia 0001-0010)
PEOPLE_CHARS = (0, 2, 2, 3, 4, 6, 7, 7, 9, 10, 11, 12, 13, 14, 15, 16, 16, 17, 18, 19, 20,
                21, 21, 23, 24, 25, 26, 27, 29, 30, 31, 33, 35, 37, 40, 43, 48, 52, 58, 69,
                110)  # fmt: skip
#: percentiles 0, 5, ..., 100 of the seconds per character (read + typed) of people's answers
#: to a line naming them
PACE_S_PER_CHAR = (0.009, 0.033, 0.041, 0.052, 0.075, 0.098, 0.124, 0.150, 0.182, 0.201,
                   0.223, 0.245, 0.267, 0.292, 0.336, 0.420, 0.476, 0.550, 0.740, 1.017,
                   2.455)  # fmt: skip
#: nobody types faster than this (about 120 words a minute), whatever the draw
MIN_TYPING_S_PER_CHAR = 0.1
#: a line within this factor of its target is not cut; a sentence or clause end within it
#: is preferred to a word boundary
SLACK = 1.3
#: most of a vote phase the first vote may wait (the model still needs time to answer)
VOTE_SHARE = 0.6
FALLBACK_JITTER = 0.08

_SENTENCE = re.compile(r"[.!?]+(?=\s)")
_CLAUSE = re.compile(r"[,;:]+(?=\s)|\s[-–—]+\s")


def target_chars(rng: random.Random) -> int:
    """A line length drawn from people's."""
    return max(2, round(draw(PEOPLE_CHARS, rng.random())))


def length_hint(target: int) -> str:
    """What the model is told about the length of the line it writes now."""
    words = max(1, round(target / 5.5))
    return f"This time keep it to about {words} word{'s' if words != 1 else ''}."


def fit_length(text: str, target: int, limit: int) -> str:
    """``text`` cut back to about ``target`` characters (never above ``limit``): at a sentence
    end near the target, else a clause break near it, else the word boundary nearest to it."""
    if len(text) <= min(limit, int(target * SLACK)):
        return text
    lo, hi = int(target / SLACK), min(limit, int(target * SLACK))
    for pattern in (_SENTENCE, _CLAUSE):
        ends = [m.end() if pattern is _SENTENCE else m.start() for m in pattern.finditer(text)]
        near = [e for e in ends if lo <= e <= hi]
        if near:
            cut = text[: min(near, key=lambda e: abs(e - target))]
            return cut.rstrip(" ,;:-–—") or text[:hi]
    spaces = [m.start() for m in re.finditer(r" ", text[: limit + 1]) if 0 < m.start() <= limit]
    if spaces:
        cut = text[: min(spaces, key=lambda e: (abs(e - target), e))]
        return cut.rstrip(" ,;:-–—") or text[:hi]
    return text[: max(1, hi)]


def earliest_post(k: SeatKnowledge, seen: int, text: str, rng: random.Random) -> datetime | None:
    """The soonest a person could post ``text``: after the latest line it may answer (by
    another player, among the first ``seen`` messages, this phase) or the seat's own last
    line, whichever is later (else the phase's start), plus reading that line and typing this
    one at a pace drawn from people's. None before any phase."""
    anchor = k.phase_start
    if anchor is None:
        return None
    read = 0
    for entry in reversed(k.messages[:seen]):
        if entry.phase_seq != k.phase_seq:
            break
        if entry.t >= anchor:
            anchor = entry.t
            read = 0 if entry.seat == k.seat else len(entry.text)
        break
    pace = draw(PACE_S_PER_CHAR, rng.random())
    typed = len(text)
    seconds = max(pace * (read + typed), MIN_TYPING_S_PER_CHAR * typed)
    return anchor + timedelta(seconds=seconds)


def vote_delay(rng: random.Random, phase_seconds: float) -> float:
    """Seconds into a vote phase of the seat's first vote: people's, within the phase (give or
    take half a second: people's times were whole seconds, and seats must not share one)."""
    seconds = draw(VOTE_S, rng.random()) + rng.uniform(-0.5, 0.5)
    return min(max(0.0, seconds), VOTE_SHARE * phase_seconds)


def fallback_fraction(rng: random.Random, base: float) -> float:
    """The fraction of the phase at which this seat's heuristic vote is cast if the model has
    not answered: ``base`` give or take a little, so seats never fall back together."""
    return min(0.95, max(0.5, base + rng.uniform(-FALLBACK_JITTER, FALLBACK_JITTER)))
