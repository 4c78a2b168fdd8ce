"""How long a person's line takes from reaching the bot to its post going out (the relay
latency of ``/metrics``), timed the same way on every platform that relays booth lines.

A seat's booth lines reach the service one at a time and in order, and the service hands
their `MessageAccepted` events on in that order, so a first-in first-out queue per seat pairs
each post with its line; no text is compared (the engine may tidy it). A line that was not
said (refused, or a duplicate) is taken back out. Lines read back after a restart are not
timed: their wait is the downtime, not the relay's.
"""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Callable


class RelayLatency:
    """Off until ``observe`` is set (`bot.ops`), so adapters can always call it."""

    def __init__(self, observe: Callable[[float], None] | None = None) -> None:
        self.observe = observe
        self._pending: defaultdict[tuple[str, int], deque[float]] = defaultdict(deque)

    def received(self, game_id: str, seat: int) -> None:
        """A line of ``seat`` reached the bot now (call before it goes to the service)."""
        if self.observe is not None:
            self._pending[(game_id, seat)].append(time.perf_counter())

    def not_said(self, game_id: str, seat: int) -> None:
        """The line just received was refused or had been applied already: no post follows."""
        self._take(game_id, seat, newest=True)

    def posting(self, game_id: str, seat: int) -> float | None:
        """The seat's oldest line is being posted: when it was received (None: not timed)."""
        return self._take(game_id, seat, newest=False)

    def posted(self, received: float | None) -> None:
        """The post of a line received at ``received`` went out."""
        if received is not None and self.observe is not None:
            self.observe(time.perf_counter() - received)

    def _take(self, game_id: str, seat: int, *, newest: bool) -> float | None:
        queue = self._pending.get((game_id, seat))
        if not queue:
            return None
        started = queue.pop() if newest else queue.popleft()
        if not queue:
            del self._pending[(game_id, seat)]
        return started
