"""Whole games at maximum speed, in process, without sleeping or asyncio.

A discrete-event loop over :func:`games.engine.apply`: at every step it carries out the
earliest of the policies' planned intents, or ticks the clock to the phase deadline when
nothing is planned before it. Events reach a policy only when its seat may see them, exactly
as in a live game, so a policy that plays well here plays the same way through
:mod:`agent.driver`. Used for benchmarks, evaluations and tests.

Without a policy factory every seat is a :class:`~agent.baseline.BaselinePolicy`, run at one
:class:`~agent.baseline.BaselineTable` that records each event once for the whole table and
skips the seats an event cannot change: the same game, move for move, as separate baseline
policies through the generic path, several times faster.
"""

from __future__ import annotations

import gc
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime

from agent.base import Intent, Policy
from agent.baseline import BaselineTable
from games.actions import Action, NightAct, Say, Tick, Vote
from games.config import GameConfig
from games.engine import apply, new_game
from games.errors import RuleError
from games.events import Event, MessageAccepted, PhaseStarted, VoteCast
from games.names import pick_names, resolve_name
from games.state import GameState, PhaseKind

__all__ = ["FastResult", "PolicyFactory", "SimulationStuck", "simulate_fast"]

#: builds the policy for (seat, character name, seeded generator)
PolicyFactory = Callable[[int, str, random.Random], Policy]

#: game time of the first phase (any aware time would do; fixed for reproducible logs)
EPOCH = datetime(2025, 1, 1, tzinfo=UTC)

# in Python 3.11 reading an enum member off its class costs several global lookups
_OVER = PhaseKind.OVER


class SimulationStuck(AssertionError):
    """The policies kept acting without the game clock moving on (a livelock)."""


@dataclass(frozen=True)
class FastResult:
    #: "mafia" or "bystanders" (None only if the game was aborted)
    winner: str | None
    #: (character name, role) by seat
    seats: tuple[tuple[str, str], ...]
    #: phases started, day 1 included
    phases: int
    messages: int
    votes: int
    #: intents the engine refused
    refused: int
    #: game time the game took
    game_seconds: float
    #: every event in order, when asked for
    events: tuple[Event, ...] | None = None


def _seat_of(target: str, names: dict[int, str], seats: dict[str, int]) -> int:
    # a policy names a seat as the table spells it; anything else goes through the rules
    seat = seats.get(target)
    return seat if seat is not None else resolve_name(target, names)


_object_new = object.__new__
_object_setattr = object.__setattr__
#: Say is a plain frozen dataclass (fields in a __dict__): a line is built by filling that
#: __dict__, without __init__'s object.__setattr__ per field. Equal, same hash, still frozen.
_FAST_SAY = (
    not hasattr(Say, "__slots__")
    and not hasattr(Say, "__post_init__")
    and [f.name for f in fields(Say)] == ["seat", "text", "t"]
)
_FAST_VOTE = (
    not hasattr(Vote, "__slots__")
    and not hasattr(Vote, "__post_init__")
    and [f.name for f in fields(Vote)] == ["seat", "target", "t", "applied"]
)
_FAST_TICK = (
    not hasattr(Tick, "__slots__")
    and not hasattr(Tick, "__post_init__")
    and [f.name for f in fields(Tick)] == ["t", "applied"]
)


def _action(
    intent: Intent, seat: int, t: datetime, names: dict[int, str], seats: dict[str, int]
) -> Action:
    if intent.kind == "say":
        if _FAST_SAY:
            say: Say = _object_new(Say)
            _object_setattr(say, "__dict__", {"seat": seat, "text": intent.text or "", "t": t})
            return say
        return Say(seat, intent.text or "", t)  # pragma: no cover - Say changed shape
    if intent.kind == "vote":
        target = None if intent.target is None else _seat_of(intent.target, names, seats)
        if _FAST_VOTE:
            vote: Vote = _object_new(Vote)
            _object_setattr(
                vote, "__dict__", {"seat": seat, "target": target, "t": t, "applied": None}
            )
            return vote
        return Vote(seat, target, t)  # pragma: no cover - Vote changed shape
    return NightAct(seat, _seat_of(intent.target or "", names, seats), t)


def _tick(t: datetime) -> Tick:
    """``Tick(t)``, built as :func:`_action` builds a line."""
    if _FAST_TICK:
        tick: Tick = _object_new(Tick)
        _object_setattr(tick, "__dict__", {"t": t, "applied": None})
        return tick
    return Tick(t)  # pragma: no cover - Tick changed shape


def simulate_fast(
    config: GameConfig,
    players: int,
    seed: int,
    policy_factory: PolicyFactory | None = None,
    *,
    keep_events: bool = False,
    names: Sequence[str] | None = None,
    max_steps_per_instant: int | None = None,
) -> FastResult:
    """Play one whole game with one policy per seat, as fast as the CPU allows.

    The same ``seed`` gives the same game (names unless ``names`` are given, roles, the
    policies' generators, seeded ``f"{seed}:seat:{i}"``). Intents are
    taken in time order; intents at the same time in seat order, and before the deadline
    tick at that time. Raises :class:`SimulationStuck` when more than
    ``max_steps_per_instant`` actions happen without the game time advancing.
    """
    # A game makes many short-lived objects and little cyclic garbage: the cyclic collector
    # waits for the game's end (one collection then, not dozens along the way; about a tenth
    # of the time). Process-wide, so only when this call is the one that held it off.
    held = gc.isenabled()
    if held:
        gc.disable()
    try:
        return _play(
            config,
            players,
            seed,
            policy_factory,
            keep_events=keep_events,
            names=names,
            max_steps_per_instant=max_steps_per_instant,
        )
    finally:
        if held:
            gc.enable()


def _play(
    config: GameConfig,
    players: int,
    seed: int,
    policy_factory: PolicyFactory | None,
    *,
    keep_events: bool,
    names: Sequence[str] | None,
    max_steps_per_instant: int | None,
) -> FastResult:
    """:func:`simulate_fast`'s game."""
    if names is not None and len(names) != players:
        raise ValueError(f"{len(names)} names for {players} players")
    table = list(names) if names is not None else pick_names(players, random.Random(seed))
    state, first = new_game(config, table, seed, EPOCH)
    by_seat = {s.index: s.name for s in state.seats}
    seat_by_name = {name: seat for seat, name in by_seat.items()}
    seats = [(i, by_seat[i], random.Random(f"{seed}:seat:{i}")) for i in by_seat]
    count = len(seats)
    limit = max_steps_per_instant or 200 + 50 * count
    log: list[Event] = []
    counts = {MessageAccepted: 0, VoteCast: 0, PhaseStarted: 0}
    tell: Callable[[Event], None]
    pick: Callable[[datetime], tuple[Intent | None, int]]
    # a policy is asked again only after it was told something (plan must be stable)
    stale = [True] * count
    if policy_factory is None:
        # the default: baseline seats at one BaselineTable, which records each event once
        # for all of them and asks a seat again only when it says its plan may have changed
        # (the very same decisions as separate policies through observe/plan; ``stale`` is
        # then unused)
        baselines = BaselineTable()
        policies: list[Policy] = [baselines.seat(*args) for args in seats]
        tell = baselines.deliver
        pick = baselines.next_intent
    else:
        policies = [policy_factory(*args) for args in seats]
        planned: list[Intent | None] = [None] * count
        audiences: dict[frozenset[int] | None, tuple[int, ...]] = {None: tuple(range(count))}
        observers = [p.observe for p in policies]
        planners = [p.plan for p in policies]

        def tell(event: Event) -> None:
            seen = event.visible_to
            audience = audiences.get(seen)
            if audience is None:  # visible(event, seat) for every seat, computed once per set
                assert seen is not None
                audience = audiences[seen] = tuple(i for i in range(count) if i in seen)
            for i in audience:
                observers[i](event)
                stale[i] = True

        def pick(now: datetime) -> tuple[Intent | None, int]:
            best: Intent | None = None
            who = -1
            for i in range(count):
                if stale[i]:
                    planned[i] = planners[i](now)
                    stale[i] = False
                intent = planned[i]
                if intent is not None and (best is None or intent.at < best.at):
                    best, who = intent, i
            return best, who

    def deliver(events: list[Event]) -> None:
        for event in events:
            if keep_events:
                log.append(event)
            cls = type(event)
            if cls in counts:
                counts[cls] += 1
            tell(event)

    deliver(first)
    now = EPOCH
    same_instant = 0
    refused = 0
    while state.phase.kind is not _OVER:  # (state.over, without the slow enum lookup)
        best, who = pick(now)
        deadline = state.phase.deadline
        assert deadline is not None
        if best is not None and best.at <= deadline:
            t = best.at if best.at > now else now
            state, events, error = _try(state, best, who, t, by_seat, seat_by_name)
            if error is not None:
                refused += 1
            deliver(events)
            policies[who].done(best, error)
            stale[who] = True
        else:
            t = deadline if deadline > now else now
            state, events = apply(state, _tick(t))
            deliver(events)
        if t > now:
            now, same_instant = t, 0
        else:
            same_instant += 1
            if same_instant > limit:
                raise SimulationStuck(
                    f"{same_instant} actions at {now.isoformat()} without time moving on "
                    f"(seed {seed}, phase {state.phase.label}); last intent {best!r}"
                )
    return FastResult(
        winner=state.winner,
        seats=tuple((s.name, s.role) for s in state.seats),
        phases=counts[PhaseStarted],
        messages=counts[MessageAccepted],
        votes=counts[VoteCast],
        refused=refused,
        game_seconds=(now - EPOCH).total_seconds(),
        events=tuple(log) if keep_events else None,
    )


def _try(
    state: GameState,
    intent: Intent,
    seat: int,
    t: datetime,
    names: dict[int, str],
    seats: dict[str, int],
) -> tuple[GameState, list[Event], str | None]:
    try:
        new, events = apply(state, _action(intent, seat, t, names, seats))
    except RuleError as err:
        return state, [], str(err)
    return new, events, None
