"""PolicyPlayer: intents are carried out at their game time, through the port, one at a time."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from agent.base import Intent
from agent.baseline import BaselinePolicy
from agent.driver import PolicyPlayer
from games import GameConfig, RuleError, apply, new_game
from games.actions import Action, NightAct, Say, Tick, Vote
from games.events import Event, GameOver, PhaseStarted, visible
from games.names import pick_names, resolve_name
from games.state import GameState

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


class FakeClock:
    def __init__(self) -> None:
        self.t = T0

    def now(self) -> datetime:
        return self.t

    def seconds_to_real(self, game_seconds: float) -> float:
        return game_seconds


@dataclass
class _Timer:
    when: datetime
    order: int
    callback: Callable[[], Awaitable[None]]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


@dataclass
class FakeTimers:
    """Game-time callbacks run by :meth:`run_until`, in time order, on the fake clock."""

    clock: FakeClock
    timers: list[_Timer] = field(default_factory=list)

    def call_at(self, when: datetime, callback: Callable[[], Awaitable[None]]) -> _Timer:
        timer = _Timer(when, len(self.timers), callback)
        self.timers.append(timer)
        return timer

    def pending(self) -> list[_Timer]:
        return [t for t in self.timers if not t.cancelled]

    async def run_until(self, until: datetime) -> None:
        while True:
            due = sorted(
                (t for t in self.pending() if t.when <= until), key=lambda t: (t.when, t.order)
            )
            if not due:
                break
            timer = due[0]
            timer.cancelled = True  # fired: a timer runs once
            self.clock.t = max(self.clock.t, timer.when)
            await timer.callback()
        self.clock.t = max(self.clock.t, until)


@dataclass
class FakePort:
    clock: FakeClock
    seat: int = 0
    calls: list[tuple[datetime, str, str | None]] = field(default_factory=list)
    refuse_with: str | None = None
    #: the port itself fails (the database is down), not the rules
    fail_with: Exception | None = None
    gate: asyncio.Event | None = None
    #: the ``made`` moment each vote or night action was passed
    made: list[datetime | None] = field(default_factory=list)

    async def _act(self, kind: str, arg: str | None) -> None:
        self.calls.append((self.clock.now(), kind, arg))
        if self.gate is not None:
            await self.gate.wait()
        if self.fail_with is not None:
            raise self.fail_with
        if self.refuse_with is not None:
            raise RuleError(self.refuse_with)

    async def say(self, text: str) -> None:
        await self._act("say", text)

    async def vote(self, target: str | None, *, made: datetime | None = None) -> None:
        self.made.append(made)
        await self._act("vote", target)

    async def night_act(self, target: str, *, made: datetime | None = None) -> None:
        self.made.append(made)
        await self._act("night_act", target)


class ScriptedPolicy:
    """Wants ``intents`` in order; the next one only after ``done`` (or an event) says so."""

    def __init__(self, intents: list[Intent]) -> None:
        self.intents = list(intents)
        self.seen: list[Event] = []
        self.outcomes: list[tuple[Intent, str | None]] = []
        self.plans = 0

    def observe(self, event: Event) -> None:
        self.seen.append(event)

    def plan(self, now: datetime) -> Intent | None:
        self.plans += 1
        return self.intents[0] if self.intents else None

    def done(self, intent: Intent, error: str | None) -> None:
        self.outcomes.append((intent, error))
        self.intents.remove(intent)


def phase_event(seconds: float = 0) -> PhaseStarted:
    return PhaseStarted(t=at(seconds), phase="day", number=1, seq=1, deadline=at(120), seconds=120)


def rig(intents: list[Intent]) -> tuple[PolicyPlayer, ScriptedPolicy, FakePort, FakeTimers]:
    clock = FakeClock()
    timers = FakeTimers(clock)
    port = FakePort(clock)
    policy = ScriptedPolicy(intents)
    return PolicyPlayer(policy, port, clock, timers), policy, port, timers


async def test_intents_are_carried_out_at_their_game_time() -> None:
    player, policy, port, timers = rig(
        [
            Intent(at(5), "say", text="hi all"),
            Intent(at(9), "vote", target="Blake"),
            Intent(at(12), "night_act", target="Casey"),
        ]
    )
    await player.on_event(phase_event())
    await timers.run_until(at(4.9))
    assert port.calls == []
    await timers.run_until(at(30))
    assert port.calls == [
        (at(5), "say", "hi all"),
        (at(9), "vote", "Blake"),
        (at(12), "night_act", "Casey"),
    ]
    assert [error for _i, error in policy.outcomes] == [None, None, None]


async def test_one_timer_until_the_plan_changes() -> None:
    first = Intent(at(5), "say", text="hi")
    player, policy, _port, timers = rig([first])
    for _ in range(5):
        await player.on_event(phase_event())
    assert len(timers.timers) == 1  # the same intent: no re-arming

    second = Intent(at(3), "say", text="earlier")
    policy.intents.insert(0, second)
    await player.on_event(phase_event())
    assert len(timers.pending()) == 1
    assert timers.timers[0].cancelled
    assert timers.pending()[0].when == at(3)
    assert player.armed == second


async def test_a_time_in_the_past_fires_promptly() -> None:
    player, _policy, port, timers = rig([Intent(at(-30), "say", text="late")])
    timers.clock.t = at(10)
    await player.on_event(phase_event(10))
    assert timers.pending()[0].when == at(10)
    await timers.run_until(at(10))
    assert port.calls == [(at(10), "say", "late")]


async def test_a_vote_whose_timer_ran_late_counts_as_made_when_it_was_due() -> None:
    """The process stalled across the vote's moment (a loaded machine, a long collection):
    the timer runs late, and the vote says when it was due, so the service counts it as made
    then, as a person's click on its way (a stall across the deadline never loses it). On
    time, no moment is passed: the service stamps it when it arrives."""
    player, _, port, timers = rig(
        [Intent(at(30), "vote", target="Bob"), Intent(at(50), "night_act", target="Cy")]
    )
    await player.on_event(phase_event())
    timers.clock.t = at(34)  # the loop was stalled: the timer due at 30 s runs now
    await timers.run_until(at(40))
    await timers.run_until(at(60))  # the night action's timer runs on time
    assert [(t, kind) for t, kind, _ in port.calls] == [(at(34), "vote"), (at(50), "night_act")]
    assert port.made == [at(30), None]


async def test_refusals_reach_the_policy_with_the_rule_text() -> None:
    player, policy, port, timers = rig([Intent(at(1), "vote", target="Nobody")])
    port.refuse_with = "No player called 'Nobody' here."
    await player.on_event(phase_event())
    await timers.run_until(at(5))
    assert policy.outcomes == [
        (Intent(at(1), "vote", target="Nobody"), "No player called 'Nobody' here.")
    ]


async def test_a_deferred_line_is_neither_said_nor_refused_and_waits_for_an_event() -> None:
    """A line the port defers (it came due while the bot was restarting) reaches the policy
    as nothing at all: not said, not refused (twice refused, a seat stops talking); the player
    asks the policy again at its next event, not at once (the same line would fire again)."""
    from agent.base import Deferred

    line = Intent(at(1), "say", text="hmm")
    player, policy, port, timers = rig([line])
    port.fail_with = Deferred("restarting")
    await player.on_event(phase_event())
    await timers.run_until(at(5))
    assert len(port.calls) == 1 and policy.outcomes == [] and player.armed is None
    assert not player._failing  # not an outage of the port either
    port.fail_with = None
    await player.on_event(phase_event(6))
    await timers.run_until(at(10))
    assert len(port.calls) == 2 and policy.outcomes == [(line, None)]


async def test_a_deferred_line_is_planned_again_from_an_event_that_came_while_it_waited() -> None:
    """The port holds a line that came due in a restart until the input is back, and the
    event that gives the phase its time back reaches the player while it waits: once the
    line is deferred, the player plans from that event at once, not at the next one (on a
    quiet table the seat waited for someone else to speak first). Fails on the driver that
    planned again only at the next event. The same line again is not armed (it would come
    out the moment the input is back)."""
    from agent.base import Deferred

    line = Intent(at(1), "say", text="hmm")
    later = Intent(at(20), "say", text="drawn again")
    player, policy, port, timers = rig([line])
    port.gate = asyncio.Event()
    port.fail_with = Deferred("restarting")
    await player.on_event(phase_event())
    firing = asyncio.create_task(timers.run_until(at(5)))
    await asyncio.sleep(0)
    assert port.calls == [(at(1), "say", "hmm")]
    await player.on_event(phase_event(2))  # the time given back, while the line waits
    port.gate.set()
    await firing
    assert player.armed is None  # the policy's plan is still that very line: not armed
    policy.intents = [later]  # (a policy that drew its line again from that event)
    port.gate = asyncio.Event()
    await player.on_event(phase_event(6))
    firing = asyncio.create_task(timers.run_until(at(21)))
    await asyncio.sleep(0)
    policy.intents = [Intent(at(25), "say", text="drawn from the extension")]
    await player.on_event(phase_event(21))
    port.gate.set()
    await firing
    assert player.armed == Intent(at(25), "say", text="drawn from the extension")
    assert policy.outcomes == []


async def test_close_cancels_and_silences_everything() -> None:
    player, policy, port, timers = rig([Intent(at(5), "say", text="never sent")])
    await player.on_event(phase_event())
    assert timers.pending()
    await player.close()
    assert timers.pending() == []
    await player.on_event(phase_event())
    await timers.run_until(at(60))
    assert port.calls == []
    assert len(policy.seen) == 1


async def test_game_over_closes_the_player() -> None:
    player, _policy, port, timers = rig([Intent(at(5), "say", text="never sent")])
    await player.on_event(phase_event())
    await player.on_event(GameOver(t=at(1), winner="mafia", reason="x", roles=()))
    await timers.run_until(at(60))
    assert port.calls == [] and timers.pending() == []


async def test_at_most_one_action_in_flight() -> None:
    player, policy, port, timers = rig(
        [Intent(at(1), "say", text="slow line"), Intent(at(2), "say", text="next")]
    )
    port.gate = asyncio.Event()
    await player.on_event(phase_event())
    firing = asyncio.create_task(timers.run_until(at(1)))
    await asyncio.sleep(0)
    assert port.calls == [(at(1), "say", "slow line")]
    # events keep arriving while the port is busy: observed, but nothing new is armed
    await player.on_event(phase_event())
    await player.on_event(phase_event())
    assert timers.pending() == []
    assert len(policy.seen) == 3
    port.gate.set()
    await firing
    assert policy.outcomes == [(Intent(at(1), "say", text="slow line"), None)]
    assert [t.when for t in timers.pending()] == [at(2)]


# --- a whole game of baseline players through drivers, on fake time ---------------------------


class EnginePort:
    """A seat's port backed by the real engine; events go to every player that may see them."""

    def __init__(self, table: Table, seat: int) -> None:
        self.table = table
        self._seat = seat

    @property
    def seat(self) -> int:
        return self._seat

    async def say(self, text: str) -> None:
        await self.table.act(Say(self._seat, text, self.table.clock.now()))

    async def vote(self, target: str | None, *, made: datetime | None = None) -> None:
        seat = None if target is None else resolve_name(target, self.table.names)
        await self.table.act(Vote(self._seat, seat, made or self.table.clock.now()))

    async def night_act(self, target: str, *, made: datetime | None = None) -> None:
        seat = resolve_name(target, self.table.names)
        await self.table.act(NightAct(self._seat, seat, made or self.table.clock.now()))


class Table:
    def __init__(self, players: int, seed: int) -> None:
        self.clock = FakeClock()
        self.timers = FakeTimers(self.clock)
        state, self.first = new_game(
            GameConfig(), pick_names(players, random.Random(seed)), seed, T0
        )
        self.state: GameState = state
        self.names = {s.index: s.name for s in state.seats}
        self.players = [
            PolicyPlayer(
                BaselinePolicy(i, self.names[i], random.Random(f"{seed}:{i}")),
                EnginePort(self, i),
                self.clock,
                self.timers,
            )
            for i in range(players)
        ]
        self.log: list[Event] = []

    async def act(self, action: Action) -> None:
        self.state, events = apply(self.state, action)
        await self.broadcast(events)

    async def broadcast(self, events: list[Event]) -> None:
        for event in events:
            self.log.append(event)
            for i, player in enumerate(self.players):
                if visible(event, i):
                    await player.on_event(event)

    async def play(self) -> None:
        await self.broadcast(self.first)
        while not self.state.over:
            deadline = self.state.phase.deadline
            assert deadline is not None
            await self.timers.run_until(deadline)
            if not self.state.over:
                await self.act(Tick(self.clock.now()))


async def test_baseline_players_finish_a_game_through_their_drivers() -> None:
    table = Table(7, seed=11)
    await table.play()
    assert table.state.winner in ("mafia", "bystanders")
    says = [e for e in table.log if e.kind == "message"]
    assert len(says) > 20
    assert table.timers.pending() == []  # every player closed itself at game over


async def test_an_outage_is_one_warning_per_seat_not_one_per_refused_action(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """While the port fails (the database is down), every action is refused to the policy,
    but the log says so once (with the traceback), then once more for the next outage."""
    intents = [Intent(at(i), "say", text=f"line {i}") for i in range(1, 9)]
    player, policy, port, timers = rig(intents)
    port.fail_with = ConnectionError("database unreachable")
    caplog.set_level(logging.DEBUG, logger="agent.driver")
    await player.on_event(phase_event())
    await timers.run_until(at(4.5))  # lines 1-4 refused: one outage
    port.fail_with = None
    await timers.run_until(at(5.5))  # line 5 goes through
    port.fail_with = ConnectionError("database unreachable")
    await timers.run_until(at(30))  # lines 6-8 refused: a second outage

    errors = [error for _intent, error in policy.outcomes]
    assert errors[4] is None
    assert all(e == "could not say: database unreachable" for e in errors[:4] + errors[5:])
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.getMessage() for r in warnings] == [
        "seat 0: say failed; this seat's actions are refused until it works again"
    ] * 2
    assert all(r.exc_info is not None for r in warnings)
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.INFO] == [
        "seat 0: acting again"
    ]


async def test_a_refusal_by_the_rules_ends_an_outage(caplog: pytest.LogCaptureFixture) -> None:
    """A rule refusal means the port reached the game again: the outage is over, so the next
    one is warned about (not hidden at debug level as the same outage going on)."""
    intents = [Intent(at(i), "say", text=f"line {i}") for i in range(1, 7)]
    player, policy, port, timers = rig(intents)
    port.fail_with = ConnectionError("database unreachable")
    caplog.set_level(logging.DEBUG, logger="agent.driver")
    await player.on_event(phase_event())
    await timers.run_until(at(2.5))  # lines 1-2 refused: the first outage
    port.fail_with = None
    port.refuse_with = "You are dead."
    await timers.run_until(at(3.5))  # line 3 reaches the engine, which refuses it
    port.refuse_with = None
    port.fail_with = ConnectionError("database unreachable")
    await timers.run_until(at(30))  # lines 4-6 refused: a second outage

    assert [error for _intent, error in policy.outcomes][2] == "You are dead."
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert (
        warnings == ["seat 0: say failed; this seat's actions are refused until it works again"] * 2
    )
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.INFO] == [
        "seat 0: acting again"
    ]
