"""Events and actions survive a JSON round trip; the Game-Manager narrates them."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime, timedelta

import pytest

from games import Abort, GameConfig, NightAct, PhaseKind, Say, Tick, Vote, apply, new_game
from games.actions import Action, Extend, action_from_dict, action_kind, action_to_dict
from games.events import (
    EVENT_TYPES,
    Event,
    GameOver,
    NightResult,
    PhaseStarted,
    PlayerEliminated,
    VoteCast,
    VoteResolved,
    event_from_dict,
    event_to_dict,
)
from games.narration import MANAGER, duration, manager_line
from games.state import GameState
from tests.games.helpers import NAMES, T0, at, to_phase


def full_game() -> tuple[GameState, list[Event]]:
    """A real deal (seed 0) with every role, played so that every event type appears."""
    config = GameConfig(roles=("detective", "doctor"))
    state, events = new_game(config, NAMES[:7], 0, T0)
    role = {s.role: s.index for s in reversed(state.seats)}
    mafia = sorted(state.mafia())
    det, doc = role["detective"], role["doctor"]
    plain = [s.index for s in state.seats if s.role == "bystander"]

    def step(s: GameState, a: Action) -> GameState:
        s, more = apply(s, a)
        events.extend(more)
        return s

    state = step(state, Say(plain[0], "Good evening, everyone.", at(state)))
    state = step(state, Extend(at(state), 30.0))  # the platform's input was down 30 s
    state = to_phase(state, PhaseKind.VOTE)
    state = step(state, Vote(plain[0], plain[1], at(state)))
    state = step(state, Vote(plain[0], mafia[0], at(state, 2)))  # changed vote
    for voter in sorted(state.alive() - {plain[0], mafia[0]}):
        state = step(state, Vote(voter, mafia[0], at(state, 3)))
    state = step(state, Vote(mafia[0], None, at(state, 4)))  # abstains; all voted
    assert not state.seats[mafia[0]].alive
    assert state.phase.kind is PhaseKind.NIGHT_VOTE  # one mafia left: talk skipped
    state = step(state, Say(mafia[1], "Alone tonight.", at(state)))
    state = step(state, NightAct(det, mafia[1], at(state)))
    state = step(state, NightAct(doc, plain[2], at(state)))
    state = step(state, Vote(mafia[1], plain[0], at(state, 2)))
    assert state.phase.kind is PhaseKind.DAY and not state.seats[plain[0]].alive
    state = to_phase(state, PhaseKind.VOTE)
    for voter in sorted(state.alive()):
        state = step(state, Vote(voter, mafia[1] if voter != mafia[1] else det, at(state)))
    assert state.over and state.winner == "bystanders"
    return state, events


#: events only setups beyond LLMafia's produce (tests/games/test_abilities.py covers them)
SETUP_ONLY = {"private_note", "solo_win"}


def test_full_game_produces_every_event_type() -> None:
    _, events = full_game()
    assert {e.kind for e in events} == set(EVENT_TYPES) - SETUP_ONLY


def test_every_event_round_trips_through_json() -> None:
    _, events = full_game()
    for event in events:
        data = event_to_dict(event)
        assert data["kind"] == event.kind
        text = json.dumps(data)
        back = event_from_dict(json.loads(text))
        assert back == event and type(back) is type(event)
        assert event_to_dict(back) == data


def test_event_dicts_are_plain_json() -> None:
    _, events = full_game()
    for event in events:
        data = event_to_dict(event)
        assert isinstance(data["t"], str)
        if event.visible_to is not None:
            assert data["visible_to"] == sorted(event.visible_to)


def test_the_quick_form_of_an_event_is_exactly_the_deep_copy_form() -> None:
    """Events of plain fields skip `asdict`'s deep copy; the stored form is the same byte for
    byte (the full path is the reference), so old and new rows read back alike."""
    _, events = full_game()
    for event in events:
        reference: dict[str, object] = {"kind": event.kind}
        for key, value in asdict(event).items():
            if isinstance(value, datetime):
                value = value.isoformat()
            elif isinstance(value, frozenset):
                value = sorted(value)
            reference[key] = value
        assert json.dumps(event_to_dict(event)) == json.dumps(reference), event.kind


ACTIONS: list[Action] = [
    Say(3, "I suspect \u201cAri\u201d", T0),
    Vote(1, 2, T0 + timedelta(seconds=3)),
    Vote(1, None, T0),
    NightAct(5, 0, T0),
    Tick(T0 + timedelta(days=2, microseconds=5)),
    Extend(T0, 12.5),
    Abort(T0),
    Abort(T0, "server restart"),
]


@pytest.mark.parametrize("action", ACTIONS)
def test_actions_round_trip_through_json(action: Action) -> None:
    data = action_to_dict(action)
    assert data["kind"] == action_kind(action)
    back = action_from_dict(json.loads(json.dumps(data)))
    assert back == action and type(back) is type(action)
    assert back.t.tzinfo is not None


def test_replaying_the_json_action_log_rebuilds_the_game() -> None:
    """The service's crash recovery: log actions as JSON, replay them, get the same game."""
    config = GameConfig(tie_rule="random", night_tie_rule="random")
    start, _ = new_game(config, NAMES[:7], 4, T0)
    mafia = sorted(start.mafia())
    town = sorted(start.alive() - start.mafia())
    day = start.phase.deadline
    assert day is not None
    second = timedelta(seconds=1)
    actions: list[Action] = [
        Say(0, "hi", T0 + second),
        Tick(day),
        Vote(town[0], town[1], day + second),
        Vote(town[1], town[0], day + 2 * second),
        Tick(day + 45 * second),  # a random tie break
        Tick(day + 90 * second),
        Vote(mafia[0], town[2], day + 91 * second),
        Vote(mafia[1], town[3], day + 92 * second),  # a random night tie break
        Tick(day + 200 * second),
    ]
    live, live_events = start, []
    log: list[str] = []
    for action in actions:
        live, more = apply(live, action)
        live_events += more
        log.append(json.dumps(action_to_dict(action)))
    replayed, replay_events = start, []
    for line in log:
        replayed, more = apply(replayed, action_from_dict(json.loads(line)))
        replay_events += more
    assert replayed == live and replay_events == live_events
    assert len(live.alive()) == 5  # both tie breaks eliminated somebody


# --- narration ------------------------------------------------------------------------------------


def test_manager_lines_for_a_full_game() -> None:
    _, events = full_game()
    for event in events:
        line = manager_line(event)
        if isinstance(event, PlayerEliminated) and event.cause == "vote":
            assert line == f"{event.name} was voted out. Their role was {event.role}"
        elif isinstance(event, PlayerEliminated):
            assert line == f"{event.name} was killed during the night. Their role was {event.role}"
        elif isinstance(event, VoteCast) and event.target_name is None:
            assert line == f"{event.voter_name} abstains."
        elif isinstance(event, VoteCast):
            verb = "changed their vote to" if event.changed else "voted for"
            assert line == f"{event.voter_name} {verb} {event.target_name}"
        elif isinstance(event, PhaseStarted):
            assert line and duration(event.seconds) in line
        elif isinstance(event, GameOver):
            assert line and line.startswith("Bystanders win!")
    assert MANAGER == "Game-Manager"


def _started(phase: str, seconds: float, skipped: bool = False, number: int = 1) -> PhaseStarted:
    return PhaseStarted(
        t=T0, phase=phase, number=number, seq=1, deadline=T0, seconds=seconds, talk_skipped=skipped
    )


@pytest.mark.parametrize(
    ("event", "line"),
    [
        (
            PlayerEliminated(t=T0, seat=4, name="Ziggy", role="mafia", cause="vote"),
            "Ziggy was voted out. Their role was mafia",
        ),
        (
            PlayerEliminated(t=T0, seat=4, name="Sam", role="doctor", cause="night"),
            "Sam was killed during the night. Their role was doctor",
        ),
        (
            VoteCast(
                t=T0,
                voter=0,
                voter_name="Ari",
                target=1,
                target_name="Blake",
                changed=False,
                night=False,
                phase_seq=2,
            ),
            "Ari voted for Blake",
        ),
        (
            VoteCast(
                t=T0,
                voter=0,
                voter_name="Ari",
                target=1,
                target_name="Blake",
                changed=True,
                night=False,
                phase_seq=2,
            ),
            "Ari changed their vote to Blake",
        ),
        (
            VoteCast(
                t=T0,
                voter=0,
                voter_name="Ari",
                target=None,
                target_name=None,
                changed=False,
                night=True,
                phase_seq=2,
            ),
            "Ari abstains.",
        ),
        (
            _started("day", 120, number=2),
            "Now it's Daytime 2 for 2 minutes, everyone can communicate and see messages. "
            "Voting opens after the discussion.",
        ),
        (
            _started("vote", 45),
            "Voting is open for 45 seconds: vote for who you think is mafia. You can change "
            "your vote until the time is up or everyone has voted.",
        ),
        (
            _started("night", 90),
            "Now it's Nighttime for 1.5 minutes, only mafia can communicate and see messages.",
        ),
        (_started("night_vote", 30), "Mafia, vote now on who to kill tonight (30 seconds)."),
        (
            _started("night_vote", 60, skipped=True),
            "Now it's Nighttime for 1 minute, only mafia can act. There is only one mafia member "
            "alive, so no need for discussion - cutting straight to voting!",
        ),
        (
            VoteResolved(
                t=T0,
                night=False,
                tally=(("Ari", 1), ("Blake", 1)),
                abstained=(),
                chosen=None,
                chosen_name=None,
                tied=("Ari", "Blake"),
            ),
            "The vote is tied between Ari and Blake, so nobody is voted out.",
        ),
        (
            VoteResolved(
                t=T0,
                night=True,
                tally=(("Ari", 1), ("Blake", 1), ("Casey", 1)),
                abstained=(),
                chosen=None,
                chosen_name=None,
                tied=("Ari", "Blake", "Casey"),
            ),
            "The vote is tied between Ari, Blake and Casey, so nobody is killed.",
        ),
        (
            VoteResolved(
                t=T0,
                night=False,
                tally=(("Ari", 1), ("Blake", 1)),
                abstained=(),
                chosen=1,
                chosen_name="Blake",
                tied=("Ari", "Blake"),
                tie_broken_randomly=True,
            ),
            "The vote was tied between Ari and Blake; chance picked Blake.",
        ),
        (
            VoteResolved(
                t=T0, night=False, tally=(), abstained=("Ari",), chosen=None, chosen_name=None
            ),
            "No votes were cast, so nobody is voted out.",
        ),
        (NightResult(t=T0, victim=None, victim_name=None), "Nobody was killed during the night."),
        (
            GameOver(t=T0, winner=None, reason="host left", roles=(("Ari", "mafia"),)),
            "The game was stopped (host left). Roles: Ari (mafia).",
        ),
    ],
)
def test_manager_line(event: Event, line: str) -> None:
    assert manager_line(event) == line


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (1, "1 second"),
        (45, "45 seconds"),
        (59.5, "59.5 seconds"),
        (60, "1 minute"),
        (90, "1.5 minutes"),
        (120, "2 minutes"),
        (3600, "60 minutes"),
    ],
)
def test_duration(seconds: float, text: str) -> None:
    assert duration(seconds) == text
