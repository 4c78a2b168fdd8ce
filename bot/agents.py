"""Which agent plays an agent seat: the offline baseline, or the LLM agent when configured."""

from __future__ import annotations

import random

from agent.base import Player
from agent.baseline import BaselinePolicy
from agent.driver import PolicyPlayer
from bot.clock import GameClock
from bot.service import LiveGame, SeatInfo, SeatPortImpl
from bot.timers import SchedulerTimers

BASELINE = "baseline"


def baseline_player(
    game: LiveGame, seat: SeatInfo, port: SeatPortImpl, clock: GameClock, timers: SchedulerTimers
) -> Player:
    rng = random.Random(f"{game.seed}:agent:{seat.index}")
    policy = BaselinePolicy(seat.index, seat.name, rng, persona=seat.persona)
    return PolicyPlayer(policy, port, clock, timers)


def make_agent_factory(default_kind: str = BASELINE):  # type: ignore[no-untyped-def]
    def factory(
        game: LiveGame,
        seat: SeatInfo,
        port: SeatPortImpl,
        clock: GameClock,
        timers: SchedulerTimers,
    ) -> Player:
        kind = seat.agent_kind or default_kind
        if kind == BASELINE:
            return baseline_player(game, seat, port, clock, timers)
        raise ValueError(f"unknown agent kind {kind!r}")

    return factory
