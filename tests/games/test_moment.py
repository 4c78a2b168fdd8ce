"""An action is judged against the phase that was current when it was made: a line that
arrives after its phase ended is placed by the phase it was typed in; a vote meant for a phase
that has ended is refused."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from games import NightAct, PhaseKind, Say, Tick, Vote, apply
from games.actions import action_from_dict, action_to_dict
from games.events import MessageAccepted
from games.state import GameState
from tests.games.helpers import assert_rejected, cast, end_phase, make_game, one, to_phase

TABLE = "M M Det Doc B B B"  # Ari, Blake mafia; Casey detective; Drew doctor; Eden.. bystanders
MS = timedelta(milliseconds=3)


def night_ended_by_the_last_kill_vote() -> tuple[GameState, GameState, datetime]:
    """Night 1's vote, everyone has acted but Blake; Blake's pick ends the night."""
    state = to_phase(make_game(TABLE), PhaseKind.NIGHT_VOTE)
    state, _ = apply(state, NightAct(2, 4, state.phase.started_at + timedelta(seconds=1)))
    state, _ = apply(state, NightAct(3, 5, state.phase.started_at + timedelta(seconds=1)))
    state, _ = cast(state, {0: 6}, seconds=2)
    night = state
    pick = night.phase.started_at + timedelta(seconds=3)
    day, _ = apply(night, Vote(1, 6, pick))
    assert day.phase.kind is PhaseKind.DAY
    return night, day, pick


@pytest.mark.parametrize(
    ("seat", "place", "audience"),
    [(1, "den", frozenset({0, 1})), (0, "den", frozenset({0, 1}))],
)
def test_a_mafia_line_typed_before_the_dawn_stays_in_the_den(
    seat: int, place: str, audience: frozenset[int]
) -> None:
    night, day, pick = night_ended_by_the_last_kill_vote()
    state, events = apply(day, Say(seat, "act surprised", pick - MS))
    line = one(events, MessageAccepted)
    assert (line.place, line.visible_to) == (place, audience)
    assert line.phase_seq == night.phase.seq and line.t == pick - MS
    assert state is day  # a line changes nothing


@pytest.mark.parametrize("seat", [2, 3, 4, 6])  # detective, doctor, bystanders, Gray (killed)
def test_a_bystanders_line_typed_at_night_is_refused_after_the_dawn(seat: int) -> None:
    _, day, pick = night_ended_by_the_last_kill_vote()
    assert_rejected(day, Say(seat, "anyone up?", pick - MS), "typed that line at night")
    if not day.seats[seat].alive:
        return
    # typed after the dawn, the same line is a day line
    line = one(apply(day, Say(seat, "anyone up?", pick + MS))[1], MessageAccepted)
    assert line.place == "stage" and line.phase_seq == day.phase.seq


def test_a_line_stamped_in_the_instant_of_the_change_is_in_the_new_phase() -> None:
    """The engine is exact: the change was applied at ``until``, what is stamped then is in
    the new phase (the service breaks a platform's millisecond ties toward the night)."""
    _, day, pick = night_ended_by_the_last_kill_vote()
    assert one(apply(day, Say(4, "morning", pick))[1], MessageAccepted).place == "stage"
    vote = to_phase(make_game(TABLE), PhaseKind.VOTE)
    dusk = vote.phase.started_at + timedelta(seconds=5)
    night, _ = cast(vote, dict.fromkeys(range(6), 6) | {6: 0}, seconds=5)
    assert night.phase.kind is PhaseKind.NIGHT and night.phase.started_at == dusk
    line = one(apply(night, Say(0, "same ms", dusk))[1], MessageAccepted)
    assert (line.place, line.phase_seq) == ("den", night.phase.seq)
    assert_rejected(night, Say(4, "same ms", dusk), "only the mafia")
    assert apply(night, NightAct(3, 4, dusk))[0].night_actions == {3: 4}


def test_a_day_line_typed_before_the_vote_closed_stays_on_that_days_stage() -> None:
    vote = to_phase(make_game(TABLE), PhaseKind.VOTE)
    ballots = dict.fromkeys(range(6), 6) | {6: 0}
    night, _ = cast(vote, ballots, seconds=5)
    assert night.phase.kind is PhaseKind.NIGHT and not night.seats[6].alive
    typed = vote.phase.started_at + timedelta(seconds=4)
    for seat in (4, 6):  # Gray typed it before being voted out: it was said alive
        line = one(apply(night, Say(seat, "it's not me", typed))[1], MessageAccepted)
        assert (line.place, line.visible_to, line.phase_seq) == ("stage", None, vote.phase.seq)


def test_a_line_typed_while_the_close_was_on_its_way_is_placed_in_the_old_phase() -> None:
    """The deadline closes a grace after it, stamped at the deadline: what was typed before the
    close was applied was typed while its writer still saw the old phase."""
    night = to_phase(make_game(TABLE), PhaseKind.NIGHT_VOTE)
    deadline = night.phase.deadline
    assert deadline is not None
    applied = deadline + timedelta(seconds=1.5)
    day, _ = apply(night, Tick(deadline, applied))
    assert day.phase.started_at == deadline and day.phase.kind is PhaseKind.DAY
    typed = deadline + timedelta(seconds=1)  # after the deadline, before the close
    assert one(apply(day, Say(0, "still night here", typed))[1], MessageAccepted).place == "den"
    assert_rejected(day, Say(4, "morning?", typed), "typed that line at night")
    assert one(apply(day, Say(4, "morning!", applied + MS))[1], MessageAccepted).place == "stage"
    # a vote made after the deadline never counts, in either phase
    assert_rejected(day, Vote(4, 0, typed), "Too late")


def test_a_vote_or_night_action_made_for_an_ended_phase_is_refused() -> None:
    """A day-vote click that arrives in the night must not become a kill vote."""
    vote = to_phase(make_game("M B B Det Doc B B"), PhaseKind.VOTE)
    night_vote, _ = end_phase(vote)  # one mafia: straight to the kill vote
    assert night_vote.phase.kind is PhaseKind.NIGHT_VOTE
    clicked = night_vote.phase.started_at - MS
    assert_rejected(night_vote, Vote(0, 1, clicked), "Too late")
    _, day, pick = night_ended_by_the_last_kill_vote()
    assert_rejected(day, Vote(4, 0, pick - MS), "Too late")
    assert_rejected(day, NightAct(3, 4, pick - MS), "Too late")


def test_a_line_older_than_the_phase_before_is_refused_not_misplaced() -> None:
    night, day, _ = night_ended_by_the_last_kill_vote()
    long_ago = night.phase.started_at - timedelta(seconds=1)
    assert_rejected(day, Say(0, "from the day", long_ago), "too long ago")


def test_the_prior_phase_is_kept_through_the_log_round_trip() -> None:
    """Replaying the stored actions rebuilds the same judgement (resume after a crash)."""
    night = to_phase(make_game(TABLE), PhaseKind.NIGHT_VOTE)
    assert night.phase.deadline is not None
    tick = Tick(night.phase.deadline, night.phase.deadline + timedelta(seconds=1))
    assert action_from_dict(action_to_dict(tick)) == tick
    assert action_from_dict({"kind": "tick", "t": tick.t.isoformat()}) == Tick(tick.t)
    day, _ = apply(night, tick)
    again, _ = apply(night, action_from_dict(action_to_dict(tick)))
    assert day == again and day.prior is not None and day.prior.until == tick.applied
