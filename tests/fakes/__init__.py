"""Loopback fakes shared by tests (no network).

LLM servers: `tests.fakes.llm_servers` (FakeAnthropicServer, FakeOpenAIServer, Fault).
Pytest fixtures `fake_anthropic` / `fake_openai`: import them from `tests.fakes.fixtures` in
a conftest.py, or list `"tests.fakes.fixtures"` in the root conftest's `pytest_plugins`.
"""
