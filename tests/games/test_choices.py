"""The engine says what each seat can do when a phase starts (``ChoicesOffered``): every menu,
cue and agent decision reads it, so no renderer computes a target list."""

from __future__ import annotations

from games import NightAct, PhaseKind, apply
from games.config import GameConfig
from games.events import ChoicesOffered, event_from_dict, event_to_dict
from games.state import GameState
from tests.games.helpers import cast, end_phase, make_game, of_type, to_phase

TABLE = "M M Det Doc B B B"  # Ari, Blake mafia; Casey detective; Drew doctor; Eden.. bystanders


def offers(state: GameState) -> tuple[GameState, dict[int, ChoicesOffered]]:
    """End the current phase; the choices offered as the next one starts, by seat."""
    state, events = end_phase(state)
    found = of_type(events, ChoicesOffered)
    by_seat = {o.seat: o for o in found}
    assert len(by_seat) == len(found)
    for o in found:
        assert o.place == "booth" and o.visible_to == frozenset({o.seat})
        assert o.phase_seq == state.phase.seq and o.t == state.phase.started_at
        assert o.target_names == tuple(state.seats[i].name for i in o.targets)
    return state, by_seat


def test_the_day_vote_offers_every_living_seat_the_others_and_abstaining() -> None:
    state, offered = offers(make_game("M M Det Doc B B xB"))
    assert state.phase.kind is PhaseKind.VOTE
    assert sorted(offered) == [0, 1, 2, 3, 4, 5]  # the dead get nothing
    for seat, o in offered.items():
        assert o.verb == "vote" and o.can_abstain
        assert list(o.targets) == [i for i in range(6) if i != seat] == state.vote_targets(seat)


def test_the_night_offers_the_kill_to_the_mafia_and_their_actions_to_the_roles() -> None:
    night, offered = offers(to_phase(make_game(TABLE), PhaseKind.VOTE))
    assert night.phase.kind is PhaseKind.NIGHT
    # night talk: the detective and doctor choose now (for the whole night)
    assert sorted(offered) == [2, 3]
    assert offered[2].verb == "investigate" and offered[2].targets == (0, 1, 3, 4, 5, 6)
    assert offered[3].verb == "protect" and offered[3].targets == tuple(range(7))  # self too
    assert not offered[2].can_abstain and not offered[3].can_abstain
    # the mafia's vote: the kill, among the bystanders; the roles are not offered again
    _, offered = offers(night)
    assert sorted(offered) == [0, 1]
    assert all(o.verb == "kill" and o.targets == (2, 3, 4, 5, 6) for o in offered.values())


def test_a_lone_mafia_goes_straight_to_the_kill_and_the_roles_are_offered_with_it() -> None:
    _, offered = offers(to_phase(make_game("M Det Doc B B B"), PhaseKind.VOTE))
    assert {s: o.verb for s, o in offered.items()} == {0: "kill", 1: "investigate", 2: "protect"}


def test_the_doctor_is_not_offered_last_nights_patient() -> None:
    state = to_phase(make_game(TABLE), PhaseKind.NIGHT_VOTE)
    state, _ = apply(state, NightAct(2, 0, state.phase.started_at))
    state, _ = apply(state, NightAct(3, 3, state.phase.started_at))  # protects themself
    state, _ = cast(state, {0: 4, 1: 5})  # split vote: nobody dies (tie rule: none)
    assert state.phase.kind is PhaseKind.DAY
    night, offered = offers(to_phase(state, PhaseKind.VOTE))
    assert 3 not in offered[3].targets and offered[3].targets == (0, 1, 2, 4, 5, 6)
    assert night.night_targets(3) == list(offered[3].targets)


def test_nothing_is_offered_by_day_or_to_the_dead_and_after_the_game() -> None:
    assert make_game(TABLE).choice(0) is None  # day 1: talk only
    state = to_phase(make_game("M M Det Doc B B xB"), PhaseKind.NIGHT)
    assert state.choice(6) is None and state.night_targets(6) == []
    assert state.choice(4) is None  # a bystander sleeps


def test_the_offer_survives_the_event_log() -> None:
    _, offered = offers(make_game(TABLE, GameConfig()))
    for o in offered.values():
        assert event_from_dict(event_to_dict(o)) == o
