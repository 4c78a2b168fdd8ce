"""Moments and grace: when an action counts as made, in game time.

A platform says when a person typed a line or clicked (``at``); an agent acts in-process, at
the moment it calls. The service trusts that moment within bounds (`action_moment`) and the
engine judges the action against the phase current then. A phase stays open a short grace
after its deadline (`grace`) so that votes still on their way are applied first. The functions
here only read and note moments on the `LiveGame`; nothing here writes or waits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from bot.service.live import LiveGame
from bot.store import models as m
from games import actions as A
from games.actions import Action
from games.state import GameState

#: How long a phase stays open after its deadline, in real seconds: votes made before the
#: deadline that are still on their way (a Discord interaction, a Slack request, a line read
#: from the terminal) are applied first, and the close is stamped at the deadline. Also how
#: long before the current phase was applied a platform's moment is still believed.
DEADLINE_GRACE_SECONDS = 1.5
#: ... at most this share of the game's shortest phase (accelerated clocks, short phases)
DEADLINE_GRACE_SHARE = 0.1


def grace(game: LiveGame) -> timedelta:
    """The grace of :data:`DEADLINE_GRACE_SECONDS` in game time. None in a game of agents
    only: they act in-process, nothing of theirs is ever on its way."""
    if all(s.is_agent for s in game.seats):
        return timedelta(0)
    c = game.config
    shortest = min(c.day_seconds, c.vote_seconds, c.night_seconds, c.night_vote_seconds)
    seconds = min(DEADLINE_GRACE_SECONDS * game.clock.speed, shortest * DEADLINE_GRACE_SHARE)
    return timedelta(seconds=seconds)


#: the smallest step between two stamps
_INSTANT = timedelta(microseconds=1)


def action_moment(
    game: LiveGame,
    state: GameState,
    received: datetime,
    at: datetime | None,
    source: tuple[int, str] | None,
    seen: int | None = None,
) -> datetime:
    """The game-time stamp of an action the service received at ``received`` (game time,
    read before waiting for the game's lock, when the phase numbered ``seen`` was current).

    The moment is ``at`` (the platform's wall-clock moment, in game time), or ``received``
    without one (an agent, in-process: the moment it called), trusted within bounds: never in
    the future, never more than :func:`grace` before the current phase was applied, and one
    made before then stays before then, in the phase before (one made before the phase
    before began is left to the engine, which refuses it), never before the
    same seat's previous action on the same channel (``source``: (seat, "line") or (seat,
    "click")) unless that would carry it over a phase change. A platform delivers a
    person's lines in the order they were typed, and their clicks in the order they were
    made, but a click can overtake a line typed just before it: that line keeps its earlier
    moment. The engine then judges the action against the phase current at that moment: an
    agent's action made while the phase change was being stored (it still saw the phase
    before) is stamped just before that change, and so belongs to the phase before."""
    if at is not None and at.tzinfo is None:
        raise ValueError("at must be timezone-aware")
    made = received if at is None else min(received, game.clock.from_wall(at))
    prior = state.prior
    if at is None and prior is not None:  # an agent acted in the phase it saw
        if seen == prior.phase.seq and made >= prior.until:
            made = prior.until - _INSTANT
        elif seen == state.phase.seq and made < prior.until:
            made = prior.until
    if prior is None:
        made = max(made, state.phase.started_at)
    elif made >= prior.phase.started_at:
        opened = state.opened_at()
        if made < opened:  # lifted at most to the grace, never into the current phase
            made = min(max(made, opened - grace(game)), opened - _INSTANT)
        if at is not None and made == prior.until and prior.phase.kind.is_night:
            # a platform's moment (to the millisecond) in the very instant of the dawn: which
            # came first is unknowable, and a night line must never reach the stage
            made -= _INSTANT
    # else: made before the phase before began: which phase that was is not known any more,
    # and the engine refuses it (a line, with a note to its writer) rather than misplace it
    previous = game.seat_t.get(source) if source is not None else None
    if previous is None or made >= previous:
        return made
    if prior is not None and made <= prior.until < previous:
        return made  # never lifted across a phase change: a night line stays a night line
    return previous


def stamp(
    game: LiveGame,
    state: GameState,
    make: Callable[[datetime], Action],
    received: datetime,
    at: datetime | None,
    source: tuple[int, str] | None,
    seen: int | None,
) -> Action:
    """The action ``make`` builds, stamped (`action_moment`); a vote or night action no
    earlier than what is already applied (`after_applied`), and one that can end the phase
    noting when it is applied (`applied_now`)."""
    action = make(action_moment(game, state, received, at, source, seen))
    if isinstance(action, A.Vote | A.NightAct):
        action = after_applied(action, state, game.last_t)
    if isinstance(action, A.Vote | A.NightAct | A.Tick):
        action = applied_now(action, game.clock.now())
    return action


def after_applied(action: A.Vote | A.NightAct, state: GameState, last: datetime | None) -> Action:
    """A vote made in the current phase is stamped no earlier than what is already applied,
    while that stays before the deadline: a phase its vote completes then never starts before
    a line already placed in it (the shift is the time the vote was on its way)."""
    deadline = state.phase.deadline
    t = action.t
    if last is None or t >= last or t <= state.opened_at():  # (the engine judges those)
        return action
    if deadline is not None and last >= deadline:
        return action
    return dataclasses.replace(action, t=last)


def applied_now(action: A.Vote | A.NightAct | A.Tick, now: datetime) -> Action:
    """Note on an action that can end the phase when it is applied, if later than its stamp.
    A phase is current, for what people type, until its end has been applied: a line typed
    while the last vote was on its way (or the deadline's close was pending) was typed in
    that phase, and is placed there (`games.state.PriorPhase.until`)."""
    applied = max(now, action.t, action.applied or action.t)
    return action if applied == action.t else dataclasses.replace(action, applied=applied)


def latest_moment(last_event: datetime | None, actions: Sequence[m.Action]) -> datetime | None:
    """The last recorded moment of a game: its last event, or later when the last close or
    vote was applied after its stamp (a resumed clock must not start before that, or the
    first vote after the restart would be judged to precede the phase it is in)."""
    latest = last_event
    for row in actions[-3:]:  # (the last few: only a phase change carries 'applied')
        raw = row.payload.get("applied")
        if raw:
            applied = datetime.fromisoformat(raw)
            latest = applied if latest is None or applied > latest else latest
    return latest


def note_applied(game: LiveGame, action: Action, platform_id: str | None) -> None:
    """Remember what bounds the next stamps, and the platform id (see :func:`action_moment`)."""
    t = action.t
    applied = action.applied if isinstance(action, A.Vote | A.NightAct | A.Tick) else None
    latest = t if applied is None or applied < t else applied
    if game.last_t is None or latest > game.last_t:
        game.last_t = latest
    seat = getattr(action, "seat", None)
    if seat is not None:
        source = (seat, "line" if isinstance(action, A.Say) else "click")
        previous = game.seat_t.get(source)
        if previous is None or t > previous:
            game.seat_t[source] = t
    if platform_id:
        game.client_ids.add(platform_id)
