"""Adapters stay thin (issue 33, item 7): every module of the Discord and Slack adapters is
at most 500 lines (the rules, settings syntax, limits and texts that are not the platform's
own live in bot/ service modules)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ADAPTERS = ("bot/discord", "bot/slack")
LIMIT = 500


def adapter_modules() -> list[Path]:
    return sorted(p for folder in ADAPTERS for p in (ROOT / folder).rglob("*.py"))


def test_there_are_adapter_modules() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in adapter_modules()}
    assert {"bot/discord/app.py", "bot/discord/commands.py", "bot/slack/app.py"} <= names


@pytest.mark.parametrize("path", adapter_modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_adapter_module_is_at_most_500_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= LIMIT, f"{path.relative_to(ROOT)} has {lines} lines (at most {LIMIT})"
