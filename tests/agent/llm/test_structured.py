"""Structured output through the real SDKs against the loopback fakes: the wire forms, and
"auto" stepping down (once, remembered) on a server that refuses a form."""

from __future__ import annotations

import json

import pytest

from agent.llm.anthropic_backend import AnthropicClient
from agent.llm.base import LLMError, LLMRequest
from agent.llm.openai_backend import OpenAIClient
from agent.llm.structured import parse_mode
from tests.agent.llm.conftest import ANTHROPIC_MODEL, FAST
from tests.fakes.llm_servers import FakeAnthropicServer, FakeOpenAIServer, Fault

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "enum": ["Blake", "Casey", "Drew"]}},
    "required": ["name"],
    "additionalProperties": False,
}


def vote_request(**overrides: object) -> LLMRequest:
    fields: dict[str, object] = {
        "system": "You play Mafia.",
        "messages": [("user", "Who do you vote for? Blake, Casey or Drew.")],
        "max_tokens": 8,
        "kind": "vote",
        "schema": SCHEMA,
        "schema_name": "vote",
    }
    fields.update(overrides)
    return LLMRequest(**fields)  # type: ignore[arg-type]


def openai_client(server: FakeOpenAIServer, structured: str = "auto") -> OpenAIClient:
    return OpenAIClient(
        "smollm2",
        api_key="k",
        base_url=server.base_url,
        policy=FAST,
        structured=parse_mode(structured),
    )


# a tiny model's prose: no name at all in plain text
PROSE = "You're right. The next round is"


async def test_llama_server_gets_json_schema_and_answers_an_enum_value() -> None:
    async with FakeOpenAIServer(lambda _r: "I think casey did it", flavour="llama-server") as srv:
        client = openai_client(srv)
        resp = await client.complete(vote_request())
        await client.aclose()
    sent = srv.last_json
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "vote", "schema": SCHEMA, "strict": True},
    }
    assert sent["max_tokens"] >= 32  # room for the JSON, whatever the text cap was
    assert json.loads(resp.text) == {"name": "Casey"}
    assert resp.structured == "json_schema"


async def test_llama_cpp_python_refuses_json_schema_then_json_object_is_remembered() -> None:
    async with FakeOpenAIServer(lambda _r: PROSE, flavour="llama-cpp-python") as srv:
        client = openai_client(srv)
        first = await client.complete(vote_request())
        second = await client.complete(vote_request())
        await client.aclose()
    # the first call tried json_schema (refused with a 500, as the real server does), then
    # json_object; the second went straight there
    forms = [r.json["response_format"]["type"] for r in srv.requests if r.json is not None]
    assert forms == ["json_schema", "json_object", "json_object"]
    assert [status for status, _ in srv.refusals] == [500]
    assert (srv.requests[1].json or {})["response_format"] == {
        "type": "json_object",
        "schema": SCHEMA,
    }
    assert first.structured == second.structured == "json_object"
    assert json.loads(second.text) == {"name": "Blake"}  # decoding forces a legal name
    assert first.attempts == 2


async def test_a_refused_form_is_dropped_even_when_the_next_form_fails() -> None:
    """json_schema refused (500 naming response_format), then json_object fails for another
    reason: the refused form is still not asked again."""
    async with FakeOpenAIServer(lambda _r: PROSE, flavour="llama-cpp-python") as srv:
        client = openai_client(srv)
        srv.inject(Fault.http_error(404, "not_found_error"))  # for the json_object request
        with pytest.raises(LLMError):
            await client.complete(vote_request())
        assert client.forms.forms == ("json_object", "off")
        again = await client.complete(vote_request())
        await client.aclose()
    forms = [r.json["response_format"]["type"] for r in srv.requests if r.json is not None]
    assert forms == ["json_schema", "json_object", "json_object"]
    assert again.structured == "json_object"


async def test_plain_server_steps_down_to_text() -> None:
    async with FakeOpenAIServer(lambda _r: "Drew", flavour="plain") as srv:
        client = openai_client(srv)
        resp = await client.complete(vote_request())
        again = await client.complete(vote_request())
        await client.aclose()
    assert resp.structured == "" and resp.text == "Drew"
    assert again.structured == ""
    assert "response_format" not in (srv.requests[-1].json or {})  # remembered: text straight away
    assert len(srv.requests) == 4  # json_schema, json_object, text; then text


async def test_explicit_mode_is_not_stepped_down() -> None:
    async with FakeOpenAIServer(lambda _r: PROSE, flavour="llama-cpp-python") as srv:
        client = openai_client(srv, "json_schema")
        with pytest.raises(LLMError) as failed:
            await client.complete(vote_request())
        await client.aclose()
    assert failed.value.status_code == 500
    assert len(srv.requests) == 1


async def test_off_sends_text_and_requests_without_schema_are_untouched() -> None:
    async with FakeOpenAIServer(lambda _r: PROSE, flavour="openai") as srv:
        off = openai_client(srv, "off")
        resp = await off.complete(vote_request())
        auto = openai_client(srv)
        await auto.complete(vote_request(schema=None))
        await off.aclose()
        await auto.aclose()
    assert resp.text == PROSE and resp.structured == ""
    sent = [r.json or {} for r in srv.requests]
    assert all("response_format" not in j and "tools" not in j for j in sent)


async def test_openai_tool_mode_forces_the_function() -> None:
    async with FakeOpenAIServer(lambda _r: "drew, obviously", flavour="llama-server") as srv:
        client = openai_client(srv, "tool")
        resp = await client.complete(vote_request())
        await client.aclose()
    sent = srv.last_json
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "vote"}}
    assert sent["tools"][0]["function"]["parameters"] == SCHEMA
    assert json.loads(resp.text) == {"name": "Drew"}
    assert resp.structured == "tool"
    assert resp.finish_reason == "stop"


async def test_a_refused_request_that_text_also_refuses_is_not_remembered() -> None:
    """A 400 for some other reason (every form refused) raises the first error and leaves the
    forms as they were."""
    async with FakeOpenAIServer(lambda _r: "x", flavour="llama-server") as srv:
        client = openai_client(srv)
        srv.inject(Fault.http_error(400), times=3)
        with pytest.raises(LLMError):
            await client.complete(vote_request())
        assert client.forms.forms == ("json_schema", "json_object", "off")
        await client.complete(vote_request())
        await client.aclose()
    assert srv.last_json["response_format"]["type"] == "json_schema"


async def test_anthropic_forced_tool_call() -> None:
    async with FakeAnthropicServer(lambda _r: "Casey seems off") as srv:
        client = AnthropicClient(ANTHROPIC_MODEL, api_key="k", base_url=srv.base_url, policy=FAST)
        resp = await client.complete(vote_request())
        await client.aclose()
    sent = srv.last_json
    assert sent["tool_choice"] == {"type": "tool", "name": "vote"}
    assert sent["tools"] == [
        {
            "name": "vote",
            "description": "Give your answer by calling this tool.",
            "input_schema": SCHEMA,
        }
    ]
    assert json.loads(resp.text) == {"name": "Casey"}
    assert resp.structured == "tool"
    assert resp.finish_reason == "stop"


async def test_background_overrides_send_once() -> None:
    async with FakeOpenAIServer(lambda _r: "ok", flavour="openai") as srv:
        client = openai_client(srv)
        srv.inject(Fault.server_error(), times=3)
        with pytest.raises(LLMError) as failed:
            await client.complete(vote_request(schema=None, max_attempts=1))
        await client.aclose()
    assert failed.value.attempts == 1
    assert len(srv.requests) == 1


def test_parse_mode() -> None:
    assert parse_mode("") == "auto"
    assert parse_mode(" JSON_OBJECT ") == "json_object"
    with pytest.raises(ValueError, match="structured output must be one of"):
        parse_mode("grammar")


async def test_anthropic_steps_down_from_the_tool_call_to_text_once() -> None:
    """A proxy that refuses the forced tool call (400): the same request again as text, and
    text from then on (the step down both backends share)."""
    async with FakeAnthropicServer(lambda _r: "Casey seems off") as srv:
        client = AnthropicClient(ANTHROPIC_MODEL, api_key="k", base_url=srv.base_url, policy=FAST)
        srv.inject(Fault.http_error(400))
        resp = await client.complete(vote_request())
        again = await client.complete(vote_request())
        await client.aclose()
    sent = [r.json or {} for r in srv.requests]
    assert ["tools" in j for j in sent] == [True, False, False]
    assert resp.text == "Casey seems off" and resp.structured == ""
    assert resp.attempts == 2  # the refused tool call and the text
    assert again.structured == "" and again.attempts == 1
    assert client.forms.forms == ("off",)
