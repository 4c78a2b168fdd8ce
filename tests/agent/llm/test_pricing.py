"""Cost estimates."""

from __future__ import annotations

import pytest

from agent.llm.pricing import estimate_cost, lookup_price


@pytest.mark.parametrize(
    ("model", "input_per_mtok", "output_per_mtok"),
    [
        ("claude-haiku-4-5", 1.0, 5.0),
        ("claude-haiku-4-5-20251001", 1.0, 5.0),
        ("claude-3-5-haiku-latest", 0.80, 4.0),
        ("claude-3-haiku-20240307", 0.25, 1.25),
        ("claude-sonnet-4-5", 3.0, 15.0),
        ("claude-3-7-sonnet-latest", 3.0, 15.0),
        ("claude-opus-4-1-20250805", 15.0, 75.0),
        ("claude-opus-4-20250514", 15.0, 75.0),
        ("claude-opus-4-5", 5.0, 25.0),
        ("gpt-4o", 2.50, 10.0),
        ("gpt-4o-2024-08-06", 2.50, 10.0),
        ("gpt-4o-mini-2024-07-18", 0.15, 0.60),
        ("gpt-4.1", 2.0, 8.0),
        ("gpt-4.1-mini", 0.40, 1.60),
        ("gpt-4.1-nano", 0.10, 0.40),
        ("openai:gpt-4o-mini", 0.15, 0.60),
        ("anthropic/claude-sonnet-4-5", 3.0, 15.0),
    ],
)
def test_known_models_use_longest_prefix(
    model: str, input_per_mtok: float, output_per_mtok: float
) -> None:
    price = lookup_price(model)
    assert price is not None
    assert (price.input_per_mtok, price.output_per_mtok) == (input_per_mtok, output_per_mtok)


def test_estimate_arithmetic() -> None:
    cost = estimate_cost("gpt-4o", 1_000_000, 100_000)
    assert cost.known
    assert cost.usd == pytest.approx(2.50 + 1.0)


def test_cached_input_is_discounted() -> None:
    fresh = estimate_cost("claude-sonnet-4-5", 10_000, 0, 0)
    cached = estimate_cost("claude-sonnet-4-5", 10_000, 0, 8_000)
    assert cached.usd == pytest.approx((2_000 * 3.0 + 8_000 * 0.30) / 1e6)
    assert cached.usd < fresh.usd


def test_cached_count_is_clamped_to_input() -> None:
    assert estimate_cost("gpt-4o", 100, 0, 10_000).usd == pytest.approx(100 * 1.25 / 1e6)


@pytest.mark.parametrize("model", ["llama3.1:8b", "qwen2.5-7b-instruct", "mystery", ""])
def test_unknown_model_costs_zero_and_is_flagged(model: str) -> None:
    cost = estimate_cost(model, 1000, 1000)
    assert cost.usd == 0.0
    assert not cost.known
