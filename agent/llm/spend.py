"""An operator's spend caps: what every LLM seat of one server, and of the whole process, may
spend in a day (UTC), in tokens or in US dollars, checked before each call.

`DailySpend` keeps the day's totals and `CappedClient` wraps a seat's client: before a call it
asks whether the seat's server or the process is over a cap and, if so, raises
`LLMBudgetExceeded` without sending anything, which hands the seat to its offline baseline for
the rest of the game, like a spent per-game budget.
The first refusal of a day for a cap is reported once (``on_over``), so the operator hears of
it once, not once per seat or call.

The totals live in memory, so a restarted process would start the day afresh (a crash-looping
or redeployed bot could spend its cap several times over): given a ``history`` (the calls the
store recorded on a day, `StoredCall`; the bot reads them from its database), `DailySpend`
counts that day's calls at start and again at each day's turn, and a refusal the store
recorded that day counts as reported already, so a restart does not report it again.

Dollars are priced from `prices` (the operator's per-model prices, by longest model-name
prefix, like `agent.llm.pricing.PRICES`) when the model is listed there, else from the
backend's own estimate (`LLMResponse.cost_usd`): a model with no known price costs nothing,
and only a token cap can bound it. Calls in flight when a cap is reached finish and are
counted: the caps may be overshot by the calls already sent, never by a new one.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime

from agent.llm.base import (
    CALL_PROGRESS,
    LLMBudgetExceeded,
    LLMClient,
    LLMRequest,
    LLMResponse,
    aclose_client,
)
from agent.llm.pricing import ModelPrice

__all__ = [
    "CappedClient",
    "DailySpend",
    "SpendLimits",
    "StoredCall",
    "parse_prices",
    "price_usd",
    "refusal_of",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SpendLimits:
    """Caps per UTC day; 0 means no cap."""

    server_tokens: int = 0
    server_usd: float = 0.0
    process_tokens: int = 0
    process_usd: float = 0.0

    def __post_init__(self) -> None:
        if min(self.server_tokens, self.process_tokens) < 0:
            raise ValueError("token caps must be >= 0 (0: no cap)")
        if min(self.server_usd, self.process_usd) < 0:
            raise ValueError("dollar caps must be >= 0 (0: no cap)")

    @property
    def any(self) -> bool:
        return bool(
            self.server_tokens or self.server_usd or self.process_tokens or self.process_usd
        )


def parse_prices(text: str) -> dict[str, ModelPrice]:
    """``MODEL=INPUT/OUTPUT[/CACHED]`` entries (US dollars per million tokens), separated by
    commas or blanks: e.g. ``gpt-4o-mini=0.15/0.60/0.075, claude-haiku=1/5/0.1``. Cached input
    costs what input does when left out. Raises ValueError naming the bad entry."""
    prices: dict[str, ModelPrice] = {}
    for entry in text.replace(",", " ").split():
        model, sep, figures = entry.partition("=")
        parts = figures.split("/")
        try:
            values = [float(p) for p in parts]
        except ValueError:
            values = []
        if not sep or not model or len(values) not in (2, 3) or min(values) < 0:
            raise ValueError(
                f"bad price {entry!r}: write MODEL=INPUT/OUTPUT[/CACHED], dollars per "
                "million tokens"
            )
        cached = values[2] if len(values) == 3 else values[0]
        prices[model.strip().lower()] = ModelPrice(values[0], values[1], cached)
    return prices


def price_usd(resp: LLMResponse, prices: Mapping[str, ModelPrice]) -> float:
    """The call's cost at the operator's price for its model (longest prefix of the model's
    name), else the backend's estimate."""
    name = resp.model.strip().lower().rsplit("/", 1)[-1]
    best = max((p for p in prices if name.startswith(p)), key=len, default=None)
    if best is None:
        return max(resp.cost_usd, 0.0)
    price = prices[best]
    cached = min(max(resp.cached_input_tokens, 0), max(resp.input_tokens, 0))
    fresh = max(resp.input_tokens, 0) - cached
    return (
        fresh * price.input_per_mtok
        + cached * price.cached_input_per_mtok
        + max(resp.output_tokens, 0) * price.output_per_mtok
    ) / 1_000_000


def _utc_today() -> date:
    return datetime.now(UTC).date()


@dataclass(frozen=True)
class StoredCall:
    """A model call (or a refusal) of the day as the store recorded it: what `DailySpend`
    counts at start. ``server`` is the server of the call's game (None: none); ``error`` the
    recorded error, which names the cap when the call was refused for one (`refusal_of`)."""

    server: str | None
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cost_usd: float = 0.0
    error: str | None = None


#: a refusal for a daily cap, as `CappedClient` words it (the seat records it as its error)
_REFUSED = re.compile(
    r"((?:this server's|the bot's) daily cap of \S+ (?:tokens )?is spent) \(\w+ call not sent\)"
)


def refusal_of(error: str | None, server: str | None) -> tuple[str, str | None] | None:
    """The cap a recorded error says a call was refused for: (reason, its scope: ``server``
    for a server's cap, None for the process's), as `DailySpend.over` gave it; else None."""
    found = _REFUSED.search(error or "")
    if found is None:
        return None
    reason = found.group(1)
    return reason, (server if reason.startswith("this server's") else None)


class DailySpend:
    """The day's spending by server and for the process, against `SpendLimits`.

    ``on_over(server, reason)`` is called the first time in a day a call is refused for a
    cap: once per server for a server's cap, once for the process's (``server`` is then the
    one whose call hit it first).

    ``history(day)`` gives the calls already recorded on ``day`` (by this process before a
    restart, or by any process on the same store): they are counted when a day's count
    begins, at start and at each day's turn. If it fails, the day is counted from zero (and
    logged)."""

    def __init__(
        self,
        limits: SpendLimits,
        prices: Mapping[str, ModelPrice] | None = None,
        *,
        today: Callable[[], date] | None = None,
        history: Callable[[date], Iterable[StoredCall]] | None = None,
    ) -> None:
        self.limits = limits
        self.prices = dict(prices or {})
        self._today = today if today is not None else _utc_today
        self.history = history
        self._day: date | None = None
        self._tokens: dict[str, int] = {}
        self._usd: dict[str, float] = {}
        self._told: set[tuple[str, str | None]] = set()

    def _roll(self) -> None:
        day = self._today()
        if day != self._day:
            self._day = day
            self._tokens.clear()
            self._usd.clear()
            self._told.clear()
            if self.history is not None:
                self._count_stored(day)

    def _count_stored(self, day: date) -> None:
        assert self.history is not None
        try:
            calls = list(self.history(day))
        except Exception:
            log.exception("could not read %s's spending from the store: counted from zero", day)
            return
        for call in calls:
            refused = refusal_of(call.error, call.server)
            if refused is not None:
                self._told.add(refused)
            resp = LLMResponse(
                text="",
                model=call.model,
                input_tokens=call.input_tokens,
                output_tokens=call.output_tokens,
                cached_input_tokens=call.cached_input_tokens,
                latency_s=0.0,
                finish_reason="",
                attempts=0,
                cost_usd=call.cost_usd,
            )
            self._add(call.server, resp)

    def spent(self, server: str | None = None) -> tuple[int, float]:
        """(tokens, dollars) spent today by ``server``'s seats, or by the process (None)."""
        self._roll()
        key = server if server is not None else _PROCESS
        return self._tokens.get(key, 0), self._usd.get(key, 0.0)

    def over(self, server: str | None) -> tuple[str, str | None] | None:
        """The cap a new call from ``server`` would break: (reason, the cap's scope: the server,
        or None for the process's), or None when it may go."""
        self._roll()
        lim = self.limits
        if server is not None:
            tokens, usd = self._tokens.get(server, 0), self._usd.get(server, 0.0)
            if lim.server_tokens and tokens >= lim.server_tokens:
                return f"this server's daily cap of {lim.server_tokens:,} tokens is spent", server
            if lim.server_usd and usd >= lim.server_usd:
                return f"this server's daily cap of ${lim.server_usd:.2f} is spent", server
        tokens, usd = self._tokens.get(_PROCESS, 0), self._usd.get(_PROCESS, 0.0)
        if lim.process_tokens and tokens >= lim.process_tokens:
            return f"the bot's daily cap of {lim.process_tokens:,} tokens is spent", None
        if lim.process_usd and usd >= lim.process_usd:
            return f"the bot's daily cap of ${lim.process_usd:.2f} is spent", None
        return None

    def first_refusal(self, scope: str | None, reason: str) -> bool:
        """Whether this is the day's first refusal for the cap ``reason`` of ``scope``."""
        self._roll()
        key = (reason, scope)
        if key in self._told:
            return False
        self._told.add(key)
        return True

    def charge(self, server: str | None, resp: LLMResponse) -> None:
        self._roll()
        self._add(server, resp)

    def _add(self, server: str | None, resp: LLMResponse) -> None:
        tokens = max(resp.total_tokens, 0)
        usd = price_usd(resp, self.prices)
        keys = [_PROCESS] if server is None else [_PROCESS, server]
        for key in keys:
            self._tokens[key] = self._tokens.get(key, 0) + tokens
            self._usd[key] = self._usd.get(key, 0.0) + usd


#: the process's own totals (no server is named this)
_PROCESS = "\x00process"


class CappedClient:
    """A seat's client under the operator's daily caps (see the module docstring)."""

    def __init__(
        self,
        inner: LLMClient,
        spend: DailySpend,
        server: str | None,
        on_over: Callable[[str], None] | None = None,
    ) -> None:
        self.inner = inner
        self.spend = spend
        self.server = server
        self.on_over = on_over
        self.name = inner.name

    async def complete(self, req: LLMRequest) -> LLMResponse:
        over = self.spend.over(self.server)
        if over is not None:
            reason, scope = over
            if self.spend.first_refusal(scope, reason) and self.on_over is not None:
                try:
                    self.on_over(reason)
                except Exception:
                    log.exception("reporting a spent spend cap failed")
            progress = CALL_PROGRESS.get()
            if progress is not None:
                progress.held = True  # held back on our side: never sent, never billed
            raise LLMBudgetExceeded(f"{reason} ({req.kind} call not sent)")
        resp = await self.inner.complete(req)
        self.spend.charge(self.server, resp)
        return resp

    async def aclose(self) -> None:
        await aclose_client(self.inner)
