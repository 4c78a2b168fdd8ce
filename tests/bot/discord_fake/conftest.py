from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from tests.fakes.discord_fixtures import fake_discord  # noqa: F401


@pytest.fixture(autouse=True)
def no_discord_errors_logged(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """discord.py swallows exceptions in event handlers and views and only logs them; a test of
    the fake must not pass while the library was quietly failing to parse its payloads."""
    caplog.set_level(logging.WARNING, logger="discord")
    yield
    errors = [
        r for r in caplog.records if r.name.startswith("discord") and r.levelno >= logging.ERROR
    ]
    assert not errors, "discord.py logged errors:\n" + "\n".join(
        r.getMessage() + (f"\n{r.exc_text or ''}") for r in errors
    )
