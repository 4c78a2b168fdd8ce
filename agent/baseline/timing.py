"""When the baseline speaks, votes and acts: timing knobs, and people's timing to draw from.

By day the baseline times its lines the way the people of the LLMafia games did (the
MIT-licensed release by Eckhaus et al.; the tables below are percentiles measured on its
games 0001-0010, the rest held out to check the fit): when a player first speaks in a day,
the gaps between one player's own lines (many short ones in a burst, then a long lull), how
soon a player answers a question put to them by name, and how long into a vote they vote.
Each is drawn from its table by inverse transform: a uniform draw picks a point between two
percentiles, linearly. A day's number of lines per player is drawn around a rate per minute,
with a spread from day to day and player to player like people's.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

__all__ = [
    "ANSWER_S",
    "DEFAULT_TIMING",
    "FIRST_LINE_S",
    "OWN_GAP_S",
    "VOTE_S",
    "BaselineTiming",
    "chattiness",
    "draw",
    "poisson",
]

#: percentiles 0, 5, ..., 100 of people's seconds from a day's start to their first line
#: (discussions of 150-180 s)
FIRST_LINE_S = (0.0, 4.7, 9.0, 10.9, 14.0, 16.0, 19.8, 25.0, 29.0, 35.0, 41.0, 46.2, 49.0,
                52.5, 59.1, 64.8, 74.8, 88.0, 116.7, 138.3, 175.0)  # fmt: skip
#: ... of the gaps between one person's consecutive lines in a day
OWN_GAP_S = (1.0, 3.0, 5.0, 7.0, 9.0, 12.0, 13.0, 15.2, 18.0, 19.0, 21.5, 24.0, 29.0, 31.8,
             35.0, 39.2, 43.0, 49.0, 57.5, 70.0, 154.0)  # fmt: skip
#: ... of the seconds from a question naming a person to their next line
ANSWER_S = (1.5, 2.0, 2.7, 3.3, 4.0, 5.2, 6.0, 6.1, 7.0, 7.1, 8.0, 9.9, 11.4, 12.0, 13.3,
            15.5, 19.8, 23.6, 26.4, 30.0, 40.0)  # fmt: skip
#: ... of the seconds from "time to vote" to a person's vote (no deadline in those games)
VOTE_S = (0.5, 1.0, 6.0, 9.9, 11.0, 12.0, 14.9, 18.0, 18.0, 18.0, 20.0, 24.0, 24.8, 30.0,
          36.0, 41.5, 43.4, 47.0, 52.4, 84.8, 120.0)  # fmt: skip


def draw(table: tuple[float, ...], u: float) -> float:
    """The value at quantile ``u`` (0..1) of an evenly spaced percentile ``table``."""
    x = u * (len(table) - 1)
    i = int(x)
    if i >= len(table) - 1:
        return table[-1]
    return table[i] + (table[i + 1] - table[i]) * (x - i)


def poisson(mean: float, rng: random.Random) -> int:
    """A Poisson count (Knuth's method; the means here are small)."""
    limit, k, p = math.exp(-mean), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


@dataclass(frozen=True)
class BaselineTiming:
    """Timing knobs, all in game seconds (so ``--speed`` scales them for free)."""

    #: wait after the last message (or the phase start) while below one's share of the chat
    short_delay: tuple[float, float] = (3.0, 12.0)
    #: wait after the last message while above one's share
    long_delay: tuple[float, float] = (15.0, 45.0)
    #: typing time per word of the line
    seconds_per_word: float = 0.35
    #: most lines per phase on the stage by day, in the vote, and in the den at night
    day_cap: int = 8
    vote_cap: int = 2
    den_cap: int = 2
    #: chance to stay silent for a while when already above one's share
    skip_when_loud: float = 0.35
    #: when to vote / act, as fractions of the phase
    vote_window: tuple[float, float] = (0.08, 0.6)
    act_window: tuple[float, float] = (0.15, 0.7)
    #: never act later than this before the deadline (capped at 10% of short phases)
    margin: float = 3.0
    #: how long a change of mind takes
    change_delay: tuple[float, float] = (2.0, 6.0)
    #: by day: lines per player per minute of discussion, on average (people's timing above)
    day_rate: float = 0.95
    #: how much one player's rate on one day varies (log-normal sigma; people's is wide)
    rate_spread: float = 0.6
    #: share of days a player says nothing of their own (people: 8%)
    silent_day: float = 0.08
    #: the people's tables were measured on discussions this long: shorter ones scale them
    people_day_s: float = 165.0
    #: chance to say something early in a day's vote (a vote, a count), and how early
    vote_talk: float = 0.2
    vote_talk_window: float = 0.25
    #: answer a question put by name unless the vote is this far gone (the lull before the
    #: result: people stop talking once they have voted)
    answer_until: float = 0.25
    #: type lines as a person does (case, commas, little words, typos); off: as written
    typed: bool = True
    #: a person's typing: share of lines typed all lowercase, and of lines with a typo
    lowercase: float = 0.5
    typo: float = 0.06
    #: chance of a little word before a line ("ok", "tbh"), and again after it ("lol")
    wrap: float = 0.15


def chattiness(persona: str | None) -> float:
    """The baseline can't act a persona out; it only borrows its temperament."""
    if not persona:
        return 1.0
    text = persona.casefold()
    if any(w in text for w in ("quiet", "shy", "reserved", "terse", "laconic", "calm")):
        return 0.65
    if any(w in text for w in ("chatty", "talkative", "loud", "outgoing", "energetic")):
        return 1.4
    return 1.0


DEFAULT_TIMING = BaselineTiming()
