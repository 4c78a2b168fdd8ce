"""Building LLM agent seats from settings: clients, per-seat budgets, the player factory.

One set of provider clients (main model, optional scheduler model, optional backup) is built
per process and shared by every seat and game: they are connection pools. Each seat gets its
own :class:`~agent.llm.TokenBudget` (``MAFIABOT_LLM_TOKEN_BUDGET``, shared by its scheduler
and generator calls); once spent, the seat degrades to the baseline agent.

    factory = llm_player_factory(settings, DBDecisionLog(engine))
    service = GameService(engine, scheduler, agent_factory=factory)   # or per-kind dispatch
    ...
    await factory.aclose()

Building fails fast (``LLMConfigError``) when a provider has no credentials, rather than on
the first move of a game.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from agent.base import Player
from agent.decisions import DecisionLog
from agent.llm import (
    BudgetedClient,
    FallbackClient,
    LLMClient,
    TokenBudget,
    aclose_client,
    build_client,
)
from agent.llm_player import LLMPlayer, LLMPlayerSettings
from agent.prompting import default_personas
from bot.clock import GameClock
from bot.service import LiveGame, SeatInfo, SeatPortImpl
from bot.settings import Settings
from bot.timers import SchedulerTimers

__all__ = [
    "LLM",
    "LLMAgentConfig",
    "LLMClients",
    "LLMPlayerFactory",
    "build_llm_clients",
    "llm_player_factory",
]

#: the agent kind served by this factory (``SeatInfo.agent_kind``)
LLM = "llm"


@dataclass(frozen=True)
class LLMAgentConfig:
    """The settings the LLM agent needs, as plain values (see :class:`bot.settings.Settings`)."""

    llm: str
    scheduler_llm: str = ""
    llm_backup: str = ""
    llm_timeout: float = 20.0
    llm_max_attempts: int = 3
    #: per seat per game; 0 = unlimited
    llm_token_budget: int = 200_000
    player: LLMPlayerSettings = field(default_factory=LLMPlayerSettings)

    @classmethod
    def from_settings(
        cls, settings: Settings, player: LLMPlayerSettings | None = None
    ) -> LLMAgentConfig:
        return cls(
            llm=settings.llm,
            scheduler_llm=settings.scheduler_llm,
            llm_backup=settings.llm_backup,
            llm_timeout=settings.llm_timeout,
            llm_max_attempts=settings.llm_max_attempts,
            llm_token_budget=settings.llm_token_budget,
            player=player or LLMPlayerSettings(),
        )


@dataclass(frozen=True)
class LLMClients:
    """The shared clients: ``generator`` writes lines and votes, ``scheduler`` decides when."""

    generator: LLMClient
    scheduler: LLMClient

    async def aclose(self) -> None:
        await aclose_client(self.generator)
        if self.scheduler is not self.generator:
            await aclose_client(self.scheduler)


def build_llm_clients(config: LLMAgentConfig) -> LLMClients:
    """Provider clients for ``config``; the backup (if any) stands behind both models."""
    if not config.llm:
        raise ValueError("no LLM configured (MAFIABOT_LLM is empty)")

    def one(spec: str) -> LLMClient:
        return build_client(spec, timeout=config.llm_timeout, max_attempts=config.llm_max_attempts)

    backup = one(config.llm_backup) if config.llm_backup else None
    generator = one(config.llm)
    if backup is not None:
        generator = FallbackClient(generator, backup)
    scheduler = generator
    if config.scheduler_llm and config.scheduler_llm != config.llm:
        scheduler = one(config.scheduler_llm)
        if backup is not None:
            scheduler = FallbackClient(scheduler, backup)
    return LLMClients(generator, scheduler)


class LLMPlayerFactory:
    """An ``AgentFactory`` (same signature as :func:`bot.agents.baseline_player`) for LLM seats.

    ``budgets`` holds each seat's :class:`TokenBudget` by (game id, seat), for reports.
    """

    def __init__(
        self, config: LLMAgentConfig, decisions: DecisionLog, clients: LLMClients | None = None
    ) -> None:
        self.config = config
        self.decisions = decisions
        self.clients = clients or build_llm_clients(config)
        self.budgets: dict[tuple[str, int], TokenBudget] = {}

    def __call__(
        self,
        game: LiveGame,
        seat: SeatInfo,
        port: SeatPortImpl,
        clock: GameClock,
        timers: SchedulerTimers,
    ) -> Player:
        rng = random.Random(f"{game.seed}:llm:{seat.index}")
        generator, scheduler = self.clients.generator, self.clients.scheduler
        if self.config.llm_token_budget > 0:
            budget = TokenBudget(self.config.llm_token_budget)
            self.budgets[(game.id, seat.index)] = budget
            generator = BudgetedClient(generator, budget)
            scheduler = (
                generator
                if self.clients.scheduler is self.clients.generator
                else BudgetedClient(scheduler, budget)
            )
        persona = seat.persona or rng.choice(default_personas())
        return LLMPlayer(
            seat=seat.index,
            name=seat.name,
            persona=persona,
            port=port,
            clock=clock,
            timers=timers,
            generator=generator,
            scheduler=scheduler,
            decisions=self.decisions,
            rng=rng,
            settings=self.config.player,
            game_id=game.id,
        )

    async def aclose(self) -> None:
        """Close the shared provider clients (at process shutdown)."""
        await self.clients.aclose()


def llm_player_factory(
    settings: Settings | LLMAgentConfig,
    decisions: DecisionLog,
    *,
    clients: LLMClients | None = None,
    player: LLMPlayerSettings | None = None,
) -> LLMPlayerFactory:
    """The factory for LLM seats, from the bot's settings or plain values.

    ``clients`` replaces the provider clients (tests, benchmarks); ``player`` the agent's
    timing and prompt knobs.
    """
    if isinstance(settings, Settings):
        config = LLMAgentConfig.from_settings(settings, player)
    elif player is not None:
        config = replace(settings, player=player)
    else:
        config = settings
    return LLMPlayerFactory(config, decisions, clients)
