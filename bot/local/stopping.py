"""How a local command (``play``, ``simulate``, ``replay``) ends when it is told to stop.

Ctrl-C, SIGTERM and a closed standard output (``mafiabot simulate | head -2``) all end the
running command the same way: its main coroutine is cancelled, so every ``finally`` on the
way out saves and shuts down (the game stays resumable), and the command says what to type
to carry on instead of printing a traceback. A closed output ends it quietly, as Unix tools
do: nothing more is written to it (nor to the closed pipe at exit).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import select
import signal
import stat
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import IO, Any, TypeVar

T = TypeVar("T")

#: exit codes, as a shell reports a process ended by the signal: 128 + its number
EXIT_CODES = {"interrupt": 130, "closed-pipe": 141, "terminate": 143}


class Stopped(Exception):
    """The command was stopped (``reason``: interrupt, terminate or closed-pipe)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.reason]


class GuardedOutput:
    """Standard output that survives its reader going away: the first ``BrokenPipeError``
    points the descriptor at /dev/null (so the interpreter's last flush is silent) and tells
    whoever listens (`on_closed`); every later write is dropped."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self.closed_pipe = False
        self.listeners: list[Callable[[], None]] = []

    def write(self, text: str) -> int:
        if not self.closed_pipe:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._closed()
        return len(text)

    def flush(self) -> None:
        if not self.closed_pipe:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._closed()

    def watch(self) -> None:
        """When standard output is a pipe, notice its reader going away at once, not at the
        next write (which may be minutes off in a quiet game): a thread blocks in ``poll``,
        which reports a pipe's closed read end as an error."""
        try:
            fd = self._stream.fileno()
            if not stat.S_ISFIFO(os.fstat(fd).st_mode) or not hasattr(select, "poll"):
                return
        except (OSError, ValueError, AttributeError):
            return

        def wait() -> None:
            poller = select.poll()
            poller.register(fd, 0)  # (POLLERR and POLLHUP are always reported)
            with contextlib.suppress(OSError):
                if poller.poll() and not self.closed_pipe:
                    self._closed()

        threading.Thread(target=wait, name="stdout-closed", daemon=True).start()

    def _closed(self) -> None:
        if self.closed_pipe:
            return
        self.closed_pipe = True
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        for listener in list(self.listeners):
            listener()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stdout() -> None:
    """Put a `GuardedOutput` in front of ``sys.stdout`` (once; the ``mafiabot`` command)."""
    if sys.stdout is not None and not isinstance(sys.stdout, GuardedOutput):
        guarded = GuardedOutput(sys.stdout)
        guarded.watch()
        sys.stdout = guarded


def stdout_closed() -> bool:
    """Has the reader of standard output gone away?"""
    out: object = sys.stdout
    return isinstance(out, GuardedOutput) and out.closed_pipe


def run_stoppable(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, where SIGTERM and a closed stdout cancel ``main`` as Ctrl-C
    does; a stop is raised as `Stopped` once ``main`` has finished its clean-up."""
    reasons: list[str] = []

    async def guarded() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def stop(reason: str) -> None:
            reasons.append(reason)
            task.cancel()

        def closed() -> None:
            loop.call_soon_threadsafe(stop, "closed-pipe")

        out: object = sys.stdout
        if isinstance(out, GuardedOutput):
            out.listeners.append(closed)
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGTERM, stop, "terminate")
        try:
            return await main
        finally:
            if isinstance(out, GuardedOutput) and closed in out.listeners:
                out.listeners.remove(closed)
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGTERM)

    try:
        return asyncio.run(guarded())
    except KeyboardInterrupt:
        raise Stopped("interrupt") from None
    except asyncio.CancelledError:
        if not reasons:
            raise
        if reasons[0] == "closed-pipe":
            _exit_now(EXIT_CODES["closed-pipe"])
        raise Stopped(reasons[0]) from None


def _exit_now(code: int) -> None:
    """Nobody reads our output any more and everything is saved and shut down: end now,
    without the second or so an interpreter with a thousand modules takes to tear down."""
    logging.shutdown()
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(code)
