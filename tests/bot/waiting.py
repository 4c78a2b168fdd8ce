"""Waiting for a live game to reach a phase (the service's timers run on the real clock)."""

from __future__ import annotations

import asyncio

from bot.service import LiveGame
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
