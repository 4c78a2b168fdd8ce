"""Provider-neutral request/response types and the error hierarchy for LLM backends.

The agent talks to every model through `LLMClient.complete`; backends, fallbacks and
budgets are all interchangeable behind that one coroutine.  Errors are our own types so
callers never import a vendor SDK to decide whether to degrade to the offline baseline.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["user", "assistant"]

#: How a backend asks for an answer that fits `LLMRequest.schema` (see agent.llm.structured):
#: "auto" picks the provider's form and steps down on a server that refuses it; "json_schema"
#: is OpenAI's `response_format` (also llama-server, vLLM, Ollama); "json_object" the
#: `{"type": "json_object", "schema": ...}` form of the llama-cpp-python server; "tool" a
#: forced tool call (Anthropic; OpenAI-style `tools` + `tool_choice` elsewhere); "off" plain
#: text, read by the tolerant text parsers.
StructuredMode = Literal["auto", "json_schema", "json_object", "tool", "off"]
STRUCTURED_MODES: tuple[StructuredMode, ...] = ("auto", "json_schema", "json_object", "tool", "off")

#: Normalised `LLMResponse.finish_reason` values.  Providers use different words for the
#: same outcome (Anthropic "end_turn"/"stop_sequence", OpenAI "stop"); callers only need
#: to know whether the text is complete, truncated, or a refusal.  Unknown provider
#: reasons are passed through unchanged.
FINISH_STOP = "stop"
FINISH_LENGTH = "length"
FINISH_REFUSAL = "refusal"


@dataclass(frozen=True)
class LLMRequest:
    """One completion request.

    `system` is the static part of the prompt (rules, persona, game setup).  Backends
    place it first, unchanged between calls, so provider prompt caching can reuse it;
    everything that changes turn by turn belongs in `messages`.  `settled` extends the
    cacheable prefix into the first message: its first `settled` characters (a game's
    history so far) stay the same from call to call for a while, the rest is fresh.
    Backends keep that prefix byte-identical; those that mark cache blocks (Anthropic) send
    it as a block of its own, marked.
    """

    system: str
    messages: list[tuple[Role, str]]
    max_tokens: int = 256
    temperature: float | None = None
    stop: list[str] | None = None
    kind: str = "generic"
    #: JSON schema (an object) the answer must fit, or None for free text. Backends with a
    #: structured-output form ask for it and return the JSON as `LLMResponse.text`.
    schema: Mapping[str, Any] | None = None
    #: the schema's (or forced tool's) name on the wire: letters, digits, _ and -
    schema_name: str = "answer"
    #: overrides of the backend's retry policy for this one call: background calls are sent
    #: once, with a deadline that ends with their phase
    max_attempts: int | None = None
    timeout_s: float | None = None
    #: False: a timed-out attempt is not retried (time-critical calls on a slow server)
    retry_timeouts: bool | None = None
    #: leading characters of the first message that are settled (see above); 0: none
    settled: int = 0

    def __post_init__(self) -> None:
        if self.max_tokens <= 0:
            raise ValueError(f"max_tokens must be positive, got {self.max_tokens}")
        if not self.messages:
            raise ValueError("an LLMRequest needs at least one message")
        for role, _content in self.messages:
            if role not in ("user", "assistant"):
                raise ValueError(f"message role must be 'user' or 'assistant', got {role!r}")
        if self.temperature is not None and not 0.0 <= self.temperature <= 2.0:
            raise ValueError(f"temperature must be within [0, 2], got {self.temperature}")
        if self.max_attempts is not None and self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {self.timeout_s}")
        if not 0 <= self.settled <= len(self.messages[0][1]):
            raise ValueError(f"settled must be within the first message, got {self.settled}")


@dataclass(frozen=True)
class LLMResponse:
    """A completed call.

    `input_tokens` counts the whole prompt, cached part included; `cached_input_tokens`
    is the part served from the provider's prompt cache.  `latency_s` is wall time of the
    whole `complete` call (retries and backoff included), because that is what the game
    waits for.  `attempts` counts HTTP attempts across every backend that was tried.
    `text` may be "" (empty completion) or a refusal (`finish_reason == "refusal"`):
    neither is an error, the caller decides what to do.
    """

    text: str
    model: str
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int
    latency_s: float
    finish_reason: str
    attempts: int
    cost_usd: float
    cost_known: bool = True
    backend: str = ""
    #: the structured-output form the answer was asked in ("json_schema", "json_object",
    #: "tool"), "" for plain text: then `text` is the answer's JSON
    structured: str = ""

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass
class CallProgress:
    """How far one call got, filled in by the clients it passes through (a queue on our side
    says when it holds the request back), for whoever records the call."""

    #: the call's task ran (a call cut short before it ever ran went nowhere)
    started: bool = False
    #: waiting its turn on our side: not sent to the server (yet)
    held: bool = False
    #: a request of the call was handed to the network: None when the client does not say
    #: (counted as sent), False until then with one that does (`note_tracking`, `note_sent`)
    sent: bool | None = None

    @property
    def reached_server(self) -> bool:
        """Whether the call may have reached the model (and may be billed): it ran, was not
        held back on our side, and its client did not say it never sent it."""
        return self.started and not self.held and self.sent is not False


#: the progress of the call being made: set by its caller before it starts the call's task
#: (the task copies the context), left None when nobody asks
CALL_PROGRESS: ContextVar[CallProgress | None] = ContextVar("call_progress", default=None)


def note_tracking() -> None:
    """Called by a client that knows when its requests go out, at the top of a call: the call
    followed (if any) has sent nothing yet, until `note_sent`."""
    progress = CALL_PROGRESS.get()
    if progress is not None and progress.sent is None:
        progress.sent = False


def note_sent() -> None:
    """A request of the call followed (if any) is handed to the network (an HTTP client's
    request hook): it may reach the model from now on."""
    progress = CALL_PROGRESS.get()
    if progress is not None:
        progress.sent = True


class LLMError(Exception):
    """Base class: the call produced no usable response.

    `retryable` tells the retry helper whether another attempt may succeed;
    `attempts` is filled in once retries are given up, so logs show how hard we tried.
    """

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retryable: bool | None = None,
        attempts: int = 0,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        if retryable is not None:
            self.retryable = retryable
        self.attempts = attempts


class LLMTimeout(LLMError):
    """The provider did not answer within the per-attempt timeout."""

    retryable = True


class LLMUnavailable(LLMError):
    """Connection failure or a 5xx/overloaded answer: transient, worth retrying."""

    retryable = True


class LLMRateLimited(LLMError):
    """HTTP 429.  `retry_after_s` carries the server's hint, if any."""

    retryable = True

    def __init__(
        self,
        message: str,
        *,
        retry_after_s: float | None = None,
        status_code: int | None = 429,
        attempts: int = 0,
    ) -> None:
        super().__init__(message, status_code=status_code, attempts=attempts)
        self.retry_after_s = retry_after_s


class LLMBadResponse(LLMError):
    """The provider answered 2xx but the body was not a usable completion
    (malformed JSON, missing content or usage).  Retried once: usually a proxy hiccup."""

    retryable = True


class LLMConfigError(LLMError):
    """The backend cannot be built or used as configured (no credentials, bad spec)."""

    retryable = False


class LLMBudgetExceeded(LLMError):
    """The game's token budget is spent; the agent should fall back to its offline baseline."""

    retryable = False


@runtime_checkable
class LLMClient(Protocol):
    """Anything that can complete an `LLMRequest`; `name` identifies it in logs."""

    name: str

    async def complete(self, req: LLMRequest) -> LLMResponse: ...


async def aclose_client(client: object) -> None:
    """Release a client's connections.  `aclose` is not part of `LLMClient` (test stubs and
    simple clients need none), so backends and wrappers define it and this calls it if present.
    """
    close = getattr(client, "aclose", None)
    if callable(close):
        await close()


def approx_tokens(text: str) -> int:
    """~4 characters per token: used only when a server omits usage, so budgets still bite."""
    return (len(text) + 3) // 4


def normalise_finish_reason(raw: str | None) -> str:
    """Fold provider-specific stop reasons into FINISH_* (unknown ones pass through)."""
    if raw is None or raw == "":
        return "unknown"
    if raw in ("end_turn", "stop_sequence", "stop", "eos", "tool_use", "tool_calls"):
        return FINISH_STOP
    if raw in ("max_tokens", "length", "model_context_window_exceeded"):
        return FINISH_LENGTH
    if raw in ("refusal", "content_filter"):
        return FINISH_REFUSAL
    return raw
