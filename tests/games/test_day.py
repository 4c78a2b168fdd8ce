"""Day rules: discussion, the timed vote, deadlines, early end, vote changes and ties."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from games import GameConfig, NightAct, PhaseKind, Say, Tick, Vote, apply
from games.config import TieRule
from games.events import (
    MessageAccepted,
    PhaseEnded,
    PhaseStarted,
    PlayerEliminated,
    VoteCast,
    VoteResolved,
)
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

#: seven seats, two mafia at the end: a day elimination never ends the game
SEVEN = "B B B B B M M"


def vote_phase(spec: str = SEVEN, seed: int = 0, **config: Any) -> GameState:
    return to_phase(make_game(spec, GameConfig(**config), seed=seed), PhaseKind.VOTE)


# --- discussion ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [PhaseKind.DAY, PhaseKind.VOTE])
def test_day_speech_is_public(kind: PhaseKind) -> None:
    state = to_phase(make_game(SEVEN), kind)
    new, events = apply(state, Say(2, "  I think\x08 Gray is lying \n", at(state)))
    msg = one(events, MessageAccepted)
    assert (msg.place, msg.visible_to) == ("stage", None)
    assert (msg.seat, msg.name, msg.text) == (2, "Casey", "I think Gray is lying")
    assert msg.phase_seq == state.phase.seq
    assert new.phase == state.phase and new.seats == state.seats


@pytest.mark.parametrize(
    ("seat", "text", "match"),
    [
        (5, "", "message is empty"),
        (5, " \t\x07 ", "message is empty"),
        (5, "x" * 51, r"too long \(51 characters; the limit is 50\)"),
        (0, "boo", "eliminated: the dead can watch but not speak"),
        (12, "hi", "no such player"),
    ],
)
def test_bad_speech_is_refused(seat: int, text: str, match: str) -> None:
    state = make_game("xB B B B B M M", GameConfig(max_message_chars=50))
    assert_rejected(state, Say(seat, text, at(state)), match)


def test_message_at_the_length_limit_is_accepted() -> None:
    state = make_game(SEVEN, GameConfig(max_message_chars=50))
    _, events = apply(state, Say(1, "y" * 50, at(state)))
    assert one(events, MessageAccepted).text == "y" * 50


# --- bad votes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "seat", "target", "match"),
    [
        (PhaseKind.DAY, 1, 2, "Voting hasn't started yet: it opens when the discussion ends"),
        (PhaseKind.VOTE, 1, 1, "can't vote for yourself"),
        (PhaseKind.VOTE, 1, 0, "Ari has already been eliminated; pick a living player"),
        (PhaseKind.VOTE, 1, 7, "no such player"),
        (PhaseKind.VOTE, 1, -1, "no such player"),
        (PhaseKind.VOTE, 9, 2, "no such player"),
        (PhaseKind.VOTE, 0, 2, "eliminated and can no longer vote"),
        (PhaseKind.VOTE, 0, None, "eliminated and can no longer vote"),
        (PhaseKind.NIGHT, 1, 2, "no vote for you at night"),
        (PhaseKind.NIGHT, 5, 2, "night vote hasn't started yet"),
        (PhaseKind.NIGHT_VOTE, 1, 2, "no vote for you at night"),
        (PhaseKind.NIGHT_VOTE, 1, None, "no vote for you at night"),
    ],
)
def test_bad_votes_are_refused_and_change_nothing(
    kind: PhaseKind, seat: int, target: int | None, match: str
) -> None:
    state = to_phase(make_game("xB B B B B M M"), kind)
    if kind is PhaseKind.VOTE:
        state, _ = cast(state, {3: 2})  # an earlier vote must survive the refusal
    assert_rejected(state, Vote(seat, target, at(state, 2)), match)


# --- plurality, deadlines and abstention ----------------------------------------------------


@pytest.mark.parametrize(
    ("ballots", "chosen", "tally", "abstained"),
    [
        # only some vote: the plurality of cast votes wins, the silent abstain
        ({0: 5, 1: 5, 2: 6}, 5, (("Finley", 2), ("Gray", 1)), ("Drew", "Eden", "Finley", "Gray")),
        ({0: 3}, 3, (("Drew", 1),), ("Blake", "Casey", "Drew", "Eden", "Finley", "Gray")),
        # explicit abstentions count as abstaining, not as votes
        (
            {0: None, 1: None, 2: 4},
            4,
            (("Eden", 1),),
            ("Ari", "Blake", "Drew", "Eden", "Finley", "Gray"),
        ),
        # nobody votes at all: nobody is out
        ({}, None, (), ("Ari", "Blake", "Casey", "Drew", "Eden", "Finley", "Gray")),
        ({0: None, 6: None}, None, (), ("Ari", "Blake", "Casey", "Drew", "Eden", "Finley", "Gray")),
    ],
)
def test_deadline_with_missing_votes(
    ballots: dict[int, int | None],
    chosen: int | None,
    tally: tuple[tuple[str, int], ...],
    abstained: tuple[str, ...],
) -> None:
    state, _ = cast(vote_phase(), ballots)
    assert state.phase.kind is PhaseKind.VOTE  # still waiting for the others
    assert state.phase.deadline is not None
    early, nothing = apply(state, Tick(state.phase.deadline - timedelta(seconds=1)))
    assert nothing == [] and early.phase == state.phase and early.votes == state.votes
    new, events = end_phase(state)
    assert one(events, PhaseEnded).reason == "deadline"
    resolved = one(events, VoteResolved)
    assert (resolved.chosen, resolved.tally, resolved.abstained) == (chosen, tally, abstained)
    assert (resolved.night, resolved.visible_to, resolved.tied) == (False, None, ())
    eliminated = of_type(events, PlayerEliminated)
    if chosen is None:
        assert eliminated == [] and new.alive() == state.alive()
    else:
        assert [(e.seat, e.role, e.cause) for e in eliminated] == [
            (chosen, state.seats[chosen].role, "vote")
        ]
        assert new.alive() == state.alive() - {chosen}
    assert new.phase.kind.is_night and new.votes == {}


@pytest.mark.parametrize(
    ("spec", "ballots"),
    [
        (SEVEN, {i: (i + 1) % 7 for i in range(7)}),
        (SEVEN, dict.fromkeys(range(7))),  # everyone abstains explicitly
        (SEVEN, {0: None, 1: 0, 2: 0, 3: None, 4: 0, 5: 0, 6: None}),
        ("xB B xB B B M M", {1: 5, 3: 5, 4: 5, 5: None, 6: 1}),  # the dead are not waited for
    ],
)
def test_vote_ends_early_when_every_alive_player_voted(
    spec: str, ballots: dict[int, int | None]
) -> None:
    state = vote_phase(spec)
    *first, last = ballots.items()
    state, events = cast(state, dict(first))
    assert state.phase.kind is PhaseKind.VOTE and not of_type(events, PhaseEnded)
    t = at(state, 3)
    new, events = apply(state, Vote(last[0], last[1], t))
    assert [type(e) for e in events[:3]] == [VoteCast, PhaseEnded, VoteResolved]
    ended = one(events, PhaseEnded)
    assert (ended.phase, ended.reason, ended.seq) == ("vote", "all_voted", state.phase.seq)
    assert new.phase.kind in (PhaseKind.NIGHT, PhaseKind.NIGHT_VOTE)
    assert new.phase.started_at == t
    # changing a day vote is impossible now: the vote is over (a mafia vote is a night vote)
    for voter in sorted(new.alive()):
        if new.seats[voter].is_mafia and new.phase.kind is PhaseKind.NIGHT_VOTE:
            _, cast_events = apply(new, Vote(voter, None, at(new)))
            assert one(cast_events, VoteCast).night is True
        else:
            assert_rejected(new, Vote(voter, None, at(new)), "night")


def test_vote_change_is_announced_and_only_the_last_vote_counts() -> None:
    state = vote_phase()
    state, events = cast(state, {0: 5})
    assert one(events, VoteCast).changed is False
    state, events = cast(state, {0: 6}, seconds=2)
    change = one(events, VoteCast)
    assert (change.changed, change.target, change.target_name) == (True, 6, "Gray")
    state, events = cast(state, {0: None}, seconds=3)
    assert (one(events, VoteCast).changed, one(events, VoteCast).target) == (True, None)
    state, events = cast(state, {0: 5, 1: 6}, seconds=4)
    assert [e.changed for e in of_type(events, VoteCast)] == [True, False]
    _, events = end_phase(state)
    assert one(events, VoteResolved).tally == (("Finley", 1), ("Gray", 1))


@pytest.mark.parametrize("target", [3, None])
def test_same_vote_twice_is_a_no_op(target: int | None) -> None:
    state, _ = cast(vote_phase(), {0: target})
    new, events = cast(state, {0: target}, seconds=5)
    assert events == []
    assert (new.votes, new.phase, new.seats) == (state.votes, state.phase, state.seats)


# --- ties -------------------------------------------------------------------------------------

TIES: list[tuple[dict[int, int | None], tuple[str, ...]]] = [
    ({0: 1, 1: 0, 2: None, 3: None, 4: None, 5: None, 6: None}, ("Ari", "Blake")),
    ({0: 5, 1: 6, 2: 5, 3: 6, 4: None, 5: 2, 6: 2}, ("Casey", "Finley", "Gray")),
    ({0: 1, 1: 2, 2: 0, 3: None, 4: None, 5: None, 6: None}, ("Ari", "Blake", "Casey")),
    ({0: 6, 1: 6, 2: 5, 3: 5, 4: 3, 5: 4, 6: None}, ("Finley", "Gray")),
]


@pytest.mark.parametrize(("ballots", "tied"), TIES)
def test_day_tie_default_rule_eliminates_nobody(
    ballots: dict[int, int | None], tied: tuple[str, ...]
) -> None:
    assert GameConfig().tie_rule == "none"
    state, events = cast(vote_phase(), ballots)
    resolved = one(events, VoteResolved)
    assert (resolved.chosen, resolved.tied, resolved.tie_broken_randomly) == (None, tied, False)
    assert of_type(events, PlayerEliminated) == []
    assert state.alive() == frozenset(range(7)) and state.phase.kind is PhaseKind.NIGHT


@pytest.mark.parametrize(("ballots", "tied"), TIES)
def test_day_tie_random_rule_picks_one_of_the_tied(
    ballots: dict[int, int | None], tied: tuple[str, ...]
) -> None:
    picks = set()
    for seed in range(40):
        _, events = cast(vote_phase(seed=seed, tie_rule="random"), ballots)
        resolved = one(events, VoteResolved)
        assert resolved.tied == tied and resolved.tie_broken_randomly
        assert resolved.chosen_name in tied
        assert one(events, PlayerEliminated).name == resolved.chosen_name
        picks.add(resolved.chosen_name)
    assert len(picks) > 1  # seeds really matter


@pytest.mark.parametrize("tie_rule", ["none", "random"])
def test_clear_plurality_ignores_the_tie_rule(tie_rule: TieRule) -> None:
    _, events = cast(vote_phase(tie_rule=tie_rule), {0: 6, 1: 6, 2: 5, 3: None})
    _, events = end_phase(_)
    resolved = one(events, VoteResolved)
    assert (resolved.chosen, resolved.tied, resolved.tie_broken_randomly) == (6, (), False)


def test_random_tie_break_is_deterministic_per_seed() -> None:
    ballots = {0: 1, 1: 2, 2: 0, 3: None, 4: None, 5: None, 6: None}

    def pick(seed: int) -> str | None:
        state = make_game(SEVEN, GameConfig(tie_rule="random"), seed=seed)
        _, events = cast(to_phase(state, PhaseKind.VOTE), ballots)
        return one(events, VoteResolved).chosen_name

    first = [pick(s) for s in range(30)]
    assert first == [pick(s) for s in range(30)]
    assert set(first) == {"Ari", "Blake", "Casey"}


def test_night_acts_are_refused_by_day() -> None:
    state = vote_phase("B B B B Det M M")
    assert_rejected(state, NightAct(4, 5, at(state)), "only investigate at night")


def test_day_phase_started_events_carry_deadlines() -> None:
    state = make_game(SEVEN, GameConfig(day_seconds=100, vote_seconds=20))
    new, events = end_phase(state)
    started = one(events, PhaseStarted)
    assert (started.phase, started.number, started.seq) == ("vote", 1, 2)
    assert started.deadline == state.phase.deadline + timedelta(seconds=20)  # type: ignore[operator]
    assert new.phase.deadline == started.deadline and started.seconds == 20


def test_vote_targets_are_the_living_others_by_day_and_the_living_town_at_night() -> None:
    state = to_phase(make_game("M M B B xB B"), PhaseKind.VOTE)
    assert state.vote_targets(2) == [0, 1, 3, 5]
    assert state.vote_targets(0) == [1, 2, 3, 5]
    night = to_phase(state, PhaseKind.NIGHT_VOTE)
    assert night.vote_targets(0) == [2, 3, 5]
    assert to_phase(state, PhaseKind.DAY, 2).vote_targets(2) == []
