"""The loopback fakes themselves: wire format, scripting, recording.

Other suites rely on these fakes speaking the real formats, so the raw HTTP is checked here
with a plain aiohttp client (no SDK in between).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import aiohttp
import pytest

from tests.fakes.llm_servers import (
    FakeAnthropicServer,
    FakeOpenAIServer,
    Fault,
    apply_limits,
    last_user_text,
    scripted,
)

ANTHROPIC_BODY = {
    "model": "claude-haiku-4-5",
    "max_tokens": 50,
    "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}],
    "messages": [{"role": "user", "content": "hello there"}],
}
OPENAI_BODY = {
    "model": "gpt-4o-mini",
    "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hello there"},
    ],
}


async def post(url: str, body: Any) -> tuple[int, Mapping[str, str], bytes]:
    """Raw POST; headers stay case-insensitive, as HTTP headers are."""
    async with aiohttp.ClientSession() as session, session.post(url, json=body) as resp:
        return resp.status, resp.headers.copy(), await resp.read()


async def test_anthropic_wire_format(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.responder = lambda req: f"you said {last_user_text(req)}"

    status, headers, raw = await post(f"{fake_anthropic.base_url}/v1/messages", ANTHROPIC_BODY)

    assert status == 200
    assert headers["Content-Type"] == "application/json"
    body = json.loads(raw)
    assert set(body) == {
        "id",
        "type",
        "role",
        "model",
        "content",
        "stop_reason",
        "stop_sequence",
        "usage",
    }
    assert body["type"] == "message"
    assert body["role"] == "assistant"
    assert body["model"] == "claude-haiku-4-5"
    assert body["content"] == [{"type": "text", "text": "you said hello there"}]
    assert body["stop_reason"] == "end_turn"
    assert body["stop_sequence"] is None
    assert body["usage"] == {
        "input_tokens": 2,
        "output_tokens": 4,
        "cache_creation_input_tokens": 2,
        "cache_read_input_tokens": 0,
    }
    assert fake_anthropic.last_json == ANTHROPIC_BODY


async def test_openai_wire_format(fake_openai: FakeOpenAIServer) -> None:
    assert fake_openai.base_url.endswith("/v1")

    status, headers, raw = await post(f"{fake_openai.base_url}/chat/completions", OPENAI_BODY)

    assert status == 200
    assert headers["Content-Type"] == "application/json"
    body = json.loads(raw)
    assert body["object"] == "chat.completion"
    assert isinstance(body["created"], int)
    assert body["model"] == "gpt-4o-mini"
    (choice,) = body["choices"]
    assert choice["index"] == 0
    assert choice["message"]["role"] == "assistant"
    assert choice["message"]["content"] == "OK"
    assert choice["finish_reason"] == "stop"
    assert body["usage"]["prompt_tokens"] == 4
    assert body["usage"]["completion_tokens"] == 1
    assert body["usage"]["total_tokens"] == 5


async def test_error_bodies_follow_provider_formats(
    fake_anthropic: FakeAnthropicServer, fake_openai: FakeOpenAIServer
) -> None:
    fake_anthropic.inject(Fault.rate_limit(retry_after=0.2, retry_after_ms=200))
    fake_openai.inject(Fault.server_error(502))

    a_status, a_headers, a_raw = await post(
        f"{fake_anthropic.base_url}/v1/messages", ANTHROPIC_BODY
    )
    o_status, _, o_raw = await post(f"{fake_openai.base_url}/chat/completions", OPENAI_BODY)

    assert a_status == 429
    assert a_headers["retry-after"] == "0.2"
    assert a_headers["retry-after-ms"] == "200"
    assert json.loads(a_raw)["error"]["type"] == "rate_limit_error"
    assert json.loads(a_raw)["type"] == "error"
    assert o_status == 502
    assert set(json.loads(o_raw)["error"]) == {"message", "type", "param", "code"}


async def test_malformed_json_fault_keeps_json_content_type(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.inject(Fault.malformed_json())

    status, headers, raw = await post(f"{fake_openai.base_url}/chat/completions", OPENAI_BODY)

    assert status == 200
    assert headers["Content-Type"] == "application/json"
    with pytest.raises(ValueError):
        json.loads(raw)


async def test_anthropic_fake_rejects_sampling_params(fake_anthropic: FakeAnthropicServer) -> None:
    status, _, raw = await post(
        f"{fake_anthropic.base_url}/v1/messages", {**ANTHROPIC_BODY, "temperature": 1.0}
    )
    assert status == 400
    assert b"temperature" in raw


async def test_invalid_requests_get_400(
    fake_anthropic: FakeAnthropicServer, fake_openai: FakeOpenAIServer
) -> None:
    status_a, _, _ = await post(
        f"{fake_anthropic.base_url}/v1/messages", {"model": "m", "max_tokens": 5, "messages": []}
    )
    status_o, _, _ = await post(f"{fake_openai.base_url}/chat/completions", {"messages": []})
    assert (status_a, status_o) == (400, 400)


async def test_scripted_and_async_responders(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.responder = scripted("first", "second")
    texts = []
    for _ in range(3):
        _, _, raw = await post(f"{fake_openai.base_url}/chat/completions", OPENAI_BODY)
        texts.append(json.loads(raw)["choices"][0]["message"]["content"])
    assert texts == ["first", "second", "second"]

    async def slow_echo(req: dict[str, Any]) -> str:
        return last_user_text(req).upper()

    fake_openai.responder = slow_echo
    _, _, raw = await post(f"{fake_openai.base_url}/chat/completions", OPENAI_BODY)
    assert json.loads(raw)["choices"][0]["message"]["content"] == "HELLO THERE"


async def test_responder_errors_are_surfaced(fake_openai: FakeOpenAIServer) -> None:
    def broken(_req: dict[str, Any]) -> str:
        raise RuntimeError("oops")

    fake_openai.responder = broken
    status, _, _ = await post(f"{fake_openai.base_url}/chat/completions", OPENAI_BODY)

    assert status == 500
    assert [str(e) for e in fake_openai.responder_errors] == ["oops"]


def test_inject_times_and_clear() -> None:
    server = FakeOpenAIServer()
    server.inject(Fault.server_error(), Fault.empty(), times=2)
    assert server.pending_faults == 4
    server.clear_faults()
    assert server.pending_faults == 0


@pytest.mark.parametrize(
    ("text", "max_tokens", "stops", "expected"),
    [
        ("a b c", None, [], ("a b c", None, False)),
        ("a b c", 2, [], ("a b", None, True)),
        ("a <x> b", None, ["<x>", "b"], ("a ", "<x>", False)),
        ("a b", 5, ["zz"], ("a b", None, False)),
    ],
)
def test_apply_limits(
    text: str,
    max_tokens: int | None,
    stops: list[str],
    expected: tuple[str, str | None, bool],
) -> None:
    assert apply_limits(text, max_tokens, stops) == expected


def test_scripted_needs_texts() -> None:
    with pytest.raises(ValueError):
        scripted()
