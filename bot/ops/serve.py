"""`mafiabot run`'s life cycle around the platform adapters: the operations endpoint while
they run, and a graceful stop on SIGTERM (or Ctrl-C).

On the signal, in this order: ``/healthz`` turns 503 ("shutting down") and no game can be
opened, joined or started (one line says the bot is restarting); the platforms stop
delivering input (Discord's gateway and Slack's websocket or HTTP listener are closed, their
Web API sessions kept); inside the service nothing new starts (deadlines and agents stop;
the next start re-arms them from the database), the actions under way commit and what they
caused reaches the renderers; then the adapters are closed, which sends their queued posts
and closes the connections; the caller then closes the service and the database. All within
`STOP_SECONDS` (what ``docker stop`` allows before it kills), then the process exits 0.
Running games are in the database and carry on at the next start, and lines typed meanwhile
are read back from the booths then, as after any restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from bot.ops.health import Health, database_check, discord_check, task_check, writes_check
from bot.ops.http import OpsServer
from bot.ops.metrics import (
    Metrics,
    watch_slack_rate_limits,
    watching_discord_rate_limits,
)
from bot.service.port import GameService
from bot.settings import Settings

log = logging.getLogger(__name__)

#: from the signal to the process's exit
STOP_SECONDS = 10.0
#: of which the adapters may take this long to send what they have queued and disconnect
#: (the rest is for closing the service, the scheduler and the database)
ADAPTER_STOP_SECONDS = 7.0


@dataclass
class Ops:
    settings: Settings
    service: GameService
    metrics: Metrics
    health: Health
    server: OpsServer | None
    #: what stops a platform from delivering new input, first thing on a stop
    input_stoppers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

    def watch_discord(self, bot: Any) -> None:
        self.health.add("discord", discord_check(bot))
        self.input_stoppers.append(lambda: stop_discord_input(bot))

    def watch_slack(self, runner: Any) -> None:
        """Health (Socket Mode connected, or the HTTP listener up), rate-limit waits (the
        SDK's and the delivery queue's own), the relay's latency, and input stopped first on a
        stop."""
        self.health.add("slack", runner.connected)
        self.input_stoppers.append(runner.stop_input)
        slack_meter = self.metrics.rate_limited_on("slack")
        watch_slack_rate_limits(runner.client, self.metrics)
        runner.adapter.out.delivery.on_rate_limit = slack_meter
        runner.adapter.latency.observe = self.metrics.relay.labels("slack").observe


@asynccontextmanager
async def operations(
    settings: Settings, service: GameService, metrics: Metrics
) -> AsyncIterator[Ops]:
    """Health checks, the event-loop sampler and the endpoint (unless ``http_addr`` is empty)."""
    health = Health()
    health.add("database", database_check(service.engine))
    health.add("database", writes_check(service))
    pages = service.engine if settings.public_url else None
    server = OpsServer(settings.http_addr, health, metrics, pages) if settings.http_addr else None
    sampler = asyncio.create_task(metrics.sample_loop_lag(), name="ops:loop-lag")
    try:
        with watching_discord_rate_limits(metrics):
            if server is not None:
                await server.start()
            yield Ops(settings, service, metrics, health, server)
    finally:
        sampler.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampler
        if server is not None:
            await server.stop()


async def serve_until_stopped(
    ops: Ops, serving: dict[str, Coroutine[Any, Any, None]], *, watchdog: bool = False
) -> None:
    """Run the adapters (``{"discord": ..., "slack": ...}``) until SIGTERM or SIGINT, then stop
    them gracefully. If an adapter fails, the others are stopped and its error is raised.
    ``watchdog``: should the stop hang, end the process `STOP_SECONDS` after the signal."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    handled = (signal.SIGTERM, signal.SIGINT)
    for sig in handled:
        loop.add_signal_handler(sig, stop.set)
    tasks = {
        name: asyncio.create_task(coro, name=f"serve:{name}") for name, coro in serving.items()
    }
    for name, task in tasks.items():
        ops.health.add(name, task_check(task))
    stopping = asyncio.create_task(stop.wait(), name="ops:signal")
    try:
        done, _ = await asyncio.wait(
            [*tasks.values(), stopping], return_when=asyncio.FIRST_COMPLETED
        )
        if stopping in done:
            log.info("stopping: no new games; sending what is on its way, then closing")
            if watchdog:
                _start_watchdog(STOP_SECONDS)
            await graceful_stop(ops, list(tasks.values()))
        else:
            for ended in done:
                ended.result()  # an adapter's error
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
        stopping.cancel()
        for task in tasks.values():
            task.cancel()
        await asyncio.gather(stopping, *tasks.values(), return_exceptions=True)


async def graceful_stop(
    ops: Ops, adapters: list[asyncio.Task[None]], within: float = ADAPTER_STOP_SECONDS
) -> None:
    """No new games; what the service accepted reaches the renderers; then the adapters are
    cancelled, which makes each send its queued posts and disconnect (within ``within``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    ops.health.stopping = True
    ops.service.closing = True
    for stop_input in ops.input_stoppers:
        try:
            await asyncio.wait_for(stop_input(), within / 4)
        except Exception as exc:
            log.warning("could not stop a platform's input cleanly: %r", exc)
    try:
        await asyncio.wait_for(quiesce(ops.service), within / 2)
    except TimeoutError:
        log.warning("the games did not settle in time; closing anyway")
    for task in adapters:
        task.cancel()
    if adapters:
        _, late = await asyncio.wait(adapters, timeout=max(0.1, deadline - loop.time()))
        for task in late:
            log.warning("%s did not stop in time; closing it anyway", task.get_name())


async def quiesce(service: GameService) -> None:
    """Nothing new starts inside the service: phase deadlines stop (the next start re-arms
    them from the database) and so do the agents (re-attached then); the actions already under
    way finish; everything they caused reaches the renderers."""
    games = list(service.games.values())
    for game in games:
        if game.deadline_handle is not None:
            game.deadline_handle.cancel()
        for player in list(game.players.values()):
            await player.close()
    for game in games:
        async with game.lock:
            pass  # an action holding the lock has committed and dispatched its events
    await service.drain()


async def stop_discord_input(bot: Any) -> None:
    """Close every gateway connection (the REST session stays open for the posts still to
    send), then let the lines already read from booths reach the service. Lines typed from now
    on are read back from the booths at the next start."""
    for shard in list(getattr(bot, "shards", {}).values()):
        await shard.disconnect()
    relay = getattr(bot, "relay", None)
    if relay is not None:
        await relay.idle()


def _start_watchdog(seconds: float) -> None:
    def expire() -> None:
        log.error("could not stop within %.0f s; exiting now", seconds)
        logging.shutdown()
        os._exit(1)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
