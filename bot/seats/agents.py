"""Which agent plays an agent seat: the offline baseline, or the LLM agent when configured."""

from __future__ import annotations

import random

from agent.base import Player
from agent.baseline import BaselinePolicy
from agent.driver import PolicyPlayer
from bot.seats.llm_agents import LLM, LLMPlayerFactory
from bot.service.clock import GameClock
from bot.service.live import AgentFactory, LiveGame, SeatInfo, SeatPortImpl
from bot.service.timers import SchedulerTimers

BASELINE = "baseline"


def baseline_player(
    game: LiveGame, seat: SeatInfo, port: SeatPortImpl, clock: GameClock, timers: SchedulerTimers
) -> Player:
    rng = random.Random(f"{game.seed}:agent:{seat.index}")
    policy = BaselinePolicy(seat.index, seat.name, rng, persona=seat.persona)
    return PolicyPlayer(policy, port, clock, timers)


def make_agent_factory(
    default_kind: str = BASELINE, llm: LLMPlayerFactory | None = None
) -> AgentFactory:
    """Agents by seat kind: "llm" plays the LLM agent when a model is configured, else the
    offline baseline (the CLI says so); "baseline" is always the offline baseline."""

    def factory(
        game: LiveGame,
        seat: SeatInfo,
        port: SeatPortImpl,
        clock: GameClock,
        timers: SchedulerTimers,
    ) -> Player:
        kind = seat.agent_kind or default_kind
        if kind == LLM and llm is not None:
            return llm(game, seat, port, clock, timers)
        if kind in (BASELINE, LLM):
            return baseline_player(game, seat, port, clock, timers)
        raise ValueError(f"unknown agent kind {kind!r}")

    return factory
