"""OpenAIClient through the real `openai` SDK against the loopback fake."""

from __future__ import annotations

import pytest

from agent.llm.base import LLMConfigError, LLMRequest
from agent.llm.openai_backend import PLACEHOLDER_API_KEY, OpenAIClient
from agent.llm.pricing import estimate_cost
from tests.agent.llm.conftest import FAST, OPENAI_MODEL
from tests.fakes.llm_servers import FakeOpenAIServer, last_user_text

SYSTEM = "You are playing Mafia. You are a bystander. Keep messages short."


def make_request(**overrides: object) -> LLMRequest:
    fields: dict[str, object] = {
        "system": SYSTEM,
        "messages": [("user", "Alice: hi all"), ("assistant", "hey"), ("user", "Bob: who?")],
        "max_tokens": 64,
        "kind": "generator",
    }
    fields.update(overrides)
    return LLMRequest(**fields)  # type: ignore[arg-type]


async def test_success_text_tokens_cost(
    fake_openai: FakeOpenAIServer, openai_client: OpenAIClient
) -> None:
    fake_openai.responder = lambda req: f"echo: {last_user_text(req)}"

    resp = await openai_client.complete(make_request())

    assert resp.text == "echo: Bob: who?"
    assert resp.model == OPENAI_MODEL
    assert resp.finish_reason == "stop"
    assert resp.attempts == 1
    assert resp.backend == f"openai:{OPENAI_MODEL}"
    assert resp.input_tokens == 17
    assert resp.output_tokens == 3
    assert resp.cached_input_tokens == 0
    expected = estimate_cost(OPENAI_MODEL, 17, 3, 0)
    assert resp.cost_known
    assert resp.cost_usd == pytest.approx(expected.usd)
    assert resp.cost_usd > 0


async def test_request_wire_format(
    fake_openai: FakeOpenAIServer, openai_client: OpenAIClient
) -> None:
    await openai_client.complete(make_request(stop=["</send>"], temperature=0.7))

    sent = fake_openai.last_json
    assert sent["model"] == OPENAI_MODEL
    assert sent["messages"] == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Alice: hi all"},
        {"role": "assistant", "content": "hey"},
        {"role": "user", "content": "Bob: who?"},
    ]
    assert sent["stop"] == ["</send>"]
    assert sent["temperature"] == 0.7
    # A non-OpenAI endpoint gets the widely supported field.
    assert sent["max_tokens"] == 64
    assert "max_completion_tokens" not in sent
    headers = fake_openai.requests[-1].headers
    assert headers["Authorization"] == "Bearer test-key"
    assert headers["x-stainless-retry-count"] == "0"


async def test_unset_temperature_is_not_sent(
    fake_openai: FakeOpenAIServer, openai_client: OpenAIClient
) -> None:
    await openai_client.complete(make_request())
    assert "temperature" not in fake_openai.last_json
    assert "stop" not in fake_openai.last_json


async def test_max_completion_tokens_and_reasoning_model(fake_openai: FakeOpenAIServer) -> None:
    client = OpenAIClient(
        "o4-mini",
        api_key="k",
        base_url=fake_openai.base_url,
        policy=FAST,
        max_tokens_param="max_completion_tokens",
    )
    try:
        await client.complete(make_request(temperature=0.2))
    finally:
        await client.aclose()

    sent = fake_openai.last_json
    assert sent["max_completion_tokens"] == 64
    assert "max_tokens" not in sent
    assert "temperature" not in sent  # reasoning models reject non-default temperatures


async def test_official_endpoint_defaults_to_max_completion_tokens() -> None:
    client = OpenAIClient(OPENAI_MODEL, api_key="k")
    await client.aclose()
    assert client.max_tokens_param == "max_completion_tokens"


async def test_repeated_system_prompt_is_reported_cached(
    fake_openai: FakeOpenAIServer, openai_client: OpenAIClient
) -> None:
    first = await openai_client.complete(make_request())
    second = await openai_client.complete(make_request())

    assert first.cached_input_tokens == 0
    # an identical prompt is served from the cache whole (OpenAI caches the longest prefix)
    assert second.cached_input_tokens == second.input_tokens
    assert second.cost_usd < first.cost_usd


async def test_settled_history_is_sent_as_one_message_and_its_prefix_cached(
    fake_openai: FakeOpenAIServer, openai_client: OpenAIClient
) -> None:
    history = "The chat so far:\nAlice: hi all\nBob: who is quiet\n"
    first = make_request(messages=[("user", history + "Now: ask")], settled=len(history))
    second = make_request(
        messages=[("user", history + "Carol: me\nNow: ask")], settled=len(history)
    )

    await openai_client.complete(first)
    resp = await openai_client.complete(second)

    sent = fake_openai.last_json["messages"]
    # byte-identical prefix: the system message, then one user message starting with history
    assert sent[0] == {"role": "system", "content": SYSTEM}
    assert sent[1] == {"role": "user", "content": history + "Carol: me\nNow: ask"}
    assert resp.cached_input_tokens == len(SYSTEM.split()) + len(history.split())
    assert resp.input_tokens == len(SYSTEM.split()) + len((history + "Carol: me Now: ask").split())


async def test_stop_and_length_finish_reasons(
    fake_openai: FakeOpenAIServer, openai_client: OpenAIClient
) -> None:
    fake_openai.responder = lambda _req: "<send>I vote Carol</send> and more words here"

    stopped = await openai_client.complete(make_request(stop=["</send>"]))
    truncated = await openai_client.complete(make_request(max_tokens=2))

    assert stopped.text == "<send>I vote Carol"
    assert stopped.finish_reason == "stop"
    assert truncated.text == "<send>I vote"
    assert truncated.finish_reason == "length"


async def test_base_url_without_key_uses_placeholder(fake_openai: FakeOpenAIServer) -> None:
    """A local Ollama/vLLM server: only a base URL is configured."""
    client = OpenAIClient("llama3.1:8b", base_url=fake_openai.base_url, policy=FAST)
    try:
        resp = await client.complete(make_request())
    finally:
        await client.aclose()

    assert fake_openai.requests[-1].headers["Authorization"] == f"Bearer {PLACEHOLDER_API_KEY}"
    assert fake_openai.last_json["model"] == "llama3.1:8b"
    assert not resp.cost_known
    assert resp.cost_usd == 0.0


async def test_env_vars_configure_the_sdk(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    client = OpenAIClient(OPENAI_MODEL, policy=FAST)
    try:
        await client.complete(make_request())
    finally:
        await client.aclose()

    assert fake_openai.requests[-1].headers["Authorization"] == "Bearer env-key"


async def test_env_base_url_alone_gets_placeholder_key(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    client = OpenAIClient(OPENAI_MODEL, policy=FAST)
    try:
        await client.complete(make_request())
    finally:
        await client.aclose()

    assert fake_openai.requests[-1].headers["Authorization"] == f"Bearer {PLACEHOLDER_API_KEY}"


async def test_explicit_params_override_env(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    client = OpenAIClient(
        OPENAI_MODEL, api_key="explicit", base_url=fake_openai.base_url, policy=FAST
    )
    try:
        await client.complete(make_request())
    finally:
        await client.aclose()

    assert fake_openai.requests[-1].headers["Authorization"] == "Bearer explicit"


def test_missing_credentials_fail_at_construction() -> None:
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        OpenAIClient(OPENAI_MODEL)
