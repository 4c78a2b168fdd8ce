"""`mafiabot run` in a process of its own, exactly as a user starts it (`runproc.py`), its
/healthz and /metrics found from its log, stopped with SIGTERM as `docker stop` does."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from tests.bot.ops.scrape import healthz

ROOT = Path(__file__).resolve().parents[3]
LISTENING = re.compile(r"health and metrics on http://127\.0\.0\.1:(\d+)/healthz")


class Bot:
    """One `mafiabot run` process and its log (JSON lines)."""

    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc = proc
        self.log = log
        self.base = ""

    def lines(self) -> list[dict[str, object]]:
        text = self.log.read_text(errors="replace")
        return [json.loads(line) for line in text.splitlines() if line.strip()]


async def until(predicate: Callable[[], object], within: float, what: str) -> object:
    deadline = time.monotonic() + within
    while not (found := predicate()):
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.05)
    return found


@asynccontextmanager
async def bot_process(
    args: list[str], env_extra: dict[str, str], tmp_path: Path, name: str
) -> AsyncIterator[Bot]:
    """A healthy `mafiabot run <args>` process (JSON logs, /healthz on a free port); killed on
    the way out if still running."""
    log = tmp_path / f"{name}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAFIABOT_")}
    env.update(
        PYTHONPATH=str(ROOT),
        MAFIABOT_HTTP_ADDR="127.0.0.1:0",
        MAFIABOT_LOG_FORMAT="json",
        **env_extra,
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "tests" / "bot" / "ops" / "runproc.py"),
        "run",
        *args,
        cwd=tmp_path,  # no .env of the repository
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=log.open("wb"),
    )
    bot = Bot(proc, log)
    try:
        port = await until(
            lambda: LISTENING.search(log.read_text(errors="replace")), 120, "the ops endpoint"
        )
        assert isinstance(port, re.Match)
        bot.base = f"http://127.0.0.1:{port[1]}"
        await until_healthy(bot, 120)
    except BaseException:
        proc.kill()
        await proc.wait()
        raise AssertionError(f"{name} never got healthy:\n{log.read_text()}") from None
    try:
        yield bot
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def until_healthy(bot: Bot, within: float) -> None:
    deadline = time.monotonic() + within
    while True:
        assert bot.proc.returncode is None, "the bot exited"
        status, body = await healthz(bot.base)
        if status == 200:
            assert body == {"status": "ok"}
            return
        assert status == 503 and body["status"] == "down", body
        if time.monotonic() > deadline:
            raise TimeoutError(body)
        await asyncio.sleep(0.05)


async def until_down(bot: Bot, down: list[str], within: float) -> None:
    """Until /healthz answers 503 naming exactly ``down``."""
    deadline = time.monotonic() + within
    while (got := await healthz(bot.base)) != (503, {"status": "down", "down": down}):
        assert time.monotonic() < deadline, f"/healthz still {got}"
        await asyncio.sleep(0.05)


async def stop(bot: Bot) -> float:
    """SIGTERM; the seconds until the process was gone."""
    started = time.monotonic()
    bot.proc.send_signal(signal.SIGTERM)
    await asyncio.wait_for(bot.proc.wait(), 15)
    return time.monotonic() - started
