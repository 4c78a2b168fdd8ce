"""Booth rules every platform follows: who reads the den, and how a booth's backlog is handed
over after a restart.

The den (the mafia's night talk) has no room of its own on any platform: a room's member list
would show which partners are people. Each den event is copied into the booth of every person
the service let see it (`Event.visible_to`) who holds that seat now.

After a restart each booth is read back from its watermark (the newest line already handed
to the game, relayed or refused); every line typed since is handed over once, oldest first
across all booths (both platforms' ids grow with time), each with its platform id so the
service stores it once whatever happens; a refused one is explained to its writer with
`late_note`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

U = TypeVar("U")
L = TypeVar("L")


def den_audience(
    visible_to: Iterable[int] | None, holders: Mapping[int, U], *, skip: int | None = None
) -> dict[int, U]:
    """Seat -> person of the booths a den event goes to: the seats the service let see it
    (``visible_to``) that a person holds now (``holders``: a removed player's booth is gone,
    an agent has none), but ``skip`` (the speaker sees what they typed). An event the service
    did not scope (``visible_to`` None) is shown to nobody rather than to all."""
    if visible_to is None:
        return {}
    return {s: holders[s] for s in sorted(set(visible_to)) if s != skip and s in holders}


def in_typed_order(backlogs: Iterable[Iterable[L]], key: Callable[[L], Any]) -> list[L]:
    """The lines missed in every booth as one list, oldest first (``key``: the platform's
    time-ordered id), so what different people typed keeps its order."""
    return sorted((line for lines in backlogs for line in lines), key=key)


def late_note(text: str, reason: str) -> str:
    """What a player reads about a line they typed while the bot was away that could not be
    passed on (it is never silently dropped)."""
    return (
        f"While the Game-Manager was away you wrote \u201c{_short(text, 80)}\u201d; it "
        f"could not be passed on: {reason}"
    )


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "\u2026"
