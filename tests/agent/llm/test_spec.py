"""Model spec parsing and client construction."""

from __future__ import annotations

import pytest

from agent.llm.anthropic_backend import AnthropicClient
from agent.llm.base import LLMClient, LLMConfigError, LLMRequest, aclose_client
from agent.llm.openai_backend import OpenAIClient
from agent.llm.spec import ModelSpec, SpecError, build_client, parse_spec
from tests.fakes.llm_servers import FakeAnthropicServer, FakeOpenAIServer


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("anthropic:claude-haiku-4-5", ModelSpec("anthropic", "claude-haiku-4-5")),
        ("openai:gpt-4o-mini", ModelSpec("openai", "gpt-4o-mini")),
        (" OpenAI:gpt-4.1 ", ModelSpec("openai", "gpt-4.1")),
        ("openai:llama3.1:8b", ModelSpec("openai", "llama3.1:8b")),  # Ollama tags keep colons
    ],
)
def test_parse_valid(spec: str, expected: ModelSpec) -> None:
    assert parse_spec(spec) == expected
    assert str(expected) == f"{expected.provider}:{expected.model}"


@pytest.mark.parametrize(
    "spec", ["", "gpt-4o", "anthropic:", "openai:  ", ":gpt-4o", "google:gemini-2.0", "azure:x"]
)
def test_parse_invalid_names_accepted_forms(spec: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(spec)
    message = str(info.value)
    assert "'anthropic:MODEL'" in message
    assert "'openai:MODEL'" in message
    # Usable both as a config error and in argument parsing.
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, LLMConfigError)


async def test_build_client_types_and_names() -> None:
    a = build_client("anthropic:claude-haiku-4-5", timeout=5, max_attempts=2, api_key="k")
    o = build_client("openai:gpt-4o-mini", timeout=5, max_attempts=2, api_key="k")
    await aclose_client(a)
    await aclose_client(o)

    assert isinstance(a, AnthropicClient)
    assert isinstance(o, OpenAIClient)
    assert isinstance(a, LLMClient) and isinstance(o, LLMClient)
    assert a.name == "anthropic:claude-haiku-4-5"
    assert o.name == "openai:gpt-4o-mini"
    assert (a.policy.timeout_s, a.policy.max_attempts) == (5, 2)
    assert (o.policy.timeout_s, o.policy.max_attempts) == (5, 2)


def test_build_client_rejects_bad_spec() -> None:
    with pytest.raises(SpecError):
        build_client("claude", timeout=5, max_attempts=2)


async def test_built_clients_reach_their_base_url(
    fake_anthropic: FakeAnthropicServer, fake_openai: FakeOpenAIServer
) -> None:
    req = LLMRequest(system="s", messages=[("user", "hi")])
    for spec, server in (
        ("anthropic:claude-haiku-4-5", fake_anthropic),
        ("openai:gpt-4o-mini", fake_openai),
    ):
        client = build_client(spec, timeout=2, max_attempts=1, base_url=server.base_url)
        try:
            resp = await client.complete(req)
        finally:
            await aclose_client(client)
        assert resp.text == "OK"
        assert len(server.requests) == 1


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_building_a_client_imports_what_its_first_request_would(provider: str) -> None:
    """The SDKs import their resource classes and the async transport on their first request:
    on the event loop, mid-game (0.3-1.6 s measured). Building the client (at start-up) does
    it instead. A fresh interpreter, since this process imported them long ago."""
    import subprocess
    import sys

    from agent.llm.spec import LAZY_MODULES

    code = (
        "import sys\n"
        "from agent.llm.spec import build_client\n"
        f"build_client('{provider}:m', api_key='k', base_url='http://127.0.0.1:9/v1')\n"
        f"print(all(m in sys.modules for m in {LAZY_MODULES[provider]!r}))\n"  # type: ignore[index]
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "True", out.stderr
