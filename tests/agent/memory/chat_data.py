"""Real LLMafia day-chat lines turned into memory items, for retrieval tests."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from agent.memory import MemoryItem
from research.paths import llmafia_games_dir

LLMAFIA_GAMES = llmafia_games_dir()
_LINE = re.compile(r"^\[\d\d:\d\d:\d\d\] ([^:]+): (.+)$")
#: Lines mentioning an investigative role would make "who claimed detective?" ambiguous.
_ROLE_WORDS = re.compile(r"detect|\bcops?\b|investigat|sheriff|\bcheck|\bclean|\bseer", re.I)

T0 = datetime(2025, 3, 1, 20, 0, tzinfo=UTC)


def llmafia_chat_lines() -> list[str]:
    """Unique "Name: text" day-chat lines from every LLMafia game, in a stable order."""
    files = sorted(LLMAFIA_GAMES.glob("*/public_daytime_chat.txt"))
    if not files:
        pytest.skip(f"LLMafia data not found under {LLMAFIA_GAMES}")
    seen: dict[str, None] = {}
    for path in files:
        for raw in path.read_text("utf-8", errors="replace").splitlines():
            match = _LINE.match(raw.strip())
            if match and not _ROLE_WORDS.search(match.group(2)):
                seen.setdefault(f"{match.group(1)}: {match.group(2)}", None)
    return list(seen)


def chat_items(lines: list[str], *, start_id: int = 0) -> list[MemoryItem]:
    return [
        MemoryItem(
            id=start_id + i,
            text=line,
            t=T0 + timedelta(seconds=i),
            phase=f"day-{1 + i // 100}",
            kind="message",
            importance=1.0,
            source_key=f"msg:{start_id + i}",
        )
        for i, line in enumerate(lines)
    ]
