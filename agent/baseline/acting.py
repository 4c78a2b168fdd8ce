"""The baseline's night action: when (in the act window), on whom (the detective inspects the
most suspicious uninspected player, the doctor protects a claimed detective, itself or a
trusted voice), and a retry on a refusal. Functions over the seat's
:class:`~agent.baseline.seat.SeatState`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from agent.base import Intent
from agent.baseline.seat import SeatState
from games.roles import get_role

__all__ = ["act_target", "done_act", "plan_act", "protect_target"]


def plan_act(p: SeatState, now: datetime) -> Intent | None:
    if not p._night or p._acted:
        return None
    role = p._role
    if role is None or get_role(role).night_verb is None or p._act_errors >= 3:
        return None
    if p._act_at is None:
        p._act_at = p._in_window(p.timing.act_window)
    target = act_target(p)
    if target is None:
        return None
    return Intent(p._act_at, "night_act", target=p._names[target])


def act_target(p: SeatState) -> int | None:
    if p._role == "detective":
        score = p._scores("suspicion")
        cands = [s for s in score if s not in p._inspections and s not in p._act_banned]
        if not cands:
            cands = [s for s in score if s not in p._act_banned]
        return max(cands, key=lambda s: score[s]) if cands else None
    if p._role == "doctor":
        return protect_target(p)
    # an unknown town role with a night action: act on the least suspicious player
    score = p._scores("suspicion")
    cands = [s for s in score if s not in p._act_banned]
    return min(cands, key=lambda s: score[s]) if cands else None


def protect_target(p: SeatState) -> int | None:
    allowed = [s for s in sorted(p._alive) if s != p._last_protect and s not in p._act_banned]
    if not allowed:
        return None
    for claimer, (_target, kind) in p._ledger.claims.items():
        if kind == "mafia" and claimer in allowed and claimer != p.seat:
            return claimer  # a claimed detective is the next kill
    gate = ("protect-p", p._seq)
    if gate not in p._gates:
        p._gates[gate] = p._rng.random() < 0.45
    if p.seat in allowed and p._gates[gate]:
        return p.seat
    score = p._scores("suspicion")
    others = [s for s in allowed if s != p.seat]
    if not others:
        return p.seat if p.seat in allowed else None
    # most valuable: trusted and vocal (the mafia kill whoever leads the town)
    talk = p._ledger.talk
    return min(others, key=lambda s: score.get(s, 0.0) - 0.1 * talk.get(s, 0))


def done_act(p: SeatState, intent: Intent, target: int | None, error: str | None) -> None:
    if error is None:
        p._acted = True
        p._night_act_target = target
        return
    p._act_errors += 1
    if target is not None:
        p._act_banned.add(target)
    retry = intent.at + timedelta(0, 1.0 + (3.0 - 1.0) * p._rng.random())
    p._act_at = retry if retry <= p._deadline else None
    if p._act_at is None:
        p._act_errors = 3
