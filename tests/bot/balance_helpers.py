"""A slow stand-in for the balance measurement and an event-loop heartbeat: the lobby tests
show that the estimate is measured off the loop (the heartbeat keeps ticking while it runs)
and that a second lobby with the same setup gets it from the cache (measured once)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest

from agent.balance import Balance
from bot.table import balance_estimate
from bot.table.balance_estimate import BalanceEstimates
from games.config import GameConfig

#: what the stand-in reports: 100 games, town 52, mafia 41, jester 7
WINS = {"town": 52, "mafia": 41, "jester": 7}
SHOWN = "Balance (100 simulated games): town 52% (42–62), mafia 41% (32–51), jester 7% (3–14)"


@dataclass
class SlowMeasure:
    """Blocks its (executor) thread until released, counting the loop's heartbeats meanwhile."""

    beats: list[int] = field(default_factory=lambda: [0])
    started: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    calls: list[tuple[GameConfig, int]] = field(default_factory=list)
    #: heartbeats seen while each measurement ran
    beats_during: list[int] = field(default_factory=list)
    #: threads the measurement ran on
    threads: list[int] = field(default_factory=list)

    def __call__(self, config: GameConfig, players: int, games: int) -> Balance:
        self.calls.append((config, players))
        self.threads.append(threading.get_ident())
        before = self.beats[0]
        self.started.set()
        self.release.wait(timeout=10)
        self.beats_during.append(self.beats[0] - before)
        return Balance("custom", players, games, dict(WINS))


@asynccontextmanager
async def heartbeat(beats: list[int], every: float = 0.005) -> AsyncIterator[None]:
    """Count the event loop's turns (one every ``every`` seconds while it is free)."""

    async def beat() -> None:
        while True:
            beats[0] += 1
            await asyncio.sleep(every)

    task = asyncio.get_running_loop().create_task(beat())
    try:
        yield
    finally:
        task.cancel()


async def release_after_beats(slow: SlowMeasure, beats: int = 10, within: float = 10.0) -> None:
    """Once the measurement runs, let ``beats`` heartbeats pass, then let it finish."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not slow.started.is_set():
        assert loop.time() < deadline, "the estimate was never measured"
        await asyncio.sleep(0.005)
    start = slow.beats[0]
    while slow.beats[0] - start < beats:
        assert loop.time() < deadline, "the event loop stopped while the estimate ran"
        await asyncio.sleep(0.005)
    slow.release.set()


def install(monkeypatch: pytest.MonkeyPatch) -> tuple[SlowMeasure, BalanceEstimates]:
    """A fresh process-wide estimates object (empty cache) measuring with the slow stand-in."""
    slow = SlowMeasure()
    estimates = BalanceEstimates(measure=slow, games=100)
    monkeypatch.setattr(balance_estimate, "_SHARED", estimates)
    return slow, estimates
