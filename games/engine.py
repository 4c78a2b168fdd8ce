"""The rules of Mafia as pure functions: ``new_game`` and ``apply``.

No I/O, no clock reads: every action carries its time. Randomness comes only from
``random.Random`` seeded with the game's seed and a label, so replaying the same actions on
the same seed always gives the same game (that is how the service recovers after a crash).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import fields, replace
from datetime import datetime, timedelta

from games import build
from games.actions import Abort, Action, Extend, NightAct, Say, Tick, Vote
from games.config import GameConfig
from games.errors import ConfigError, RuleError
from games.events import (
    DRAW,
    Event,
    GameOver,
    GameStarted,
    InspectionResult,
    MessageAccepted,
    NightActionRecorded,
    NightResult,
    PhaseEnded,
    PhaseExtended,
    PhaseStarted,
    Place,
    PlayerEliminated,
    RoleAssigned,
    VoteResolved,
)
from games.evolve import evolve as _evolve
from games.names import NAME_TRIM, normalize_name
from games.neutrals import (
    assign_executions,
    orphaned_executioners,
    private_note,
    solo_wins,
)
from games.night import resolve as resolve_actions
from games.rng import rng_for
from games.roles import get_role
from games.state import GameState, Phase, PhaseKind, PriorPhase, SeatState
from games.text import one_line
from games.wins import lynch_wins, survivors
from games.wins import winner as decided

# In Python 3.11 ``PhaseKind.DAY`` read off the class costs several times a module global:
# the hot paths below use these aliases instead.
_DAY = PhaseKind.DAY
_VOTE = PhaseKind.VOTE
_NIGHT = PhaseKind.NIGHT
_NIGHT_VOTE = PhaseKind.NIGHT_VOTE
_OVER = PhaseKind.OVER

Result = tuple[GameState, list[Event]]


def _require_aware(t: datetime) -> None:
    if t.tzinfo is None:
        raise ValueError("engine times must be timezone-aware")


# --- setup ------------------------------------------------------------------------------------


def assign_roles(config: GameConfig, players: int, seed: int) -> list[str]:
    """Roles by seat: ``config.mafia_count`` mafia, the extra roles, bystanders for the rest
    (or exactly ``config.deal`` when the setup fixes it)."""
    if config.deal:
        return list(config.deal)
    order = list(range(players))
    rng_for(seed, "roles").shuffle(order)
    dealt = config.dealt_roles(players) if config.role_list or config.setup else None
    if dealt is not None:  # a setup: its roles, seat by shuffled seat
        roles = ["bystander"] * players
        for i, role in zip(order, dealt, strict=True):
            roles[i] = role
        return roles
    roles = ["bystander"] * players
    mafia = config.mafia_count(players)
    for i in order[:mafia]:
        roles[i] = "mafia"
    for i, role in zip(order[mafia : mafia + len(config.roles)], config.roles, strict=True):
        roles[i] = role
    return roles


def new_game(config: GameConfig, names: Sequence[str], seed: int, t: datetime) -> Result:
    """Seat ``names`` in order, deal roles and open day 1."""
    _require_aware(t)
    config.validate(len(names))
    cleaned = [n.strip() for n in names]
    if any(not n for n in cleaned):
        raise ConfigError("Every player needs a non-empty name.")
    lowered = [normalize_name(n) for n in cleaned]
    if len(set(lowered)) != len(lowered):
        raise ConfigError("Player names must be unique (ignoring case and spacing).")
    for i, n in enumerate(cleaned):
        # resolve_name(n) == i: the names' normal forms are unique (above), so the one name
        # ``n`` resolves to is the one whose normal form is what ``n`` reads as typed
        if normalize_name(n.strip().strip(NAME_TRIM)) != lowered[i]:
            raise ConfigError(f"The name {n!r} can't be typed back unambiguously; pick another.")
    roles = assign_roles(config, len(cleaned), seed)
    seats = tuple(SeatState(i, n, r) for i, (n, r) in enumerate(zip(cleaned, roles, strict=True)))
    phase = Phase(_DAY, 1, 1, t, t + timedelta(seconds=config.day_seconds))
    state = GameState(config=config, seed=seed, seats=seats, phase=phase)
    mafia_names = tuple(s.name for s in seats if s.is_mafia)
    dealt = config.dealt_roles(len(cleaned)) if config.role_list or config.setup else None
    extras = (
        tuple(config.roles)
        if dealt is None
        else tuple(sorted({r for r in dealt if r not in ("mafia", "bystander")}))
    )
    events: list[Event] = [
        GameStarted(t=t, players=tuple(cleaned), mafia_count=len(mafia_names), extra_roles=extras)
    ]
    for s in seats:
        partners = tuple(n for n in mafia_names if n != s.name) if s.is_mafia else ()
        events.append(
            RoleAssigned(
                t=t,
                place="booth",
                visible_to=frozenset({s.index}),
                seat=s.index,
                name=s.name,
                role=s.role,
                team=s.team,
                partners=partners,
            )
        )
    state, notes = assign_executions(state, t)
    events.extend(notes)
    events.append(_phase_started(state, talk_skipped=False))
    return state, events


# --- dispatch ---------------------------------------------------------------------------------


def apply(state: GameState, action: Action) -> Result:
    """Apply one action. Raises :class:`RuleError` (state unchanged) when it is not allowed."""
    if action.t.tzinfo is None:  # (_require_aware, inlined)
        _require_aware(action.t)
    if type(action) is Say and state.phase.kind is not _OVER:  # (the usual action, first)
        return _say(state, action)
    if isinstance(action, Tick):
        new, events = _tick(state, action)
    elif isinstance(action, Extend):
        new, events = _extend(state, action)
    elif state.phase.kind is _OVER:
        raise RuleError("The game is over.")
    elif isinstance(action, Say):
        new, events = _say(state, action)
    elif isinstance(action, Vote):
        new, events = _vote(state, action)
    elif isinstance(action, NightAct):
        new, events = _night_act(state, action)
    elif isinstance(action, Abort):
        new, events = _finish(state, action.t, None, action.reason or "ended", end_phase=True)
    else:  # pragma: no cover - exhaustive
        raise TypeError(action)
    return new, events


def _seat(state: GameState, index: int) -> SeatState:
    if not 0 <= index < len(state.seats):
        raise RuleError("There is no such player in this game.")
    return state.seats[index]


# --- speech -----------------------------------------------------------------------------------

_KEEP_CONTROL = {"\n", "\t"}


def clean_text(text: str) -> str:
    """Drop control characters (backspaces and the like) and surrounding white space."""
    if text.isascii() and text.isprintable():
        return text.strip()  # the common case, without a per-character walk
    kept = (
        ch
        for ch in text
        if ch in _KEEP_CONTROL or not unicodedata.category(ch).startswith("C") or ch == "\u200d"
    )
    return "".join(kept).strip()


def _say(state: GameState, action: Say) -> Result:
    seat = _seat(state, action.seat)
    prior = state.prior
    if prior is not None and action.t < prior.until:
        return _late_say(state, action, seat, prior)
    if not seat.alive:
        raise RuleError("You have been eliminated: the dead can watch but not speak.")
    raw = action.text
    if raw and raw.isascii() and raw.isprintable() and not raw[0].isspace():
        # (_checked_text's usual case: a printable line, no control character to clean)
        text = raw.rstrip() if raw[-1].isspace() else raw
        if len(text) > state.config.max_message_chars:
            text = _checked_text(state, raw)  # (raises, with the length and the limit)
    else:
        text = _checked_text(state, raw)
    phase = state.phase
    kind = phase.kind
    if kind is _NIGHT or kind is _NIGHT_VOTE:
        if not seat.is_mafia:
            raise RuleError("It's night: only the mafia can talk now. Wait for the day.")
        event = build.message(
            action.t, "den", state.alive_mafia(), seat.index, seat.name, text, phase.seq
        )
    else:
        event = build.message(action.t, "stage", None, seat.index, seat.name, text, phase.seq)
    return state, [event]


def _late_say(state: GameState, action: Say, seat: SeatState, prior: PriorPhase) -> Result:
    """A line made before the current phase was applied (a vote or the deadline ended the
    phase while the line was on its way): it is placed by the phase it was typed in. A den
    line stays in the den, a bystander's night line is refused, a day line goes to the stage
    (stamped and numbered as that day's)."""
    if action.t < prior.phase.started_at:
        raise RuleError("That line was typed too long ago to be placed; nothing was sent.")
    if seat.index not in prior.alive:
        raise RuleError("You have been eliminated: the dead can watch but not speak.")
    text = _checked_text(state, action.text)
    phase = prior.phase
    if phase.kind.is_night:
        if not seat.is_mafia:
            raise RuleError(
                "You typed that line at night, when only the mafia can talk; it was not sent."
            )
        den = frozenset(i for i in prior.alive if state.seats[i].is_mafia)
        return state, [_message(action.t, "den", den, seat, text, phase.seq)]
    return state, [_message(action.t, "stage", None, seat, text, phase.seq)]


def _checked_text(state: GameState, raw: str) -> str:
    text = clean_text(one_line(raw))
    if not text:
        raise RuleError("Your message is empty; nothing was sent.")
    limit = state.config.max_message_chars
    if len(text) > limit:
        raise RuleError(
            f"Your message is too long ({len(text)} characters; the limit is {limit}). "
            "Nothing was sent."
        )
    return text


_object_new = object.__new__
_object_setattr = object.__setattr__
#: GameState is a plain frozen dataclass: copied with one field changed on every vote
_FAST_STATE = not hasattr(GameState, "__slots__") and not hasattr(GameState, "__post_init__")


def _message(
    t: datetime,
    place: Place,
    visible_to: frozenset[int] | None,
    seat: SeatState,
    text: str,
    phase_seq: int,
) -> MessageAccepted:
    return build.message(t, place, visible_to, seat.index, seat.name, text, phase_seq)


# --- votes ------------------------------------------------------------------------------------


def _too_late(state: GameState, t: datetime) -> None:
    """A vote or night action stamped at or after the deadline is refused: the phase is over,
    even if the timer that ends it has not been applied yet. So is one made before the
    current phase was applied: it was meant for a phase that has ended (a day-vote click
    that arrives in the night must not become a kill vote)."""
    deadline = state.phase.deadline
    if (deadline is not None and t >= deadline) or t < state.opened_at():
        raise RuleError("Too late: time is up for this phase.")


def _vote(state: GameState, action: Vote) -> Result:
    seat = _seat(state, action.seat)
    kind = state.phase.kind
    _too_late(state, action.t)
    if not seat.alive:
        raise RuleError("You have been eliminated and can no longer vote.")
    if kind is _DAY:
        raise RuleError("Voting hasn't started yet: it opens when the discussion ends.")
    if kind is _NIGHT:
        if not seat.is_mafia:
            raise RuleError("There is no vote for you at night.")
        raise RuleError("The night vote hasn't started yet: it opens when the night talk ends.")
    night = kind is _NIGHT_VOTE
    if night and not seat.is_mafia:
        raise RuleError("There is no vote for you at night.")
    target_name: str | None = None
    if action.target is not None:
        target = _seat(state, action.target)
        if target.index == seat.index:
            raise RuleError("You can't vote for yourself.")
        if not target.alive:
            raise RuleError(f"{target.name} has already been eliminated; pick a living player.")
        if night and target.is_mafia:
            raise RuleError(f"{target.name} is one of the mafia; choose a bystander to kill.")
        target_name = target.name
    previous = state.votes.get(seat.index, _NO_VOTE)
    if previous == action.target:
        return state, []  # the same vote again changes nothing
    votes = dict(state.votes)
    votes[seat.index] = action.target
    new = _with_votes(state, votes)
    cast = build.vote_cast(
        action.t,
        "den" if night else "stage",
        state.alive_mafia() if night else None,
        seat.index,
        seat.name,
        action.target,
        target_name,
        previous is not _NO_VOTE,
        night,
        state.phase.seq,
    )
    events: list[Event] = [cast]
    if _vote_complete(new):
        new, more = _end_phase(new, action.t, "all_voted", action.applied)
        events.extend(more)
    return new, events


_NO_VOTE = -1


def _with_votes(state: GameState, votes: dict[int, int | None]) -> GameState:
    """``replace(state, votes=votes)`` without its per-field introspection (once a vote)."""
    if not _FAST_STATE:  # pragma: no cover - GameState changed shape
        return replace(state, votes=votes)
    new: GameState = _object_new(GameState)
    fields_ = state.__dict__.copy()
    fields_["votes"] = votes
    _object_setattr(new, "__dict__", fields_)
    return new


def _with_night_actions(state: GameState, actions: dict[int, int]) -> GameState:
    """``replace(state, night_actions=actions)``, as :func:`_with_votes`."""
    if not _FAST_STATE:  # pragma: no cover - GameState changed shape
        return replace(state, night_actions=actions)
    new: GameState = _object_new(GameState)
    fields_ = state.__dict__.copy()
    fields_["night_actions"] = actions
    _object_setattr(new, "__dict__", fields_)
    return new


def _vote_complete(state: GameState) -> bool:
    voters = state.eligible_voters()
    if not voters or not voters <= set(state.votes):
        return False
    if state.phase.kind is _NIGHT_VOTE:
        return state.night_actors() <= set(state.night_actions)
    return True


def _night_act(state: GameState, action: NightAct) -> Result:
    seat = _seat(state, action.seat)
    role = get_role(seat.role)
    if not seat.alive:
        raise RuleError("You have been eliminated and can no longer act.")
    if role.night_verb is None:
        raise RuleError("Your role has no night action.")
    if not state.can_act(seat.index):
        raise RuleError(f"You have used up your {role.night_verb} for this game.")
    _too_late(state, action.t)
    kind = state.phase.kind
    if kind is not _NIGHT and kind is not _NIGHT_VOTE:
        raise RuleError(f"You can only {role.night_verb} at night.")
    target = _seat(state, action.target)
    if not target.alive:
        raise RuleError(f"{target.name} has already been eliminated; pick a living player.")
    problem = role.check_target(seat.index, target.index, state.alive(), state.last_night_actions)
    if problem:
        raise RuleError(problem)
    actions = dict(state.night_actions)
    actions[seat.index] = target.index
    new = _with_night_actions(state, actions)
    events: list[Event] = [
        NightActionRecorded(
            t=action.t,
            place="booth",
            visible_to=frozenset({seat.index}),
            seat=seat.index,
            role=role.name,
            verb=role.night_verb,
            target=target.index,
            target_name=target.name,
        )
    ]
    if kind is _NIGHT_VOTE and _vote_complete(new):
        new, more = _end_phase(new, action.t, "all_voted", action.applied)
        events.extend(more)
    return new, events


# --- time -------------------------------------------------------------------------------------


def _tick(state: GameState, action: Tick) -> Result:
    deadline = state.phase.deadline
    if state.phase.kind is _OVER or deadline is None or action.t < deadline:
        return state, []
    applied = action.applied
    return _end_phase(state, action.t, "deadline", action.t if applied is None else applied)


def _extend(state: GameState, action: Extend) -> Result:
    """Move the current phase's deadline ``action.seconds`` later (never earlier)."""
    p = state.phase
    if p.kind is _OVER or p.deadline is None or action.seconds <= 0:
        return state, []
    deadline = p.deadline + timedelta(seconds=action.seconds)
    new = _evolve(state, phase=replace(p, deadline=deadline))
    event = PhaseExtended(
        t=action.t,
        phase=p.kind.value,
        number=p.number,
        seq=p.seq,
        deadline=deadline,
        seconds=action.seconds,
    )
    return new, [event]


def _opening(state: GameState, talk_skipped: bool) -> list[Event]:
    """A phase's start: the announcement, then what each seat that can act may do in it (the
    night actors once a night, at its first phase)."""
    events: list[Event] = [_phase_started(state, talk_skipped)]
    p = state.phase
    kind, t, seq = p.kind, p.started_at, p.seq
    if kind is _DAY:
        return events  # (nobody has a choice in a discussion)
    seats = state.seats
    if kind is _VOTE:  # (state.choices, for the day vote: every living seat, the others)
        alive = [s.index for s in seats if s.alive]
        names = [seats[i].name for i in alive]
        for k, voter in enumerate(alive):
            targets = (*alive[:k], *alive[k + 1 :])
            target_names = (*names[:k], *names[k + 1 :])
            events.append(build.choices_offered(t, voter, seq, "vote", targets, target_names, True))
        return events
    first_night_phase = kind is _NIGHT or (kind is _NIGHT_VOTE and talk_skipped)
    kill = kind is _NIGHT_VOTE
    for s in seats:
        # (state.choices is empty for the dead, and at night for a seat whose role has no
        # night action, unless it is the mafia's kill vote)
        if not s.alive or (get_role(s.role).night_verb is None and not (kill and s.is_mafia)):
            continue
        for verb, allowed, can_abstain in state.choices(s.index):
            if verb not in ("vote", "kill") and not first_night_phase:
                continue
            names_ = tuple(seats[i].name for i in allowed)
            events.append(
                build.choices_offered(t, s.index, seq, verb, tuple(allowed), names_, can_abstain)
            )
    return events


def _phase_started(state: GameState, talk_skipped: bool) -> PhaseStarted:
    p = state.phase
    deadline = p.deadline
    assert deadline is not None
    t = p.started_at
    seconds = (deadline - t).total_seconds()
    return build.phase_started(t, p.kind.value, p.number, p.seq, deadline, seconds, talk_skipped)


def _start(state: GameState, kind: PhaseKind, number: int, t: datetime) -> GameState:
    config = state.config
    if kind is _DAY:
        seconds = config.day_seconds
    elif kind is _VOTE:
        seconds = config.vote_seconds
    elif kind is _NIGHT:
        seconds = config.night_seconds
    elif kind is _NIGHT_VOTE:
        seconds = config.night_vote_seconds
    else:
        raise KeyError(kind)
    phase = Phase(kind, number, state.phase.seq + 1, t, t + timedelta(seconds=seconds))
    return _evolve(state, phase=phase, votes={})


def _end_phase(state: GameState, t: datetime, reason: str, until: datetime | None = None) -> Result:
    """End the current phase at ``t`` (``until``: when that was applied, if later)."""
    p = state.phase
    prior = PriorPhase(p, state.alive(), t if until is None or until < t else until)
    events: list[Event] = [build.phase_ended(t, p.kind.value, p.number, p.seq, reason)]
    if p.kind is _DAY:
        state = _start(state, _VOTE, p.number, t)
        events.extend(_opening(state, talk_skipped=False))
    elif p.kind is _NIGHT:
        state = _start(state, _NIGHT_VOTE, p.number, t)
        events.extend(_opening(state, talk_skipped=False))
    else:
        state, more = _resolve_day(state, t) if p.kind is _VOTE else _resolve_night(state, t)
        events.extend(more)
    return _evolve(state, prior=prior), events


def _tally(
    state: GameState, rule: str, label: str
) -> tuple[int | None, tuple[tuple[str, int], ...], tuple[str, ...], bool]:
    """Plurality of the cast votes. Returns (chosen, tally, tied names, broken randomly)."""
    counts = Counter(v for v in state.votes.values() if v is not None)
    if label == "day-tie" and any(state.vote_weight(v) != 1 for v in state.votes):
        counts = Counter()  # a mayor's vote counts twice
        for voter, v in state.votes.items():
            if v is not None:
                counts[v] += state.vote_weight(voter)
    tally = tuple(
        sorted(((state.seats[i].name, n) for i, n in counts.items()), key=lambda x: (-x[1], x[0]))
    )
    if not counts:
        return None, tally, (), False
    top = max(counts.values())
    leaders = sorted(i for i, n in counts.items() if n == top)
    if len(leaders) == 1:
        return leaders[0], tally, (), False
    tied = tuple(state.seats[i].name for i in leaders)
    if rule == "random":
        return rng_for(state.seed, f"{label}:{state.phase.seq}").choice(leaders), tally, tied, True
    return None, tally, tied, False


def _abstained(state: GameState) -> tuple[str, ...]:
    return tuple(
        state.seats[i].name
        for i in sorted(state.eligible_voters())
        if state.votes.get(i, None) is None
    )


def _eliminate(state: GameState, index: int) -> GameState:
    seats = list(state.seats)
    old = seats[index]
    # (replace(old, alive=False), without its per-field introspection)
    seats[index] = (
        SeatState(old.index, old.name, old.role, False)
        if _SEAT_FIELDS
        else replace(old, alive=False)
    )
    return _evolve(state, seats=tuple(seats))


_SEAT_FIELDS = [f.name for f in fields(SeatState)] == ["index", "name", "role", "alive"]


def _resolve_day(state: GameState, t: datetime) -> Result:
    chosen, tally, tied, randomly = _tally(state, state.config.tie_rule, "day-tie")
    events: list[Event] = [
        VoteResolved(
            t=t,
            night=False,
            tally=tally,
            abstained=_abstained(state),
            chosen=chosen,
            chosen_name=state.name_of(chosen),
            tied=tied,
            tie_broken_randomly=randomly,
        )
    ]
    state = _evolve(state, quiet_votes=0 if chosen is not None else state.quiet_votes + 1)
    if chosen is not None:
        victim = state.seats[chosen]
        state = _eliminate(state, chosen)
        role = "hidden" if get_role(victim.role).hidden_on_death else victim.role
        events.append(PlayerEliminated(t=t, seat=chosen, name=victim.name, role=role, cause="vote"))
        if state.executions or get_role(victim.role).win == "jester":
            state, more = solo_wins(state, t, lynch_wins(state, chosen))
            events.extend(more)
        result = decided(state)
        if result is not None:
            state, more = _finish(state, t, *result)
            return state, events + more
    number = state.phase.number
    single = len(state.alive_mafia()) == 1 and state.config.skip_night_talk_single_mafia
    kind = _NIGHT_VOTE if single else _NIGHT
    state = _evolve(_start(state, kind, number, t), night_actions={})
    events.extend(_opening(state, talk_skipped=single))
    return state, events


def _resolve_night(state: GameState, t: datetime) -> Result:
    mafia = state.alive_mafia()
    chosen, tally, tied, randomly = _tally(state, state.config.night_tie_rule, "night-tie")
    events: list[Event] = [
        VoteResolved(
            t=t,
            place="den",
            visible_to=mafia,
            night=True,
            tally=tally,
            abstained=_abstained(state),
            chosen=chosen,
            chosen_name=state.name_of(chosen),
            tied=tied,
            tie_broken_randomly=randomly,
        )
    ]
    voters = [v for v in sorted(mafia) if chosen is not None and state.votes.get(v) == chosen]
    out = resolve_actions(
        [s.role for s in state.seats], state.alive(), state.night_actions, chosen, voters
    )
    last_actions = dict(state.night_actions)
    changes: dict[str, object] = {"night_actions": {}, "last_night_actions": last_actions}
    if out.spent:
        used = dict(state.used)
        for seat, n in out.spent.items():
            used[seat] = used.get(seat, 0) + n
        changes["used"] = used
    changes["quiet_votes"] = 0 if out.deaths else state.quiet_votes + 1
    state = _evolve(state, **changes)
    for victim in out.deaths:
        state = _eliminate(state, victim)
    first = state.seats[out.deaths[0]] if out.deaths else None
    events.append(
        NightResult(
            t=t,
            victim=None if first is None else first.index,
            victim_name=None if first is None else first.name,
        )
    )
    for d in out.deaths:
        v = state.seats[d]
        role = "hidden" if d in out.hidden else v.role
        events.append(PlayerEliminated(t=t, seat=v.index, name=v.name, role=role, cause="night"))
    for actor, (target, is_mafia) in sorted(out.inspections.items()):
        if state.seats[actor].alive:
            events.append(
                InspectionResult(
                    t=t,
                    place="booth",
                    visible_to=frozenset({actor}),
                    seat=actor,
                    target=target,
                    target_name=state.seats[target].name,
                    is_mafia=is_mafia,
                )
            )
    for note in out.notes:
        if state.seats[note.seat].alive:
            target_name = state.name_of(note.target)
            names = tuple(state.seats[i].name for i in note.seats)
            args = (note.verb, note.target, target_name, note.result, note.seats, names)
            events.append(private_note(t, note.seat, *args))
    if state.executions and out.deaths:
        state, more = orphaned_executioners(state, t, set(out.deaths))
        events.extend(more)
    result = decided(state)
    if result is not None:
        state, more = _finish(state, t, *result)
        return state, events + more
    days = state.config.draw_after_quiet_days
    if state.quiet_votes >= 2 * days:
        state, more = _finish(state, t, None, draw_reason(days))
        return state, events + more
    state = _start(state, _DAY, state.phase.number + 1, t)
    events.extend(_opening(state, talk_skipped=False))
    return state, events


# --- the end ----------------------------------------------------------------------------------


def draw_reason(days: int) -> str:
    """The end reason of a game drawn by the quiet-days rule (it starts with "draw")."""
    return f"{DRAW}: nobody was voted out or killed for {days} days in a row"


def _finish(
    state: GameState, t: datetime, winner: str | None, reason: str, end_phase: bool = False
) -> Result:
    p = state.phase
    over = Phase(_OVER, p.number, p.seq + 1, t, None)
    new = _evolve(state, phase=over, winner=winner, end_reason=reason, votes={}, night_actions={})
    events: list[Event] = []
    if end_phase and p.kind is not _OVER:
        events.append(
            PhaseEnded(t=t, phase=p.kind.value, number=p.number, seq=p.seq, reason="game_over")
        )
    if winner is not None:
        lived = [(i, "the survivor is alive at the end") for i in survivors(state)]
        new, more = solo_wins(new, t, lived)
        events.extend(more)
    events.append(
        GameOver(
            t=t,
            winner=winner,
            reason=reason,
            roles=tuple((s.name, s.role) for s in state.seats),
        )
    )
    return new, events
