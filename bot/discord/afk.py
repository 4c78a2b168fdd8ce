"""Noticing humans who went quiet: a reminder in their booth, then (optionally) an agent.

A service listener: it learns everything from the game's events and arms one timer per human
seat, on the game's own timers (so a fast test clock runs it fast too). Nothing polls.

Silence is counted in game time and only while the seat could act: by day for every living
player, at night only for the mafia (bystanders have nothing to do at night, so a night never
makes anyone "away"). Anything the seat does resets it: a line, a vote, a night action (each
an event: `MessageAccepted`, `VoteCast`, `NightActionRecorded`). A seat's timer is armed for
the moment its silence would reach the reminder (then the takeover) threshold; a phase in
which silence does not count pauses it.

Missed votes need nothing here: the engine counts a living player who did not vote as an
abstention. With automatic takeover on (``afk_takeover_minutes`` > 0, per server), a seat
silent that long is handed to an agent (`Actions.takeover`, through
`GameService.replace_seat`, which emits no event: the table is not told).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.discord.notify import Notifier
from bot.discord.options import DiscordOptions
from bot.discord.rooms import Room, Rooms
from bot.service.live import LiveGame
from bot.service.timers import TimerHandle
from games.events import (
    Event,
    GameOver,
    MessageAccepted,
    NightActionRecorded,
    PhaseStarted,
    PlayerEliminated,
    VoteCast,
)
from games.state import PhaseKind

log = logging.getLogger(__name__)

Takeover = Callable[[Room, int], Awaitable[None]]


@dataclass
class Silence:
    """One human seat's silence: ``counted`` game seconds before ``since`` (None: not
    counting now, as at night for a bystander), and whether it was reminded."""

    counted: float = 0.0
    since: datetime | None = None
    reminded: bool = False
    timer: TimerHandle | None = None

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


def counts(kind: PhaseKind, mafia: bool) -> bool:
    """Whether silence counts in a phase: by day for everyone, at night for the mafia."""
    return kind.is_day or (kind.is_night and mafia)


def reminder(silent_minutes: float, takeover_minutes: float) -> str:
    extra = (
        f" If you stay away, an agent takes over your seat after {takeover_minutes:g} minutes."
        if takeover_minutes > 0
        else ""
    )
    return (
        f"Still there? You've been quiet for about {max(1, round(silent_minutes))} minute(s). "
        f"Type here to talk; if you don't vote, you abstain.{extra}"
    )


class AfkWatch:
    def __init__(
        self, rooms: Rooms, notifier: Notifier, takeover: Takeover, defaults: DiscordOptions
    ) -> None:
        self.rooms = rooms
        self.notify = notifier
        self.takeover = takeover
        self.defaults = defaults
        self.seats: dict[tuple[str, int], Silence] = {}

    # --- the listener -------------------------------------------------------------------------

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        room = self.rooms.get(game.id)
        if room is None or game.state is None:
            return
        for e in events:
            if isinstance(e, PhaseStarted):
                for seat in sorted(room.humans):
                    self._phase(room, game, seat, PhaseKind(e.phase), e.t)
            elif isinstance(e, MessageAccepted):
                self.touch(room, game, e.seat, e.t)
            elif isinstance(e, VoteCast):
                self.touch(room, game, e.voter, e.t)
            elif isinstance(e, NightActionRecorded):
                self.touch(room, game, e.seat, e.t)
            elif isinstance(e, PlayerEliminated):
                self.drop(game.id, e.seat)
            elif isinstance(e, GameOver):
                self.forget(game.id)

    def resumed(self, room: Room, game: LiveGame) -> None:
        """After a restart: every human seat's silence starts again now."""
        state = game.state
        if state is None or state.over:
            return
        for seat in sorted(room.humans):
            self._phase(room, game, seat, state.phase.kind, game.clock.now())

    def forget(self, game_id: str) -> None:
        for key in [k for k in self.seats if k[0] == game_id]:
            self.seats.pop(key).stop()

    def drop(self, game_id: str, seat: int) -> None:
        found = self.seats.pop((game_id, seat), None)
        if found is not None:
            found.stop()

    # --- one seat -----------------------------------------------------------------------------

    def _counting(self, game: LiveGame, seat: int, kind: PhaseKind) -> bool:
        state = game.state
        if state is None or state.over or not state.seats[seat].alive:
            return False
        return counts(kind, state.seats[seat].is_mafia)

    def _phase(self, room: Room, game: LiveGame, seat: int, kind: PhaseKind, t: datetime) -> None:
        silence = self.seats.setdefault((game.id, seat), Silence())
        if self._counting(game, seat, kind):
            if silence.since is None:
                silence.since = t
        elif silence.since is not None:
            silence.counted += max(0.0, (t - silence.since).total_seconds())
            silence.since = None
        self._arm(room, game, seat, silence)

    def touch(self, room: Room, game: LiveGame, seat: int, t: datetime) -> None:
        if seat not in room.humans or game.state is None:
            return
        silence = self.seats.setdefault((game.id, seat), Silence())
        silence.counted = 0.0
        silence.reminded = False
        silence.since = t if self._counting(game, seat, game.state.phase.kind) else None
        self._arm(room, game, seat, silence)

    def _limits(self, room: Room) -> tuple[float, float]:
        """(reminder, takeover) in game seconds; 0 = never."""
        remind = room.afk.get("reminder_minutes", self.defaults.afk_reminder_minutes)
        takeover = room.afk.get("takeover_minutes", self.defaults.afk_takeover_minutes)
        return 60.0 * remind, 60.0 * takeover

    def _arm(self, room: Room, game: LiveGame, seat: int, silence: Silence) -> None:
        silence.stop()
        if silence.since is None:
            return
        remind, takeover = self._limits(room)
        limit = remind if remind > 0 and not silence.reminded else takeover
        if limit <= 0 or (silence.reminded and takeover <= 0):
            return
        due = silence.since + timedelta(seconds=max(0.0, limit - silence.counted))

        async def fire() -> None:
            if self.seats.get((game.id, seat)) is silence and silence.timer is handle:
                silence.timer = None
                await self._due(room, game, seat, silence)

        handle = game.timers.call_at(due, fire)
        silence.timer = handle

    async def _due(self, room: Room, game: LiveGame, seat: int, silence: Silence) -> None:
        if seat not in room.humans or room.ended:
            self.drop(game.id, seat)
            return
        remind, takeover = self._limits(room)
        if remind > 0 and not silence.reminded:
            silence.reminded = True
            self.notify.booth(room, seat, reminder(remind / 60, takeover / 60))
            self._arm(room, game, seat, silence)
            return
        self.drop(game.id, seat)
        try:
            await self.takeover(room, seat)
        except Exception:
            log.exception("could not hand seat %s of game %s to an agent", seat, game.id)
