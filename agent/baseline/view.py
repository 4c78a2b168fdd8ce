"""What the baseline's speech reads of its seat: a view the policy fills at each line.

`agent.baseline.speech` decides what to say from this alone, so it never reaches into the
policy (and does not import it). Scalars are the values of the moment the view is made;
containers are the policy's own, only read, except ``gates``, where a line that depends on a
coin flip (a detective hinting someone is clean) keeps the flip, so that it is drawn once.
The heuristics the policy computes lazily (targets, scores) are passed as functions: a line
that does not need them never pays for them, and the draws stay where they were.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import NamedTuple, Protocol

from agent.baseline.ledger import Room, TableLedger
from agent.baseline.timing import BaselineTiming
from games.state import PhaseKind

__all__ = ["Speaker", "SpeechView"]


class SpeechView(NamedTuple):
    """Immutable, and a tuple so that making one per line costs next to nothing (a frozen
    dataclass of this size costs ten times more; a table composes lines dozens of times a
    game)."""

    seat: int
    rng: random.Random
    timing: BaselineTiming
    #: what the table heard (the stage, the den, claims, accusations)
    ledger: TableLedger
    #: this phase's talk on the stage
    chat: Room
    names: tuple[str, ...]
    alive: AbstractSet[int]
    #: living others now, in seat order, and the same as a set
    others_now: tuple[int, ...]
    others_set: frozenset[int]
    role: str | None
    mafia: bool
    partners: frozenset[int]
    doctor_in_play: bool
    # the phase
    night: bool
    kind: PhaseKind | None
    day: int
    seq: int
    start: datetime
    seconds: float
    late_at: datetime
    # what this seat said, and what it has heard in the den
    lines: int
    said: AbstractSet[str]
    den_heard: AbstractSet[str]
    topics: AbstractSet[tuple[object, ...]]
    gates: dict[tuple[object, ...], bool]
    # what was put to this seat
    accused_me: Sequence[int]
    answer_from: int | None
    asked: str
    # votes
    voted: int | None
    change_to: int | None
    votes_now: Mapping[int, int | None]
    tally_now: Counter[int]
    voted_by: Mapping[int, Mapping[int, int]]
    first_prop: int | None
    # news
    night_victim: tuple[int, str] | None
    night_none: bool
    last_day_elim: tuple[int, str, tuple[int, ...], int] | None
    revealed: Mapping[int, str]
    inspections: Mapping[int, bool]
    reveal: int | None
    # the policy's heuristics, computed when asked
    day_target: Callable[[], int | None]
    day_choice: Callable[[], int | None]
    night_target: Callable[[], int | None]
    my_scores: Callable[[], dict[int, float]]
    scores: Callable[[str], dict[int, float]]


class Speaker(Protocol):
    """Anything that makes a view of its seat (`agent.baseline.BaselinePolicy` does), so a
    caller may hand `agent.baseline.speech.compose` the policy itself."""

    def speech_view(self) -> SpeechView: ...
