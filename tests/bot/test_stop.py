"""Stopping the bot takes seconds whatever its model is doing: the model calls in flight are
cancelled, the end-of-game debriefs get a short grace and are then cut short, and the decision
log is flushed (a container is killed 10 s after it is asked to stop)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func
from sqlmodel import Session, create_engine, select

import bot.seats.llm_agents
from agent.llm.base import LLMRequest
from agent.memory.embeddings import HashingEmbedder
from bot.runtime import running_service
from bot.seats.llm_agents import AgentLearning, LLMPlayerFactory
from bot.service.port import GameService
from bot.settings import Settings
from bot.store.models import LLMCall
from games.config import GameConfig
from tests.fakes.llm_servers import FakeOpenAIServer, content_text

NAMES = ["Ari", "Blake", "Casey", "Drew", "Eden"]
CONFIG = GameConfig(
    deal=("bystander", "mafia", "bystander", "bystander", "bystander"),
    day_seconds=60,
    vote_seconds=20,
    night_seconds=20,
    night_vote_seconds=10,
)
#: Docker's default grace before it kills the process
STOP_LIMIT_S = 10.0
#: each answer of the model takes this long (one request at a time: a local server)
SLOW_S = 4.0


def prompt_of(req: Any) -> str:
    return "\n".join(content_text(m.get("content")) for m in req.get("messages") or [])


async def until(check: Any, limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while not check():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.02)


async def test_the_bot_stops_within_10_s_while_its_model_is_slow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def slow(req: Any) -> str:  # a small local model on a busy machine
        await asyncio.sleep(SLOW_S)
        return "- when unsure, ask the quiet ones" if "lessons" in prompt_of(req) else "<wait>"

    async def no_warm_up(self: AgentLearning) -> None:
        return None

    # memory with a cheap embedder (MiniLM's loading is not what this measures)
    monkeypatch.setattr(bot.seats.llm_agents, "default_minilm", lambda: HashingEmbedder())
    monkeypatch.setattr(AgentLearning, "warm_up", no_warm_up)
    async with FakeOpenAIServer(responder=slow) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        db = tmp_path / "db.sqlite"
        settings = Settings(
            llm="openai:gpt-4o-mini",
            llm_timeout=60,
            llm_max_attempts=1,
            data_dir=tmp_path / "data",
            database_url=f"sqlite:///{db}",
            _env_file=None,
        )
        running: list[tuple[GameService, str]] = []

        async def the_bot() -> None:
            async with running_service(settings, agent_kind="llm") as service:
                game_id = await service.create_game(CONFIG, seed=5, speed=5.0)
                for name in NAMES:
                    await service.join(game_id, None, is_agent=True, name=name)
                await service.start(game_id)
                running.append((service, game_id))
                await asyncio.Event().wait()  # runs until stopped

        task = asyncio.create_task(the_bot())
        await until(lambda: bool(running) and len(server.requests) >= 2)  # calls under way
        service, game_id = running[0]
        factory = service.llm_factory
        assert isinstance(factory, LLMPlayerFactory)
        # three end-of-game debriefs under way, each asking the model through the seats' own
        # client (queued behind the calls in flight: one request at a time to a local server)
        ask = LLMRequest(system="s", messages=[("user", "draw lessons")], kind="lessons")

        async def debrief() -> None:
            await factory.clients.generator.complete(ask)

        for _ in range(3):
            learning = asyncio.create_task(debrief())
            factory._learning_tasks.add(learning)
            learning.add_done_callback(factory._learning_tasks.discard)
        await asyncio.sleep(0.5)
        started = time.monotonic()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        stopped_in = time.monotonic() - started

    assert stopped_in < STOP_LIMIT_S, f"the bot took {stopped_in:.1f} s to stop"
    assert not factory._learning_tasks  # the debriefs were cut short, not left running
    engine = create_engine(f"sqlite:///{db}")
    with Session(engine) as s:  # the decision log was flushed: the cut calls are recorded
        cut = s.exec(select(func.count()).select_from(LLMCall).where(LLMCall.game_id == game_id))
        assert cut.one() > 0
    engine.dispose()
