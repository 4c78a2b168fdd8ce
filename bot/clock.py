"""Game clocks. A game's time can run faster than real time (``--speed``); everything that
waits converts game seconds to real seconds here, so timers and agent delays scale alike."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta


def utcnow() -> datetime:
    return datetime.now(UTC)


class GameClock:
    """Game time = ``start`` + (real seconds since creation) × ``speed``.

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

    def now(self) -> datetime:
        return self._start + timedelta(seconds=(time.monotonic() - self._real0) * self.speed)

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
