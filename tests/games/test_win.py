"""Win checks after every elimination, day and night, including the exact parity boundary."""

from __future__ import annotations

import pytest

from games import GameConfig, NightAct, PhaseKind, apply
from games.events import GameOver, PhaseStarted, PlayerEliminated
from games.narration import manager_line
from tests.games.helpers import at, cast, end_phase, make_game, of_type, one, to_phase

# (table, when, who is eliminated, winner or None when play goes on)
CASES: list[tuple[str, PhaseKind, int, str | None]] = [
    # day eliminations
    ("M B B B B", PhaseKind.VOTE, 0, "bystanders"),
    ("M B B B B", PhaseKind.VOTE, 1, None),  # 1 mafia vs 3
    ("M xM B B B", PhaseKind.VOTE, 0, "bystanders"),  # the last of two mafia
    ("M M B B B B B", PhaseKind.VOTE, 0, None),  # 1 mafia vs 5
    ("M M B B B B B", PhaseKind.VOTE, 2, None),  # 2 vs 4
    ("M M xB xB B B B", PhaseKind.VOTE, 4, "mafia"),  # 2 vs 3 -> 2 vs 2: parity
    ("M M xB xB B B B", PhaseKind.VOTE, 1, None),  # 2 vs 3 -> 1 vs 3
    ("M M xB B B B B", PhaseKind.VOTE, 4, None),  # 2 vs 4 -> 2 vs 3
    ("M xB xB B B", PhaseKind.VOTE, 3, "mafia"),  # 1 vs 2 -> 1 vs 1
    ("M M M xB B B B B B", PhaseKind.VOTE, 4, None),  # 3 vs 5 -> 3 vs 4
    ("M M M xB xB xB B B B B B", PhaseKind.VOTE, 0, None),  # 3 vs 5 -> 2 vs 5
    ("M M M xB xB xB xB B B B B", PhaseKind.VOTE, 7, "mafia"),  # 3 vs 4 -> 3 vs 3
    ("M M M xB xB xB xB B B B B", PhaseKind.VOTE, 0, None),  # 3 vs 4 -> 2 vs 4
    ("M M xB xB B B Det", PhaseKind.VOTE, 6, "mafia"),  # town roles count as "others"
    # night kills (the mafia can only gain at night)
    ("M B B B B", PhaseKind.NIGHT_VOTE, 1, None),  # 1 vs 3
    ("M xB xB B B", PhaseKind.NIGHT_VOTE, 3, "mafia"),  # 1 vs 2 -> 1 vs 1
    ("M M xB xB B B B", PhaseKind.NIGHT_VOTE, 4, "mafia"),  # 2 vs 3 -> 2 vs 2
    ("M M xB B B B B", PhaseKind.NIGHT_VOTE, 4, None),  # 2 vs 4 -> 2 vs 3
    ("M M xB xB B B Doc", PhaseKind.NIGHT_VOTE, 6, "mafia"),
]


@pytest.mark.parametrize(("spec", "when", "victim", "winner"), CASES)
def test_win_check_after_each_elimination(
    spec: str, when: PhaseKind, victim: int, winner: str | None
) -> None:
    state = to_phase(make_game(spec), when)
    voters = state.eligible_voters()
    if when is PhaseKind.VOTE:
        other = min(voters - {victim})
        ballots = {v: (victim if v != victim else other) for v in sorted(voters)}
    else:
        ballots = dict.fromkeys(sorted(voters), victim)
    state, events = cast(state, ballots)
    if not state.over and state.phase.kind is when:
        state, more = end_phase(state)
        events += more
    gone = one(events, PlayerEliminated)
    assert gone.seat == victim and gone.role == state.seats[victim].role
    assert gone.cause == ("vote" if when is PhaseKind.VOTE else "night")
    assert not state.seats[victim].alive
    mafia = len(state.alive_mafia())
    others = len(state.alive()) - mafia
    if winner is None:
        assert not state.over and state.winner is None
        assert of_type(events, GameOver) == []
        assert 0 < mafia < others
        next_phases = ("night", "night_vote") if when is PhaseKind.VOTE else ("day",)
        assert one(events, PhaseStarted).phase in next_phases
    else:
        assert state.over and state.winner == winner
        over = one(events, GameOver)
        assert over.winner == winner and over.visible_to is None
        assert over.roles == tuple((s.name, s.role) for s in state.seats)
        assert of_type(events, PhaseStarted) == []
        assert (mafia == 0) if winner == "bystanders" else (mafia >= others)
        assert (manager_line(over) or "").startswith(
            "Bystanders win!" if winner == "bystanders" else "Mafia wins!"
        )
        assert state.phase.deadline is None and state.end_reason


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("M B B B B", "no mafia are left"),
        ("M xB xB B B", "the mafia are at least as many as the rest"),
    ],
)
def test_end_reason(spec: str, reason: str) -> None:
    state = to_phase(make_game(spec), PhaseKind.VOTE)
    victim = 0 if spec == "M B B B B" else 3
    state, _ = cast(state, {v: victim if v != victim else 4 for v in sorted(state.alive())})
    assert state.end_reason == reason


def test_doctor_save_at_the_boundary_keeps_the_game_going() -> None:
    state = to_phase(make_game("M M xB xB B B Doc"), PhaseKind.NIGHT)
    state, _ = apply(state, NightAct(6, 4, at(state)))
    state, _ = end_phase(state)
    state, events = cast(state, {0: 4, 1: 4})
    assert not state.over and state.phase.kind is PhaseKind.DAY
    assert of_type(events, PlayerEliminated) == []


def test_no_elimination_means_no_win_check_surprise() -> None:
    """A day with no elimination at parity-minus-one goes on to the night."""
    state = to_phase(make_game("M M xB xB B B B", GameConfig()), PhaseKind.VOTE)
    state, _ = end_phase(state)
    assert state.phase.kind is PhaseKind.NIGHT and not state.over
