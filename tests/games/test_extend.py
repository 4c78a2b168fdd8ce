"""`Extend`: the platform's input was down, so the current phase gets that time back."""

from __future__ import annotations

from datetime import timedelta

import pytest

from games import Abort, GameConfig, PhaseKind, Tick, Vote, apply, new_game
from games.actions import Extend
from games.errors import RuleError
from games.events import PhaseExtended
from games.narration import manager_line
from tests.games.helpers import NAMES, T0, to_phase


def test_the_deadline_moves_later_and_votes_made_in_the_time_given_back_count() -> None:
    state, _ = new_game(GameConfig(), NAMES[:7], 0, T0)
    state = to_phase(state, PhaseKind.VOTE)
    old = state.phase.deadline
    assert old is not None
    state, events = apply(state, Extend(old - timedelta(seconds=5), 40.0))
    assert state.phase.deadline == old + timedelta(seconds=40)
    [extended] = events
    assert isinstance(extended, PhaseExtended) and extended.place == "stage"
    assert (extended.seq, extended.seconds, extended.deadline) == (
        state.phase.seq,
        40.0,
        state.phase.deadline,
    )
    assert "gets 40 seconds back" in (manager_line(extended) or "")
    state, events = apply(state, Tick(old))  # the old deadline ends nothing
    assert events == [] and state.phase.kind is PhaseKind.VOTE
    state, events = apply(state, Vote(0, 1, old + timedelta(seconds=10)))  # not "too late"
    assert events
    with pytest.raises(RuleError, match="Too late"):
        apply(state, Vote(0, 2, old + timedelta(seconds=40)))
    state, events = apply(state, Tick(old + timedelta(seconds=40)))
    assert state.phase.kind is not PhaseKind.VOTE


def test_nothing_to_extend_over_or_by_nothing() -> None:
    state, _ = new_game(GameConfig(), NAMES[:7], 0, T0)
    same, events = apply(state, Extend(T0, 0.0))
    assert same is state and events == []
    over, _ = apply(state, Abort(T0))
    same, events = apply(over, Extend(T0, 30.0))
    assert same is over and events == []
