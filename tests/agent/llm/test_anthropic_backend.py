"""AnthropicClient through the real `anthropic` SDK against the loopback fake."""

from __future__ import annotations

import pytest

from agent.llm.anthropic_backend import PLACEHOLDER_API_KEY, AnthropicClient
from agent.llm.base import LLMConfigError, LLMRequest
from agent.llm.pricing import estimate_cost
from tests.agent.llm.conftest import ANTHROPIC_MODEL, FAST
from tests.fakes.llm_servers import FakeAnthropicServer, last_user_text

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
    fake_anthropic: FakeAnthropicServer, anthropic_client: AnthropicClient
) -> None:
    fake_anthropic.responder = lambda req: f"echo: {last_user_text(req)}"

    resp = await anthropic_client.complete(make_request())

    assert resp.text == "echo: Bob: who?"
    assert resp.model == ANTHROPIC_MODEL
    assert resp.finish_reason == "stop"
    assert resp.attempts == 1
    assert resp.backend == f"anthropic:{ANTHROPIC_MODEL}"
    # Fake tokenizer: words.  System 11 + turns 3 + 1 + 2.
    assert resp.input_tokens == 17
    assert resp.output_tokens == 3
    assert resp.cached_input_tokens == 0
    expected = estimate_cost(ANTHROPIC_MODEL, 17, 3, 0)
    assert expected.known and resp.cost_known
    assert resp.cost_usd == pytest.approx(expected.usd)
    assert resp.cost_usd > 0
    assert resp.latency_s > 0


async def test_request_wire_format(
    fake_anthropic: FakeAnthropicServer, anthropic_client: AnthropicClient
) -> None:
    await anthropic_client.complete(make_request(stop=["</send>"], temperature=0.7))

    sent = fake_anthropic.last_json
    assert sent["model"] == ANTHROPIC_MODEL
    assert sent["max_tokens"] == 64
    assert sent["system"] == [
        {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}
    ]
    assert sent["messages"] == [
        {"role": "user", "content": "Alice: hi all"},
        {"role": "assistant", "content": "hey"},
        {"role": "user", "content": "Bob: who?"},
    ]
    assert sent["stop_sequences"] == ["</send>"]
    # API version 2026-10-21 rejects sampling parameters; the backend must not send them.
    assert "temperature" not in sent
    headers = fake_anthropic.requests[-1].headers
    assert headers["Authorization"] == "Bearer test-key"
    assert headers["anthropic-version"]
    # Our retry loop is the only one: the SDK never retries on its own.
    assert headers["x-stainless-retry-count"] == "0"


async def test_repeated_system_prompt_is_reported_cached(
    fake_anthropic: FakeAnthropicServer, anthropic_client: AnthropicClient
) -> None:
    first = await anthropic_client.complete(make_request())
    second = await anthropic_client.complete(make_request())

    assert first.cached_input_tokens == 0
    assert second.cached_input_tokens == len(SYSTEM.split())
    assert second.input_tokens == first.input_tokens  # cached tokens still count as input
    assert second.cost_usd < first.cost_usd


async def test_settled_history_is_a_marked_block_read_from_the_cache(
    fake_anthropic: FakeAnthropicServer, anthropic_client: AnthropicClient
) -> None:
    history = "The chat so far:\nAlice: hi all\nBob: who is quiet\n"
    first = make_request(messages=[("user", history + "Now: ask")], settled=len(history))
    second = make_request(
        messages=[("user", history + "Carol: me\nNow: ask")], settled=len(history)
    )

    one = await anthropic_client.complete(first)
    two = await anthropic_client.complete(second)

    sent = fake_anthropic.last_json
    assert sent["system"] == [
        {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}
    ]
    assert sent["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": history, "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "Carol: me\nNow: ask"},
            ],
        }
    ]
    assert one.cached_input_tokens == 0
    # the system block and the history block, both written by the first call
    assert two.cached_input_tokens == len(SYSTEM.split()) + len(history.split())
    assert two.input_tokens == len(SYSTEM.split()) + len((history + "Carol: me Now: ask").split())


async def test_a_request_without_settled_history_sends_plain_messages(
    fake_anthropic: FakeAnthropicServer, anthropic_client: AnthropicClient
) -> None:
    await anthropic_client.complete(make_request())

    assert fake_anthropic.last_json["messages"][0] == {
        "role": "user",
        "content": "Alice: hi all",
    }


async def test_empty_system_is_omitted(
    fake_anthropic: FakeAnthropicServer, anthropic_client: AnthropicClient
) -> None:
    await anthropic_client.complete(make_request(system=""))
    assert "system" not in fake_anthropic.last_json


async def test_stop_sequence_and_max_tokens_finish_reasons(
    fake_anthropic: FakeAnthropicServer, anthropic_client: AnthropicClient
) -> None:
    fake_anthropic.responder = lambda _req: "<send>I vote Carol</send> and more words here"

    stopped = await anthropic_client.complete(make_request(stop=["</send>"]))
    truncated = await anthropic_client.complete(make_request(max_tokens=2))

    assert stopped.text == "<send>I vote Carol"
    assert stopped.finish_reason == "stop"
    assert truncated.text == "<send>I vote"
    assert truncated.finish_reason == "length"


async def test_env_vars_configure_the_sdk(
    fake_anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.base_url)
    client = AnthropicClient(ANTHROPIC_MODEL, policy=FAST)
    try:
        resp = await client.complete(make_request())
    finally:
        await client.aclose()

    assert resp.text == "OK"
    assert fake_anthropic.requests[-1].headers["Authorization"] == "Bearer env-key"


async def test_explicit_params_override_env(
    fake_anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # nothing listens there
    client = AnthropicClient(
        ANTHROPIC_MODEL, api_key="explicit", base_url=fake_anthropic.base_url, policy=FAST
    )
    try:
        await client.complete(make_request())
    finally:
        await client.aclose()

    assert fake_anthropic.requests[-1].headers["Authorization"] == "Bearer explicit"


async def test_keyless_custom_base_url_uses_placeholder(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    client = AnthropicClient(ANTHROPIC_MODEL, base_url=fake_anthropic.base_url, policy=FAST)
    try:
        await client.complete(make_request())
    finally:
        await client.aclose()

    assert fake_anthropic.requests[-1].headers["Authorization"] == f"Bearer {PLACEHOLDER_API_KEY}"


def test_missing_credentials_fail_at_construction() -> None:
    with pytest.raises(LLMConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicClient(ANTHROPIC_MODEL)


def test_model_is_required() -> None:
    with pytest.raises(ValueError):
        AnthropicClient("", api_key="k")
