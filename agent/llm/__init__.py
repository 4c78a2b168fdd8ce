"""LLM backends for the agent: one `LLMClient` protocol over Anthropic and OpenAI(-compatible)
APIs, with shared retries, cost estimates, provider fallback and a per-game token budget.

Typical use::

    client = build_client("anthropic:claude-haiku-4-5", timeout=20, max_attempts=3)
    budget = TokenBudget(200_000)
    client = BudgetedClient(client, budget)          # raises LLMBudgetExceeded when spent
    resp = await client.complete(LLMRequest(system=RULES, messages=[("user", "...")]))

The vendor SDKs are only imported when a backend is built (see `spec.build_client`).
"""

from agent.llm.base import (
    FINISH_LENGTH,
    FINISH_REFUSAL,
    FINISH_STOP,
    STRUCTURED_MODES,
    LLMBadResponse,
    LLMBudgetExceeded,
    LLMClient,
    LLMConfigError,
    LLMError,
    LLMRateLimited,
    LLMRequest,
    LLMResponse,
    LLMTimeout,
    LLMUnavailable,
    Role,
    StructuredMode,
    aclose_client,
)
from agent.llm.pricing import CostEstimate, estimate_cost
from agent.llm.retry import RetryPolicy
from agent.llm.spec import ModelSpec, SpecError, build_client, parse_spec
from agent.llm.wrappers import BudgetedClient, FallbackClient, TokenBudget

__all__ = [
    "FINISH_LENGTH",
    "FINISH_REFUSAL",
    "FINISH_STOP",
    "STRUCTURED_MODES",
    "BudgetedClient",
    "CostEstimate",
    "FallbackClient",
    "LLMBadResponse",
    "LLMBudgetExceeded",
    "LLMClient",
    "LLMConfigError",
    "LLMError",
    "LLMRateLimited",
    "LLMRequest",
    "LLMResponse",
    "LLMTimeout",
    "LLMUnavailable",
    "ModelSpec",
    "RetryPolicy",
    "Role",
    "SpecError",
    "StructuredMode",
    "TokenBudget",
    "aclose_client",
    "build_client",
    "estimate_cost",
    "parse_spec",
]
