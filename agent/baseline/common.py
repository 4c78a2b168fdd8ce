"""Small pieces the baseline's modules share: phase kinds as plain globals, sentinels, and a
fast way to build a "say" intent (a simulation plans a few hundred lines a game).

Speed notes (a simulation runs this code millions of times): random.uniform(a, b) is
written out as a + (b - a) * random(), the same draw without the call; timedelta(0, s) is
timedelta(seconds=s) without the slower keyword parsing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from datetime import UTC, datetime, timedelta

from agent.base import Intent
from games.roles import get_role, registered_roles
from games.state import PhaseKind

#: every role on the mafia's side (a revealed godfather is as mafia as a plain mafia)
MAFIA_ROLES = frozenset(r for r in registered_roles() if get_role(r).team == "mafia")

_NO_VOTE = -2  # "has not voted this phase" (None would be an abstention)
_EMPTY: Mapping[int, int] = {}  # read-only stand-in for "no record"
_NEVER = datetime.max.replace(tzinfo=UTC)

#: a line worth saying: (weight, template key, its slots, the topic it settles, if any).
#: A plain tuple: one is built for every option considered
Option = tuple[float, str, Mapping[str, str], tuple[object, ...] | None]

#: PhaseKind by value, without the enum's (slow) call; and its members as plain globals,
#: because in Python 3.11 ``PhaseKind.DAY`` costs several times a global lookup
_PHASE_KINDS: dict[str, PhaseKind] = {k.value: k for k in PhaseKind}
_DAY_K = PhaseKind.DAY
_VOTE_K = PhaseKind.VOTE
_NIGHT_K = PhaseKind.NIGHT
_NIGHT_VOTE_K = PhaseKind.NIGHT_VOTE
_OVER_K = PhaseKind.OVER
_DAY = PhaseKind.DAY.value
_VOTE = PhaseKind.VOTE.value
_NIGHT_VOTE = PhaseKind.NIGHT_VOTE.value

_object_new = object.__new__
_object_setattr = object.__setattr__

#: ``timedelta(0, s)`` by ``s``, for the spans that recur: a fixed share of a phase (every
#: seat works out the same ones), a line's typing by its count of words. Building a
#: timedelta from a float costs about ten dict lookups; the same float gives the same span.
_SPANS: dict[float, timedelta] = {}


def span(s: float) -> timedelta:
    """``timedelta(0, s)``, built once per value of ``s`` (for spans that recur)."""
    td = _SPANS.get(s)
    if td is None:
        if len(_SPANS) >= 4096:  # (bounded: the spans of a few phase lengths fit many times)
            _SPANS.clear()
        td = _SPANS[s] = timedelta(0, s)
    return td


def _plain_frozen(cls: type) -> bool:
    """A frozen dataclass whose instances are nothing but their fields in a __dict__."""
    params = getattr(cls, "__dataclass_params__", None)
    return (
        params is not None
        and params.frozen
        and not hasattr(cls, "__post_init__")
        and not hasattr(cls, "__slots__")
        and [f.name for f in fields(cls)] == ["at", "kind", "text", "target"]
    )


if _plain_frozen(Intent):

    def say_at(at: datetime, text: str | None) -> Intent:
        """``Intent(at, "say", text=text)``, built without the frozen dataclass's __init__
        (one object.__setattr__ per field): a simulation plans a few hundred lines a game.
        The result is the same value: equal, same hash, still frozen."""
        intent: Intent = _object_new(Intent)
        _object_setattr(intent, "__dict__", {"at": at, "kind": "say", "text": text, "target": None})
        return intent

    def vote_at(at: datetime, target: str | None) -> Intent:
        """``Intent(at, "vote", target=target)``, built as :func:`say_at` builds a line."""
        intent: Intent = _object_new(Intent)
        _object_setattr(
            intent, "__dict__", {"at": at, "kind": "vote", "text": None, "target": target}
        )
        return intent

else:  # pragma: no cover - Intent changed shape: build it the ordinary way

    def say_at(at: datetime, text: str | None) -> Intent:
        return Intent(at, "say", text=text)

    def vote_at(at: datetime, target: str | None) -> Intent:
        return Intent(at, "vote", target=target)
