"""Whom the baseline names: its day vote, the mafia's kill, its night action and when it joins a
bandwagon, as plain functions of what the seat has (its scores from
:mod:`~agent.baseline.scores`, the tally, whom it may not name).

None draws a random number, so calling one never moves the seat's other draws; the doctor's
coin flip (protect itself or not) is handed in as a function and drawn only when the choice
comes to it. Where several are equally good the first one met wins, so the order of the
mappings handed in matters (it is the seat's order: scores in seat order, votes in the order
they were first cast).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet

__all__ = [
    "BANDWAGON_NEED",
    "bandwagon",
    "bandwagon_need",
    "day_target",
    "detective_target",
    "night_target",
    "protect_target",
    "quiet_target",
]


def day_target(
    scores: Mapping[int, float], tally: Mapping[int, int], banned: AbstractSet[int], *, mafia: bool
) -> int | None:
    """Whom to vote out by day: the top score, pulled towards the votes already cast (the
    mafia more so: a forming bandwagon hides them); never one whose vote was refused."""
    if not tally and not banned:  # (the discussion): the top score, first one on a tie
        return max(scores, key=scores.__getitem__) if scores else None
    pull = 0.6 if mafia else 0.35
    votes = tally.get
    best: int | None = None
    best_score = -math.inf
    for s, v in scores.items():
        if s in banned:
            continue
        value = v + pull * votes(s, 0)
        if value > best_score:
            best, best_score = s, value
    return best


def night_target(
    others: Iterable[int],
    banned: AbstractSet[int],
    partners: AbstractSet[int],
    votes: Mapping[int, int | None],
    first_prop: int | None,
    danger: Callable[[], Mapping[int, float]],
) -> int | None:
    """The kill. Follow the partner who voted first, else the den's first proposal, else
    the most dangerous bystander; so partners (people among them) converge without ties."""
    cands = set(others) - banned
    if not cands:
        return None
    for voter, t in votes.items():  # (in the order the votes were first cast)
        if voter in partners and t in cands:
            return t
    if first_prop in cands:
        return first_prop
    score = danger()
    return max(cands, key=lambda s: score.get(s, 0.0))


def detective_target(
    score: Mapping[int, float], inspected: Mapping[int, bool], banned: AbstractSet[int]
) -> int | None:
    """The most suspicious player not inspected yet (else the most suspicious of all)."""
    cands = [s for s in score if s not in inspected and s not in banned]
    if not cands:
        cands = [s for s in score if s not in banned]
    return max(cands, key=lambda s: score[s]) if cands else None


def quiet_target(score: Mapping[int, float], banned: AbstractSet[int]) -> int | None:
    """The least suspicious player (a town role's night action the baseline knows nothing
    of)."""
    cands = [s for s in score if s not in banned]
    return min(cands, key=lambda s: score[s]) if cands else None


def protect_target(
    allowed: list[int],
    me: int,
    claims: Mapping[int, tuple[int, str]],
    self_first: Callable[[], bool],
    suspicion: Callable[[], Mapping[int, float]],
    talk: Mapping[int, int],
) -> int | None:
    """The doctor's save among ``allowed`` (in seat order): a claimed detective, else itself
    when ``self_first()`` says so, else the most valuable other: trusted and vocal (the mafia
    kill whoever leads the town)."""
    if not allowed:
        return None
    for claimer, (_target, kind) in claims.items():
        if kind == "mafia" and claimer in allowed and claimer != me:
            return claimer  # a claimed detective is the next kill
    if self_first() and me in allowed:
        return me
    score = suspicion()
    others = [s for s in allowed if s != me]
    if not others:
        return me if me in allowed else None
    return min(others, key=lambda s: score.get(s, 0.0) - 0.1 * talk.get(s, 0))


def bandwagon_need(alive: int) -> int:
    """The votes a strong bandwagon has: at least 2 and 40% of the ``alive`` players."""
    return max(2, math.ceil(0.4 * alive))


#: :func:`bandwagon_need` by table size, worked out once (every vote asks each seat that voted)
BANDWAGON_NEED = tuple(bandwagon_need(n) for n in range(65))


def bandwagon(
    tally: Mapping[int, int],
    voted: int | None,
    *,
    me: int,
    alive: AbstractSet[int],
    partners: AbstractSet[int],
    banned: AbstractSet[int],
    mafia: bool,
    inspections: Mapping[int, bool],
) -> int | None:
    """The day vote's leader, if a strong bandwagon forms that ``voted`` (my vote) should
    join: at least 2 votes and 40% of the living, well ahead of mine; never me, a partner or
    one I know is clean, and a town seat does not leave a player it found mafia."""
    if not tally:
        return None
    n = len(alive)
    need = BANDWAGON_NEED[n] if n < 65 else bandwagon_need(n)
    if max(tally.values()) < need:
        return None  # (no bandwagon yet: the usual case, decided without finding the leader)
    # the most votes, the lowest seat among equals (max by (votes, -seat), without the key)
    leader, count = -1, -1
    for s, n in tally.items():
        if n > count or (n == count and s < leader):
            leader, count = s, n
    if count < need or leader in (voted, me):
        return None
    if leader in partners or leader not in alive or leader in banned:
        return None
    if not mafia and inspections.get(leader) is False:
        return None
    if not mafia and voted is not None and inspections.get(voted):
        return None
    mine = tally.get(voted, 0) if voted is not None else 0
    if mine > count - 2:
        return None
    return leader
