"""Game state as plain immutable data. The engine returns a new state for every change."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from games.config import GameConfig
from games.roles import Team, get_role


class PhaseKind(StrEnum):
    DAY = "day"  # discussion on the stage
    VOTE = "vote"  # day vote (talk goes on)
    NIGHT = "night"  # mafia talk in the den
    NIGHT_VOTE = "night_vote"  # mafia vote on the kill (den talk goes on)
    OVER = "over"

    @property
    def is_day(self) -> bool:
        return self is _DAY or self is _VOTE

    @property
    def is_night(self) -> bool:
        return self is _NIGHT or self is _NIGHT_VOTE

    @property
    def is_vote(self) -> bool:
        return self is _VOTE or self is _NIGHT_VOTE


# In Python 3.11 ``PhaseKind.DAY`` read off the class costs several times a module global
_DAY = PhaseKind.DAY
_VOTE = PhaseKind.VOTE
_NIGHT = PhaseKind.NIGHT
_NIGHT_VOTE = PhaseKind.NIGHT_VOTE
_OVER = PhaseKind.OVER


@dataclass(frozen=True)
class Phase:
    kind: PhaseKind
    number: int  # day/night number, from 1
    seq: int  # position in the game, from 1
    started_at: datetime
    deadline: datetime | None

    @property
    def label(self) -> str:
        """Short label used in transcripts: day-1, vote-1, night-1, night_vote-1, over."""
        return "over" if self.kind is _OVER else f"{self.kind.value}-{self.number}"


@dataclass(frozen=True)
class PriorPhase:
    """The phase before the current one, as far as judging a late action needs it.

    Platforms deliver an action some milliseconds after it was made, and another action can
    end the phase in between (a night's last kill vote overtakes a den line typed just before
    it). An action stamped before the current phase was applied is judged against this phase:
    who was alive in it, what kind it was, and its number in the game."""

    phase: Phase
    #: seats alive during that phase (before the eliminations that ended it)
    alive: frozenset[int]
    #: when the change to the current phase was applied (at or after the current phase's
    #: ``started_at``): what a player typed before then, they typed in this phase
    until: datetime


@dataclass(frozen=True)
class SeatState:
    index: int
    name: str
    role: str
    alive: bool = True

    @property
    def team(self) -> Team:
        return get_role(self.role).team

    @property
    def is_mafia(self) -> bool:
        # (asked for every vote and den line: a role's team never changes once registered)
        mafia = _MAFIA_ROLE.get(self.role)
        if mafia is None:
            mafia = _MAFIA_ROLE[self.role] = self.team == "mafia"
        return mafia


#: role name -> on the mafia's team (SeatState.is_mafia's memo)
_MAFIA_ROLE: dict[str, bool] = {}


@dataclass(frozen=True)
class GameState:
    config: GameConfig
    seed: int
    seats: tuple[SeatState, ...]
    phase: Phase
    #: current vote phase: voter -> target seat (None = abstain)
    votes: Mapping[int, int | None] = field(default_factory=dict)
    #: current night: actor -> target for role night actions (detective, doctor)
    night_actions: Mapping[int, int] = field(default_factory=dict)
    #: previous night's role night actions, for rules like the doctor's
    last_night_actions: Mapping[int, int] = field(default_factory=dict)
    #: "mafia", "bystanders", a solo killer's role; None while playing, aborted or drawn
    winner: str | None = None
    end_reason: str | None = None
    #: day and night votes resolved in a row without anybody leaving the game (the draw rule)
    quiet_votes: int = 0
    #: the phase before this one (None on day 1), for actions that arrive after it ended
    prior: PriorPhase | None = None
    #: limited abilities: seat -> uses spent so far
    used: Mapping[int, int] = field(default_factory=dict)
    #: executioners: seat -> the seat they want voted out
    executions: Mapping[int, int] = field(default_factory=dict)
    #: neutral seats that have already met their win condition (a jester voted out)
    solo_won: frozenset[int] = frozenset()

    # --- queries -------------------------------------------------------------------------
    @property
    def over(self) -> bool:
        return self.phase.kind is _OVER

    def seat(self, index: int) -> SeatState:
        if not 0 <= index < len(self.seats):
            raise IndexError(index)
        return self.seats[index]

    def alive(self) -> frozenset[int]:
        # asked several times a vote: kept with the seats tuple it came from, as alive_mafia
        seats = self.seats
        last = _last_alive[0]
        if last is not None and last[0] is seats:
            return last[1]
        value = frozenset([s.index for s in seats if s.alive])
        _last_alive[0] = (seats, value)
        return value

    def alive_mafia(self) -> frozenset[int]:
        # asked for every den line and vote: the last answer is kept with the seats tuple it
        # came from (immutable, and held, so an identity check is safe)
        seats = self.seats
        last = _last_alive_mafia[0]
        if last is not None and last[0] is seats:
            return last[1]
        value = frozenset(s.index for s in seats if s.alive and s.is_mafia)
        _last_alive_mafia[0] = (seats, value)
        return value

    def mafia(self) -> frozenset[int]:
        return frozenset(s.index for s in self.seats if s.is_mafia)

    def teams(self) -> dict[int, Team]:
        return {s.index: s.team for s in self.seats}

    def night_actors(self) -> frozenset[int]:
        """Alive seats whose role has a night action with uses left (the mafia's kill is
        their vote, not an action)."""
        return frozenset(s.index for s in self.seats if s.alive and self.can_act(s.index))

    def can_act(self, seat: int) -> bool:
        """Whether ``seat``'s role has a night action and uses of it left (alive or not)."""
        role = get_role(self.seats[seat].role)
        if role.night_verb is None:
            return False
        return role.uses is None or self.used.get(seat, 0) < role.uses

    def vote_weight(self, seat: int) -> int:
        return get_role(self.seats[seat].role).votes

    def eligible_voters(self) -> frozenset[int]:
        kind = self.phase.kind
        if kind is _VOTE:
            return self.alive()
        if kind is _NIGHT_VOTE:
            return self.alive_mafia()
        return frozenset()

    def vote_targets(self, voter: int) -> list[int]:
        """The seats ``voter`` may vote for in the current vote, in seat order: living others
        by day, living non-mafia at night (empty outside a vote)."""
        kind = self.phase.kind
        if kind is not _VOTE and kind is not _NIGHT_VOTE:
            return []
        night = kind is _NIGHT_VOTE
        return [
            s.index
            for s in self.seats
            if s.alive and s.index != voter and not (night and s.is_mafia)
        ]

    def night_targets(self, seat: int) -> list[int]:
        """The seats ``seat`` may use its role's night action on now, in seat order, by the
        role's own rule (a doctor may protect themself, not last night's patient; a detective
        anyone but themself). Empty when it is not night, the seat is out, or its role has no
        night action (the mafia's kill is their vote: :meth:`vote_targets`)."""
        kind = self.phase.kind
        if kind is not _NIGHT and kind is not _NIGHT_VOTE:
            return []
        me = self.seats[seat]
        role = get_role(me.role)
        if not me.alive or not self.can_act(seat):
            return []
        alive = self.alive()
        last = self.last_night_actions
        return [i for i in sorted(alive) if role.check_target(seat, i, alive, last) is None]

    def choice(self, seat: int) -> tuple[str, list[int], bool] | None:
        """What ``seat`` can do now: (kind, targets, can abstain), kind being "vote", "kill"
        or a role's night verb ("investigate", "protect", ...); None when it can do nothing.
        A night actor's choice is offered for the whole night (its talk and its vote); a
        mafia role with a night action of its own is offered the kill first in the night
        vote (:meth:`choices` lists both)."""
        options = self.choices(seat)
        return options[0] if options else None

    def choices(self, seat: int) -> list[tuple[str, list[int], bool]]:
        """Every choice ``seat`` has now (see :meth:`choice`)."""
        if self.over or not self.seats[seat].alive:
            return []
        kind = self.phase.kind
        if kind is _VOTE:
            return [("vote", self.vote_targets(seat), True)]
        out: list[tuple[str, list[int], bool]] = []
        if kind is _NIGHT_VOTE and self.seats[seat].is_mafia:
            out.append(("kill", self.vote_targets(seat), True))
        if (kind is _NIGHT or kind is _NIGHT_VOTE) and self.can_act(seat):
            verb = get_role(self.seats[seat].role).night_verb
            assert verb is not None
            out.append((verb, self.night_targets(seat), False))
        return out

    def opened_at(self) -> datetime:
        """When the current phase was applied: an action made before then belongs to the
        phase before (see :class:`PriorPhase`)."""
        prior = self.prior
        return self.phase.started_at if prior is None else prior.until

    def name_of(self, index: int | None) -> str | None:
        return None if index is None else self.seats[index].name


#: the last (seats, alive_mafia) computed, for GameState.alive_mafia; the same for alive
_last_alive_mafia: list[tuple[tuple[SeatState, ...], frozenset[int]] | None] = [None]
_last_alive: list[tuple[tuple[SeatState, ...], frozenset[int]] | None] = [None]
