"""Model specs: one string in config/CLI ("anthropic:claude-haiku-4-5") picks the backend.

Local OpenAI-compatible servers use the "openai:" form plus a base URL
(`OPENAI_BASE_URL=http://localhost:11434/v1`, model e.g. "openai:llama3.1:8b"), so the
model part may itself contain colons: only the first colon splits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agent.llm.base import LLMClient, LLMConfigError, StructuredMode

Provider = Literal["anthropic", "openai"]
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai")

_ACCEPTED = (
    "'anthropic:MODEL' or 'openai:MODEL' (e.g. 'anthropic:claude-haiku-4-5', 'openai:gpt-4o-mini')"
)


class SpecError(LLMConfigError, ValueError):
    """A malformed model spec.  Also a ValueError, for argument-parsing code."""


@dataclass(frozen=True)
class ModelSpec:
    provider: Provider
    model: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


def parse_spec(spec: str) -> ModelSpec:
    provider_part, sep, model = spec.strip().partition(":")
    provider = provider_part.strip().lower()
    model = model.strip()
    if not sep or not model:
        raise SpecError(f"invalid model spec {spec!r}: expected {_ACCEPTED}")
    if provider == "anthropic":
        return ModelSpec("anthropic", model)
    if provider == "openai":
        return ModelSpec("openai", model)
    raise SpecError(
        f"invalid model spec {spec!r}: unknown provider {provider_part!r}; expected {_ACCEPTED}"
    )


#: what the SDKs import lazily on their first request (their resource classes, the HTTP
#: transport's async backend): 0.3 s, and over 1.5 s on a loaded machine, of imports on the
#: event loop in the middle of a game
LAZY_MODULES: dict[Provider, tuple[str, ...]] = {
    "openai": ("openai.resources.chat.completions", "anyio._backends._asyncio", "jiter"),
    "anthropic": ("anthropic.resources.messages", "anyio._backends._asyncio", "jiter"),
}


def preload(provider: Provider) -> None:
    """Import what ``provider``'s SDK would import on its first request, now (when clients are
    built, at start-up) rather than on the event loop during a game."""
    import importlib

    for name in LAZY_MODULES[provider]:
        try:
            importlib.import_module(name)
        except ImportError:  # another SDK version: it imports what it needs when it needs it
            continue


def build_client(
    spec: str | ModelSpec,
    *,
    timeout: float = 20.0,
    max_attempts: int = 3,
    api_key: str | None = None,
    base_url: str | None = None,
    structured: StructuredMode = "auto",
) -> LLMClient:
    """Build the backend for `spec`.  `api_key`/`base_url` override the provider's own
    environment variables, which are used otherwise; `structured` picks how answers with a
    schema are asked for (see `agent.llm.structured`).  SDK imports are deferred so that
    code which never talks to a provider does not pay for importing both SDKs."""
    parsed = spec if isinstance(spec, ModelSpec) else parse_spec(spec)
    preload(parsed.provider)
    if parsed.provider == "anthropic":
        from agent.llm.anthropic_backend import AnthropicClient

        return AnthropicClient(
            parsed.model,
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_attempts=max_attempts,
            structured=structured,
        )
    from agent.llm.openai_backend import OpenAIClient

    return OpenAIClient(
        parsed.model,
        api_key=api_key,
        base_url=base_url,
        timeout=timeout,
        max_attempts=max_attempts,
        structured=structured,
    )
