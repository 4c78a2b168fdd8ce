"""What the terminal tells a player they can do when a phase starts (the menus' counterpart)."""

from __future__ import annotations

from bot.local.terminal import cue
from games import PhaseKind, apply
from tests.games.helpers import NAMES, at, make_game, to_phase

TABLE = "M M Det Doc B B B"  # Ari, Blake mafia; Casey detective; Drew doctor; Eden.. bystanders


def test_day_vote_lists_everyone_else_alive_and_abstain() -> None:
    state = to_phase(make_game(TABLE), PhaseKind.VOTE)
    line = cue(state, 4, state.phase.seq)
    assert line is not None and "/abstain" in line
    assert f"one of {', '.join(n for n in NAMES[:7] if n != 'Eden')})" in line
    assert cue(to_phase(make_game(TABLE), PhaseKind.DAY), 4, 1) is None  # nothing to do yet


def test_the_kill_is_offered_to_the_mafia_only_and_names_only_bystanders() -> None:
    state = to_phase(make_game(TABLE), PhaseKind.NIGHT_VOTE)
    line = cue(state, 0, state.phase.seq)
    assert line == "Tonight's kill: /vote NAME (one of Casey, Drew, Eden, Finley, Gray)."
    assert cue(state, 4, state.phase.seq) is None  # a bystander sleeps


def test_detective_and_doctor_are_told_their_night_action() -> None:
    state = to_phase(make_game(TABLE), PhaseKind.NIGHT)
    assert cue(state, 2, state.phase.seq) == "Tonight you may investigate someone: /act NAME."
    assert cue(state, 3, state.phase.seq) == "Tonight you may protect someone: /act NAME."
    assert cue(state, 0, state.phase.seq) is None  # the mafia talk now; their vote comes next


def test_nothing_for_the_dead_or_for_a_phase_already_over() -> None:
    state = to_phase(make_game("M M Det Doc B B xB"), PhaseKind.VOTE)
    assert cue(state, 6, state.phase.seq) is None
    assert cue(state, 4, state.phase.seq - 1) is None


def test_a_vote_already_cast_is_recalled_not_asked_again() -> None:
    from games import Vote

    state = to_phase(make_game(TABLE), PhaseKind.VOTE)
    state, _ = apply(state, Vote(4, 6, at(state)))
    assert cue(state, 4, state.phase.seq) == (
        "Your vote stands: Gray. /vote NAME changes it until the deadline."
    )
