"""How long a line takes from its commit to its post going out (the relay latency of
``/metrics``), timed the same way on every platform that relays booth lines.

Every stage line is timed alike, a person's or an agent's, from the moment the renderer takes its
committed `MessageAccepted` to its (first) post being out: a series that timed only people's
lines (they alone are *received* from a booth) would count them, and so tell a scraper which
lines are the agent's. ``received`` and ``not_said`` are kept for the adapters' calls and
change nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class RelayLatency:
    """Off until ``observe`` is set (`bot.ops`), so adapters can always call it."""

    def __init__(self, observe: Callable[[float], None] | None = None) -> None:
        self.observe = observe

    def received(self, game_id: str, seat: int) -> None:
        """A line of ``seat`` reached the bot now (not timed from here: see the module doc)."""

    def not_said(self, game_id: str, seat: int) -> None:
        """The line just received was refused or had been applied already."""

    def posting(self, game_id: str, seat: int) -> float | None:
        """A committed line of ``seat`` is being posted now: the start of its timing (None:
        not timed)."""
        return time.perf_counter() if self.observe is not None else None

    def posted(self, received: float | None) -> None:
        """The post of a line whose timing started at ``received`` went out."""
        if received is not None and self.observe is not None:
            self.observe(time.perf_counter() - received)
