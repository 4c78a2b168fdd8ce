"""The neutrals' bookkeeping for the engine: executioners' targets, solo wins, private notes.

Split from :mod:`games.engine` (same rules, same purity): functions of the state and a time.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from games.events import Event, PrivateNote, SoloWin
from games.evolve import evolve as _evolve
from games.rng import rng_for
from games.roles import get_role
from games.state import GameState

Result = tuple[GameState, list[Event]]


def assign_executions(state: GameState, t: datetime) -> Result:
    """Give every executioner a target: a bystanders' seat, by seed, told privately."""
    exes = [s.index for s in state.seats if get_role(s.role).win == "executioner"]
    if not exes:
        return state, []
    town = [s.index for s in state.seats if get_role(s.role).faction == "town"]
    rng = rng_for(state.seed, "executioner")
    targets = {exe: rng.choice(town) for exe in exes}
    events: list[Event] = [
        private_note(t, exe, "target", target, state.seats[target].name, "target")
        for exe, target in targets.items()
    ]
    return _evolve(state, executions=targets), events


def private_note(
    t: datetime,
    seat: int,
    verb: str,
    target: int | None,
    target_name: str | None,
    result: str,
    seats: tuple[int, ...] = (),
    names: tuple[str, ...] = (),
) -> PrivateNote:
    return PrivateNote(
        t=t,
        visible_to=frozenset({seat}),
        seat=seat,
        verb=verb,
        target=target,
        target_name=target_name,
        result=result,
        seats=seats,
        names=names,
    )


def solo_wins(state: GameState, t: datetime, wins: list[tuple[int, str]]) -> Result:
    events: list[Event] = []
    for seat, reason in wins:
        s = state.seats[seat]
        events.append(SoloWin(t=t, seat=seat, name=s.name, role=s.role, reason=reason))
    won = state.solo_won | {seat for seat, _ in wins}
    return (_evolve(state, solo_won=won) if wins else state), events


def orphaned_executioners(state: GameState, t: datetime, died: set[int]) -> Result:
    """An executioner whose target died at night becomes a jester (Town of Salem)."""
    events: list[Event] = []
    executions = dict(state.executions)
    seats = list(state.seats)
    for exe, target in sorted(state.executions.items()):
        if target in died and seats[exe].alive and exe not in state.solo_won:
            del executions[exe]
            seats[exe] = replace(seats[exe], role="jester")
            events.append(private_note(t, exe, "became", target, seats[target].name, "jester"))
    return _evolve(state, executions=executions, seats=tuple(seats)), events
