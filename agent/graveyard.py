"""A dead agent in the graveyard: it talks there as the dead people do, now and then.

The dead people's booths are the graveyard (a platform option): a dead person's line reaches
the other dead. A dead seat that never says a word there is the one nobody answers from, so
the dead could tell which seat was the AI. This voice answers a greeting or its own name
sometimes, says a short line after its own death now and then, at people's pace (an answer's
latency, a person's gap between their own lines), and never more than a few lines a game.

There is no graveyard in the LLMafia games to calibrate on: the figures below are kept sparse
on purpose (people who are out mostly watch). The lines say nothing about anyone's role:
nobody in the graveyard learns a living seat's role from them (the templates name no role,
no seat, and quote nothing said on the stage or in the den).

Pure: no clock, no I/O. The caller (the service) feeds it what happens and runs the lines it
plans through the same guard as any agent line, at the moments it asks for.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from agent.baseline.timing import ANSWER_S, OWN_GAP_S, draw

__all__ = ["GREETING", "GraveLine", "GraveyardVoice"]

#: a greeting or a call to whoever is here ("hi", "anyone here?", "who's here", "hello??")
GREETING = re.compile(
    r"\b(?:hi+|hey+|hello+|yo+|sup|hiya|howdy|anyone|any1|anybody|some(?:one|body)|"
    r"who(?:'?s| is)? (?:here|there|else)|who else)\b",
    re.IGNORECASE,
)
#: how often a dead agent answers a greeting (or a line naming it), and any other line
ANSWER_GREETING = 0.7
ANSWER_NAMED = 0.85
ANSWER_OTHER = 0.08
#: how often it says a word of its own after its death, and how long after (seconds)
AFTER_DEATH = 0.35
AFTER_DEATH_S = (20.0, 120.0)
#: at most this many graveyard lines in a game (people out of a game mostly watch)
MOST_LINES = 5

_GREET_BACK = (
    "hey",
    "hi",
    "yo",
    "hey yeah im here",
    "here",
    "yep still here",
    "hi lol",
    "hey, just watching now",
    "yeah hi",
    "o/",
)
_NAMED = ("yeah?", "whats up", "hm?", "yea", "im here", "lol yes")
_OTHER = ("lol", "true", "yeah", "fair", "haha", "same", "rip", "mhm", "idk tbh")
_DIED = (
    "rip me",
    "well that's that",
    "gg i guess",
    "ugh",
    "called it lol",
    "nooo",
    "oh well",
    "rip",
    "lol ok",
    "unlucky",
)


@dataclass(frozen=True)
class GraveLine:
    """A line to say in the graveyard at ``at`` (game time)."""

    at: datetime
    text: str


class GraveyardVoice:
    """One dead agent seat's graveyard talk: feed it its death and the graveyard's lines,
    it answers with the line to say and when (or None)."""

    def __init__(self, name: str, rng: random.Random) -> None:
        self.name = name
        self._rng = rng
        self._said = 0
        self._last: datetime | None = None
        self._planned: GraveLine | None = None
        self._used: set[str] = set()
        self._answering = False

    @property
    def planned(self) -> GraveLine | None:
        return self._planned

    def died(self, t: datetime) -> GraveLine | None:
        """The seat was eliminated at ``t``: now and then a short word of its own, later."""
        if self._rng.random() >= AFTER_DEATH:
            return None
        lo, hi = AFTER_DEATH_S
        return self._plan(t + timedelta(0, self._rng.uniform(lo, hi)), _DIED)

    def heard(self, t: datetime, speaker: str, text: str) -> GraveLine | None:
        """Another dead seat said ``text`` in the graveyard at ``t``: maybe an answer, at an
        answer's latency (an answer already planned stands; a word of its own planned for
        later gives way to it)."""
        if self._planned is not None and self._answering:
            return None
        named = re.search(rf"\b{re.escape(self.name)}\b", text, re.IGNORECASE) is not None
        greeting = GREETING.search(text) is not None
        words: tuple[str, ...]
        if named:
            p, words = ANSWER_NAMED, (_GREET_BACK if greeting else _NAMED)
        elif greeting:
            p, words = ANSWER_GREETING, _GREET_BACK
        else:
            p, words = ANSWER_OTHER, _OTHER
        if self._rng.random() >= p:
            return None
        at = t + timedelta(0, draw(ANSWER_S, self._rng.random()))
        if self._last is not None:  # not faster than a person's gap after their own line
            at = max(at, self._last + timedelta(0, draw(OWN_GAP_S, self._rng.random()) * 0.5))
        planned = self._planned
        if planned is not None and planned.at <= at:
            return None  # its own word comes first anyway
        self._planned = None
        line = self._plan(at, words)
        self._answering = line is not None
        return line

    def said(self, line: GraveLine) -> None:
        """The planned line was said (or dropped): the next may be planned."""
        if self._planned is line:
            self._planned = None
            self._answering = False
        self._said += 1
        self._last = line.at

    def _plan(self, at: datetime, words: tuple[str, ...]) -> GraveLine | None:
        if self._said >= MOST_LINES or self._planned is not None:
            return None
        fresh = [w for w in words if w not in self._used] or list(words)
        text = self._rng.choice(fresh)
        self._used.add(text)
        self._planned = GraveLine(at, text)
        return self._planned
