"""When the baseline speaks, votes and acts: timing knobs and how long a line takes."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_TIMING", "BaselineTiming", "chattiness"]


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
    day_cap: int = 5
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
