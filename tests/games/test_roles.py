"""The detective and the doctor: private results, targets, saves, and the doctor's rule."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from games import NightAct, PhaseKind, Say, apply
from games.events import (
    Event,
    InspectionResult,
    NightActionRecorded,
    NightResult,
    PlayerEliminated,
    RoleAssigned,
)
from games.narration import manager_line, role_card
from games.state import GameState
from tests.games.helpers import (
    assert_rejected,
    at,
    cast,
    end_phase,
    make_game,
    of_type,
    one,
    to_phase,
)

#: mafia 0 and 1, bystanders 2-4 and 7, detective 5, doctor 6
TABLE = "M M B B B Det Doc B"
DET, DOC = 5, 6


def night(
    state: GameState, acts: Mapping[int, int], kill: int | None
) -> tuple[GameState, list[Event]]:
    """Play one night from its start: role actions, then every alive mafia votes ``kill``."""
    state = to_phase(state, PhaseKind.NIGHT)
    events: list[Event] = []
    for actor, target in acts.items():
        state, more = apply(state, NightAct(actor, target, at(state)))
        events += more
    state, more = end_phase(state)
    events += more
    if kill is not None:
        state, more = cast(state, dict.fromkeys(sorted(state.alive_mafia()), kill))
        events += more
    if state.phase.kind is PhaseKind.NIGHT_VOTE:
        state, more = end_phase(state)
        events += more
    return state, events


# --- detective ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "is_mafia"), [(0, True), (1, True), (2, False), (DOC, False), (7, False)]
)
def test_detective_learns_the_team_privately(target: int, is_mafia: bool) -> None:
    state, events = night(make_game(TABLE), {DET: target}, kill=3)
    result = one(events, InspectionResult)
    assert (result.seat, result.target, result.is_mafia) == (DET, target, is_mafia)
    assert result.target_name == state.seats[target].name
    assert (result.place, result.visible_to) == ("booth", frozenset({DET}))
    verdict = "IS mafia" if is_mafia else "is NOT mafia"
    assert manager_line(result) == f"Your investigation: {result.target_name} {verdict}."
    recorded = one(events, NightActionRecorded)
    assert (recorded.place, recorded.visible_to) == ("booth", frozenset({DET}))
    assert (recorded.verb, recorded.role) == ("investigate", "detective")


def test_detective_may_change_target_and_the_last_counts() -> None:
    state = to_phase(make_game(TABLE), PhaseKind.NIGHT)
    state, _ = apply(state, NightAct(DET, 2, at(state)))
    state, _ = apply(state, NightAct(DET, 0, at(state, 2)))
    state, events = night(state, {}, kill=3)
    assert one(events, InspectionResult).target == 0


@pytest.mark.parametrize(
    ("kind", "actor", "target", "match"),
    [
        (PhaseKind.NIGHT, DET, DET, "can't investigate yourself"),
        (PhaseKind.NIGHT, DET, 4, "Eden has already been eliminated"),
        (PhaseKind.NIGHT, DET, 8, "no such player"),
        (PhaseKind.NIGHT_VOTE, DET, DET, "can't investigate yourself"),
        (PhaseKind.DAY, DET, 0, "only investigate at night"),
        (PhaseKind.VOTE, DET, 0, "only investigate at night"),
        (PhaseKind.DAY, DOC, 0, "only protect at night"),
        (PhaseKind.NIGHT, 2, 0, "Your role has no night action"),
        (PhaseKind.NIGHT, 0, 2, "Your role has no night action"),
        (PhaseKind.NIGHT, 3, 2, "You have been eliminated"),  # a dead bystander: dead first
        (PhaseKind.NIGHT, DOC, 4, "Eden has already been eliminated"),
    ],
)
def test_bad_role_actions(kind: PhaseKind, actor: int, target: int, match: str) -> None:
    state = to_phase(make_game("M M B xB xB Det Doc B"), kind)
    assert_rejected(state, NightAct(actor, target, at(state)), match)


@pytest.mark.parametrize("kind", [PhaseKind.NIGHT, PhaseKind.NIGHT_VOTE])
def test_dead_roles_cannot_act(kind: PhaseKind) -> None:
    state = to_phase(make_game("M M B B B xDet xDoc B"), kind)
    assert_rejected(state, NightAct(DET, 0, at(state)), "eliminated and can no longer act")
    assert_rejected(state, NightAct(DOC, 2, at(state)), "eliminated and can no longer act")


def test_detective_killed_that_night_gets_no_result() -> None:
    _, events = night(make_game(TABLE), {DET: 0}, kill=DET)
    assert one(events, PlayerEliminated).seat == DET
    assert of_type(events, InspectionResult) == []


def test_detective_saved_by_the_doctor_gets_the_result() -> None:
    _, events = night(make_game(TABLE), {DET: 0, DOC: DET}, kill=DET)
    assert of_type(events, PlayerEliminated) == []
    assert one(events, InspectionResult).is_mafia is True


def test_detective_cannot_speak_at_night_and_nobody_else_sees_the_result() -> None:
    state = to_phase(make_game(TABLE), PhaseKind.NIGHT)
    assert_rejected(state, Say(DET, "I am the detective", at(state)), "only the mafia can talk")
    _, events = night(state, {DET: 1}, kill=2)
    for event in of_type(events, InspectionResult) + of_type(events, NightActionRecorded):
        assert event.visible_to is not None
        assert all(seat not in event.visible_to for seat in range(8) if seat != DET)


# --- doctor ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protect", "kill", "victim"),
    [
        (3, 3, None),  # the save
        (DOC, DOC, None),  # self-protection is allowed and works
        (3, 2, 2),  # wrong guess
        (0, 3, 3),  # protecting a mafia is allowed but saves nobody else
        (None, 3, 3),  # no protection
    ],
)
def test_doctor_protection(protect: int | None, kill: int, victim: int | None) -> None:
    acts = {} if protect is None else {DOC: protect}
    state, events = night(make_game(TABLE), acts, kill=kill)
    result = one(events, NightResult)
    assert result.victim == victim and result.visible_to is None
    if victim is None:
        assert of_type(events, PlayerEliminated) == []
        assert state.alive() == frozenset(range(8))
        assert manager_line(result) == "Nobody was killed during the night."
        # the save is not revealed: no event names the protected seat publicly
        assert all(e.visible_to == frozenset({DOC}) for e in of_type(events, NightActionRecorded))
    else:
        assert one(events, PlayerEliminated).seat == victim
        assert manager_line(result) is None


@pytest.mark.parametrize(
    ("plan", "refused_night"),
    [
        ([3, 3], 2),  # same player two nights running
        ([DOC, DOC], 2),  # also for self
        ([3, 4, 3], None),  # allowed again after another night
        ([3, None, 3], None),  # a night without protecting resets the rule
        ([3, 4, 4], 3),
        ([2, 3, 2, 3], None),
    ],
)
def test_doctor_cannot_protect_the_same_player_two_nights_running(
    plan: list[int | None], refused_night: int | None
) -> None:
    state = make_game(TABLE)
    for number, protect in enumerate(plan, start=1):
        state = to_phase(state, PhaseKind.NIGHT, number)
        if protect is None:
            continue
        if number == refused_night:
            assert_rejected(
                state,
                NightAct(DOC, protect, at(state)),
                "You protected that player last night; choose someone else tonight",
            )
            return
        state, events = night(state, {DOC: protect}, kill=None)  # nobody dies: the game goes on
        assert one(events, NightActionRecorded).target == protect
    assert refused_night is None


def test_doctor_rule_also_applies_in_the_night_vote() -> None:
    state, _ = night(make_game(TABLE), {DOC: 3}, kill=None)
    state = to_phase(state, PhaseKind.NIGHT_VOTE, 2)
    assert_rejected(state, NightAct(DOC, 3, at(state)), "protected that player last night")


def test_role_cards_describe_the_roles() -> None:
    card = RoleAssigned(
        t=at(make_game(TABLE)), seat=6, name="Gray", role="doctor", team="bystanders", partners=()
    )
    text = role_card(card)
    assert text.startswith("You are Gray. Your role: doctor.") and "protect" in text
