"""Who played a seat when: a person, an agent, or first one and then the other.

A moderator's kick or an AFK takeover hands a person's seat to an agent mid-game, and a
substitute hands a seat to another person; the character name and role stay, and nobody at the
table is told. The seat keeps the story (``seats.handovers``, written by `bot.service.journal`), so
that
after the game it is told truly:

- the reveal names as "the AI" only the seats an agent played from start to end
  (:func:`agent_throughout`) and tells each changed seat's story in plain words (:func:`story`:
  "Blake's player left on day 1; an AI played the seat from then on.");
- the survey scores a guess by the same rule (`bot.players.survey`; docs/spot-the-ai.md);
- the replay marks each line by who wrote it (:func:`wrote`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, Protocol

from games.state import GameState, PhaseKind

Kind = Literal["person", "agent"]

_PHASE_WORDS = {
    PhaseKind.DAY: "day",
    PhaseKind.VOTE: "day",
    PhaseKind.NIGHT: "night",
    PhaseKind.NIGHT_VOTE: "night",
}


def phase_words(state: GameState | None) -> str:
    """When, in the words of the reveal: "day 1", "night 2" ("the lobby" before the start)."""
    if state is None:
        return "the lobby"
    word = _PHASE_WORDS.get(state.phase.kind)
    return f"{word} {state.phase.number}" if word else "the end"


class _Seat(Protocol):
    @property
    def is_agent(self) -> bool: ...

    @property
    def handovers(self) -> list[dict[str, Any]] | None: ...


class _Line(Protocol):
    @property
    def t(self) -> datetime: ...

    @property
    def action_seq(self) -> int | None: ...


def handover(before: Kind, after: Kind, phase: str, seq: int, t: datetime) -> dict[str, Any]:
    """One entry of ``seats.handovers``: ``seq`` actions of the game were made before it."""
    return {"from": before, "to": after, "phase": phase, "seq": seq, "t": t.isoformat()}


def kind(is_agent: bool) -> Kind:
    return "agent" if is_agent else "person"


def _entries(seat: _Seat) -> list[dict[str, Any]]:
    return [h for h in (seat.handovers or []) if isinstance(h, Mapping)]


def first_kind(seat: _Seat) -> Kind:
    """Who played the seat at the start."""
    entries = _entries(seat)
    if entries and entries[0].get("from") in ("person", "agent"):
        return "agent" if entries[0]["from"] == "agent" else "person"
    return kind(seat.is_agent)


def kinds(seat: _Seat) -> set[Kind]:
    """Every kind of player the seat had."""
    return {first_kind(seat), kind(seat.is_agent)} | {
        "agent" if h.get("to") == "agent" else "person" for h in _entries(seat)
    }


def agent_throughout(seat: _Seat) -> bool:
    """An agent played the seat from start to end: "the AI" of the reveal and the survey."""
    return kinds(seat) == {"agent"}


def mixed(seat: _Seat) -> bool:
    """Both a person and an agent played the seat."""
    return kinds(seat) == {"agent", "person"}


def story(name: str, seat: _Seat) -> str:
    """The seat's story in plain words, for a seat both a person and an agent played."""
    parts: list[str] = []
    for h in _entries(seat):
        before, after, phase = h.get("from"), h.get("to"), h.get("phase") or "the game"
        if before == after:
            continue  # a person handed to another person: nothing about the AI
        if before == "person":
            parts.append(
                f"{name}'s player left on {phase}; an AI played the seat from then on"
                if not parts
                else f"a person handed it to an AI on {phase}"
            )
        else:
            parts.append(
                f"an AI played {name} until {phase}; a person played the seat from then on"
                if not parts
                else f"an AI handed it to a person on {phase}"
            )
    if not parts:
        return ""
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def _at(h: Mapping[str, Any]) -> datetime | None:
    try:
        return datetime.fromisoformat(str(h.get("t")))
    except ValueError:
        return None


def wrote(seat: _Seat, line: _Line) -> Kind:
    """Who wrote ``line`` of this seat: the player who held the seat when it was said (by the
    game's action order when the line has one, else by time)."""
    who = first_kind(seat)
    for h in _entries(seat):
        seq = h.get("seq")
        after = (
            line.action_seq > seq if line.action_seq is not None and isinstance(seq, int) else None
        )
        if after is None:
            at = _at(h)
            after = at is not None and line.t >= at
        if not after:
            break
        who = "agent" if h.get("to") == "agent" else "person"
    return who


def the_ai(seats: Sequence[Any]) -> list[Any]:
    """The seats an agent played from start to end."""
    return [s for s in seats if agent_throughout(s)]
