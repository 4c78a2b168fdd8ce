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

    def __init__(self, speed: float = 1.0, start: datetime | None = None) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.speed = speed
        self._start = start if start is not None else utcnow()
        self._real0 = time.monotonic()

    def now(self) -> datetime:
        return self._start + timedelta(seconds=(time.monotonic() - self._real0) * self.speed)

    def seconds_to_real(self, game_seconds: float) -> float:
        return game_seconds / self.speed

    def real_delay_until(self, when: datetime) -> float:
        return max(0.0, (when - self.now()).total_seconds() / self.speed)
