"""Events: what the engine says happened. They carry names as well as seat numbers so that
renderers and agents need no state to show them, and they say who may see them.

``place`` is where the event belongs: the public ``stage``, the mafia ``den``, or a player's
private ``booth``. ``visible_to`` is the set of seats that may see it (None: everyone,
spectators included). A bystander's seat never receives an event whose ``visible_to`` does not
contain it; :func:`visible` is the one check everybody uses.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, ClassVar, Literal

Place = Literal["stage", "den", "booth"]


@dataclass(frozen=True, kw_only=True)
class Event:
    kind: ClassVar[str] = "event"
    t: datetime
    place: Place = "stage"
    visible_to: frozenset[int] | None = None


@dataclass(frozen=True, kw_only=True)
class GameStarted(Event):
    kind: ClassVar[str] = "game_started"
    players: tuple[str, ...]
    mafia_count: int
    extra_roles: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class RoleAssigned(Event):
    kind: ClassVar[str] = "role_assigned"
    seat: int
    name: str
    role: str
    team: str
    #: fellow mafia (names), empty for town
    partners: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class PhaseStarted(Event):
    kind: ClassVar[str] = "phase_started"
    phase: str  # PhaseKind value
    number: int
    seq: int
    deadline: datetime
    seconds: float
    #: night talk was skipped because only one mafia is alive
    talk_skipped: bool = False


@dataclass(frozen=True, kw_only=True)
class ChoicesOffered(Event):
    """What one seat can do in the phase that just started, for that seat only: every menu,
    cue and agent decision is built from it, so no renderer computes a target list.

    Offered when a phase starts in which the seat can act: the day vote (every living seat),
    the mafia's kill vote (living mafia), and a detective's or doctor's night action (once a
    night, at its first phase; valid until dawn)."""

    kind: ClassVar[str] = "choices_offered"
    place: Place = "booth"
    seat: int
    phase_seq: int
    #: "vote" | "kill" | "investigate" | "protect" (named like `NightActionRecorded.verb`:
    #: ``kind`` is the event's own kind, "choices_offered")
    verb: str
    #: seat indices, in seat order
    targets: tuple[int, ...]
    target_names: tuple[str, ...]
    can_abstain: bool


@dataclass(frozen=True, kw_only=True)
class PhaseEnded(Event):
    kind: ClassVar[str] = "phase_ended"
    phase: str
    number: int
    seq: int
    #: "deadline" or "all_voted"
    reason: str


@dataclass(frozen=True, kw_only=True)
class PhaseExtended(Event):
    """The current phase's deadline moved later by ``seconds`` (`games.actions.Extend`)."""

    kind: ClassVar[str] = "phase_extended"
    phase: str
    number: int
    seq: int
    deadline: datetime
    seconds: float


@dataclass(frozen=True, kw_only=True)
class MessageAccepted(Event):
    kind: ClassVar[str] = "message"
    seat: int
    name: str
    text: str
    phase_seq: int


@dataclass(frozen=True, kw_only=True)
class VoteCast(Event):
    kind: ClassVar[str] = "vote_cast"
    voter: int
    voter_name: str
    target: int | None
    target_name: str | None
    #: True when this replaces an earlier vote in the same phase
    changed: bool
    night: bool
    phase_seq: int


@dataclass(frozen=True, kw_only=True)
class NightActionRecorded(Event):
    kind: ClassVar[str] = "night_action"
    seat: int
    role: str
    verb: str
    target: int
    target_name: str


@dataclass(frozen=True, kw_only=True)
class VoteResolved(Event):
    kind: ClassVar[str] = "vote_resolved"
    night: bool
    #: (name, votes) sorted by votes desc then name
    tally: tuple[tuple[str, int], ...]
    abstained: tuple[str, ...]
    chosen: int | None
    chosen_name: str | None
    #: names tied for the most votes when there was a tie
    tied: tuple[str, ...] = ()
    tie_broken_randomly: bool = False


@dataclass(frozen=True, kw_only=True)
class PlayerEliminated(Event):
    kind: ClassVar[str] = "player_eliminated"
    seat: int
    name: str
    role: str
    #: "vote" (day) or "night" (killed by the mafia)
    cause: str


@dataclass(frozen=True, kw_only=True)
class NightResult(Event):
    kind: ClassVar[str] = "night_result"
    victim: int | None
    victim_name: str | None


@dataclass(frozen=True, kw_only=True)
class InspectionResult(Event):
    kind: ClassVar[str] = "inspection_result"
    seat: int
    target: int
    target_name: str
    is_mafia: bool


#: the end reason of a drawn game starts with it (``games.engine.draw_reason``)
DRAW = "draw"


def is_draw(winner: str | None, reason: str | None) -> bool:
    """Whether a game ended in a draw (no winner, by the rules) rather than being stopped."""
    return winner is None and (reason or "").startswith(f"{DRAW}:")


@dataclass(frozen=True, kw_only=True)
class PrivateNote(Event):
    """What a role learnt or suffered, for that seat only (at dawn, or at the start for an
    executioner's target). ``verb`` names the ability: "investigate" (``result`` the role
    the target appears as), "track" (``seats``: whom the target visited), "watch"
    (``seats``: who visited the target), "clean" (``result`` the victim's role), "blocked"
    (``result`` "blocked": the action did nothing), "target" (an executioner's target),
    "became" (``result`` the seat's new role)."""

    kind: ClassVar[str] = "private_note"
    place: Place = "booth"
    seat: int
    verb: str
    target: int | None
    target_name: str | None
    result: str
    seats: tuple[int, ...] = ()
    names: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class SoloWin(Event):
    """A neutral player met their own win condition (a jester voted out, an executioner's
    target voted out, a survivor alive at the end). Public."""

    kind: ClassVar[str] = "solo_win"
    seat: int
    name: str
    role: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class GameOver(Event):
    kind: ClassVar[str] = "game_over"
    #: "mafia" | "bystanders" | a solo killer's role | None when aborted or drawn (a draw's
    #: ``reason`` starts with "draw:", `is_draw`)
    winner: str | None
    reason: str
    #: (name, role) for every seat, revealed to all
    roles: tuple[tuple[str, str], ...]

    @property
    def played_out(self) -> bool:
        """The game ended by its rules (a side won, or a draw), not stopped: the survey and
        the reveal follow."""
        return self.winner is not None or is_draw(self.winner, self.reason)


EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        GameStarted,
        RoleAssigned,
        PhaseStarted,
        ChoicesOffered,
        PhaseEnded,
        PhaseExtended,
        MessageAccepted,
        VoteCast,
        NightActionRecorded,
        VoteResolved,
        PlayerEliminated,
        NightResult,
        InspectionResult,
        PrivateNote,
        SoloWin,
        GameOver,
    )
}


def visible(event: Event, seat: int | None) -> bool:
    """May ``seat`` see ``event``? ``seat`` None is a spectator, who sees only public events."""
    if event.visible_to is None:
        return True
    return seat is not None and seat in event.visible_to


_FIELD_NAMES: dict[type[Event], tuple[str, ...]] = {}


def event_to_dict(event: Event) -> dict[str, Any]:
    """JSON-able form: times as ISO-8601, sets as sorted lists. (Fields are read directly, not
    through `asdict`'s deep copy: a line of chat is written for every line said, and an
    event's fields are scalars, times, sets and tuples, all immutable.)"""
    names = _FIELD_NAMES.get(type(event))
    if names is None:
        names = _FIELD_NAMES[type(event)] = tuple(f.name for f in fields(event))
    out: dict[str, Any] = {"kind": event.kind}
    for key in names:
        value = getattr(event, key)
        if isinstance(value, datetime):
            out[key] = value.isoformat()
        elif isinstance(value, frozenset):
            out[key] = sorted(value)
        else:
            out[key] = value
    return out


def event_from_dict(data: dict[str, Any]) -> Event:
    payload = dict(data)
    cls = EVENT_TYPES[payload.pop("kind")]
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in payload:
            continue
        value = payload[f.name]
        if f.name in ("t", "deadline"):
            value = datetime.fromisoformat(value)
        elif f.name == "visible_to":
            value = None if value is None else frozenset(value)
        elif isinstance(value, list):
            value = tuple(tuple(v) if isinstance(v, list) else v for v in value)
        kwargs[f.name] = value
    return cls(**kwargs)
