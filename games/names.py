"""Character names and matching a typed name to a seat.

Every player, human or agent, plays under a character name drawn here, never an account name.
Matching is by whole name, case-insensitive, and must be unambiguous: "Ari" never matches
"Ariel".
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence

from games.errors import RuleError

#: gender-neutral first names, in the spirit of the LLMafia games
CHARACTER_NAMES: tuple[str, ...] = (
    "Adrian", "Angel", "Ari", "Ashton", "Avery", "Bailey", "Blake", "Brook", "Cameron", "Casey",
    "Charlie", "Dakota", "Drew", "Eden", "Emerson", "Finley", "Gray", "Harley", "Hayden", "Jamie",
    "Jordan", "Jules", "Kai", "Kendall", "Lee", "Logan", "Marley", "Morgan", "Noel", "Parker",
    "Peyton", "Quinn", "Reese", "Remi", "Riley", "Robin", "Rowan", "Sage", "Sam", "Sidney",
    "Skyler", "Sutton", "Taylor", "Tatum", "Winter", "Ziggy",
)  # fmt: skip


def pick_names(count: int, rng: random.Random, exclude: Iterable[str] = ()) -> list[str]:
    """``count`` distinct character names, none of them in ``exclude`` (case-insensitive)."""
    banned = {n.casefold() for n in exclude}
    pool = [n for n in CHARACTER_NAMES if n.casefold() not in banned]
    if count > len(pool):
        raise ValueError(f"only {len(pool)} character names available, {count} requested")
    return rng.sample(pool, count)


#: what a typed name may be wrapped in (a mention's @, quotes, a full stop after it)
NAME_TRIM = "@\"'`.,!?*"


def normalize_name(text: str) -> str:
    """The form names are compared in: case and inner spacing ignored."""
    return " ".join(text.casefold().split())


def resolve_name(query: str, names: Mapping[int, str], suggest: Iterable[str] | None = None) -> int:
    """The seat whose name is ``query`` (whole name, any case, surrounding @ or quotes ignored).

    Raises :class:`RuleError` with the list of valid names when nothing or several match
    (``suggest``, when given: ``names`` may hold names that resolve only to be refused, like
    one's own or the dead's, which the list should not offer).
    """
    wanted = normalize_name(query.strip().strip(NAME_TRIM))
    hits = [i for i, n in names.items() if normalize_name(n) == wanted]
    if len(hits) == 1:
        return hits[0]
    listing = ", ".join(sorted(names.values() if suggest is None else suggest))
    if not wanted:
        raise RuleError(f"Say who: one of {listing}.")
    raise RuleError(f"No player called {query.strip()!r} here. Choose one of: {listing}.")


def names_in_text(text: str, names: Mapping[int, str]) -> list[int]:
    """Seats whose whole name appears as a word in ``text``, in order of first appearance."""
    found: list[tuple[int, int]] = []
    for index, name in names.items():
        pattern = r"(?<![\w])" + re.escape(name) + r"(?![\w])"
        m = re.search(pattern, text, flags=re.IGNORECASE)
        if m:
            found.append((m.start(), index))
    return [i for _, i in sorted(found)]


def unique_name_in_text(text: str, names: Mapping[int, str]) -> int | None:
    """The one seat named in ``text``, or None when none or several are named."""
    hits = names_in_text(text, names)
    return hits[0] if len(hits) == 1 else None


def display_list(names: Sequence[str]) -> str:
    """'A', 'A and B', 'A, B and C'."""
    if not names:
        return "nobody"
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]
