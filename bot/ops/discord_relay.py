"""The Discord relay's latency, observed into ``mafiabot_relay_seconds{platform="discord"}``.

`bot.discord.relay.RelayMetrics` is the relay's hook (a booth message arrived; its stage
post is about to be sent). This one observes each latency into the histogram instead of
keeping a list, so it can run for months.
"""

from __future__ import annotations

from bot.discord.relay import RelayMetrics
from bot.ops.metrics import Metrics


class RelayTimer(RelayMetrics):
    def __init__(self, metrics: Metrics) -> None:
        super().__init__()
        self._histogram = metrics.relay.labels("discord")

    def sending(self, game_id: str, seat: int, text: str) -> None:
        super().sending(game_id, seat, text)
        while self.latencies:
            self._histogram.observe(self.latencies.pop())
