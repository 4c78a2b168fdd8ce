"""What ``/metrics`` reports, in the Prometheus text format (prometheus-client).

Every figure is gathered at a seam that exists anyway, so no game code knows about metrics:

- games by status and players: read from the service's live games when scraped;
- lines: a service listener counting the lines it committed and handed to the renderers;
- database write latency: the service's ``on_db_call`` hook (waiting for the writer included);
- relay latency: the relays' latency hooks (a stage line committed -> its post going out), for
  every one alike, a person's or an agent's: Discord's `RelayMetrics`, Slack's
  `bot.table.latency.RelayLatency`;
- LLM calls, tokens, cost and errors: the agents' decision log, which sees every model call;
  a game's figures are added when the game ends (not call by call, which would rise just
  before each agent line and tell a scraper which lines are the agent's);
- platform rate-limit waits: discord.py's own rate-limit log line; the Slack SDK's 429
  retry handler and Slack's delivery queue's own waits after it (Retry-After);
- event-loop lag: a sampler task (how late a short sleep wakes up).

One `Metrics` owns its own registry, so tests can run several side by side.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import Counter as Tally
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from agent.decisions import DecisionLog, DecisionRecord, flush_log
from games.events import Event, GameOver, MessageAccepted

if TYPE_CHECKING:
    from bot.service.live import LiveGame
    from bot.service.port import GameService

#: latency buckets, seconds: from a fast commit to a rate-limited post
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
GAME_STATUSES = ("lobby", "running", "finished", "aborted")
#: games whose model calls are held (or remembered as ended) at most
MAX_HELD_GAMES = 1000
_ERROR_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]{0,39}):")


@dataclass(frozen=True)
class _Call:
    """The figures of one model call, held until its game ends."""

    kind: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    error: str | None
    #: False: it failed before its request reached the model (only its error is counted)
    called: bool = True
    #: of ``input_tokens``, those served from the provider's prompt cache
    cached_input_tokens: int = 0


class Metrics:
    """Every metric of one process."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        r = self.registry = registry if registry is not None else CollectorRegistry()
        self.lines = Counter(
            "mafiabot_lines",
            "Lines said in games (stage or den), committed and handed to the renderers.",
            ["place"],
            registry=r,
        )
        self.relay = Histogram(
            "mafiabot_relay_seconds",
            "A stage line (every player's alike) from being committed to its post going out.",
            ["platform"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.db_write = Histogram(
            "mafiabot_db_write_seconds",
            "A game's database transaction from being asked for to committed "
            "(time waiting for the writer included).",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.loop_lag = Histogram(
            "mafiabot_event_loop_lag_seconds",
            "How late the event loop runs a timer (sampled every 100 ms).",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.llm_calls = Counter(
            "mafiabot_llm_calls",
            "Requests sent to a language model (a game's, once it has ended).",
            ["kind"],
            registry=r,
        )
        self.llm_tokens = Counter(
            "mafiabot_llm_tokens",
            "Tokens used by language-model calls: direction input (the whole prompt), "
            "cached (of those, the ones the provider served from its prompt cache) or output.",
            ["kind", "direction"],
            registry=r,
        )
        self.llm_cost = Counter(
            "mafiabot_llm_cost_usd", "Cost of language-model calls, US dollars.", ["kind"],
            registry=r,
        )  # fmt: skip
        self.llm_errors = Counter(
            "mafiabot_llm_errors",
            "Language-model calls that failed, by call kind and error (LLMTimeout, ...).",
            ["kind", "error"],
            registry=r,
        )
        self.rate_limit_waits = Counter(
            "mafiabot_rate_limit_waits",
            "Times a platform said 'too many requests' and the bot waited.",
            ["platform"],
            registry=r,
        )
        self.rate_limit_seconds = Counter(
            "mafiabot_rate_limit_wait_seconds",
            "Seconds spent waiting out platform rate limits.",
            ["platform"],
            registry=r,
        )
        #: model calls of games still running, by game (see `llm_record`)
        self._held: dict[str, list[_Call]] = {}
        self._ended: dict[str, None] = {}

    # --- seams ----------------------------------------------------------------------------------

    def watch_service(self, service: GameService) -> None:
        """Games, players, lines and database latency of ``service``."""
        self.registry.register(_GamesCollector(service))
        service.subscribe(_LineCounter(self))
        service.on_db_call = self.db_write.observe

    def rate_limited(self, platform: str, seconds: float) -> None:
        self.rate_limit_waits.labels(platform).inc()
        self.rate_limit_seconds.labels(platform).inc(max(0.0, seconds))

    def rate_limited_on(self, platform: str) -> Callable[[float], None]:
        """`rate_limited` for one platform: a hook for a delivery queue's own waits."""
        return lambda seconds: self.rate_limited(platform, seconds)

    def llm_record(self, rec: DecisionRecord) -> None:
        """Count a model call: at once when its game is over (or it has none), else held
        until the game ends (`game_over`), so no series moves with an agent's line."""
        if not rec.called and not rec.unreached:
            return  # a decision taken without the model (a fallback, a discarded draft)
        error = None
        if rec.error:
            match = _ERROR_NAME.match(rec.error)
            error = match[1] if match else "other"
        call = _Call(
            rec.kind,
            rec.input_tokens,
            rec.output_tokens,
            max(0.0, rec.cost_usd),
            error,
            called=rec.called,
            cached_input_tokens=rec.cached_input_tokens,
        )
        if rec.game_id and rec.game_id not in self._ended:
            self._held.setdefault(rec.game_id, []).append(call)
            if len(self._held) > MAX_HELD_GAMES:  # games that moved away: count the oldest
                self._count(self._held.pop(next(iter(self._held))))
            return
        self._count([call])

    def game_over(self, game_id: str) -> None:
        """A game ended: its model calls are counted now, and later ones (its debrief) at once."""
        self._ended[game_id] = None
        if len(self._ended) > MAX_HELD_GAMES:
            self._ended.pop(next(iter(self._ended)))
        self._count(self._held.pop(game_id, []))

    def _count(self, calls: Sequence[_Call]) -> None:
        for c in calls:
            if c.called:
                self.llm_calls.labels(c.kind).inc()
                self.llm_tokens.labels(c.kind, "input").inc(c.input_tokens)
                self.llm_tokens.labels(c.kind, "output").inc(c.output_tokens)
                self.llm_tokens.labels(c.kind, "cached").inc(c.cached_input_tokens)
                self.llm_cost.labels(c.kind).inc(c.cost_usd)
            if c.error is not None:
                self.llm_errors.labels(c.kind, c.error).inc()

    async def sample_loop_lag(self, interval: float = 0.1) -> None:
        """Until cancelled: how much later than asked a short sleep wakes up."""
        loop = asyncio.get_running_loop()
        while True:
            start = loop.time()
            await asyncio.sleep(interval)
            self.loop_lag.observe(max(0.0, loop.time() - start - interval))


class _LineCounter:
    """A service listener: counts the lines said (after they were committed)."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        for event in events:
            if isinstance(event, MessageAccepted):
                self.metrics.lines.labels(event.place).inc()
            elif isinstance(event, GameOver):
                self.metrics.game_over(game.id)


class _GamesCollector(Collector):
    """Games by status and the seats of running games, read from the service when scraped."""

    def __init__(self, service: GameService) -> None:
        self.service = service

    def collect(self) -> Iterator[GaugeMetricFamily]:
        live = list(self.service.games.values())
        statuses = Tally(g.status for g in live)
        games = GaugeMetricFamily(
            "mafiabot_games", "Games this process holds, by status.", labels=["status"]
        )
        for status in sorted(set(GAME_STATUSES) | set(statuses)):
            games.add_metric([status], statuses.get(status, 0))
        yield games
        seats = Tally(
            "agent" if s.is_agent else "human"
            for g in live
            if g.status == "running"
            for s in g.seats
        )
        players = GaugeMetricFamily(
            "mafiabot_players", "Seats in running games, by who plays them.", labels=["kind"]
        )
        for kind in ("human", "agent"):
            players.add_metric([kind], seats.get(kind, 0))
        yield players


class MeteredDecisionLog:
    """A decision log that counts every LLM call into `Metrics`, then hands it on."""

    def __init__(self, inner: DecisionLog, metrics: Metrics) -> None:
        self.inner = inner
        self.metrics = metrics

    def record(self, rec: DecisionRecord) -> None:
        try:
            self.metrics.llm_record(rec)
        finally:
            self.inner.record(rec)

    async def flush(self) -> None:
        await flush_log(self.inner)


# --- platform rate limits -------------------------------------------------------------------


class _DiscordRateLimitLog(logging.Handler):
    """discord.py waits out a 429 itself (REST and webhooks alike) and says so in one log
    line, whose last argument is the wait in seconds; that line is the only place the wait
    shows; a relayed line's own webhook post (`bot.discord.hooks`) logs the same line.
    (A global limit logs a second line for the same wait: not counted twice.)"""

    LOGGERS = ("discord.http", "discord.webhook.async_", "bot.discord.hooks")

    def __init__(self, metrics: Metrics) -> None:
        super().__init__(logging.WARNING)
        self.metrics = metrics

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.msg if isinstance(record.msg, str) else ""
        if "rate limited" not in msg or "Retrying in" not in msg or msg.startswith("Global"):
            return
        args: Any = record.args
        try:
            seconds = float(args[-1]) if isinstance(args, tuple) and args else 0.0
        except (TypeError, ValueError):
            seconds = 0.0
        self.metrics.rate_limited("discord", seconds)


@contextmanager
def watching_discord_rate_limits(metrics: Metrics) -> Iterator[None]:
    handler = _DiscordRateLimitLog(metrics)
    for name in handler.LOGGERS:
        logging.getLogger(name).addHandler(handler)
    try:
        yield
    finally:
        for name in handler.LOGGERS:
            logging.getLogger(name).removeHandler(handler)


def watch_slack_rate_limits(client: Any, metrics: Metrics) -> None:
    """Swap the Slack client's 429 retry handler for one that counts its waits."""
    from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler

    class Metered(AsyncRateLimitErrorRetryHandler):
        async def prepare_for_next_attempt_async(self, **kwargs: Any) -> None:
            started = time.perf_counter()
            try:
                await super().prepare_for_next_attempt_async(**kwargs)
            finally:
                metrics.rate_limited("slack", time.perf_counter() - started)

    handlers = client.retry_handlers
    for i, handler in enumerate(handlers):
        if isinstance(handler, AsyncRateLimitErrorRetryHandler) and not isinstance(
            handler, Metered
        ):
            handlers[i] = Metered(
                max_retry_count=handler.max_retry_count,
                interval_calculator=handler.interval_calculator,
            )
