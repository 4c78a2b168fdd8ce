"""Actions: everything that can happen to a game. Time is always passed in, never read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Say:
    """A player speaks. By day it goes to the stage; at night only mafia speak, in the den."""

    seat: int
    text: str
    t: datetime


@dataclass(frozen=True)
class Vote:
    """A vote in the day vote (any alive player) or the night vote (alive mafia).

    ``target`` None is an explicit abstention. A later vote replaces an earlier one.
    """

    seat: int
    target: int | None
    t: datetime
    #: when the service applied it, if later than ``t`` (see :class:`Tick`): a vote that ends
    #: the phase ends it at ``t``, but what was typed before ``applied`` was typed while its
    #: writer still saw the old phase
    applied: datetime | None = None


@dataclass(frozen=True)
class NightAct:
    """A role's night action (detective investigates, doctor protects)."""

    seat: int
    target: int
    t: datetime
    applied: datetime | None = None  # as for Vote


@dataclass(frozen=True)
class Tick:
    """The clock reached ``t``: ends the phase when its deadline has passed, else nothing.

    ``applied``: when the service applied it, if later than ``t``. The service closes a phase
    a short grace after its deadline (so votes made before it, still on their way, count) but
    stamps the close at the deadline; a line typed before ``applied`` was typed while its
    writer still saw the old phase, and is placed there."""

    t: datetime
    applied: datetime | None = None


@dataclass(frozen=True)
class Extend:
    """The current phase's deadline moves ``seconds`` later: the platform's input was down
    for that long (a gateway gap, a restart), a silence only people suffered, so the phase
    gets that time back. Nothing when the phase has no deadline or the game is over."""

    t: datetime
    seconds: float


@dataclass(frozen=True)
class Abort:
    """A moderator ends the game early; nobody wins."""

    t: datetime
    reason: str = "ended by a moderator"


Action = Say | Vote | NightAct | Tick | Extend | Abort

_KINDS: dict[
    str, type[Say] | type[Vote] | type[NightAct] | type[Tick] | type[Extend] | type[Abort]
] = {
    "say": Say,
    "vote": Vote,
    "night_act": NightAct,
    "tick": Tick,
    "extend": Extend,
    "abort": Abort,
}


def action_kind(action: Action) -> str:
    for kind, cls in _KINDS.items():
        if isinstance(action, cls):
            return kind
    raise TypeError(action)


def action_to_dict(action: Action) -> dict[str, Any]:
    """Plain JSON-able form (time as ISO-8601) for the action log."""
    out: dict[str, Any] = {"kind": action_kind(action)}
    for key, value in vars(action).items():
        if key == "applied" and value is None:
            continue  # (not applied late: the log stays as it was before the field existed)
        out[key] = value.isoformat() if isinstance(value, datetime) else value
    return out


def action_from_dict(data: dict[str, Any]) -> Action:
    payload = dict(data)
    cls = _KINDS[payload.pop("kind")]
    for key in ("t", "applied"):
        if payload.get(key) is not None:
            payload[key] = datetime.fromisoformat(payload[key])
    return cls(**payload)
