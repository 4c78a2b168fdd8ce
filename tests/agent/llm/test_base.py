"""Request validation and finish-reason normalisation."""

from __future__ import annotations

import pytest

from agent.llm.base import LLMRequest, LLMResponse, normalise_finish_reason


def test_request_defaults() -> None:
    req = LLMRequest(system="s", messages=[("user", "u")])
    assert (req.max_tokens, req.temperature, req.stop, req.kind) == (256, None, None, "generic")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"messages": []},
        {"messages": [("system", "no")]},
        {"messages": [("user", "u")], "max_tokens": 0},
        {"messages": [("user", "u")], "temperature": 3.0},
    ],
)
def test_request_rejects_invalid(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        LLMRequest(system="s", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("stop", "stop"),
        ("max_tokens", "length"),
        ("length", "length"),
        ("refusal", "refusal"),
        ("content_filter", "refusal"),
        # a forced tool call (structured output) is a complete answer
        ("tool_use", "stop"),
        ("tool_calls", "stop"),
        ("pause_turn", "pause_turn"),
        (None, "unknown"),
    ],
)
def test_normalise_finish_reason(raw: str | None, normalised: str) -> None:
    assert normalise_finish_reason(raw) == normalised


def test_total_tokens() -> None:
    resp = LLMResponse("t", "m", 10, 5, 2, 0.1, "stop", 1, 0.0)
    assert resp.total_tokens == 15
