"""What the seat plans its model calls around: which calls are critical, and how long its
model has been taking (see the "slow models" part of :mod:`agent.llm_player`)."""

from __future__ import annotations

import statistics
from collections import deque

from agent.decisions import DecisionKind

__all__ = ["CRITICAL_KINDS", "PAST_PHASE", "Latencies"]

#: why background work is skipped rather than deferred
PAST_PHASE = "it would run past the phase"
#: calls the game waits for; everything else is background work
CRITICAL_KINDS: tuple[DecisionKind, ...] = ("scheduler", "generator", "vote", "night_action")


class Latencies:
    """Wall seconds of this seat's recent calls, by kind (answered or failed: the game waited
    either way). ``typical`` is their median, ``slow`` a high quantile; None before any."""

    def __init__(self, window: int = 12) -> None:
        self.window = max(1, window)
        self._by_kind: dict[str, deque[float]] = {}

    def add(self, kind: str, seconds: float) -> None:
        bucket = self._by_kind.get(kind)
        if bucket is None:
            bucket = self._by_kind[kind] = deque(maxlen=self.window)
        bucket.append(max(seconds, 0.0))

    def _pooled(self, kinds: tuple[str, ...]) -> list[float]:
        wanted = kinds or tuple(self._by_kind)
        return sorted(x for k in wanted for x in self._by_kind.get(k, ()))

    def typical(self, *kinds: str) -> float | None:
        xs = self._pooled(kinds)
        return statistics.median(xs) if xs else None

    def slow(self, *kinds: str) -> float | None:
        xs = self._pooled(kinds)
        return xs[min(len(xs) - 1, int(0.8 * len(xs)))] if xs else None
