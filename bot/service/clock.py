"""Game clocks. A game's time can run faster than real time (``--speed``); everything that
waits converts game seconds to real seconds here, so timers and agent delays scale alike."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta


def utcnow() -> datetime:
    return datetime.now(UTC)


class GameClock:
    """Game time = ``start`` + (real seconds since creation, less the time it was held) ×
    ``speed``.

    With speed 1 and no start it is the wall clock. A simulation resumed after a crash passes
    the last recorded game time as ``start``, so the time it was down does not count.
    """

    def __init__(
        self, speed: float = 1.0, start: datetime | None = None, *, resumed: bool = False
    ) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.speed = speed
        self._wall0 = utcnow()
        self._start = start if start is not None else self._wall0
        #: resumed where it stopped (``start``): the game's time stood still while it was down
        self._paused = resumed and start is not None
        self._real0 = time.monotonic()
        self._holds = 0
        #: real seconds the clock stood held so far (not counting the hold in progress)
        self._held_s = 0.0
        self._held_since: float | None = None
        self._unheld: asyncio.Event | None = None
        #: game time goes no further than this (`pin`)
        self._limit: datetime | None = None

    def _elapsed(self) -> float:
        """Real seconds of running (unheld) time since creation."""
        now = time.monotonic() if self._held_since is None else self._held_since
        return now - self._real0 - self._held_s

    def _running(self) -> datetime:
        return self._start + timedelta(seconds=self._elapsed() * self.speed)

    def now(self) -> datetime:
        t = self._running()
        return t if self._limit is None or t <= self._limit else self._limit

    # --- holding (games of agents only) --------------------------------------------------------

    @property
    def held(self) -> bool:
        return self._holds > 0

    def hold(self) -> Callable[[], None]:
        """Stop game time until the returned release is called (once; holds nest). A game of
        agents only holds its time while an agent is told of events or carries out an
        action, and its deadlines wait until no hold is left (`unheld`), so no agent's work,
        however slow the machine, runs past them; a game with a person in it never holds its
        clock (`bot.service.live.LiveGame.agents_only`).

        (`from_wall` and `to_wall` stay the fixed linear map: an agent's moment passed through
        both comes back as it was.)"""
        if self._holds == 0:
            self._held_since = time.monotonic()
            if self._unheld is not None:
                self._unheld.clear()
        self._holds += 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            self._holds -= 1
            if self._holds == 0:
                assert self._held_since is not None
                self._held_s += time.monotonic() - self._held_since
                self._held_since = None
                if self._unheld is not None:
                    self._unheld.set()

        return release

    def pin(self, limit: datetime) -> None:
        """Game time goes no further than ``limit`` (a phase's deadline in a game of agents
        only) until pinned again, however long the process stalls: the time it stood at the
        old limit does not count, so the game goes on from there (it never runs ahead of the
        phases, leaving every later one due at once)."""
        if self._limit is not None:
            over = (self._running() - self._limit).total_seconds()
            if over > 0:
                self._held_s += over / self.speed
        self._limit = limit

    async def unheld(self) -> None:
        """Return once no hold is left (at once on a clock that is not held)."""
        while self._holds:
            if self._unheld is None:
                self._unheld = asyncio.Event()
            self._unheld.clear()
            await self._unheld.wait()

    def from_wall(self, wall: datetime) -> datetime:
        """The game time of a wall-clock moment (a platform's timestamp of an action). The
        same moment always maps to the same game time, so two actions a platform stamped
        alike stay tied.

        A clock resumed where it stopped (``resumed``, with a ``start``) stood still while the
        game was down: a moment from that downtime maps to the moment the game stopped, the
        phase its player still saw (a den line typed at night while the bot was down stays a
        night line, never one of an earlier phase). A wall clock keeps the downtime, as it
        counts."""
        if self._paused and wall < self._wall0:
            return self._start
        return self._start + (wall - self._wall0) * self.speed

    def to_wall(self, game_t: datetime) -> datetime:
        """The wall-clock moment of game time ``game_t`` (the inverse of `from_wall`)."""
        return self._wall0 + (game_t - self._start) / self.speed

    def seconds_to_real(self, game_seconds: float) -> float:
        return game_seconds / self.speed

    def real_delay_until(self, when: datetime) -> float:
        return max(0.0, (when - self.now()).total_seconds() / self.speed)
