"""Consent withdrawals requested from a platform (``/mafia consent withdraw``) run as background
jobs: the command answers at once (the consent is withdrawn and the person taken out of open
lobbies in one small transaction), the rest goes through the ended games one small
transaction at a time (`bot.privacy.withdrawal_steps`), so a person with a thousand ended
games never holds up a running game's writes, and the person is told when it is done.

One person may start a withdrawal once every `bot.limits.WITHDRAW_COOLDOWN` seconds per server
(it costs a pass over every game of the server); a second request while theirs is still
running is answered with that, not started again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import time
from collections.abc import Awaitable, Callable, Generator
from concurrent.futures import ProcessPoolExecutor

from sqlalchemy.engine import Engine

from bot.errors import ServiceError
from bot.limits import WITHDRAW_COOLDOWN, Cooldowns
from bot.privacy import WithdrawalReport, withdraw, withdrawal_steps

log = logging.getLogger(__name__)

Done = Callable[[WithdrawalReport], Awaitable[None]]


class Withdrawals:
    def __init__(
        self,
        engine: Engine,
        *,
        cooldown: float = WITHDRAW_COOLDOWN,
        pause: float = 0.0,
        processes: bool = True,
    ) -> None:
        self.engine = engine
        self._url = engine.url.render_as_string(hide_password=False)
        #: the cleaning of the ended games runs in a process of its own (no share of this
        #: process's interpreter lock: the games' event loop and writer are never starved);
        #: False: in a thread here (SQLite in memory)
        self.processes = processes and engine.url.database not in (None, "", ":memory:")
        self._executor: ProcessPoolExecutor | None = None
        self.cooldowns = Cooldowns(cooldown)
        #: seconds between two transactions of a withdrawal (0: a turn of the event loop)
        self.pause = pause
        self._running: dict[tuple[str, str, str], asyncio.Task[None]] = {}

    async def start(self, platform: str, server: str, user_id: str, done: Done) -> WithdrawalReport:
        """Withdraw ``user_id`` on ``server``: their consent, the games they host and their
        seats in open games at once (one small transaction; the report says which lobbies to
        take them out of), the ended games in the background; ``done`` is then called with
        the whole report (to tell the person). Raises `ServiceError` (a `CoolingDown` one when
        too soon) with the line to show them; nothing is done then."""
        key = (platform, server, user_id)
        if key in self._running:
            raise ServiceError(
                "Your withdrawal is already under way; I'll tell you when it's done."
            )
        self.cooldowns.check(key, time.monotonic(), "withdraw your consent")
        report = WithdrawalReport(platform, server, user_id)
        steps = withdrawal_steps(self.engine, report)
        try:
            await asyncio.to_thread(next, steps, False)
        except Exception:
            self.cooldowns.clear(key)
            raise
        task = asyncio.create_task(
            self._rest(key, steps, report, done), name=f"withdraw:{platform}:{server}"
        )
        self._running[key] = task
        task.add_done_callback(lambda _t: self._running.pop(key, None))
        return report

    async def _rest(
        self,
        key: tuple[str, str, str],
        steps: Generator[bool, None, None],
        report: WithdrawalReport,
        done: Done,
    ) -> None:
        try:
            if self.processes:
                steps.close()
                elsewhere = await asyncio.get_running_loop().run_in_executor(
                    self._pool(), _withdraw_in_process, self._url, *key
                )
                report.scrubbed = elsewhere.scrubbed
                report.counts.update(elsewhere.counts)
            else:
                while True:
                    if await asyncio.to_thread(next, steps, False) is False:
                        break
                    await asyncio.sleep(self.pause)
        except Exception:
            log.exception("a consent withdrawal on %s server %s failed", key[0], key[1])
            self.cooldowns.clear(key)  # they may try again at once
            return
        try:
            await done(report)
        except Exception:
            log.exception("telling a person their withdrawal is done failed")

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn")
            )
        return self._executor

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    def running(self) -> int:
        return len(self._running)

    async def wait(self) -> None:
        """Wait for every withdrawal started so far (tests, a graceful stop)."""
        while self._running:
            await asyncio.gather(*list(self._running.values()), return_exceptions=True)


def _withdraw_in_process(url: str, platform: str, server: str, user_id: str) -> WithdrawalReport:
    """The whole withdrawal again, in a worker process (it is idempotent: what the first step
    did in the bot's process is found done), one small transaction per game."""
    import bot.experience_store  # noqa: F401  (registers its withdrawal hooks)
    from bot.store.db import make_engine

    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)  # the games' process comes first when the machine is busy

    engine = make_engine(url)
    try:
        return withdraw(engine, platform, server, user_id)
    finally:
        engine.dispose()
