"""Rough USD cost estimates, so experiment reports and budgets can speak in dollars.

List prices per million tokens, matched on the model-name prefix (dated snapshots such as
"gpt-4o-mini-2024-07-18" share their family's price).  These are estimates for reporting,
not billing: they ignore batch/priority tiers and bill Anthropic cache *writes* as plain
input.  A model we do not know costs 0 with `known=False`, so a local Ollama model does not
pretend to be free by accident and a typo'd model name shows up in reports.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelPrice:
    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float


@dataclass(frozen=True)
class CostEstimate:
    usd: float
    known: bool


# Longest matching prefix wins, so specific snapshots can override their family.
PRICES: dict[str, ModelPrice] = {
    # Anthropic: cache reads cost 10% of input.
    "claude-opus-4-0": ModelPrice(15.0, 75.0, 1.50),
    "claude-opus-4-1": ModelPrice(15.0, 75.0, 1.50),
    "claude-opus-4-2025": ModelPrice(15.0, 75.0, 1.50),  # claude-opus-4-20250514
    "claude-3-opus": ModelPrice(15.0, 75.0, 1.50),
    "claude-opus": ModelPrice(5.0, 25.0, 0.50),  # opus 4.5 and later
    "claude-sonnet": ModelPrice(3.0, 15.0, 0.30),
    "claude-3-7-sonnet": ModelPrice(3.0, 15.0, 0.30),
    "claude-3-5-sonnet": ModelPrice(3.0, 15.0, 0.30),
    "claude-haiku": ModelPrice(1.0, 5.0, 0.10),  # haiku 4.5 and later
    "claude-3-5-haiku": ModelPrice(0.80, 4.0, 0.08),
    "claude-3-haiku": ModelPrice(0.25, 1.25, 0.03),
    # OpenAI: cached input is discounted automatically.
    "gpt-4o": ModelPrice(2.50, 10.0, 1.25),
    "gpt-4o-mini": ModelPrice(0.15, 0.60, 0.075),
    "gpt-4.1": ModelPrice(2.0, 8.0, 0.50),
    "gpt-4.1-mini": ModelPrice(0.40, 1.60, 0.10),
    "gpt-4.1-nano": ModelPrice(0.10, 0.40, 0.025),
}


def lookup_price(model: str) -> ModelPrice | None:
    """Price for `model` by longest prefix.

    A spec prefix ("openai:") or a router's vendor prefix ("anthropic/claude-...") is
    ignored; other colons are kept, they are part of local model tags ("llama3:8b").
    """
    name = model.strip().lower()
    for spec_prefix in ("anthropic:", "openai:"):
        name = name.removeprefix(spec_prefix)
    name = name.rsplit("/", 1)[-1]
    best: str | None = None
    for prefix in PRICES:
        if name.startswith(prefix) and (best is None or len(prefix) > len(best)):
            best = prefix
    return PRICES[best] if best is not None else None


def estimate_cost(
    model: str, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0
) -> CostEstimate:
    """USD for one call.  `input_tokens` includes `cached_input_tokens`."""
    price = lookup_price(model)
    if price is None:
        return CostEstimate(0.0, known=False)
    cached = min(max(cached_input_tokens, 0), max(input_tokens, 0))
    fresh = max(input_tokens, 0) - cached
    usd = (
        fresh * price.input_per_mtok
        + cached * price.cached_input_per_mtok
        + max(output_tokens, 0) * price.output_per_mtok
    ) / 1_000_000
    return CostEstimate(usd, known=True)
