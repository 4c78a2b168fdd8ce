"""Start-up shared by every command: settings, database (migrated), scheduler, service."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Protocol

from sqlalchemy.engine import Engine

from agent.decisions import DecisionLog
from agent.memory import set_search_threads
from bot.limits import COMMAND_BURST, LOBBY_COOLDOWN
from bot.players.stats import catch_up_all
from bot.protection.privacy import PendingWithdrawals, apply_pending_withdrawals
from bot.seats.agents import make_agent_factory
from bot.seats.llm_agents import AgentLearning, llm_player_factory
from bot.service.port import GameService
from bot.service.timers import make_scheduler
from bot.settings import Settings
from bot.store.db import make_engine
from bot.store.decisions import DBDecisionLog
from bot.store.migrate import upgrade
from bot.store.writer import BUSY_SPACING

if TYPE_CHECKING:
    from bot.ops.metrics import Metrics

log = logging.getLogger(__name__)


def database_url(settings: Settings, override: str | None = None) -> str:
    return override or settings.resolved_database_url()


class Counting:
    """The board's start-up catch-up (`bot.players.stats.catch_up_all`) in a thread, off the event
    loop: every server's revealed games not counted yet, so no stats query has to."""

    def __init__(self, engine: Engine) -> None:
        self._stopping = threading.Event()
        self.task: asyncio.Task[int] = asyncio.create_task(
            asyncio.to_thread(catch_up_all, engine, self._stopping.is_set),
            name="count revealed games",
        )

    async def stop(self) -> None:
        """No new batch is begun; waits for the one under way (one transaction)."""
        self._stopping.set()
        try:
            await self.task
        except Exception:
            log.exception("stats: the start-up count failed")


def start_counting(engine: Engine) -> Counting:
    return Counting(engine)


@asynccontextmanager
async def running_service(
    settings: Settings,
    db_url: str | None = None,
    agent_kind: str = "baseline",
    *,
    metrics: Metrics | None = None,
    progress: Callable[[str], None] | None = None,
) -> AsyncIterator[GameService]:
    """A migrated database and a started scheduler; everything is shut down on exit.
    With ``metrics``, the service and the LLM agents' calls are measured into it. With
    ``progress`` (a local command's), the end-of-game learning says how far it is, a line
    a step, and a cancel (Ctrl-C) while it runs skips it; shutting down goes on."""
    url = database_url(settings, db_url)
    upgrade(url)
    engine = make_engine(url)
    scheduler = make_scheduler()
    scheduler.start()
    decisions = DBDecisionLog(engine)
    llm = None
    if settings.llm:
        set_search_threads(1)  # one faiss thread: no stalls on small machines
        learning = AgentLearning.from_settings(settings, engine)
        await learning.warm_up()  # not in a game's first minute (see AgentLearning.warm_up)
        recorded: DecisionLog = decisions
        if metrics is not None:
            from bot.ops.metrics import MeteredDecisionLog

            recorded = MeteredDecisionLog(decisions, metrics)
        llm = llm_player_factory(settings, recorded, learning=learning)
    service = GameService(
        engine,
        scheduler,
        make_agent_factory(agent_kind, llm),
        outage_release_seconds=settings.outage_release_seconds,
        commit_spacing=BUSY_SPACING,  # (none in tests' services)
    )
    service.lobby_cooldown.seconds = LOBBY_COOLDOWN  # (`bot.limits`; none in tests' services)
    service.commands.burst = COMMAND_BURST
    if metrics is not None:
        metrics.watch_service(service)
    service.decision_log = decisions
    service.llm_factory = llm
    if llm is not None:
        llm.alert = service.alerts.alert  # a spend cap reached: the host is told, once a day
    service.subscribe(PendingWithdrawals(engine))
    await asyncio.to_thread(apply_pending_withdrawals, engine)
    counting = start_counting(engine)
    try:
        yield service
    finally:
        await counting.stop()
        await service.close()  # agents flush their decision records on close
        if llm is not None:
            if progress is None:
                # end-of-game experiences and strategy notes: a short grace, then cut short (a
                # stop must not wait for a slow model's answers)
                await llm.stop_learning()
            else:
                await learn_with_progress(llm, progress)
            await llm.aclose()
        await decisions.aclose()
        scheduler.shutdown(wait=False)
        engine.dispose()


class Learning(Protocol):
    """The end-of-game learning of the LLM seats (`bot.seats.llm_agents.LLMPlayerFactory`)."""

    def learning_pending(self) -> set[asyncio.Task[None]]: ...

    async def skip_learning(self) -> None: ...


async def learn_with_progress(llm: Learning, say: Callable[[str], None]) -> None:
    """Wait for the end-of-game debriefs, a line as each ends; a cancel (Ctrl-C) skips the
    rest safely (what is stored stays) and is taken back, so the command ends as usual."""
    pending = llm.learning_pending()
    if not pending:
        return
    total, done = len(pending), 0
    say(f"Learning from the game: {total} debriefs (Ctrl-C skips this step)...")
    try:
        while pending:
            finished, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            done += len(finished)
            pending |= llm.learning_pending() - finished  # (one started meanwhile)
            total = max(total, done + len(pending))
            say(f"Learning from the game: {done}/{total} done")
    except asyncio.CancelledError:
        await llm.skip_learning()
        say("Learning from the game: skipped.")
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
