"""A read-only data folder with LLM agents (issue 12, item 15): one clear warning, memories
kept in the process only, and no traceback per save."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from agent.memory.embeddings import HashingEmbedder
from bot.llm_agents import AgentLearning
from bot.service import SeatInfo
from bot.settings import load_settings
from tests.bot.hostile.harness import read_only


def test_a_read_only_data_folder_turns_memories_off_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    settings = load_settings(data_dir=data)
    with read_only(data), caplog.at_level(logging.WARNING):
        learning = AgentLearning.from_settings(settings, None, embedder=HashingEmbedder())
        mind = learning.mind(
            SimpleNamespace(id="g1", server_id=None), SeatInfo(0, "Kai", None, True)
        )  # type: ignore[arg-type]
    assert learning.memory_root is None and mind.directory is None  # saves are no-ops
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and warnings[0].exc_info is None
    message = warnings[0].getMessage()
    assert str(data / "memory") in message and "MAFIABOT_DATA_DIR" in message
    assert not (data / "memory").exists()


async def test_memories_are_saved_when_the_folder_is_writable(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path / "data")
    learning = AgentLearning.from_settings(settings, None, embedder=HashingEmbedder())
    assert learning.memory_root == tmp_path / "data" / "memory"
    assert list(learning.memory_root.iterdir()) == []  # (the write test leaves nothing)
    mind = learning.mind(SimpleNamespace(id="g1", server_id=None), SeatInfo(0, "Kai", None, True))  # type: ignore[arg-type]
    await mind.save()
    assert (learning.memory_root / "g1" / "0").is_dir()
