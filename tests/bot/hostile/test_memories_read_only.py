"""A read-only data folder with LLM agents (issue 12, item 15): one clear warning, memories
kept in the process only, and no traceback per save."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from agent.memory.embeddings import HashingEmbedder
from bot.seats.llm_agents import AgentLearning
from bot.service.live import LiveGame, SeatInfo
from bot.settings import load_settings
from tests.bot.hostile.harness import read_only, run_process
from tests.fakes.llm_servers import FakeOpenAIServer


def test_a_read_only_data_folder_turns_memories_off_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    settings = load_settings(data_dir=data)
    with read_only(data), caplog.at_level(logging.WARNING):
        learning = AgentLearning.from_settings(settings, None, embedder=HashingEmbedder())
        mind = learning.mind(
            cast(LiveGame, SimpleNamespace(id="g1", server_id=None)), SeatInfo(0, "Kai", None, True)
        )
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
    mind = learning.mind(
        cast(LiveGame, SimpleNamespace(id="g1", server_id=None)), SeatInfo(0, "Kai", None, True)
    )
    await mind.save()
    assert (learning.memory_root / "g1" / "0").is_dir()


class Reflective:
    """The fake model of tests/bot/test_llm_agents.py, answering reflection questions with a
    note, so seats keep writing their memories during the game."""

    def __init__(self) -> None:
        from tests.bot.test_llm_agents import Table

        self.table = Table(seed=5, send_rate=0.6)

    def __call__(self, req: dict[str, object]) -> str:
        from tests.bot.test_llm_agents import kind_of

        if kind_of(req) in ("scheduler", "generator", "vote"):
            return self.table(req)
        return "1. day\n2. find the mafia\n3. nobody yet\nNOTE: watch the quiet ones"


@pytest.mark.slow
async def test_a_game_with_llm_agents_and_a_read_only_data_folder(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    """The whole command: the game plays to its end, one warning, no traceback."""
    fake_openai.responder = Reflective()
    data = tmp_path / "data"
    data.mkdir()
    env = {
        "MAFIABOT_DATA_DIR": str(data),
        "MAFIABOT_LLM": "openai:gpt-4o-mini",
        "OPENAI_BASE_URL": fake_openai.base_url,
        "OPENAI_API_KEY": "sk-test",
    }
    db = f"sqlite:///{tmp_path / 'llm.db'}"
    with read_only(data):
        code, _, err = await run_process(
            "simulate", "--agent", "llm", "--players", "6", "--seed", "4", "--speed", "30",
            "--day-seconds", "60", "--vote-seconds", "20", "--night-seconds", "30",
            "--night-vote-seconds", "15", "--db", db, env=env, within=300,
        )  # fmt: skip
    assert code == 0, err[-3000:]
    assert "Traceback" not in err
    assert err.count("Agent memories are not saved") == 1
    assert sum(1 for r in fake_openai.requests if "NOTE" in json.dumps(r.json)) > 0
