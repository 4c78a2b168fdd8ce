"""Every game ends: days in a row in which nobody is voted out or killed end it in a draw
(issue 33, item 1). A game whose players never vote used to run forever."""

from __future__ import annotations

import pytest

from games import GameConfig, PhaseKind
from games.engine import draw_reason
from games.errors import ConfigError
from games.events import Event, GameOver, PlayerEliminated, is_draw
from games.narration import manager_line
from tests.games.helpers import cast, end_phase, make_game, of_type, one, to_phase


def silent_until_over(spec: str, config: GameConfig, limit: int = 1000) -> list[Event]:
    """Play ``spec`` with nobody ever voting (every phase runs out); all events after day 1's
    start."""
    state = make_game(spec, config)
    events: list[Event] = []
    for _ in range(limit):
        if state.over:
            return events
        state, more = end_phase(state)
        events.extend(more)
    raise AssertionError(f"still {state.phase.kind} {state.phase.number} after {limit} phases")


def test_a_game_in_which_nobody_ever_votes_ends_in_a_draw() -> None:
    events = silent_until_over("M B B B B", GameConfig())
    over = one(events, GameOver)
    assert over.winner is None and over.reason == draw_reason(3)
    assert is_draw(over.winner, over.reason)
    assert not of_type(events, PlayerEliminated)
    # three whole days and nights were played (days 2 and 3 started after day 1), not one more
    days = [e for e in events if getattr(e, "phase", None) == "day" and e.kind == "phase_started"]
    assert len(days) == 2
    nights = [e for e in events if e.kind == "phase_ended" and getattr(e, "phase", "") != "day"]
    assert len([e for e in nights if getattr(e, "phase", "") == "night_vote"]) == 3
    line = manager_line(over)
    assert line is not None and line.startswith("The game ends in a draw")
    assert "Roles:" in line


@pytest.mark.parametrize("days", [1, 2, 5])
def test_the_number_of_quiet_days_is_the_configs(days: int) -> None:
    events = silent_until_over("M M B B B B B", GameConfig(draw_after_quiet_days=days))
    started = [e for e in events if e.kind == "phase_started" and getattr(e, "phase", "") == "day"]
    assert len(started) == days - 1  # after day 1
    assert one(events, GameOver).reason == draw_reason(days)


def test_an_elimination_starts_the_count_again() -> None:
    config = GameConfig(draw_after_quiet_days=2)
    state = make_game("M M B B B B B", config)
    state, _ = end_phase(state)  # day 1 talk
    state, _ = end_phase(state)  # day 1 vote: nobody
    state = to_phase(state, PhaseKind.NIGHT_VOTE)
    state, events = cast(state, {0: 2, 1: 2})  # night 1: the mafia kill Casey
    assert one(events, PlayerEliminated).name == "Casey"
    for _ in range(6):  # day 2 and night 2, day 3 quiet: still playing
        state, _ = end_phase(state)
    assert not state.over and state.phase.kind is PhaseKind.NIGHT and state.phase.number == 3
    state, _ = end_phase(state)
    state, events = end_phase(state)  # night 3 quiet: two quiet days since the kill
    assert state.over and one(events, GameOver).reason == draw_reason(2)


def test_stopped_is_not_a_draw() -> None:
    assert not is_draw(None, "ended")
    assert not is_draw("mafia", draw_reason(3))


@pytest.mark.parametrize("days", [0, -1, 101])
def test_impossible_quiet_days_are_refused(days: int) -> None:
    with pytest.raises(ConfigError, match="draw after quiet days"):
        GameConfig(draw_after_quiet_days=days).validate(5)
