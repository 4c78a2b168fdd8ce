"""Every ability interaction of the night order (games/night.py), played through the engine."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from games import GameConfig, NightAct, PhaseKind, apply, new_game
from games.events import (
    Event,
    InspectionResult,
    PlayerEliminated,
    PrivateNote,
    SoloWin,
    event_from_dict,
    event_to_dict,
)
from games.narration import manager_line
from games.state import GameState
from tests.games.helpers import NAMES, T0, assert_rejected, at, cast, end_phase, of_type, to_phase


def table(*roles: str) -> GameState:
    """Day 1 of a game whose seat ``i`` plays ``roles[i]`` (a fixed deal of a custom setup)."""
    config = GameConfig(role_list=roles, deal=roles)
    state, _ = new_game(config, NAMES[: len(roles)], 0, T0)
    return state


def night(
    state: GameState,
    acts: Mapping[int, int],
    kill: int | None,
    voters: Mapping[int, int] | None = None,
) -> tuple[GameState, list[Event]]:
    """Play the next night: role actions, then the mafia's kill votes (every living mafia
    votes ``kill`` unless ``voters`` says who votes whom)."""
    state = to_night(state)
    events: list[Event] = []
    for actor, target in acts.items():
        state, more = apply(state, NightAct(actor, target, at(state)))
        events += more
    if state.phase.kind is PhaseKind.NIGHT:
        state, more = end_phase(state)
        events += more
    ballots = voters if voters is not None else dict.fromkeys(sorted(state.alive_mafia()), kill)
    if (ballots and kill is not None) or voters:
        state, more = cast(state, ballots)
        events += more
    if state.phase.kind is PhaseKind.NIGHT_VOTE:
        state, more = end_phase(state)
        events += more
    return state, events


def to_night(state: GameState) -> GameState:
    """The first phase of the next night (the night vote when one mafia is left)."""
    for _ in range(6):
        if state.phase.kind.is_night:
            return state
        state, _ = end_phase(state)
    raise AssertionError("never reached the night")


def died(events: list[Event]) -> list[int]:
    return [e.seat for e in of_type(events, PlayerEliminated)]


def notes(events: list[Event], seat: int) -> list[PrivateNote]:
    return [e for e in of_type(events, PrivateNote) if e.seat == seat]


# 0 mafia, 1 godfather, then town seats from 2; 8 seats so that nobody wins on one death
BASE = ("mafia", "godfather")


def test_doctor_protection_beats_the_kill() -> None:
    state = table(*BASE, "doctor", "bystander", "bystander", "bystander", "bystander", "bystander")
    _, events = night(state, {2: 3}, kill=3)
    assert died(events) == []


def test_escort_blocks_the_doctor_so_the_kill_lands() -> None:
    state = table(*BASE, "doctor", "escort", "bystander", "bystander", "bystander", "bystander")
    # a town escort blocking the town doctor: block resolves before protect
    _, events = night(state, {2: 4, 3: 2}, kill=4)
    assert died(events) == [4]
    assert [n.result for n in notes(events, 2)] == ["blocked"]
    assert manager_line(notes(events, 2)[0]) == (
        "Someone kept you busy tonight: your protect did nothing."
    )


def test_blocking_every_mafia_voter_stops_the_kill_but_one_unblocked_voter_kills() -> None:
    state = table(*BASE, "escort", "bystander", "bystander", "bystander", "bystander", "bystander")
    _, events = night(state, {2: 0}, kill=4)
    assert died(events) == [4]  # the godfather (seat 1) carried it out
    _, events = night(state, {2: 0}, kill=None, voters={0: 4, 1: 5})
    assert died(events) == []  # a tie: nobody chosen
    _, events = night(table("mafia", "escort", *(["bystander"] * 5)), {1: 0}, kill=3)
    assert died(events) == []


def test_consort_blocks_the_detective_who_learns_nothing() -> None:
    state = table("mafia", "consort", "detective", *(["bystander"] * 5))
    _, events = night(state, {1: 2, 2: 0}, kill=3)
    assert of_type(events, InspectionResult) == []
    assert [n.result for n in notes(events, 2)] == ["blocked"]
    assert died(events) == [3]


def test_godfather_appears_innocent_and_a_framed_bystander_guilty() -> None:
    state = table("mafia", "godfather", "detective", "framer", *(["bystander"] * 4))
    _, events = night(state, {2: 1, 3: 4}, kill=5)
    (result,) = of_type(events, InspectionResult)
    assert (result.target, result.is_mafia) == (1, False)
    state = table("mafia", "godfather", "detective", "framer", *(["bystander"] * 4))
    _, events = night(state, {2: 4, 3: 4}, kill=5)
    (result,) = of_type(events, InspectionResult)
    assert (result.target, result.is_mafia) == (4, True)


def test_framer_beats_the_godfathers_innocence() -> None:
    state = table("mafia", "godfather", "detective", "framer", *(["bystander"] * 4))
    _, events = night(state, {2: 1, 3: 1}, kill=5)
    assert of_type(events, InspectionResult)[0].is_mafia is True


@pytest.mark.parametrize(
    ("target_role", "shown"),
    [("godfather", "bystander"), ("miller", "mafia"), ("doctor", "doctor"), ("mafia", "mafia")],
)
def test_investigator_learns_the_role_as_it_appears(target_role: str, shown: str) -> None:
    state = table("mafia", "investigator", target_role, *(["bystander"] * 5))
    if target_role == "mafia":
        state = table("mafia", "investigator", "consort", *(["bystander"] * 5))
        shown = "consort"
    _, events = night(state, {1: 2}, kill=4)
    (note,) = notes(events, 1)
    assert (note.verb, note.target, note.result) == ("investigate", 2, shown)
    assert note.visible_to == frozenset({1}) and note.place == "booth"


def test_miller_looks_guilty_to_the_detective() -> None:
    state = table("mafia", "detective", "miller", *(["bystander"] * 5))
    _, events = night(state, {1: 2}, kill=4)
    assert of_type(events, InspectionResult)[0].is_mafia is True


def test_serial_killer_looks_guilty_and_survives_the_mafia() -> None:
    state = table("mafia", "detective", "serial_killer", *(["bystander"] * 5))
    _, events = night(state, {1: 2, 2: 3}, kill=2)
    assert of_type(events, InspectionResult)[0].is_mafia is True
    assert died(events) == [3]  # bulletproof against the mafia; its own victim dies


def test_bodyguard_dies_in_the_targets_place_and_takes_the_attacker() -> None:
    state = table("mafia", "mafia", "bodyguard", *(["bystander"] * 6))
    state, events = night(state, {2: 4}, kill=4)
    assert sorted(died(events)) == [0, 2]  # the lowest-seated voter carried out the kill
    assert state.seats[4].alive


def test_doctor_saves_the_bodyguard() -> None:
    state = table("mafia", "mafia", "bodyguard", "doctor", *(["bystander"] * 5))
    _, events = night(state, {2: 4, 3: 2}, kill=4)
    assert died(events) == [0]


def test_bulletproof_survives_the_kill_and_the_vigilante() -> None:
    state = table("mafia", "mafia", "bulletproof", "vigilante", *(["bystander"] * 5))
    _, events = night(state, {3: 2}, kill=2)
    assert died(events) == []


def test_vigilante_has_two_bullets_spent_only_when_fired() -> None:
    state = table("mafia", "mafia", "vigilante", "escort", *(["bystander"] * 6))
    state, events = night(state, {2: 0, 3: 2}, kill=None)  # blocked: the bullet stays
    assert died(events) == [] and state.used.get(2, 0) == 0
    state, events = night(state, {2: 4}, kill=None)
    assert died(events) == [4] and state.used[2] == 1
    state, events = night(state, {2: 0}, kill=None)
    assert 0 in died(events) and state.used[2] == 2
    state = to_night(state)
    assert state.choices(2) == []
    assert_rejected(state, NightAct(2, 1, at(state)), "used up your shoot")


def test_veteran_on_alert_shoots_every_visitor_and_cannot_die() -> None:
    state = table("mafia", "mafia", "veteran", "doctor", *(["bystander"] * 6))
    dark = to_night(state)
    assert_rejected(dark, NightAct(2, 3, at(dark)), "only alert yourself")
    _, events = night(state, {2: 2, 3: 2}, kill=2)
    assert sorted(died(events)) == [0, 3]  # the killer and the doctor who visited


def test_bus_driver_swaps_the_kill_onto_the_driver() -> None:
    state = table("mafia", "mafia", "bus_driver", "doctor", *(["bystander"] * 6))
    _, events = night(state, {2: 4}, kill=4)
    assert died(events) == [2]
    state = table("mafia", "mafia", "bus_driver", "doctor", *(["bystander"] * 6))
    _, events = night(state, {2: 4, 3: 4}, kill=4)
    # the kill aimed at 4 lands on the driver, and so does the doctor's protection of 4
    assert died(events) == []


def test_tracker_sees_the_killer_visit_and_lookout_sees_visitors() -> None:
    state = table("mafia", "mafia", "tracker", "lookout", "doctor", *(["bystander"] * 5))
    _, events = night(state, {2: 0, 3: 5, 4: 5}, kill=5)
    (tracked,) = notes(events, 2)
    assert (tracked.verb, tracked.seats, tracked.names) == ("track", (5,), (NAMES[5],))
    (watched,) = notes(events, 3)
    assert (watched.verb, watched.seats) == ("watch", (0, 4))
    assert manager_line(watched) == f"You watched {NAMES[5]}: visited by {NAMES[0]} and {NAMES[4]}."


def test_janitor_hides_the_victims_role_and_learns_it() -> None:
    state = table("mafia", "janitor", "detective", *(["bystander"] * 5))
    state, events = night(state, {1: 2, 2: 0}, kill=2)
    (gone,) = of_type(events, PlayerEliminated)
    assert (gone.seat, gone.role) == (2, "hidden")
    assert manager_line(gone) == f"{NAMES[2]} was killed during the night. Their role is hidden"
    (note,) = notes(events, 1)
    assert (note.verb, note.result) == ("clean", "detective")
    assert state.used[1] == 1


def test_phantom_role_stays_hidden_when_voted_out() -> None:
    state = table("mafia", "phantom", *(["bystander"] * 6))
    state = to_phase(state, PhaseKind.VOTE)
    state, events = cast(state, {i: 1 for i in state.alive() if i != 1} | {1: 2})
    (gone,) = of_type(events, PlayerEliminated)
    assert gone.role == "hidden"


def test_mayor_vote_counts_twice() -> None:
    state = table("mafia", "mayor", *(["bystander"] * 5))
    state = to_phase(state, PhaseKind.VOTE)
    state, events = cast(state, {1: 2, 0: 3, 2: None, 3: None, 4: None, 5: None, 6: None})
    (gone,) = of_type(events, PlayerEliminated)
    assert gone.seat == 2  # the mayor's 2 votes beat 1
    state = table("mafia", "mayor", *(["bystander"] * 5))
    state = to_phase(state, PhaseKind.VOTE)
    state, events = cast(state, {1: 2, 0: 3, 4: 3, 5: 3, 2: None, 3: None, 6: None})
    assert of_type(events, PlayerEliminated)[0].seat == 3


def test_jester_wins_when_voted_out_and_the_game_goes_on() -> None:
    state = table("mafia", "jester", *(["bystander"] * 6))
    state = to_phase(state, PhaseKind.VOTE)
    state, events = cast(state, {i: 1 for i in state.alive() if i != 1} | {1: 2})
    (win,) = of_type(events, SoloWin)
    assert (win.seat, win.role) == (1, "jester") and win.visible_to is None
    assert not state.over and state.solo_won == frozenset({1})
    back = event_from_dict(event_to_dict(win))
    assert back == win


def test_executioner_gets_a_town_target_and_wins_when_it_is_voted_out() -> None:
    state, first = new_game(
        GameConfig(role_list=("mafia", "executioner", *(["bystander"] * 6))), NAMES[:8], 3, T0
    )
    exe = next(s.index for s in state.seats if s.role == "executioner")
    (note,) = notes(first, exe)
    target = state.executions[exe]
    assert note.target == target and state.seats[target].role == "bystander"
    assert note.visible_to == frozenset({exe})
    state = to_phase(state, PhaseKind.VOTE)
    state, events = cast(state, {i: target for i in state.alive() if i != target} | {target: None})
    assert [w.seat for w in of_type(events, SoloWin)] == [exe]


def test_executioner_whose_target_dies_at_night_becomes_a_jester() -> None:
    state = table("mafia", "executioner", *(["bystander"] * 6))
    target = state.executions[1]
    state, events = night(state, {}, kill=target)
    assert state.seats[1].role == "jester"
    assert [n.result for n in notes(events, 1)] == ["jester"]


def test_survivor_vests_and_wins_with_the_winner() -> None:
    state = table("mafia", "survivor", "bystander", "bystander", "bystander")
    state, events = night(state, {1: 1}, kill=1)
    assert died(events) == [] and state.used[1] == 1
    state = to_phase(state, PhaseKind.VOTE)
    state, events = cast(state, {i: 0 for i in state.alive() if i != 0} | {0: None})
    assert state.over and state.winner == "bystanders"
    assert [w.seat for w in of_type(events, SoloWin)] == [1]


def test_serial_killer_wins_as_the_last_killer_standing() -> None:
    state = table("mafia", "serial_killer", "bystander", "bystander", "bystander")
    state = to_phase(state, PhaseKind.VOTE)
    state, _ = cast(state, {i: 0 for i in state.alive() if i != 0} | {0: None})
    assert not state.seats[0].alive and not state.over  # the serial killer still kills
    state, _ = night(state, {1: 2}, kill=None)
    state, _ = night(state, {1: 3}, kill=None)
    assert state.over and state.winner == "serial_killer"


def test_mafia_cannot_win_by_numbers_while_a_serial_killer_lives() -> None:
    state = table("mafia", "mafia", "serial_killer", *(["bystander"] * 4))
    state, events = night(state, {2: 3}, kill=4)
    assert sorted(died(events)) == [3, 4]
    assert not state.over  # 2 mafia against 3, one of them the serial killer
    state = to_phase(state, PhaseKind.VOTE)
    state, _ = cast(state, {i: 5 for i in state.alive() if i != 5} | {5: None})
    assert (
        not state.seats[5].alive and not state.over
    )  # 2 mafia against 2, but the serial killer can still kill


def test_a_mafia_role_with_an_action_is_offered_both_kill_and_action() -> None:
    state = table("mafia", "consort", *(["bystander"] * 6))
    state = to_phase(state, PhaseKind.NIGHT_VOTE)
    assert [verb for verb, _, _ in state.choices(1)] == ["kill", "block"]
    first = state.choice(1)
    assert first is not None and first[0] == "kill"
