"""The Discord relay's latency, observed into ``mafiabot_relay_seconds{platform="discord"}``.

`bot.discord.relay.RelayMetrics` is the relay's hook. This one times every stage line alike, a
person's or an agent's, from its commit (the renderer taking it) to its post about to be sent,
so the series counts all lines and its buckets cannot tell whose a line was; and it observes
into the histogram instead of keeping a list, so it can run for months.
"""

from __future__ import annotations

import time
from collections import defaultdict, deque

from bot.discord.relay import RelayMetrics
from bot.ops.metrics import Metrics


class RelayTimer(RelayMetrics):
    def __init__(self, metrics: Metrics) -> None:
        super().__init__()
        self._histogram = metrics.relay.labels("discord")
        self._committed: defaultdict[tuple[str, int, str], deque[float]] = defaultdict(deque)

    def received(self, game_id: str, seat: int, text: str, t: float) -> None:
        return None  # only people's lines are received: timed from their commit instead

    def committed(self, game_id: str, seat: int, text: str) -> None:
        self._committed[(game_id, seat, text)].append(time.perf_counter())

    def sending(self, game_id: str, seat: int, text: str) -> None:
        key = (game_id, seat, text)
        waiting = self._committed.get(key)
        if waiting:
            self._histogram.observe(time.perf_counter() - waiting.popleft())
            if not waiting:
                del self._committed[key]
