"""Night rules: the den, the mafia vote, no-agreement, the single-mafia skip, role actions."""

from __future__ import annotations

from typing import Any

import pytest

from games import GameConfig, NightAct, PhaseKind, Say, Vote, apply
from games.config import TieRule
from games.events import (
    MessageAccepted,
    NightResult,
    PhaseEnded,
    PhaseStarted,
    PlayerEliminated,
    VoteCast,
    VoteResolved,
    visible,
)
from games.narration import manager_line
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

#: 11 seats, three mafia first: a night kill never ends the game
ELEVEN = "M M M B B B B B B B B"


def night_vote(spec: str, seed: int = 0, **config: Any) -> GameState:
    return to_phase(make_game(spec, GameConfig(**config), seed=seed), PhaseKind.NIGHT_VOTE)


# --- who may speak and vote ------------------------------------------------------------------


@pytest.mark.parametrize("kind", [PhaseKind.NIGHT, PhaseKind.NIGHT_VOTE])
@pytest.mark.parametrize(
    ("seat", "match"),
    [
        (3, "only the mafia can talk now"),  # bystander
        (9, "only the mafia can talk now"),  # detective
        (10, "only the mafia can talk now"),  # doctor
        (2, "the dead can watch but not speak"),  # dead mafia
    ],
)
def test_only_alive_mafia_speak_at_night(kind: PhaseKind, seat: int, match: str) -> None:
    state = to_phase(make_game("M M xM B B B B B B Det Doc"), kind)
    assert_rejected(state, Say(seat, "psst", at(state)), match)


@pytest.mark.parametrize(
    ("seat", "target", "match"),
    [
        (3, 4, "no vote for you at night"),
        (9, 4, "no vote for you at night"),
        (0, 1, "Blake is one of the mafia; choose a bystander to kill"),
        (0, 0, "can't vote for yourself"),
        (0, 2, "Casey has already been eliminated"),
        (0, 11, "no such player"),
        (2, 4, "eliminated and can no longer vote"),
    ],
)
def test_bad_night_votes(seat: int, target: int, match: str) -> None:
    state = night_vote("M M xM B B B B B B Det Doc")
    state, _ = cast(state, {1: 5})
    assert_rejected(state, Vote(seat, target, at(state, 2)), match)


def test_den_events_are_visible_only_to_alive_mafia() -> None:
    state = make_game(ELEVEN)
    state, _ = cast(to_phase(state, PhaseKind.VOTE), {i: 2 for i in range(11) if i != 2} | {2: 0})
    assert not state.seats[2].alive and state.phase.kind is PhaseKind.NIGHT
    den = frozenset({0, 1})
    state, events = apply(state, Say(0, "Kill Drew?", at(state)))
    msg = one(events, MessageAccepted)
    assert (msg.place, msg.visible_to, msg.text) == ("den", den, "Kill Drew?")
    state = to_phase(state, PhaseKind.NIGHT_VOTE)
    state, events = apply(state, Say(1, "yes", at(state)))
    assert one(events, MessageAccepted).visible_to == den
    state, votes = cast(state, {0: 3})
    state, done = cast(state, {1: 3}, seconds=2)
    for event in votes + done:
        if isinstance(event, VoteCast | VoteResolved):
            assert (event.place, event.visible_to) == ("den", den)
    den_events = [e for e in [msg, *votes, *done] if e.place == "den"]
    assert len(den_events) == 4  # message, two votes, the tally
    for event in den_events:
        for seat in range(3, 11):
            assert not visible(event, seat)
        assert not visible(event, 2)  # the dead mafia is out of the den
        assert not visible(event, None)  # spectators
    # what happened at night is public at dawn
    for event in of_type(done, NightResult) + of_type(done, PlayerEliminated):
        assert event.visible_to is None and event.place == "stage"
    phases = of_type(done, PhaseStarted) + of_type(done, PhaseEnded)
    assert phases and all(e.visible_to is None for e in phases)


# --- the kill ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "ballots", "victim"),
    [
        ("M M B B B B B", {0: 4, 1: 4}, 4),  # agreement
        ("M M M B B B B B B B B", {0: 4, 1: 4, 2: 5}, 4),  # majority
        ("M M B B B B B", {0: 4, 1: None}, 4),  # one abstains: plurality of cast votes
        ("M M B B B B B", {0: 4}, 4),  # one never votes (deadline)
        ("M B B B B", {0: 3}, 3),  # single mafia
    ],
)
def test_night_kill(spec: str, ballots: dict[int, int | None], victim: int) -> None:
    state, events = cast(night_vote(spec), ballots)
    if state.phase.kind is PhaseKind.NIGHT_VOTE:
        state, more = end_phase(state)
        events += more
    assert one(events, NightResult).victim == victim
    eliminated = one(events, PlayerEliminated)
    assert (eliminated.seat, eliminated.cause, eliminated.role) == (victim, "night", "bystander")
    assert not state.seats[victim].alive
    assert state.phase.kind is PhaseKind.DAY and state.phase.number == 2


@pytest.mark.parametrize("rule", ["none", "random"])
@pytest.mark.parametrize(
    ("spec", "ballots", "tied"),
    [
        ("M M B B B B B", {0: 4, 1: 5}, ("Eden", "Finley")),
        ("M M M B B B B B B B B", {0: 4, 1: 5, 2: 6}, ("Eden", "Finley", "Gray")),
        ("M M M B B B B B B B B", {0: 4, 1: 5, 2: None}, ("Eden", "Finley")),
        ("M M M B B B B B B B B", {0: 4, 1: 5}, ("Eden", "Finley")),  # one never votes
    ],
)
def test_night_ties(
    spec: str, ballots: dict[int, int | None], tied: tuple[str, ...], rule: TieRule
) -> None:
    for seed in range(6):
        state, events = cast(night_vote(spec, seed=seed, night_tie_rule=rule), ballots)
        if state.phase.kind is PhaseKind.NIGHT_VOTE:
            state, more = end_phase(state)
            events += more
        resolved = one(events, VoteResolved)
        assert resolved.night and resolved.tied == tied
        result = one(events, NightResult)
        if rule == "none":
            assert (resolved.chosen, result.victim) == (None, None)
            assert of_type(events, PlayerEliminated) == []
            assert manager_line(result) == "Nobody was killed during the night."
        else:
            assert resolved.tie_broken_randomly and resolved.chosen_name in tied
            assert result.victim_name == resolved.chosen_name
            assert not state.seats[result.victim].alive  # type: ignore[index]


def test_night_tie_rule_is_independent_of_the_day_rule() -> None:
    _, events = cast(night_vote("M M B B B B B", tie_rule="random"), {0: 4, 1: 5})
    assert one(events, NightResult).victim is None
    _, events = cast(night_vote("M M B B B B B", night_tie_rule="random"), {0: 4, 1: 5})
    assert one(events, NightResult).victim in (4, 5)


def test_random_night_tie_break_varies_with_seed_and_repeats_per_seed() -> None:
    def pick(seed: int) -> int | None:
        state = night_vote("M M M B B B B B B B B", seed=seed, night_tie_rule="random")
        _, events = cast(state, {0: 4, 1: 5, 2: 6})
        return one(events, NightResult).victim

    first = [pick(s) for s in range(30)]
    assert first == [pick(s) for s in range(30)]
    assert set(first) == {4, 5, 6}


@pytest.mark.parametrize("ballots", [{}, {0: None}, {0: None, 1: None}])
def test_no_night_votes_means_no_kill(ballots: dict[int, int | None]) -> None:
    state, events = cast(night_vote("M M B B B B B"), ballots)
    if state.phase.kind is PhaseKind.NIGHT_VOTE:
        state, more = end_phase(state)
        events += more
    resolved = one(events, VoteResolved)
    assert (resolved.chosen, resolved.tally, resolved.tied) == (None, (), ())
    assert resolved.abstained == ("Ari", "Blake")
    assert one(events, NightResult).victim is None
    assert state.alive() == frozenset(range(7))
    assert state.phase.kind is PhaseKind.DAY and state.phase.number == 2


# --- the single-mafia skip ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "day_ballots", "skip", "kind"),
    [
        ("M B B B B", {}, True, PhaseKind.NIGHT_VOTE),
        ("M B B B B", {}, False, PhaseKind.NIGHT),
        ("M M B B B B B", {}, True, PhaseKind.NIGHT),
        ("M M B B B B B", {i: 1 for i in range(7) if i != 1} | {1: 0}, True, PhaseKind.NIGHT_VOTE),
        ("M M B B B B B", {i: 1 for i in range(7) if i != 1} | {1: 0}, False, PhaseKind.NIGHT),
        ("M M B B B B B", {i: 2 for i in range(7) if i != 2} | {2: 0}, True, PhaseKind.NIGHT),
    ],
)
def test_single_mafia_skips_night_talk(
    spec: str, day_ballots: dict[int, int | None], skip: bool, kind: PhaseKind
) -> None:
    config = GameConfig(skip_night_talk_single_mafia=skip, night_seconds=50, night_vote_seconds=20)
    state = to_phase(make_game(spec, config), PhaseKind.VOTE)
    state, events = cast(state, day_ballots)
    if state.phase.kind is PhaseKind.VOTE:
        state, more = end_phase(state)
        events += more
    started = one(events, PhaseStarted)
    assert state.phase.kind is kind and started.phase == kind.value
    skipped = kind is PhaseKind.NIGHT_VOTE
    assert started.talk_skipped is skipped
    assert started.seconds == (20 if skipped else 50)
    line = manager_line(started) or ""
    assert ("cutting straight to voting" in line) is skipped
    if skipped:  # the lone mafia can still vote, and still talk (to nobody else)
        mafia = min(state.alive_mafia())
        _, said = apply(state, Say(mafia, "hmm", at(state)))
        assert one(said, MessageAccepted).visible_to == frozenset({mafia})


# --- role actions hold the night vote open ------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "acts_at_night_talk", "acts_after_votes", "ends_with_votes"),
    [
        ("M M B B B B B", [], [], True),
        ("M M B B B Det B", [], [(5, 0)], False),
        ("M M B B B B Doc", [], [(6, 6)], False),
        ("M M B B B Det Doc", [(5, 1)], [(6, 2)], False),
        ("M M B B B Det Doc", [(5, 1), (6, 2)], [], True),
        ("M M B B B xDet Doc", [(6, 2)], [], True),  # a dead detective is not waited for
        ("M M B B B B xDet xDoc", [], [], True),
    ],
)
def test_night_vote_early_end_waits_for_role_actions(
    spec: str,
    acts_at_night_talk: list[tuple[int, int]],
    acts_after_votes: list[tuple[int, int]],
    ends_with_votes: bool,
) -> None:
    state = to_phase(make_game(spec), PhaseKind.NIGHT)
    for actor, target in acts_at_night_talk:
        state, _ = apply(state, NightAct(actor, target, at(state)))
    state, _ = end_phase(state)
    assert state.phase.kind is PhaseKind.NIGHT_VOTE
    voted, events = cast(state, {0: 3, 1: 3})
    assert (voted.phase.kind is PhaseKind.DAY) is ends_with_votes
    if not ends_with_votes:
        done = voted
        for i, (actor, target) in enumerate(acts_after_votes):
            assert done.phase.kind is PhaseKind.NIGHT_VOTE
            done, events = apply(done, NightAct(actor, target, at(done, 5 + i)))
        assert done.phase.kind is PhaseKind.DAY
        assert one(events, PhaseEnded).reason == "all_voted"
        # and without the role actions the deadline still ends the night
        late, events = end_phase(voted)
        assert late.phase.kind is PhaseKind.DAY
        assert one(events, PhaseEnded).reason == "deadline"
        assert one(events, NightResult).victim == 3
