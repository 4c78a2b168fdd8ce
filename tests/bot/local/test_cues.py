"""What the terminal tells a player they can do when a phase starts (the menus' counterpart),
read from the engine's offer (`ChoicesOffered`), as Discord's and Slack's menus are."""

from __future__ import annotations

from bot.local.terminal import cue
from games import NightAct, PhaseKind, Vote, apply
from games.events import ChoicesOffered
from games.state import GameState
from tests.games.helpers import at, end_phase, make_game, of_type, to_phase

TABLE = "M M Det Doc B B B"  # Ari, Blake mafia; Casey detective; Drew doctor; Eden.. bystanders


def into(state: GameState, kind: PhaseKind) -> tuple[GameState, dict[int, ChoicesOffered]]:
    """On to the phase before ``kind``, then into it: the state and its offers, by seat."""
    before = state
    while True:
        state, events = end_phase(before)
        if state.phase.kind is kind:
            return state, {o.seat: o for o in of_type(events, ChoicesOffered)}
        before = state


def test_day_vote_lists_everyone_else_alive_and_abstain() -> None:
    state, offers = into(make_game(TABLE), PhaseKind.VOTE)
    line = cue(offers[4], state)
    assert line == (
        "Your vote: /vote NAME (one of Ari, Blake, Casey, Drew, Finley, Gray) or /abstain; "
        "you can change it."
    )


def test_the_kill_is_offered_to_the_mafia_only_and_names_only_bystanders() -> None:
    state, offers = into(make_game(TABLE), PhaseKind.NIGHT_VOTE)
    assert (
        cue(offers[0], state)
        == "Tonight's kill: /vote NAME (one of Casey, Drew, Eden, Finley, Gray)."
    )
    assert 4 not in offers  # a bystander sleeps


def test_detective_and_doctor_are_told_their_night_action_with_the_engines_targets() -> None:
    night, offers = into(make_game(TABLE), PhaseKind.NIGHT)
    assert cue(offers[2], night) == (
        "Tonight you may investigate someone: /act NAME (one of Ari, Blake, Drew, Eden, "
        "Finley, Gray)."
    )
    # the doctor may protect themself (the engine allows it)
    assert "Drew" in (cue(offers[3], night) or "")
    assert 0 not in offers  # the mafia talk now; their vote comes next
    # the offer stands through the mafia's vote, until the action is taken
    night_vote, _ = end_phase(night)
    assert cue(offers[3], night_vote) == cue(offers[3], night)
    acted, _ = apply(night_vote, NightAct(3, 4, at(night_vote)))
    assert cue(offers[3], acted) is None


def test_nothing_for_a_phase_already_over() -> None:
    state, offers = into(make_game(TABLE), PhaseKind.VOTE)
    night, _ = end_phase(state)
    assert cue(offers[4], night) is None


def test_a_vote_already_cast_is_recalled_not_asked_again() -> None:
    state, offers = into(to_phase(make_game(TABLE), PhaseKind.DAY), PhaseKind.VOTE)
    state, _ = apply(state, Vote(4, 6, at(state)))
    assert cue(offers[4], state) == (
        "Your vote stands: Gray. /vote NAME changes it until the deadline."
    )
