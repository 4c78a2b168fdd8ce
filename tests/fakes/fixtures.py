"""Pytest fixtures for the fake LLM servers.

Use them from a conftest.py (importing into a test module makes ruff flag the fixture
parameters as redefinitions)::

    from tests.fakes.fixtures import fake_anthropic, fake_openai  # noqa: F401

or, from the root tests/conftest.py only, `pytest_plugins = ["tests.fakes.fixtures"]`.
Each fixture yields a started server, fresh per test; script it in the test body::

    async def test_x(fake_anthropic):
        fake_anthropic.responder = lambda req: "<send>hello</send>"
        fake_anthropic.inject(Fault.server_error())
        ... AnthropicClient("claude-haiku-4-5", api_key="test", base_url=fake_anthropic.base_url)
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.llm_servers import FakeAnthropicServer, FakeOpenAIServer


@pytest.fixture
async def fake_anthropic() -> AsyncIterator[FakeAnthropicServer]:
    async with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server
