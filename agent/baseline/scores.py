"""Who looks like mafia (suspicion) and who threatens the mafia (danger), as plain functions.

Both read the table's public record (a :class:`~agent.baseline.ledger.TableLedger`: who
accused whom, detective claims, who talks how much) and the seat's own findings (day votes,
revealed roles, its inspections). The baseline policy calls them with its own state; any other
player (the LLM agent's fallback votes, its reflection) keeps a :class:`SeatRecord` and asks it.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet

from agent.baseline.common import MAFIA_ROLES
from agent.baseline.ledger import TableLedger
from games.events import (
    Event,
    GameStarted,
    InspectionResult,
    PhaseEnded,
    PhaseStarted,
    PlayerEliminated,
    RoleAssigned,
    VoteCast,
)

__all__ = ["SeatRecord", "activity", "danger", "suspicion"]


def activity(talk_seen: Mapping[int, int], cands: Iterable[int]) -> dict[int, float]:
    """+ for the very quiet and (less) the very loud, relative to the table."""
    cands = tuple(cands) if not isinstance(cands, (tuple, list)) else cands
    if not cands:
        return {}
    talk = talk_seen.get
    mean = sum([talk(s, 0) for s in cands]) / len(cands)
    out: dict[int, float] = {}
    if mean < 2:
        return out
    for s in cands:
        n = talk(s, 0)
        if n < 0.4 * mean:
            out[s] = 0.3
        elif n > 2.0 * mean:
            out[s] = 0.2
    return out


def suspicion(
    ledger: TableLedger,
    cands: Iterable[int],
    *,
    me: int,
    town: bool,
    bonus: Mapping[int, float],
    noise: Mapping[int, float],
    day_noise: Mapping[int, float],
    revealed: Mapping[int, str],
    voted_by: Mapping[int, Mapping[int, int]],
    liars: AbstractSet[int],
    inspections: Mapping[int, bool],
    detective_in_play: bool,
) -> dict[int, float]:
    """The town's view of ``cands``: how likely each is mafia (higher = more).

    ``bonus`` is :func:`activity` over every living other player (how loud or quiet each is
    against the whole table, not just ``cands``)."""
    noise_of = noise.get
    day_noise_of = day_noise.get
    score: dict[int, float] = {}
    revealed_of = revealed.get
    accused_by = ledger.accused_by.get
    voted_of = voted_by.get
    for a in cands:
        # (summed in a local, term by term in the same order: the same floats)
        v = noise_of(a, 0.0) + day_noise_of(a, 0.0)
        accused = accused_by(a)
        if accused:
            for b, n in accused.items():
                k = n if n < 2 else 2  # (min(n, 2))
                if b == me and town:
                    v += 0.9 * k
                role = revealed_of(b)
                if role is not None:
                    v += -0.6 * k if role in MAFIA_ROLES else 0.6 * k
        voted = voted_of(a)
        if voted:
            for target, n in voted.items():
                role = revealed_of(target)
                if role is not None:
                    v += -0.8 * n if role in MAFIA_ROLES else 0.8 * n
                if target == me:
                    v += 0.4 * n
        score[a] = v
    for s, extra in bonus.items():
        if s in score:
            score[s] += extra
    for claimer, (target, kind) in ledger.claims.items():
        if target == me and kind == "mafia" and claimer in score:
            score[claimer] += 4.0  # a false claim against me: they are lying
            continue
        shown = revealed_of(target)
        if (
            not detective_in_play
            or claimer in liars
            or (shown is not None and (shown == "mafia") != (kind == "mafia"))
        ):
            # a detective claim in a game without one, or one the reveal proved wrong
            if claimer in score:
                score[claimer] += 4.0
            continue
        if claimer in score:
            score[claimer] -= 0.5
        if target in score:
            score[target] += 2.5 if kind == "mafia" else -1.0
    for target, is_mafia in inspections.items():
        if target in score:
            score[target] += 100.0 if is_mafia else -100.0
    return score


def danger(
    ledger: TableLedger,
    cands: Iterable[int],
    *,
    mafia: AbstractSet[int],
    bonus: Mapping[int, float],
    noise: Mapping[int, float],
    day_noise: Mapping[int, float],
    voted_by: Mapping[int, Mapping[int, int]],
) -> dict[int, float]:
    """The mafia's view of ``cands``: how much each threatens the team (``mafia``)."""
    noise_of = noise.get
    day_noise_of = day_noise.get
    score: dict[int, float] = {}
    accused_by = ledger.accused_by.get
    voted_of = voted_by.get
    for a in cands:
        v = noise_of(a, 0.0) + day_noise_of(a, 0.0)
        accused = accused_by(a)
        if accused:
            for b, n in accused.items():
                if b in mafia:
                    v += 0.9 * (n if n < 2 else 2)
        voted = voted_of(a)
        if voted:
            for target, n in voted.items():
                if target in mafia:
                    v += 0.7 * n
        score[a] = v
    for s, extra in bonus.items():
        if s in score:
            score[s] += extra
    for claimer in ledger.claims:
        if claimer in score:
            score[claimer] += 5.0
    return score


class SeatRecord:
    """What one seat needs for :func:`suspicion` and :func:`danger`, kept from the events it
    sees (others are ignored), without a whole policy: the table ledger, day votes, revealed
    roles, its own inspections. The noise that breaks ties is drawn as a baseline policy given
    the same ``rng`` draws it."""

    def __init__(self, seat: int, rng: random.Random) -> None:
        self.seat = seat
        self.ledger = TableLedger()
        self._rng = random.Random(rng.random())  # (as the policy's noise generator)
        self.names: tuple[str, ...] = ()
        self.alive: set[int] = set()
        self.partners: frozenset[int] = frozenset()
        self.mafia = False
        self.detective_in_play = False
        self.revealed: dict[int, str] = {}
        self.liars: set[int] = set()
        self.voted_by: dict[int, dict[int, int]] = {}
        self.inspections: dict[int, bool] = {}
        self.noise: dict[int, float] = {}
        self.day_noise: dict[int, float] = {}
        self._seq = 0
        self._votes_now: dict[int, int | None] = {}

    def observe(self, event: Event) -> None:
        seen = event.visible_to
        if seen is not None and self.seat not in seen:
            return
        self.ledger.take(event)
        if isinstance(event, GameStarted):
            self.names = tuple(event.players)
            self.alive = set(range(len(self.names)))
            self.detective_in_play = "detective" in event.extra_roles
            self.noise = {i: self._rng.random() * 0.25 for i in self.alive}
        elif isinstance(event, RoleAssigned) and event.seat == self.seat:
            self.mafia = event.team == "mafia"
            wanted = {n.casefold() for n in event.partners}
            self.partners = frozenset(i for i, n in enumerate(self.names) if n.casefold() in wanted)
        elif isinstance(event, PhaseStarted):
            self._seq, self._votes_now = event.seq, {}
            if event.phase == "day":
                self.day_noise = {i: self._rng.random() * 0.15 for i in self.alive}
        elif isinstance(event, VoteCast) and not event.night and event.phase_seq == self._seq:
            self._votes_now[event.voter] = event.target
        elif isinstance(event, PhaseEnded) and event.phase == "vote":
            for voter, target in self._votes_now.items():
                if target is not None:
                    counts = self.voted_by.setdefault(voter, {})
                    counts[target] = counts.get(target, 0) + 1
        elif isinstance(event, PlayerEliminated):
            self.alive.discard(event.seat)
            self.revealed[event.seat] = event.role
            for claimer, (target, kind) in self.ledger.claims.items():
                if target == event.seat and (event.role in MAFIA_ROLES) != (kind == "mafia"):
                    self.liars.add(claimer)
        elif isinstance(event, InspectionResult) and event.seat == self.seat:
            self.inspections[event.target] = event.is_mafia

    def _others(self) -> list[int]:
        return [s for s in sorted(self.alive) if s != self.seat and s not in self.partners]

    def suspicion(self) -> dict[int, float]:
        """How likely each living other player is mafia (higher = more)."""
        others = self._others()
        return suspicion(
            self.ledger, others, me=self.seat, town=not self.mafia,
            bonus=activity(self.ledger.talk_seen, others), noise=self.noise,
            day_noise=self.day_noise, revealed=self.revealed, voted_by=self.voted_by,
            liars=self.liars, inspections=self.inspections,
            detective_in_play=self.detective_in_play,
        )  # fmt: skip

    def danger(self) -> dict[int, float]:
        """How much each living bystander threatens the mafia."""
        others = self._others()
        return danger(
            self.ledger, others, mafia=self.partners | {self.seat},
            bonus=activity(self.ledger.talk_seen, others), noise=self.noise,
            day_noise=self.day_noise, voted_by=self.voted_by,
        )  # fmt: skip
