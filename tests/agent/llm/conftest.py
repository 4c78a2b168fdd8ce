"""Fixtures for the LLM backend tests: hermetic environment, fake servers, fast clients."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent.llm.anthropic_backend import AnthropicClient
from agent.llm.openai_backend import OpenAIClient
from agent.llm.retry import RetryPolicy
from tests.fakes.llm_servers import FakeAnthropicServer, FakeLLMServer, FakeOpenAIServer

ANTHROPIC_MODEL = "claude-haiku-4-5"
OPENAI_MODEL = "gpt-4o-mini"

# Short backoff keeps fault tests fast; the retry-after cap stays above the header values the
# tests use so they can observe it being honoured. The timeout stays well above what a first
# request takes on a loaded 2-core box (0.4 s was not: an answered call timed out in CI load).
FAST = RetryPolicy(
    max_attempts=3, timeout_s=1.5, base_delay_s=0.01, max_delay_s=0.02, max_retry_after_s=1.0
)


@pytest.fixture(autouse=True)
def hermetic_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No provider variables or on-disk SDK profiles from the developer's machine."""
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)


@dataclass
class Backend:
    provider: str
    server: FakeLLMServer
    client: AnthropicClient | OpenAIClient


@pytest.fixture
async def anthropic_client(
    fake_anthropic: FakeAnthropicServer,
) -> AsyncIterator[AnthropicClient]:
    client = AnthropicClient(
        ANTHROPIC_MODEL, api_key="test-key", base_url=fake_anthropic.base_url, policy=FAST
    )
    yield client
    await client.aclose()


@pytest.fixture
async def openai_client(
    fake_openai: FakeOpenAIServer,
) -> AsyncIterator[OpenAIClient]:
    client = OpenAIClient(
        OPENAI_MODEL, api_key="test-key", base_url=fake_openai.base_url, policy=FAST
    )
    yield client
    await client.aclose()


@pytest.fixture(params=["anthropic", "openai"])
def backend(request: pytest.FixtureRequest) -> Backend:
    """The same behaviour checked against both providers' real SDKs (one per run, so only
    the server and client under test are started)."""
    provider = str(request.param)
    server = request.getfixturevalue(f"fake_{provider}")
    client = request.getfixturevalue(f"{provider}_client")
    return Backend(provider, server, client)
