"""The engine's most frequent events, built without their dataclass ``__init__``.

A frozen dataclass's ``__init__`` sets each field with one ``object.__setattr__`` call; the
events made for every line, vote and phase are built here by filling the instance's
``__dict__`` at once, in field order. The result is the same value: equal, same hash, same
repr, still frozen. Each builder first checks that its class is still that plain shape (fields
in a ``__dict__``, in the order given, no ``__post_init__``) and otherwise builds it the
ordinary way.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from datetime import datetime
from typing import Any, TypeVar

from games.events import ChoicesOffered, MessageAccepted, PhaseEnded, PhaseStarted, Place, VoteCast

__all__ = ["choices_offered", "message", "phase_ended", "phase_started", "plain", "vote_cast"]

_object_new = object.__new__
_object_setattr = object.__setattr__
E = TypeVar("E")


def plain(cls: type, names: list[str]) -> bool:
    """``cls`` is a frozen dataclass whose instances are exactly ``names``, in that order, in a
    ``__dict__``, with nothing run after ``__init__``."""
    params = getattr(cls, "__dataclass_params__", None)
    return (
        is_dataclass(cls)
        and params is not None
        and params.frozen
        and not hasattr(cls, "__slots__")
        and not hasattr(cls, "__post_init__")
        and [f.name for f in fields(cls)] == names
    )


_MESSAGE = plain(MessageAccepted, ["t", "place", "visible_to", "seat", "name", "text", "phase_seq"])
_VOTE_CAST = plain(
    VoteCast,
    [
        "t",
        "place",
        "visible_to",
        "voter",
        "voter_name",
        "target",
        "target_name",
        "changed",
        "night",
        "phase_seq",
    ],
)
_CHOICES = plain(
    ChoicesOffered,
    [
        "t",
        "place",
        "visible_to",
        "seat",
        "phase_seq",
        "verb",
        "targets",
        "target_names",
        "can_abstain",
    ],
)
_STARTED = plain(
    PhaseStarted,
    ["t", "place", "visible_to", "phase", "number", "seq", "deadline", "seconds", "talk_skipped"],
)
_ENDED = plain(PhaseEnded, ["t", "place", "visible_to", "phase", "number", "seq", "reason"])


def _fill(cls: type[E], shaped: bool, values: dict[str, Any]) -> E:
    """An instance of ``cls`` holding ``values`` (every field, in field order): its
    ``__dict__`` filled at once when ``shaped`` (`plain`), else built the ordinary way."""
    if not shaped:  # pragma: no cover - the class changed shape
        return cls(**values)
    event: E = _object_new(cls)
    _object_setattr(event, "__dict__", values)
    return event


def message(
    t: datetime,
    place: Place,
    visible_to: frozenset[int] | None,
    seat: int,
    name: str,
    text: str,
    phase_seq: int,
) -> MessageAccepted:
    return _fill(
        MessageAccepted,
        _MESSAGE,
        {
            "t": t,
            "place": place,
            "visible_to": visible_to,
            "seat": seat,
            "name": name,
            "text": text,
            "phase_seq": phase_seq,
        },
    )


def vote_cast(
    t: datetime,
    place: Place,
    visible_to: frozenset[int] | None,
    voter: int,
    voter_name: str,
    target: int | None,
    target_name: str | None,
    changed: bool,
    night: bool,
    phase_seq: int,
) -> VoteCast:
    return _fill(
        VoteCast,
        _VOTE_CAST,
        {
            "t": t,
            "place": place,
            "visible_to": visible_to,
            "voter": voter,
            "voter_name": voter_name,
            "target": target,
            "target_name": target_name,
            "changed": changed,
            "night": night,
            "phase_seq": phase_seq,
        },
    )


def choices_offered(
    t: datetime,
    seat: int,
    phase_seq: int,
    verb: str,
    targets: tuple[int, ...],
    target_names: tuple[str, ...],
    can_abstain: bool,
) -> ChoicesOffered:
    """A seat's choices, in its booth (seen by that seat only)."""
    return _fill(
        ChoicesOffered,
        _CHOICES,
        {
            "t": t,
            "place": "booth",
            "visible_to": frozenset({seat}),
            "seat": seat,
            "phase_seq": phase_seq,
            "verb": verb,
            "targets": targets,
            "target_names": target_names,
            "can_abstain": can_abstain,
        },
    )


def phase_started(
    t: datetime,
    phase: str,
    number: int,
    seq: int,
    deadline: datetime,
    seconds: float,
    talk_skipped: bool,
) -> PhaseStarted:
    return _fill(
        PhaseStarted,
        _STARTED,
        {
            "t": t,
            "place": "stage",
            "visible_to": None,
            "phase": phase,
            "number": number,
            "seq": seq,
            "deadline": deadline,
            "seconds": seconds,
            "talk_skipped": talk_skipped,
        },
    )


def phase_ended(t: datetime, phase: str, number: int, seq: int, reason: str) -> PhaseEnded:
    return _fill(
        PhaseEnded,
        _ENDED,
        {
            "t": t,
            "place": "stage",
            "visible_to": None,
            "phase": phase,
            "number": number,
            "seq": seq,
            "reason": reason,
        },
    )
