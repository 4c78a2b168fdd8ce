"""Random legal and illegal play: the engine never crashes and keeps its invariants.

Each game draws its size, roles and tie rules from a seeded ``random.Random``, then plays
phases of random actions (many of them illegal) followed by a Tick at the deadline. An
independent oracle (:func:`legal`) says from the rules alone whether each action must be
accepted; the engine must agree, and refusals must leave the state untouched.

"Cooperative" games add one rule for the mafia so that play must end: in every night vote
they all vote for the same target, and they repeat a target the doctor saved. As the doctor
can't protect the same player two nights running, somebody dies at least every second night,
so a game ends within ``8 * players + 8`` phases. Purely random games (where nobody need
ever be eliminated) are capped instead and only checked for the invariants.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import pytest

from games import (
    Abort,
    GameConfig,
    NightAct,
    PhaseKind,
    RuleError,
    Say,
    Tick,
    Vote,
    apply,
    new_game,
)
from games.actions import Action, Extend
from games.config import TIE_RULES
from games.events import (
    Event,
    GameOver,
    NightActionRecorded,
    PhaseEnded,
    PhaseStarted,
    PlayerEliminated,
    VoteCast,
    event_from_dict,
    event_to_dict,
    is_draw,
)
from games.state import GameState
from tests.games.helpers import NAMES, T0

ROLE_SETS = [(), ("detective",), ("doctor",), ("detective", "doctor")]
TEXTS = ["I trust Ari.", "hmm", "", "   ", "\x08\x07", "ok\x00 then", "x" * 201]
MAX_CHARS = 200


@dataclass
class Tracker:
    """What the oracle remembers from accepted events (not from engine internals)."""

    #: night number -> the doctor's last protect target that night
    protected: dict[int, int] = field(default_factory=dict)
    #: the last vote of each voter in the current vote phase
    votes: dict[int, int | None] = field(default_factory=dict)
    phase_seq: int = 0


def clean(text: str) -> str:
    return "".join(ch for ch in text if ch in "\n\t" or ch.isprintable()).strip()


def legal(state: GameState, action: Action, memo: Tracker) -> bool:
    """The rules, written independently of the engine."""
    if isinstance(action, Tick):
        return True
    if state.over:
        return False
    if isinstance(action, Abort):
        return True
    kind = state.phase.kind
    n = len(state.seats)
    assert not isinstance(action, Extend)  # the strategies never make one
    if not 0 <= action.seat < n or not state.seats[action.seat].alive:
        return False
    me = state.seats[action.seat]
    if isinstance(action, Say):
        text = clean(action.text)
        return bool(text) and len(text) <= MAX_CHARS and (kind.is_day or me.role == "mafia")
    if isinstance(action, Vote):
        if kind is PhaseKind.VOTE:
            night = False
        elif kind is PhaseKind.NIGHT_VOTE and me.role == "mafia":
            night = True
        else:
            return False
        if action.target is None:
            return True
        if not 0 <= action.target < n or action.target == action.seat:
            return False
        target = state.seats[action.target]
        return target.alive and not (night and target.role == "mafia")
    assert isinstance(action, NightAct)
    if me.role not in ("detective", "doctor") or not kind.is_night:
        return False
    if not 0 <= action.target < n or not state.seats[action.target].alive:
        return False
    if me.role == "detective":
        return action.target != action.seat
    return memo.protected.get(state.phase.number - 1) != action.target


def random_action(rng: random.Random, state: GameState, t: datetime, abort: float) -> Action:
    """Any action at all; half the time from a seat that may act now, so play moves on."""
    n = len(state.seats)
    likely = sorted(state.alive())
    roll = rng.random()
    if roll < abort:
        return Abort(t, "random abort")
    if roll < 0.3:
        if state.phase.kind.is_night:
            likely = sorted(state.alive_mafia())
        seat = rng.choice(likely) if rng.random() < 0.5 else rng.randrange(-1, n + 1)
        return Say(seat, rng.choice(TEXTS), t)
    if roll < 0.75:
        likely = sorted(state.eligible_voters()) or likely
        seat = rng.choice(likely) if rng.random() < 0.5 else rng.randrange(-1, n + 1)
        target = rng.choice([None, *likely, *range(-1, n + 1)])
        return Vote(seat, target, t)
    actors = [s.index for s in state.seats if s.role in ("detective", "doctor")] or likely
    seat = rng.choice(actors) if rng.random() < 0.7 else rng.randrange(-1, n + 1)
    return NightAct(seat, rng.choice([*likely, *range(-1, n + 1)]), t)


def snapshot(state: GameState) -> GameState:
    """A copy that shares nothing mutable with ``state`` (only its mappings could change)."""
    return replace(
        state,
        votes=dict(state.votes),
        night_actions=dict(state.night_actions),
        last_night_actions=dict(state.last_night_actions),
    )


def check_step(
    old: GameState, new: GameState, events: list[Event], action: Action, memo: Tracker
) -> None:
    """Invariants of one accepted action."""
    assert new.alive() <= old.alive()  # alive counts only fall
    assert new.seats[0].name == old.seats[0].name and len(new.seats) == len(old.seats)
    assert old.phase.seq <= new.phase.seq <= old.phase.seq + 1  # at most one phase ends
    assert len([e for e in events if isinstance(e, PhaseStarted)]) <= 1
    if new != old:
        assert events, "every state change emits an event"
    if isinstance(action, Tick) and old.phase.deadline and action.t < old.phase.deadline:
        assert events == [] and new.phase == old.phase
    for event in events:
        assert event.t == action.t
        back = event_from_dict(event_to_dict(event))
        assert back == event
        if event.place == "den":
            assert event.visible_to and event.visible_to <= old.alive_mafia()
        elif event.place == "booth":
            assert event.visible_to is not None and len(event.visible_to) == 1
            (seat,) = event.visible_to
            assert getattr(event, "seat", seat) == seat
        else:
            assert event.visible_to is None
        if isinstance(event, PlayerEliminated):
            assert old.seats[event.seat].alive and not new.seats[event.seat].alive
            assert event.role == old.seats[event.seat].role
            if event.cause == "night":
                assert not old.seats[event.seat].is_mafia
        if isinstance(event, VoteCast):
            assert event.changed == (event.voter in memo.votes)
            memo.votes[event.voter] = event.target
        if isinstance(event, NightActionRecorded) and event.role == "doctor":
            memo.protected[old.phase.number] = event.target
        if isinstance(event, PhaseStarted):
            seconds = {
                "day": new.config.day_seconds,
                "vote": new.config.vote_seconds,
                "night": new.config.night_seconds,
                "night_vote": new.config.night_vote_seconds,
            }[event.phase]
            assert event.deadline == event.t + timedelta(seconds=seconds)
            assert event.deadline == new.phase.deadline
        if isinstance(event, PhaseEnded) and event.reason == "all_voted":
            assert set(memo.votes) >= old.eligible_voters()
    if new.phase.seq != memo.phase_seq:
        memo.votes = {}
        memo.phase_seq = new.phase.seq
    over = [e for e in events if isinstance(e, GameOver)]
    if new.over:
        assert len(over) == 1 or old.over
    if over:
        check_winner(new, over[0], action)
    elif not new.over:
        mafia = len(new.alive_mafia())
        assert 0 < mafia < len(new.alive()) - mafia  # a win was never missed


def check_winner(state: GameState, over: GameOver, action: Action) -> None:
    mafia = len(state.alive_mafia())
    others = len(state.alive()) - mafia
    assert over.winner == state.winner
    if state.winner == "bystanders":
        assert mafia == 0
    elif state.winner == "mafia":
        assert mafia > 0 and mafia >= others
    elif is_draw(over.winner, over.reason):  # nobody out for the config's days in a row
        assert state.quiet_votes >= 2 * state.config.draw_after_quiet_days
        assert 0 < mafia < others
    else:
        assert isinstance(action, Abort)
    assert over.roles == tuple((s.name, s.role) for s in state.seats)


@dataclass
class Played:
    config: GameConfig
    names: tuple[str, ...]
    seed: int
    actions: list[Action]
    states: list[GameState]
    events: list[Event]
    phases: int


def play(seed: int, cooperative: bool, max_phases: int = 40) -> Played:
    rng = random.Random(seed)
    players = rng.randint(5, 12)
    config = GameConfig(
        roles=rng.choice(ROLE_SETS),
        tie_rule=rng.choice(TIE_RULES),
        night_tie_rule=rng.choice(TIE_RULES),
        skip_night_talk_single_mafia=rng.random() < 0.8,
        max_message_chars=MAX_CHARS,
        day_seconds=rng.choice([30.0, 120.0]),
        vote_seconds=rng.choice([10.0, 45.0]),
    )
    names = NAMES[:players]
    state, events = new_game(config, names, seed, T0)
    memo = Tracker(phase_seq=state.phase.seq)
    played = Played(config, names, seed, [], [state], list(events), 1)
    mafia_target: int | None = None
    limit = 8 * players + 8 if cooperative else max_phases
    t = T0

    def step(action: Action) -> None:
        nonlocal state
        before = snapshot(state)
        if not legal(state, action, memo):
            with pytest.raises(RuleError) as refused:
                apply(state, action)
            assert str(refused.value).strip()  # a message for the player
            assert state == before
            return
        new, more = apply(state, action)
        assert state == before  # the old state is never mutated
        check_step(state, new, more, action, memo)
        played.actions.append(action)
        played.states.append(new)
        played.events.extend(more)
        if new.phase.seq != state.phase.seq:
            played.phases += 1
        state = new

    while not state.over:
        assert played.phases <= limit, f"game {seed} did not end within {limit} phases"
        if not cooperative and played.phases >= limit:
            break
        seq, deadline = state.phase.seq, state.phase.deadline
        assert deadline is not None
        room = (deadline - t) / (4 * players + 4)
        for _ in range(rng.randint(0, 3 * players)):
            if state.over or state.phase.seq != seq:
                break
            t += room * rng.random()
            action = random_action(rng, state, t, abort=0.0 if cooperative else 0.002)
            if cooperative and isinstance(action, Vote) and state.phase.kind.is_night:
                continue  # the mafia's night votes are the consensus below
            step(action)
            if not cooperative and state.over:
                break
        if cooperative and state.phase.kind is PhaseKind.NIGHT_VOTE and state.phase.seq == seq:
            alive_town = sorted(state.alive() - state.mafia())
            if mafia_target not in alive_town:  # killed (or first night): pick someone new
                mafia_target = rng.choice(alive_town)
            for mafia in sorted(state.alive_mafia()):
                if state.phase.seq == seq:
                    t += room * rng.random()
                    step(Vote(mafia, mafia_target, t))
        if state.over:
            break
        if state.phase.seq == seq:
            t = deadline
            step(Tick(t))
        t = max(t, state.phase.started_at)
    return played


@pytest.mark.parametrize("block", range(10))
def test_cooperative_random_games_end_and_keep_invariants(block: int) -> None:
    for seed in range(block * 15, block * 15 + 15):
        final = play(seed, cooperative=True).states[-1]
        assert final.over and final.winner in ("mafia", "bystanders")


@pytest.mark.parametrize("block", range(10))
def test_chaotic_random_games_keep_invariants(block: int) -> None:
    for seed in range(1000 + block * 15, 1000 + block * 15 + 15):
        play(seed, cooperative=False)


@pytest.mark.parametrize("seed", [3, 17, 1001, 1042])
def test_replaying_a_random_game_gives_identical_states_and_events(seed: int) -> None:
    played = play(seed, cooperative=seed < 1000)
    state, events = new_game(played.config, played.names, played.seed, T0)
    states = [state]
    for action in played.actions:
        state, more = apply(state, action)
        states.append(state)
        events.extend(more)
    assert states == played.states
    assert events == played.events


def test_random_games_cover_both_winners_and_every_phase_kind() -> None:
    """Guards the property tests: the random play really reaches the interesting places."""
    winners = set()
    kinds = set()
    for seed in range(40):
        played = play(seed, cooperative=True)
        winners.add(played.states[-1].winner)
        kinds |= {s.phase.kind for s in played.states}
    assert {"mafia", "bystanders"} <= winners
    assert kinds == set(PhaseKind)
