"""A setup's balance in the lobby, before the game starts: "Balance (300 simulated games): town
52% (47–57), mafia 45% (40–50), jester 3% (1–6)".

A host who picks a named setup or lists one role a seat sees how often each side wins it, measured
by :func:`agent.balance.measure` (all-baseline games through the fast path). The measuring takes
a few seconds of CPU, so it runs in an executor (a worker thread by default), never on the event
loop; the lobby shows "estimating" meanwhile and is redrawn when the figure arrives
(:meth:`BalanceEstimates.watch`). Figures are kept in an in-process LRU keyed by the setup (its
name or role list, and the tie rules, which change who wins) and the table size, so a second
lobby with the same setup gets its figure at once, and two lobbies asking at the same time share
one measurement.

The table size: a role list deals one role a seat, so its length; a named setup, the size its
balance is quoted at (:attr:`games.setups.Setup.balance_players`). The LLMafia default gets no
line: it is the game everyone knows.

Adapters only render :meth:`BalanceEstimates.line`; all of this is here.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor, ThreadPoolExecutor

from agent.balance import Balance, measure, wilson
from games.config import GameConfig

__all__ = [
    "GAMES",
    "BalanceEstimates",
    "Measure",
    "estimate_key",
    "format_balance",
    "shared",
    "table_size",
]

log = logging.getLogger(__name__)

#: simulated games per estimate: an interval about ±5 points wide at 50%, a few seconds of CPU
GAMES = 300
#: setups whose figures are kept
CACHE_SIZE = 128
#: what an estimate is measured with: (config, players, games) -> Balance
Measure = Callable[[GameConfig, int, int], Balance]
#: (setup name, role list, tie rule, night tie rule, players)
Key = tuple[str, tuple[str, ...], str, str, int]

ESTIMATING = "Balance: estimating by simulation…"


def table_size(config: GameConfig) -> int | None:
    """The table size an estimate of ``config`` is for (None: no estimate for it)."""
    if config.role_list:
        return len(config.role_list)
    if config.setup and config.setup != "llmafia":
        from games.setups import SETUPS

        setup = SETUPS.get(config.setup)
        return None if setup is None else setup.balance_players
    return None


def estimate_key(config: GameConfig) -> Key | None:
    players = table_size(config)
    if players is None:
        return None
    return (
        config.setup,
        tuple(config.role_list),
        config.tie_rule,
        config.night_tie_rule,
        players,
    )


def _measured_config(key: Key) -> GameConfig:
    setup, role_list, tie, night_tie, _ = key
    return GameConfig(setup=setup, role_list=role_list, tie_rule=tie, night_tie_rule=night_tie)  # type: ignore[arg-type]


def _percent(x: float) -> str:
    return f"{round(100 * x)}"


def format_balance(balance: Balance) -> str:
    """``Balance (300 simulated games): town 52% (47–57), mafia 45% (40–50), ...``; a faction
    that never won is left out unless it is town or mafia."""
    parts = []
    for faction, won in balance.wins.items():
        if won == 0 and faction not in ("town", "mafia"):
            continue
        low, high = wilson(won, balance.games)
        parts.append(
            f"{faction} {_percent(won / balance.games)}% ({_percent(low)}–{_percent(high)})"
        )
    return f"Balance ({balance.games} simulated games): " + ", ".join(parts)


class BalanceEstimates:
    """Estimates of setups' balance, measured off the event loop and kept in an LRU."""

    def __init__(
        self,
        *,
        measure: Measure | None = None,
        games: int = GAMES,
        size: int = CACHE_SIZE,
        executor: Executor | None = None,
    ) -> None:
        self.measure: Measure = measure or _measure
        self.games = games
        self.size = size
        self._executor = executor
        self._done: OrderedDict[Key, Balance | None] = OrderedDict()
        self._pending: dict[Key, asyncio.Future[Balance]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        #: estimates measured (not served from the cache)
        self.measured = 0

    # --- reading ----------------------------------------------------------------------------

    def known(self, config: GameConfig) -> bool:
        """Whether ``config``'s estimate (or that there is none) is known now."""
        key = estimate_key(config)
        return key is None or key in self._done

    def cached(self, config: GameConfig) -> Balance | None:
        key = estimate_key(config)
        if key is None or key not in self._done:
            return None
        self._done.move_to_end(key)
        return self._done[key]

    def line(self, config: GameConfig) -> str | None:
        """What a lobby shows: the estimate, "estimating" while it is measured, or None (no
        estimate for this setup: the default game, or one the simulation could not play)."""
        key = estimate_key(config)
        if key is None:
            return None
        if key not in self._done:
            return ESTIMATING
        balance = self.cached(config)
        return None if balance is None else format_balance(balance)

    # --- measuring --------------------------------------------------------------------------

    async def estimate(self, config: GameConfig) -> Balance | None:
        """``config``'s estimate: from the cache, or measured in the executor (one measurement
        per setup however many lobbies wait for it)."""
        key = estimate_key(config)
        if key is None:
            return None
        if key in self._done:
            return self.cached(config)
        future = self._pending.get(key)
        if future is None:
            loop = asyncio.get_running_loop()
            future = loop.run_in_executor(self._pool(), self._run, key)
            self._pending[key] = future
            future.add_done_callback(lambda f: self._store(key, f))
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            raise
        except Exception:
            return None  # (logged once, by _store)

    def watch(
        self, config: GameConfig, redraw: Callable[[], Awaitable[None] | None]
    ) -> asyncio.Task[None] | None:
        """Measure ``config``'s estimate in the background and call ``redraw`` once it is in
        (not when it was known already: the caller showed it). Returns the task, if any."""
        if self.known(config):
            return None

        async def follow() -> None:
            if await self.estimate(config) is None:
                return
            result = redraw()
            if inspect.isawaitable(result):
                await result

        task = asyncio.get_running_loop().create_task(follow())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _pool(self) -> Executor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="balance")
        return self._executor

    def _run(self, key: Key) -> Balance:
        return self.measure(_measured_config(key), key[-1], self.games)

    def _store(self, key: Key, future: asyncio.Future[Balance]) -> None:
        self._pending.pop(key, None)
        if future.cancelled():
            return
        error = future.exception()
        if error is not None:
            log.warning("no balance estimate for %s: %s", key, error)
            self._put(key, None)
            return
        self.measured += 1
        self._put(key, future.result())

    def _put(self, key: Key, value: Balance | None) -> None:
        self._done[key] = value
        self._done.move_to_end(key)
        while len(self._done) > self.size:
            self._done.popitem(last=False)


def _measure(config: GameConfig, players: int, games: int) -> Balance:
    return measure(config, players, games)


_SHARED = BalanceEstimates()


def shared() -> BalanceEstimates:
    """The process's estimates, which every lobby (Discord and Slack) reads and fills."""
    return _SHARED
