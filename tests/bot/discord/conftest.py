from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def no_errors_logged(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """discord.py swallows exceptions in event handlers and components and only logs them; a
    test must not pass while the bot was quietly failing."""
    caplog.set_level(logging.WARNING, logger="discord")
    caplog.set_level(logging.WARNING, logger="bot")
    yield
    errors = [
        r
        for r in caplog.records
        if r.name.startswith(("discord", "bot"))
        and r.levelno >= logging.ERROR
        and not getattr(r, "expected", False)
    ]
    assert not errors, "errors were logged:\n" + "\n".join(
        r.getMessage() + (f"\n{r.exc_text or ''}") for r in errors
    )
