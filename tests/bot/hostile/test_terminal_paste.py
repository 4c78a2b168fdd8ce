"""Pasting escape sequences into ``mafiabot play`` (issue 12, item 13): the input handler
keeps going, no escape byte reaches the table, and a command after them stays a command."""

from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console

from bot.local.terminal import _run_line, handle_line


class Recorder:
    """Stands in for the service: what the terminal asked it to do."""

    def __init__(self, fail_with: Exception | None = None) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.fail_with = fail_with

    async def say(self, game_id: str, seat: int, text: str, **_: Any) -> None:
        if self.fail_with is not None:
            raise self.fail_with
        self.calls.append(("say", text))

    async def vote(self, game_id: str, seat: int, target: str | None, **_: Any) -> None:
        self.calls.append(("vote", target))

    async def night_act(self, game_id: str, seat: int, target: str, **_: Any) -> None:
        self.calls.append(("act", target))


class Game:
    id = "g1"
    state = None


PASTES = [
    # (typed, what the service is asked to do)
    ("\x1b[A/vote Kai", ("vote", "Kai")),  # an arrow key before a command
    ("\x1b[200~/vote Kai\x1b[201~", ("vote", "Kai")),  # bracketed paste
    ("\x1bOP/abstain", ("vote", None)),  # F1
    ("\x00\x07/act Remi", ("act", "Remi")),
    ("hello \x1b[31mred\x1b[0m there", ("say", "hello red there")),
    ("\x1b]0;new title\x07hi", ("say", "hi")),
    ("caf\udce9 ok", ("say", "caf ok")),  # an undecodable byte from stdin
    ("tab\there", ("say", "tab here")),
]


@pytest.mark.parametrize(("typed", "wanted"), PASTES, ids=[repr(t) for t, _ in PASTES])
async def test_escape_sequences_are_dropped_and_commands_stay_commands(
    typed: str, wanted: tuple[str, Any]
) -> None:
    service = Recorder()
    await handle_line(service, Game(), 0, typed)  # type: ignore[arg-type]
    assert service.calls == [wanted]


async def test_only_escape_sequences_send_nothing() -> None:
    service = Recorder()
    assert await handle_line(service, Game(), 0, "\x1b[A\x1b[B\x1b[201~") is None  # type: ignore[arg-type]
    assert service.calls == []


async def test_a_line_that_fails_does_not_end_the_input_handler() -> None:
    """Whatever one line runs into (here: the database refusing a character), the player is
    told in one line and the next line is read."""
    console = Console(record=True, width=200)
    service = Recorder(fail_with=ValueError("PostgreSQL text fields cannot contain NUL bytes"))
    go_on = await _run_line(service, Game(), 0, ("hi there", None), console)  # type: ignore[arg-type]
    assert go_on is True
    assert "not sent" in console.export_text()
    service.fail_with = None
    assert await _run_line(service, Game(), 0, ("\x1b[A/vote Kai", None), console) is True  # type: ignore[arg-type]
    assert service.calls == [("vote", "Kai")]


async def test_quit_after_an_escape_sequence_still_quits() -> None:
    console = Console(record=True, width=200)
    assert await _run_line(Recorder(), Game(), 0, ("\x1b[A/quit", None), console) is False  # type: ignore[arg-type]
