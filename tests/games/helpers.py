"""Builders for the rule tests: games with chosen roles, and short ways to drive phases.

Roles are dealt by seed, so a test that needs a particular table builds it with
:func:`make_game`. It starts a real game with :func:`games.new_game` (so the config is validated
and day 1 opens exactly as in play), then swaps the dealt roles for the wanted ones with
``dataclasses.replace`` on the returned seats; a seat written ``xB`` starts dead, which stands
for "eliminated earlier" and lets a test start right at a boundary (e.g. 2 mafia vs 2 others).
The events of that ``new_game`` call describe the dealt roles, so they are dropped.
Tests that need the real setup events use ``new_game`` directly and read the roles from the
returned state instead.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import pytest

from games import Action, GameConfig, GameState, PhaseKind, RuleError, Tick, Vote, apply, new_game
from games.config import MAX_QUIET_DAYS
from games.events import Event

T0 = datetime(2024, 5, 1, 20, 0, tzinfo=UTC)
NAMES = (
    "Ari", "Blake", "Casey", "Drew", "Eden", "Finley",
    "Gray", "Harley", "Jamie", "Kai", "Logan", "Morgan",
)  # fmt: skip

#: short role codes used in the tables: "M B B Det Doc", prefix "x" for a dead seat
ROLE_CODES = {"M": "mafia", "B": "bystander", "Det": "detective", "Doc": "doctor"}

E = TypeVar("E", bound=Event)


def parse_table(spec: str) -> list[tuple[str, bool]]:
    """'M xB Det' -> [("mafia", True), ("bystander", False), ("detective", True)]."""
    out = []
    for token in spec.split():
        dead = token.startswith("x")
        out.append((ROLE_CODES[token[1:] if dead else token], not dead))
    return out


def make_game(
    spec: str, config: GameConfig | None = None, *, seed: int = 0, t: datetime = T0
) -> GameState:
    """A day-1 game whose seat ``i`` is ``NAMES[i]`` with the role from ``spec``.

    The config's mafia count and extra roles are set from the table, so ``new_game`` validates
    the same setup that is then installed; everything else comes from ``config``.
    """
    table = parse_table(spec)
    roles = [r for r, _ in table]
    extras = tuple(r for r in roles if r not in ("mafia", "bystander"))
    # (without a config, quiet days do not end the game: tests tick through many nights)
    base = config or GameConfig(draw_after_quiet_days=MAX_QUIET_DAYS)
    cfg = replace(base, mafia=roles.count("mafia"), roles=extras)
    state, _ = new_game(cfg, NAMES[: len(table)], seed, t)
    seats = tuple(
        replace(s, role=role, alive=alive)
        for s, (role, alive) in zip(state.seats, table, strict=True)
    )
    return replace(state, seats=seats)


def at(state: GameState, seconds: float = 1.0) -> datetime:
    """A moment ``seconds`` into the current phase."""
    return state.phase.started_at + timedelta(seconds=seconds)


def run(state: GameState, actions: Iterable[Action]) -> tuple[GameState, list[Event]]:
    """Apply ``actions`` in order; all events, in order."""
    events: list[Event] = []
    for action in actions:
        state, more = apply(state, action)
        events.extend(more)
    return state, events


def end_phase(state: GameState) -> tuple[GameState, list[Event]]:
    """Let the clock reach the current deadline."""
    assert state.phase.deadline is not None
    return apply(state, Tick(state.phase.deadline))


def to_phase(state: GameState, kind: PhaseKind, number: int | None = None) -> GameState:
    """Tick through deadlines (nobody acts, so nobody dies) until ``kind`` (and ``number``)."""
    for _ in range(20):
        if state.phase.kind is kind and (number is None or state.phase.number == number):
            return state
        state, _ = end_phase(state)
    raise AssertionError(f"never reached {kind} {number}")


def cast(
    state: GameState, ballots: Mapping[int, int | None], seconds: float = 1.0
) -> tuple[GameState, list[Event]]:
    """Every ``voter: target`` in ``ballots`` votes, in order, ``seconds`` into the phase."""
    t = at(state, seconds)
    return run(state, (Vote(v, target, t) for v, target in ballots.items()))


def of_type(events: Iterable[Event], cls: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, cls)]


def one(events: Iterable[Event], cls: type[E]) -> E:
    found = of_type(events, cls)
    assert len(found) == 1, f"expected one {cls.__name__}, got {found}"
    return found[0]


def assert_rejected(state: GameState, action: Action, match: str) -> RuleError:
    """``action`` raises RuleError matching ``match`` and leaves ``state`` exactly as it was."""
    before = copy.deepcopy(state)
    with pytest.raises(RuleError, match=match) as info:
        apply(state, action)
    assert state == before
    return info.value
