"""The baseline's night action: when (in the act window), on whom (the detective inspects the
most suspicious uninspected player, the doctor protects a claimed detective, itself or a
trusted voice), and a retry on a refusal. Functions over the seat's
:class:`~agent.baseline.seat.SeatState`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from agent.base import Intent
from agent.baseline.seat import SeatState
from agent.baseline.targets import detective_target, protect_target, quiet_target
from games.roles import get_role

__all__ = ["act_target", "done_act", "plan_act"]


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
        return detective_target(p._scores("suspicion"), p._inspections, p._act_banned)
    if p._role == "doctor":
        allowed = [s for s in sorted(p._alive) if s != p._last_protect and s not in p._act_banned]
        return protect_target(
            allowed, p.seat, p._ledger.claims, lambda: _protect_self(p),
            lambda: p._scores("suspicion"), p._ledger.talk,
        )  # fmt: skip
    # an unknown town role with a night action: act on the least suspicious player
    return quiet_target(p._scores("suspicion"), p._act_banned)


def _protect_self(p: SeatState) -> bool:
    """Whether the doctor saves itself tonight (a coin drawn once a night)."""
    gate = ("protect-self", p._seq)
    if gate not in p._gates:
        p._gates[gate] = p._rng.random() < 0.45
    return p._gates[gate]


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
