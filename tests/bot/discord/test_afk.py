"""The AFK watch as a service listener: timers armed from events, no Discord, no polling."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.discord.afk import AfkWatch
from bot.discord.options import DiscordOptions
from bot.discord.rooms import Room
from bot.service.clock import GameClock
from bot.service.live import LiveGame
from games.config import GameConfig
from games.engine import new_game
from games.events import MessageAccepted, PhaseStarted, PlayerEliminated, VoteCast

T0 = datetime(2026, 1, 1, tzinfo=UTC)
NAMES = ["Ash", "Bo", "Cy", "Di", "Ed"]


@dataclass
class Timer:
    when: datetime
    callback: Callable[[], Awaitable[None]]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


@dataclass
class Timers:
    armed: list[Timer] = field(default_factory=list)

    def call_at(self, when: datetime, callback: Callable[[], Awaitable[None]]) -> Timer:
        timer = Timer(when, callback)
        self.armed.append(timer)
        return timer

    def pending(self) -> list[datetime]:
        return sorted(t.when for t in self.armed if not t.cancelled)

    async def run_until(self, moment: datetime) -> None:
        """Fire every live timer due by ``moment``, in time order (as the scheduler would)."""
        while True:
            due = sorted(
                (t for t in self.armed if not t.cancelled and t.when <= moment),
                key=lambda t: t.when,
            )
            if not due:
                return
            due[0].cancelled = True
            await due[0].callback()


@dataclass
class Notes:
    posted: list[tuple[int, str]] = field(default_factory=list)

    def booth(self, room: Room, seat: int, text: str, *args: Any, **kwargs: Any) -> None:
        self.posted.append((seat, text))


class OneRoom:
    def __init__(self, room: Room) -> None:
        self.room = room

    def get(self, game_id: str) -> Room | None:
        return self.room if game_id == self.room.game_id else None


def setup(humans: dict[int, int]) -> tuple[AfkWatch, LiveGame, Room, Timers, Notes, list[int]]:
    config = GameConfig()
    state, _ = new_game(config, NAMES, 7, T0)
    timers = Timers()
    game = LiveGame(
        id="g1",
        config=config,
        seed=7,
        status="running",
        clock=GameClock(start=T0),
        timers=timers,  # type: ignore[arg-type]
        state=state,
    )
    room = Room(
        game_id="g1",
        guild_id=1,
        channel_id=2,
        humans=humans,
        started=True,
        afk={"reminder_minutes": 1.0, "takeover_minutes": 3.0},
    )
    notes = Notes()
    taken: list[int] = []

    async def takeover(_: Room, seat: int) -> None:
        taken.append(seat)

    options = DiscordOptions(_env_file=None)
    watch = AfkWatch(OneRoom(room), notes, takeover, options)  # type: ignore[arg-type]
    return watch, game, room, timers, notes, taken


def started(kind: str, at: datetime, seq: int) -> PhaseStarted:
    return PhaseStarted(
        t=at, phase=kind, number=1, seq=seq, deadline=at + timedelta(hours=1), seconds=3600
    )


def line(seat: int, at: datetime) -> MessageAccepted:
    return MessageAccepted(t=at, seat=seat, name=NAMES[seat], text="hi", phase_seq=1)


async def test_a_silent_seat_is_reminded_then_handed_to_an_agent() -> None:
    watch, game, _, timers, notes, taken = setup({0: 100, 1: 101})
    await watch.on_events(game, [started("day", T0, 1)])
    assert timers.pending() == [T0 + timedelta(minutes=1)] * 2  # one timer per human seat
    # seat 1 talks after 30 s: its silence starts again from there
    await watch.on_events(game, [line(1, T0 + timedelta(seconds=30))])
    await timers.run_until(T0 + timedelta(minutes=1))
    assert [s for s, _ in notes.posted] == [0]
    assert "quiet for about 1 minute(s)" in notes.posted[0][1]
    assert "after 3 minutes" in notes.posted[0][1]
    await timers.run_until(T0 + timedelta(seconds=90))
    assert [s for s, _ in notes.posted] == [0, 1]
    await timers.run_until(T0 + timedelta(minutes=3))
    assert taken == [0]
    assert timers.pending() == [T0 + timedelta(seconds=210)]  # seat 1's takeover, later


async def test_a_vote_resets_the_silence_and_the_reminder() -> None:
    watch, game, _, timers, notes, taken = setup({0: 100})
    await watch.on_events(game, [started("day", T0, 1)])
    await timers.run_until(T0 + timedelta(minutes=1))
    assert len(notes.posted) == 1
    vote = VoteCast(
        t=T0 + timedelta(minutes=2),
        voter=0,
        voter_name="Ash",
        target=1,
        target_name="Bo",
        changed=False,
        night=False,
        phase_seq=1,
    )
    await watch.on_events(game, [vote])
    assert timers.pending() == [T0 + timedelta(minutes=3)]  # a reminder again, not a takeover
    await timers.run_until(T0 + timedelta(minutes=3))
    assert len(notes.posted) == 2 and taken == []


async def test_a_night_pauses_a_bystanders_silence_but_not_the_mafias() -> None:
    humans = {0: 100, 1: 101, 2: 102, 3: 103, 4: 104}
    watch, game, _, timers, notes, _ = setup(humans)
    assert game.state is not None
    mafia = next(s.index for s in game.state.seats if s.is_mafia)
    town = next(s.index for s in game.state.seats if not s.is_mafia)
    await watch.on_events(game, [started("day", T0, 1)])
    night = T0 + timedelta(seconds=40)
    await watch.on_events(game, [started("night", night, 2)])
    await timers.run_until(night + timedelta(minutes=5))
    assert [s for s, _ in notes.posted] == [mafia]  # after 60 s of day and night together
    day = night + timedelta(minutes=10)
    await watch.on_events(game, [started("day", day, 3)])
    await timers.run_until(day + timedelta(seconds=19))
    assert town not in [s for s, _ in notes.posted]
    await timers.run_until(day + timedelta(seconds=20))  # 40 s of day 1 + 20 s of day 2
    assert town in [s for s, _ in notes.posted]


async def test_the_eliminated_and_the_agents_are_not_watched() -> None:
    watch, game, _, timers, notes, taken = setup({0: 100})
    await watch.on_events(game, [started("day", T0, 1)])
    gone = PlayerEliminated(t=T0 + timedelta(seconds=5), seat=0, name="Ash", role="x", cause="vote")
    await watch.on_events(game, [gone, line(2, T0 + timedelta(seconds=6))])
    assert timers.pending() == []
    await timers.run_until(T0 + timedelta(hours=1))
    assert notes.posted == [] and taken == []
