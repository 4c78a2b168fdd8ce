"""simulate_fast: whole games, deterministic per seed, events only where they may be seen."""

from __future__ import annotations

import random
from collections import Counter
from datetime import datetime

import pytest

from agent.base import Intent, Policy
from agent.baseline import BaselinePolicy
from agent.fastsim import EPOCH, SimulationStuck, simulate_fast
from games import GameConfig
from games.events import (
    Event,
    GameOver,
    MessageAccepted,
    PhaseStarted,
    event_to_dict,
    visible,
)

ROLES = ("detective", "doctor")


@pytest.mark.parametrize("players", range(5, 13))
def test_games_finish_at_every_table_size(players: int) -> None:
    for seed, roles in ((players, ()), (players + 100, ROLES)):
        result = simulate_fast(GameConfig(roles=roles), players, seed)
        assert result.winner in ("mafia", "bystanders")
        assert len(result.seats) == players
        assert Counter(r for _n, r in result.seats)["mafia"] == GameConfig().mafia_count(players)
        assert result.phases >= 2 and result.messages > 0 and result.votes > 0
        assert result.refused == 0


def test_same_seed_same_game() -> None:
    a = simulate_fast(GameConfig(roles=ROLES), 8, 42, keep_events=True)
    b = simulate_fast(GameConfig(roles=ROLES), 8, 42, keep_events=True)
    assert a.events is not None and b.events is not None
    assert [event_to_dict(e) for e in a.events] == [event_to_dict(e) for e in b.events]
    assert a == b


def test_the_default_table_plays_move_for_move_like_separate_baseline_policies() -> None:
    """The default path (one shared ledger, events handed only to the seats they concern,
    only changed seats asked again) is an optimisation of the generic path, nothing more."""

    def separate(seat: int, name: str, rng: random.Random) -> Policy:
        return BaselinePolicy(seat, name, rng)

    for players, roles, seeds in ((8, (), range(12)), (9, ROLES, range(8)), (5, (), range(4))):
        for seed in seeds:
            fast = simulate_fast(GameConfig(roles=roles), players, seed, keep_events=True)
            plain = simulate_fast(
                GameConfig(roles=roles), players, seed, separate, keep_events=True
            )
            assert fast.events is not None and plain.events is not None
            assert [event_to_dict(e) for e in fast.events] == [
                event_to_dict(e) for e in plain.events
            ], (players, roles, seed)
            assert fast == plain


def test_no_line_is_ever_said_twice_in_a_game() -> None:
    """Two players posting the very same line is a tell: a seat whose planned line was just
    said word for word by someone else says something else instead."""
    for players, seeds in ((8, range(40)), (12, range(10))):
        for seed in seeds:
            result = simulate_fast(GameConfig(), players, seed, keep_events=True)
            assert result.events is not None
            said: dict[str, int] = {}
            for e in result.events:
                if isinstance(e, MessageAccepted):
                    folded = e.text.casefold()
                    assert folded not in said, (seed, e.seat, said[folded], e.text)
                    said[folded] = e.seat


def test_different_seeds_different_games() -> None:
    results = [simulate_fast(GameConfig(), 8, seed, keep_events=True) for seed in range(6)]
    transcripts = {tuple(getattr(e, "text", "") for e in r.events or ()) for r in results}
    assert len(transcripts) == 6
    assert len({r.seats for r in results}) > 1


def test_both_teams_win_sometimes() -> None:
    wins = Counter(simulate_fast(GameConfig(), 7, seed).winner for seed in range(40))
    assert wins["mafia"] >= 4 and wins["bystanders"] >= 4


def test_events_are_off_by_default_and_the_game_clock_starts_at_the_epoch() -> None:
    result = simulate_fast(GameConfig(), 6, 1)
    assert result.events is None
    assert result.game_seconds > GameConfig().day_seconds


class Spy:
    """Wraps the baseline and checks every event it is handed."""

    def __init__(self, seat: int, name: str, rng: random.Random, log: list[str]) -> None:
        self.seat = seat
        self.inner = BaselinePolicy(seat, name, rng)
        self.log = log
        self.count = 0

    def observe(self, event: Event) -> None:
        if not visible(event, self.seat):
            self.log.append(f"seat {self.seat} got {event!r}")
        self.count += 1
        self.inner.observe(event)

    def plan(self, now: datetime) -> Intent | None:
        return self.inner.plan(now)

    def done(self, intent: Intent, error: str | None) -> None:
        self.inner.done(intent, error)


def test_no_seat_is_ever_handed_an_event_it_may_not_see() -> None:
    problems: list[str] = []
    spies: list[Spy] = []

    def factory(seat: int, name: str, rng: random.Random) -> Policy:
        spy = Spy(seat, name, rng, problems)
        spies.append(spy)
        return spy

    for seed in range(8):
        spies.clear()
        result = simulate_fast(GameConfig(roles=ROLES), 9, seed, factory, keep_events=True)
        assert result.events is not None
        private = [e for e in result.events if e.visible_to is not None]
        assert any(e.place == "den" for e in private) and any(e.place == "booth" for e in private)
        for spy in spies:
            expected = sum(visible(e, spy.seat) for e in result.events)
            assert spy.count == expected  # every visible event, and nothing else
    assert problems == []


class Stubborn:
    """Votes by day whatever the phase, at the same instant, forever."""

    def __init__(self, seat: int, name: str, rng: random.Random) -> None:
        self.errors: list[str] = []

    def observe(self, event: Event) -> None:
        pass

    def plan(self, now: datetime) -> Intent | None:
        return Intent(EPOCH, "vote", target="nobody at all")

    def done(self, intent: Intent, error: str | None) -> None:
        assert error is not None
        self.errors.append(error)


def test_a_livelock_is_caught() -> None:
    with pytest.raises(SimulationStuck, match="without time moving on"):
        simulate_fast(GameConfig(), 5, 0, Stubborn, max_steps_per_instant=50)


class Hasty:
    """Tries to vote during the discussion once, then lets the baseline play."""

    def __init__(self, seat: int, name: str, rng: random.Random) -> None:
        self.inner = BaselinePolicy(seat, name, rng)
        self.tried = False
        self.errors: list[str] = []

    def observe(self, event: Event) -> None:
        self.inner.observe(event)

    def plan(self, now: datetime) -> Intent | None:
        if not self.tried:
            return Intent(EPOCH, "vote", target=None)
        return self.inner.plan(now)

    def done(self, intent: Intent, error: str | None) -> None:
        if not self.tried:
            self.tried = True
            self.errors.append(error or "")
            return
        self.inner.done(intent, error)


def test_refusals_go_to_the_policy_and_the_game_goes_on() -> None:
    seats: list[Hasty] = []

    def factory(seat: int, name: str, rng: random.Random) -> Policy:
        seats.append(Hasty(seat, name, rng))
        return seats[-1]

    result = simulate_fast(GameConfig(), 6, 3, factory, keep_events=True)
    assert result.refused == 6
    refusal = "Voting hasn't started yet: it opens when the discussion ends."
    assert [h.errors for h in seats] == [[refusal]] * 6
    assert result.events is not None and isinstance(result.events[-1], GameOver)
    assert sum(isinstance(e, PhaseStarted) for e in result.events) == result.phases


def test_the_actions_are_built_the_fast_way_and_equal_the_ordinary_ones() -> None:
    """fastsim fills a line's, a vote's and a tick's fields at once; each fast path is taken
    only while the action has the fields it fills. A field added to an action must be added
    there too (Vote's ``applied`` once left its fast path silently off)."""
    from agent import fastsim
    from games.actions import Say, Tick, Vote

    assert fastsim._FAST_SAY and fastsim._FAST_VOTE and fastsim._FAST_TICK
    t = EPOCH
    names, seats = {0: "Quinn", 1: "Drew"}, {"Quinn": 0, "Drew": 1}
    say = fastsim._action(Intent(t, "say", text="hi all"), 0, t, names, seats)
    vote = fastsim._action(Intent(t, "vote", target="Drew"), 0, t, names, seats)
    abstain = fastsim._action(Intent(t, "vote"), 1, t, names, seats)
    assert say == Say(0, "hi all", t) and hash(say) == hash(Say(0, "hi all", t))
    assert vote == Vote(0, 1, t) and hash(vote) == hash(Vote(0, 1, t))
    assert abstain == Vote(1, None, t)
    assert fastsim._tick(t) == Tick(t) and hash(fastsim._tick(t)) == hash(Tick(t))
