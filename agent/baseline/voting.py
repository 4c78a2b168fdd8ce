"""How the baseline votes: when (people's vote timing by day, a window at night), for whom
(the seat's day choice or the night's kill), and when it changes its mind (onto a strong day
bandwagon, or after a partner at night, once). Functions over the seat's
:class:`~agent.baseline.seat.SeatState`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from agent.base import Intent
from agent.baseline.common import (
    _NIGHT_VOTE_K,
    _NO_VOTE,
    _VOTE_K,
    vote_at,
)
from agent.baseline.seat import SeatState
from agent.baseline.targets import BANDWAGON_NEED, bandwagon, bandwagon_need
from agent.baseline.timing import VOTE_S, draw

__all__ = [
    "done_vote",
    "first_vote_time",
    "maybe_bandwagon",
    "maybe_follow_partner",
    "plan_vote",
    "schedule_change",
    "vote_intent",
    "vote_time",
]

#: a partner's night vote this long after mine was cast knowing mine (agents react in ms)
_DELIBERATE_S = 2.0


def vote_time(p: SeatState) -> datetime | None:
    """When :func:`plan_vote` would vote (drawing the time if it is not drawn yet)."""
    if p._vote_off:
        return None
    if p._voted == _NO_VOTE:
        at = p._vote_at
        if at is None:
            at = p._vote_at = first_vote_time(p)
        return at
    if p._change_to is not None and p._change_at is not None:
        return p._change_at
    return None


def plan_vote(p: SeatState, now: datetime) -> Intent | None:
    if not p._voting or p._vote_off:
        return None
    if p._voted == _NO_VOTE:
        at = p._vote_at
        if at is None:
            at = p._vote_at = first_vote_time(p)
        if p._kind is _NIGHT_VOTE_K:
            return vote_intent(p, at, p._night_target())
        return vote_intent(p, at, p._day_choice())
    if p._change_to is not None and p._change_at is not None:
        return vote_intent(p, p._change_at, p._change_to)
    return None


def first_vote_time(p: SeatState) -> datetime:
    """By day, as long into the vote as people took (their votes had no deadline: the
    draw is scaled to a vote of a minute and kept inside this one); at night, in the
    vote window."""
    if p._kind is not _VOTE_K:
        return p._in_window(p.timing.vote_window)
    latest = p._seconds - p._margin()
    offset = draw(VOTE_S, p._rng.random()) * p._seconds / 60.0
    return p._start + timedelta(0, max(0.0, min(offset, latest)))


def vote_intent(p: SeatState, at: datetime, target: int | None) -> Intent:
    last = p._last_vote_intent
    name = None if target is None else p._names[target]
    if last is not None and last.target == name and last.at == at:
        return last
    last = p._last_vote_intent = vote_at(at, name)
    return last


def schedule_change(p: SeatState, target: int, t: datetime) -> None:
    lo, hi = p.timing.change_delay
    at = t + timedelta(0, lo + (hi - lo) * p._rng.random())
    if at > p._latest():
        return
    p._change_to = target
    p._change_at = at
    p._dirty = True


def maybe_bandwagon(p: SeatState, t: datetime) -> None:
    """Change the day vote once, onto a strong bandwagon (never a partner or a cleared)."""
    if p._voted == _NO_VOTE or p._changed or p._change_to is not None:
        return
    tally = p._tally_now
    if not tally:
        return
    # (bandwagon's first tests, without the call: no bandwagon yet)
    n = len(p._alive)
    if max(tally.values()) < (BANDWAGON_NEED[n] if n < 65 else bandwagon_need(n)):
        return
    leader = bandwagon(
        p._tally_now, p._voted, me=p.seat, alive=p._alive, partners=p._partners,
        banned=p._vote_banned, mafia=p._mafia, inspections=p._inspections,
    )  # fmt: skip
    if leader is None:
        return
    schedule_change(p, leader, t)


def maybe_follow_partner(p: SeatState, t: datetime, voter: int, target: int | None) -> None:
    """At night, a partner voted after me for someone else: go along once, so the kill is
    not a tie. A partner who voted well after my vote saw it and chose otherwise on
    purpose (a person, most likely: agents follow the first vote), so I follow them;
    two votes cast at almost the same moment are settled by seat, the higher seat follows."""
    if p._voted == _NO_VOTE or p._changed or p._change_to is not None:
        return
    if voter not in p._partners or target is None or target == p._voted:
        return
    if target not in p._others_set or target in p._partners:
        return
    if target in p._vote_banned:
        return
    mine = p._my_vote_t
    deliberate = mine is None or (t - mine).total_seconds() >= _DELIBERATE_S
    if deliberate or voter < p.seat:
        schedule_change(p, target, t)


def done_vote(p: SeatState, intent: Intent, target: int | None, error: str | None) -> None:
    if error is None:
        was_change = p._voted != _NO_VOTE
        p._voted = target
        p._vote_at = None
        topic = p._speak_topic
        if p._speak is not None and topic is not None and topic[0] == "vote_state":
            # a draft naming someone I did not vote for is written again
            p._restale = p._restale or topic[1] != target
        if was_change or (p._change_to is not None and p._change_to == target):
            p._changed = True
            p._change_to = None
            p._change_at = None
        return
    p._vote_errors += 1
    if target is not None:
        p._vote_banned.add(target)
    if p._change_to is not None:
        p._change_to = None  # a refused change of mind is dropped, not retried
        p._change_at = None
        p._changed = True
        return
    if p._vote_errors >= 3:
        p._vote_off = True
        return
    retry = intent.at + timedelta(0, 1.0 + (3.0 - 1.0) * p._rng.random())
    if retry > p._deadline:
        p._vote_off = True
    else:
        p._vote_at = retry
