"""Waiting for a live game to reach a phase or an event (the service's timers run on the real
clock)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from bot.service.live import LiveGame
from games.events import Event, PhaseStarted
from games.state import GameState, PhaseKind


async def until_phase(game: LiveGame, kind: PhaseKind, tries: int = 200) -> GameState:
    """The game's state once its phase is ``kind`` (polled every 10 ms, ``tries`` times)."""
    for _ in range(tries):
        if game.state is not None and game.state.phase.kind is kind:
            break
        await asyncio.sleep(0.01)
    state = game.state
    assert state is not None and state.phase.kind is kind, state and state.phase
    return state


class Watch:
    """Records every event and alert; tests wait on what they expect, never on a clock."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.alerts: list[str] = []
        self._changed = asyncio.Event()

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        self.events.extend(events)
        self._changed.set()

    async def on_alert(self, game: LiveGame, message: str) -> None:
        self.alerts.append(message)
        self._changed.set()

    async def until(self, pred: Callable[[], bool], within: float = 30) -> None:
        async with asyncio.timeout(within):
            while not pred():
                self._changed.clear()
                await self._changed.wait()

    def phases(self) -> list[str]:
        return [e.phase for e in self.events if isinstance(e, PhaseStarted)]
