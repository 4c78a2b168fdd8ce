"""Shared fixture: the real MiniLM embedder, loaded once per test session."""

from __future__ import annotations

import pytest

from agent.memory import MiniLMEmbedder


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.warm_up()
    return embedder
