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

Personas (`agent.personas`) are picked here for every LLM seat, from the seat's side, seeded by
the game (or as configured on the seat). Memory, reflection and learning across games are on
when the factory gets an :class:`AgentLearning`::

    learning = AgentLearning.from_settings(settings, engine)   # MiniLM, <data_dir>/memory, DB pool
    factory = llm_player_factory(settings, DBDecisionLog(engine), learning=learning)
    ...
    await factory.wait_learning()   # end-of-game debriefs (experience pool, strategy notes)
    await factory.stop_learning()   # at shutdown: a short grace, then the rest is cut short
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import uuid
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from sqlalchemy.engine import Engine

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
from agent.llm.queue import QueuedClient, Slots, concurrency_for, parse_concurrency
from agent.llm.spend import CappedClient, DailySpend, SpendLimits, StoredCall, parse_prices
from agent.llm.structured import mode_for, parse_modes
from agent.llm_player import LLMPlayer, LLMPlayerSettings
from agent.memory.cache import CachedEmbedder
from agent.memory.embeddings import Embedder, default_minilm
from agent.memory.seatmind import MindSettings, SeatMind
from agent.personas import Persona, persona_for
from bot.seats.experience_store import ExperienceStore, register_memory_root
from bot.service.clock import GameClock
from bot.service.live import LiveGame, SeatInfo, SeatPortImpl
from bot.service.timers import SchedulerTimers
from bot.settings import Settings
from bot.store.decisions import DBDecisionLog
from bot.table.personas import read_personas_file

__all__ = [
    "LLM",
    "AgentLearning",
    "LLMAgentConfig",
    "LLMClients",
    "LLMPlayerFactory",
    "build_llm_clients",
    "llm_player_factory",
]

#: the agent kind served by this factory (``SeatInfo.agent_kind``)
LLM = "llm"

log = logging.getLogger(__name__)

#: how long a stopping process waits for end-of-game debriefs before cutting them short
STOP_LEARNING_GRACE_S = 2.0


def writable_memory_root(root: Path) -> Path | None:
    """``root`` when agents can keep their memories there, else None (memories stay in the
    process) after one warning: a read-only data folder must not cost a traceback per save."""
    probe = root / f".write-test-{uuid.uuid4().hex}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        log.warning(
            "Agent memories are not saved: %s is not writable (%s). Games play on; an agent "
            "resumed after a restart starts with an empty memory. Make MAFIABOT_DATA_DIR "
            "writable to keep them.",
            root,
            e.strerror or e,
        )
        return None
    return root


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
    #: the operator's daily caps per server and per process (`agent.llm.spend`)
    spend_limits: SpendLimits = field(default_factory=SpendLimits)
    #: ``MAFIABOT_LLM_PRICES`` (see `agent.llm.spend.parse_prices`)
    llm_prices: str = ""
    #: structured output (``MAFIABOT_LLM_STRUCTURED``): a mode, then ``SPEC=MODE`` overrides
    llm_structured: str = "auto"
    #: requests in flight per model server (``MAFIABOT_LLM_CONCURRENCY``): "auto" or a
    #: number, then ``SPEC=N`` overrides
    llm_concurrency: str = "auto"
    player: LLMPlayerSettings = field(default_factory=LLMPlayerSettings)
    #: the operator's own personas (``MAFIABOT_PERSONAS_FILE``), chosen by key like the rest
    personas: tuple[Persona, ...] = ()

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
            spend_limits=SpendLimits(
                server_tokens=settings.llm_server_day_tokens,
                server_usd=settings.llm_server_day_usd,
                process_tokens=settings.llm_process_day_tokens,
                process_usd=settings.llm_process_day_usd,
            ),
            llm_prices=settings.llm_prices,
            llm_structured=settings.llm_structured,
            llm_concurrency=settings.llm_concurrency,
            player=player
            or LLMPlayerSettings(
                guard_judge=settings.llm_guard_judge,
                guard_judge_timeout_s=settings.llm_guard_judge_timeout,
            ),
            personas=read_personas_file(settings.personas_file),
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

    modes = parse_modes(config.llm_structured)
    limits = parse_concurrency(config.llm_concurrency)
    #: one queue per server, whichever models it serves (the generator's, the scheduler's)
    servers: dict[tuple[str, str], Slots] = {}

    def one(spec: str) -> LLMClient:
        client = build_client(
            spec,
            timeout=config.llm_timeout,
            max_attempts=config.llm_max_attempts,
            structured=mode_for(modes, spec),
        )
        # one queue per server: every seat and game on it waits its turn in one order
        base_url = os.environ.get("OPENAI_BASE_URL") if spec.startswith("openai:") else None
        limit = concurrency_for(limits, spec, base_url)
        if not limit:
            return client
        provider = spec.partition(":")[0].strip()
        url = os.environ.get(f"{provider.upper()}_BASE_URL", "")
        slots = servers.setdefault((provider, url), Slots())
        return QueuedClient(client, limit, timeout=config.llm_timeout, slots=slots)

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


@dataclass
class AgentLearning:
    """Memory and learning for LLM seats: the embedder, where memories are kept, the experience
    pool (None: each game on its own), and the knobs (:class:`MindSettings`).

    ``memory_root`` None keeps memories in the process only (no resume from disk)."""

    embedder: Embedder
    memory_root: Path | None = None
    store: ExperienceStore | None = None
    settings: MindSettings = field(default_factory=MindSettings)

    def __post_init__(self) -> None:
        if self.memory_root is not None:
            register_memory_root(self.memory_root)  # so a withdrawal finds the folders

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        engine: Engine | None,
        *,
        embedder: Embedder | None = None,
        mind: MindSettings | None = None,
    ) -> AgentLearning:
        """MiniLM (shared, cached) unless ``embedder`` is given; memories under
        ``<data_dir>/memory`` (in the process only when that is not writable); the database
        pool in ``MAFIABOT_EXPERIENCE_SCOPE``."""
        return cls(
            embedder=embedder or CachedEmbedder(default_minilm()),
            memory_root=writable_memory_root(settings.data_dir / "memory"),
            store=None if engine is None else ExperienceStore(engine, settings.experience_scope),
            settings=mind or MindSettings(),
        )

    async def warm_up(self) -> None:
        """Load the embedding model now, in a worker thread, before any game plays: loading
        it holds Python's global lock for a good part of a second (the tokenizer is built in
        one call that never releases it, the ONNX session partly), which stalls the event
        loop and every game on it even from a worker thread. Done at a seat's first memory
        write instead, that stall landed in the middle of a game. A model that cannot be
        loaded is only logged here: the seats find out and play without memory, as before."""
        embedder: object = self.embedder
        while embedder is not None:
            warm = getattr(embedder, "warm_up", None)
            if callable(warm):
                try:
                    await asyncio.to_thread(warm)
                except Exception as err:
                    log.warning("The embedding model could not be loaded ahead: %s", err)
                return
            embedder = getattr(embedder, "inner", None)

    def mind(self, game: LiveGame, seat: SeatInfo) -> SeatMind:
        directory = None
        if self.memory_root is not None:
            directory = self.memory_root / game.id / str(seat.index)
        pool = None if self.store is None else self.store.for_game(game.id, game.server_id)
        return SeatMind(
            seat.index, self.embedder, directory=directory, settings=self.settings, pool=pool
        )


def stored_spend(decisions: DecisionLog) -> Callable[[date], Iterable[StoredCall]] | None:
    """Where the day's calls are read back from for the daily caps: the database the
    decisions are recorded in (through any wrapper's ``inner``), so a restarted bot counts
    what it spent before; None when they are not stored (the count is then the process's)."""
    log: object = decisions
    while log is not None:
        if isinstance(log, DBDecisionLog):
            return log.spent_on
        log = getattr(log, "inner", None)
    return None


def seat_persona(game: LiveGame, seat: SeatInfo, extra: tuple[Persona, ...] = ()) -> Persona:
    """The seat's persona for this game: the key chosen for the seat (a built-in's or one of
    the operator's ``extra``), else drawn (seeded by the game) from its side's set. The side
    comes from the dealt role, known once the game runs."""
    team: str | None = None
    if game.state is not None and 0 <= seat.index < len(game.state.seats):
        team = game.state.seats[seat.index].team
    rng = random.Random(f"{game.seed}:persona:{seat.index}")
    return persona_for(team, rng, seat.persona, extra)


class LLMPlayerFactory:
    """An ``AgentFactory`` (same signature as :func:`bot.seats.agents.baseline_player`) for LLM
    seats.

    ``budgets`` holds each seat's :class:`TokenBudget` by (game id, seat), for reports.
    """

    def __init__(
        self,
        config: LLMAgentConfig,
        decisions: DecisionLog,
        clients: LLMClients | None = None,
        learning: AgentLearning | None = None,
    ) -> None:
        self.config = config
        self.decisions = decisions
        self.clients = clients or build_llm_clients(config)
        self.learning = learning
        self.budgets: dict[tuple[str, int], TokenBudget] = {}
        #: the day's spending against the operator's caps (None: no cap set)
        self.spend: DailySpend | None = None
        if config.spend_limits.any:
            self.spend = DailySpend(
                config.spend_limits,
                parse_prices(config.llm_prices),
                history=stored_spend(decisions),
            )
            self.spend.spent()  # the day's count starts now, from what the store recorded
        #: told once a day when a cap is reached (the service's `bot.service.alerts.Alerts.alert`,
        #: set by whoever runs the service): the game's host hears of it, not its players
        self.alert: Callable[[LiveGame, str], None] | None = None
        #: each seat's memory by (game id, seat), for as long as its player exists (tests,
        #: status pages); weak, so the factory never keeps a finished game alive
        self.minds: weakref.WeakValueDictionary[tuple[str, int], SeatMind] = (
            weakref.WeakValueDictionary()
        )
        self._learning_tasks: set[asyncio.Task[None]] = set()

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
        if self.spend is not None:
            server = None if game.server_id is None else str(game.server_id)
            on_over = self._cap_alert(game)
            capped = CappedClient(generator, self.spend, server, on_over)
            scheduler = (
                capped
                if scheduler is generator
                else CappedClient(scheduler, self.spend, server, on_over)
            )
            generator = capped
        persona = seat_persona(game, seat, self.config.personas)
        mind = None
        if self.learning is not None:
            mind = self.learning.mind(game, seat)
            self.minds[(game.id, seat.index)] = mind
        return LLMPlayer(
            seat=seat.index,
            name=seat.name,
            persona=persona.text,
            port=port,
            clock=clock,
            timers=timers,
            generator=generator,
            scheduler=scheduler,
            decisions=self.decisions,
            rng=rng,
            # the game's own limit on a line, the same as its people's
            settings=replace(
                self.config.player,
                max_line_chars=min(
                    self.config.player.max_line_chars, game.config.max_message_chars
                ),
            ),
            game_id=game.id,
            mind=mind,
            talkativeness=persona.talkativeness,
            learning_tasks=self._learning_tasks,
        )

    def _cap_alert(self, game: LiveGame) -> Callable[[str], None]:
        def told(reason: str) -> None:
            message = (
                f"The AI players' spending cap is reached: {reason}. The AI seats play on "
                "as the offline baseline agent until the cap resets at 00:00 UTC "
                "(MAFIABOT_LLM_SERVER_DAY_TOKENS and the other daily caps)."
            )
            if self.alert is not None:
                self.alert(game, message)
            else:
                log.warning("Game %s: %s", game.id, message)

        return told

    async def wait_learning(self) -> None:
        """Wait for every end-of-game debrief started so far (experience pool, strategy notes):
        before reading what a game taught, and before shutting down."""
        while self._learning_tasks:
            await asyncio.gather(*list(self._learning_tasks), return_exceptions=True)

    async def stop_learning(self, grace_s: float = STOP_LEARNING_GRACE_S) -> int:
        """At shutdown: give the end-of-game debriefs under way ``grace_s`` to finish, then
        cancel the rest (their model calls with them) and return how many were cut short.
        A stop must not wait for a slow model (a container is killed 10 s after it is asked
        to stop); what a cut debrief would have taught is dropped."""
        pending = set(self._learning_tasks)
        if pending:
            _, pending = await asyncio.wait(pending, timeout=grace_s)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
            log.warning(
                "stopping: %d end-of-game debrief(s) cut short; what they would have "
                "taught the agents is dropped",
                len(pending),
            )
        return len(pending)

    def learning_pending(self) -> set[asyncio.Task[None]]:
        """The end-of-game debriefs still running (`bot.runtime` shows their progress)."""
        return {t for t in self._learning_tasks if not t.done()}

    async def skip_learning(self) -> None:
        """Stop the debriefs still running (Ctrl-C after a local game): what they had not
        stored yet is not learnt; everything already stored stays."""
        tasks = self.learning_pending()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def aclose(self) -> None:
        """Close the shared provider clients (at process shutdown)."""
        await self.clients.aclose()


def llm_player_factory(
    settings: Settings | LLMAgentConfig,
    decisions: DecisionLog,
    *,
    clients: LLMClients | None = None,
    player: LLMPlayerSettings | None = None,
    learning: AgentLearning | None = None,
) -> LLMPlayerFactory:
    """The factory for LLM seats, from the bot's settings or plain values.

    ``clients`` replaces the provider clients (tests, benchmarks); ``player`` the agent's
    timing and prompt knobs; ``learning`` turns on memory, reflection and learning across
    games (see :class:`AgentLearning`).
    """
    if isinstance(settings, Settings):
        config = LLMAgentConfig.from_settings(settings, player)
    elif player is not None:
        config = replace(settings, player=player)
    else:
        config = settings
    return LLMPlayerFactory(config, decisions, clients, learning)
