"""The baseline's night action: when (in the act window), on whom (the detective inspects the
most suspicious uninspected player, the doctor protects a claimed detective, itself or a
trusted voice), and a retry on a refusal. Functions over the seat's
:class:`~agent.baseline.seat.SeatState`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from agent.base import Intent
from agent.baseline.seat import SeatState
from agent.baseline.targets import detective_target, protect_target
from games.roles import get_role

__all__ = ["act_target", "done_act", "plan_act"]


def plan_act(p: SeatState, now: datetime) -> Intent | None:
    if not p._night or p._acted:
        return None
    role = p._role
    if role is None or get_role(role).night_verb is None or p._act_errors >= 3:
        return None
    if p._uses_left == 0:
        return None
    if p._act_at is None:
        p._act_at = p._in_window(p.timing.act_window)
    target = act_target(p)
    if target is None:
        return None
    return Intent(p._act_at, "night_act", target=p._names[target])


def act_target(p: SeatState) -> int | None:
    """Whom tonight's action is aimed at (None: not tonight). The LLMafia roles keep their
    rules; the others act by their ability (:mod:`games.roles`)."""
    role = p._role
    if role == "detective":
        return detective_target(p._scores("suspicion"), p._inspections, p._act_banned)
    if role == "doctor":
        allowed = [s for s in sorted(p._alive) if s != p._last_protect and s not in p._act_banned]
        return protect_target(
            allowed, p.seat, p._ledger.claims, lambda: _protect_self(p),
            lambda: p._scores("suspicion"), p._ledger.talk,
        )  # fmt: skip
    assert role is not None
    ability = get_role(role).ability
    if ability in ("alert", "vest"):
        # a veteran or a survivor: on guard some nights, more often as the table shrinks
        chance = 0.3 if len(p._alive) > 6 else 0.6
        return p.seat if _coin(p, ("guard", p._seq), chance) else None
    score = p._scores("danger" if p._mafia else "suspicion")
    if p._mafia or get_role(role).faction == "neutral":
        return _hostile_target(p, ability, score)
    if ability in ("investigate", "investigate_role", "track"):
        return detective_target(score, p._inspections, p._act_banned)
    if ability == "kill":  # a vigilante: a found mafia, else the prime suspect from night 2
        found = [s for s, bad in p._inspections.items() if bad and s in p._alive]
        if found:
            return found[0]
        if p._day < 2 or not _coin(p, ("shoot", p._seq), 0.5):
            return None
        return detective_target(score, {}, p._act_banned)
    if ability == "block":  # an escort stops the prime suspect, not the same one twice running
        last = p._last_protect
        return detective_target(score, {}, p._act_banned | ({last} if last is not None else set()))
    # protect-like (bodyguard, watch, redirect): the most trusted, vocal other player
    allowed = [s for s in sorted(p._alive) if s != p.seat and s not in p._act_banned]
    return protect_target(
        allowed, p.seat, p._ledger.claims, lambda: False, lambda: score, p._ledger.talk
    )


def _hostile_target(p: SeatState, ability: str | None, danger: dict[int, float]) -> int | None:
    """A mafia role's own action, or a serial killer's: at the town's most dangerous."""
    cands = [s for s in danger if s not in p._act_banned]
    if not cands:
        return None
    if ability == "investigate_role":
        cands = [s for s in cands if s not in p._inspections] or cands
    if ability == "frame":  # the town's quietest: nobody will believe it was them
        return min(cands, key=danger.__getitem__)
    return max(cands, key=danger.__getitem__)


def _coin(p: SeatState, gate: tuple[object, ...], chance: float) -> bool:
    if gate not in p._gates:
        p._gates[gate] = p._rng.random() < chance
    return p._gates[gate]


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
        if p._uses_left > 0:
            p._uses_left -= 1
        return
    p._act_errors += 1
    if target is not None:
        p._act_banned.add(target)
    retry = intent.at + timedelta(0, 1.0 + (3.0 - 1.0) * p._rng.random())
    p._act_at = retry if retry <= p._deadline else None
    if p._act_at is None:
        p._act_errors = 3
