"""The shape of the agent's talk: how long its lines are and when they and its votes land,
drawn from people's figures so that neither marks it.

- **Length.** Each line gets a target length drawn from people's line lengths in the LLMafia
  games: their percentiles up to the 90th (:data:`PEOPLE_CHARS`), above it a Pareto tail
  fitted to people's longest tenth (:data:`TAIL_ALPHA`) that runs on to the game's limit, the
  same as people's (1,000 characters by default), so a long line is rare but possible, as it
  is for a person. The model is asked for about that many words (and given the tokens for
  it), and a longer answer is cut back to it at a sentence, clause or word boundary
  (:func:`fit_length`).
- **Endings.** A line ends the way people's do (:data:`PEOPLE_ENDINGS`: mostly with no mark,
  sometimes "?", now and then ".", "!" or "..."): a question keeps its "?" only as often as
  people ask, and any other line gets an ending drawn from people's (:func:`fit_ending`).
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

import math
import random
import re
from datetime import datetime, timedelta

from agent.baseline.timing import VOTE_S, draw
from agent.knowledge import SeatKnowledge
from games.config import MAX_MESSAGE_CHARS

__all__ = [
    "MIN_TYPING_S_PER_CHAR",
    "PACE_S_PER_CHAR",
    "PEOPLE_CHARS",
    "PEOPLE_ENDINGS",
    "TAIL_ALPHA",
    "TAIL_FROM",
    "Endings",
    "earliest_post",
    "ending_of",
    "fallback_fraction",
    "fit_ending",
    "fit_length",
    "generator_tokens",
    "length_hint",
    "target_chars",
    "vote_delay",
]

#: percentiles 0, 2.5, ..., 90 of the characters in people's stage lines (the 15 LLMafia
#: games, 954 lines; ``bench/people_shape.py``)
PEOPLE_CHARS = (0, 2, 2, 3, 4.3, 5, 6, 7, 8, 9, 10, 10, 11, 12, 13, 14, 14, 15, 15, 16, 17,
                18, 18, 19, 20, 21, 22, 24, 25, 26, 27, 29, 31, 33, 35, 39, 42)  # fmt: skip
#: the quantile where the table ends and the tail begins
TAIL_FROM = 0.9
#: above ``PEOPLE_CHARS[-1]``: P(length > x) = (1 - TAIL_FROM) * (x / PEOPLE_CHARS[-1]) ** -alpha,
#: alpha the Hill estimate on people's longest tenth (1 in 100 lines past 83 characters, 1 in
#: 1,000 past 175, 1 in 100,000 past 740)
TAIL_ALPHA = 3.1
#: shares of people's stage lines by how they end (the 15 LLMafia games, 954 lines):
#: "" is no closing mark (a word, an emoji, a comma...)
PEOPLE_ENDINGS: dict[str, float] = {"": 0.808, "?": 0.142, "!": 0.024, ".": 0.018, "...": 0.008}
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


def target_chars(rng: random.Random, limit: int = MAX_MESSAGE_CHARS) -> int:
    """A line length drawn from people's (tail included), at most ``limit``."""
    u = rng.random()
    if u < TAIL_FROM:
        chars = draw(PEOPLE_CHARS, u / TAIL_FROM)
    else:
        chars = PEOPLE_CHARS[-1] * ((1 - u) / (1 - TAIL_FROM)) ** (-1 / TAIL_ALPHA)
    return max(2, min(limit, round(chars)))


def length_hint(target: int) -> str:
    """What the model is told about the length of the line it writes now."""
    words = max(1, round(target / 5.5))
    if words >= 25:
        return f"This time say more than usual: a longer message, about {words} words."
    return f"This time keep it to about {words} word{'s' if words != 1 else ''}."


def generator_tokens(target: int, floor: int) -> int:
    """Tokens enough for a line of ``target`` characters (and a little over), never fewer
    than ``floor`` (the configured budget for a short line)."""
    return max(floor, math.ceil(target * SLACK / 3.5) + 8)


_ENDING = re.compile(r"(\.{2,}|…|[.!?]+)$")


def ending_of(text: str) -> str:
    """How ``text`` ends, as :data:`PEOPLE_ENDINGS` counts it: "...", "?", "!", "." or ""."""
    m = _ENDING.search(text.rstrip())
    if m is None:
        return ""
    mark = m.group(1)
    if mark == "…" or mark.startswith(".."):
        return "..."
    return "?" if "?" in mark else mark[-1]


class Endings:
    """One seat's line endings, steered to people's shares: a question keeps its "?" with the
    probability that makes the seat's share of "?" people's, estimated from the questions the
    model has written so far (people's share as the prior); every other line gets "!", ".",
    "..." or nothing, drawn from people's shares among lines that are not questions."""

    PRIOR = 5.0

    def __init__(self) -> None:
        self.lines = 0
        self.questions = 0

    def fit(self, text: str, rng: random.Random) -> str:
        body = _ENDING.sub("", text.rstrip()).rstrip()
        if not body or not body[-1].isalnum():
            return text  # nothing but marks, or an emoji or a smiley at the end: as written
        asked = ending_of(text) == "?"
        q = PEOPLE_ENDINGS["?"]
        self.lines += 1
        self.questions += asked
        if asked:
            rate = (self.questions + q * self.PRIOR) / (self.lines + self.PRIOR)
            if rng.random() < min(1.0, q / rate):
                return body + "?"
        others = [(mark, share) for mark, share in PEOPLE_ENDINGS.items() if mark != "?"]
        pick = rng.random() * sum(share for _, share in others)
        for mark, share in others:
            pick -= share
            if pick < 0:
                return body + mark
        return body


def fit_ending(text: str, rng: random.Random, endings: Endings | None = None) -> str:
    """``text`` ending as people's lines do (see :class:`Endings`; a fresh one when none)."""
    return (endings or Endings()).fit(text, rng)


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
