"""OpenAI Chat Completions backend (official `openai` SDK, `AsyncOpenAI`).

Chat Completions rather than the Responses API because every OpenAI-compatible local
server (Ollama, vLLM, llama.cpp) speaks it: pointing `OPENAI_BASE_URL` (or `base_url`) at
one is all it takes.  Those servers usually need no key, so a placeholder is supplied when a
base URL is set and no key is.  The system prompt is the first message, unchanged between
calls, which is what OpenAI's automatic prefix caching keys on.  The SDK's own retries are
off (`max_retries=0`); `agent.llm.retry` decides.

A request with a `schema` asks for structured output (see `agent.llm.structured`): on OpenAI
itself `response_format` `json_schema` (strict); on other servers "auto" tries `json_schema`
(llama-server, vLLM, Ollama, LM Studio), then `{"type": "json_object", "schema": ...}` (the
llama-cpp-python server, which refuses `json_schema`), then plain text. "tool" sends the schema
as a function the model is forced to call (`tools` + `tool_choice`).
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any, Literal

import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

from agent.llm.base import (
    FINISH_REFUSAL,
    LLMBadResponse,
    LLMConfigError,
    LLMError,
    LLMRequest,
    LLMResponse,
    StructuredMode,
    approx_tokens,
    normalise_finish_reason,
    note_tracking,
)
from agent.llm.pricing import estimate_cost
from agent.llm.retry import RetryPolicy, sdk_errors, sending_hooks
from agent.llm.structured import FormPicker, is_form_refused, policy_for, schema_json, step_down

log = logging.getLogger(__name__)

MaxTokensParam = Literal["max_tokens", "max_completion_tokens"]

#: Sent as the key when talking to a keyless local server; never a real secret.
PLACEHOLDER_API_KEY = "sk-no-key-required"

_OPENAI_HOST = "api.openai.com"
#: a JSON answer needs room for its braces and key, whatever the plain-text cap was
STRUCTURED_MIN_TOKENS = 32
_TOOL_DESCRIPTION = "Give your answer by calling this function."
# Reasoning models accept only the default temperature and reject other values with 400.
_FIXED_TEMPERATURE_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def _accepts_temperature(model: str) -> bool:
    name = model.lower().rsplit("/", 1)[-1]
    return not name.startswith(_FIXED_TEMPERATURE_PREFIXES)


class OpenAIClient:
    """`LLMClient` over Chat Completions.

    `max_tokens_param` picks the request field for the output cap: OpenAI itself wants
    `max_completion_tokens` (reasoning models reject `max_tokens`), while many
    compatible servers only know the older `max_tokens`.  By default it is chosen from the
    endpoint host.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 20.0,
        max_attempts: int = 3,
        policy: RetryPolicy | None = None,
        max_tokens_param: MaxTokensParam | None = None,
        sdk_client: openai.AsyncOpenAI | None = None,
        structured: StructuredMode = "auto",
    ) -> None:
        if not model:
            raise ValueError("an OpenAI model name is required")
        self.model = model
        self.name = f"openai:{model}"
        self.policy = policy or RetryPolicy(max_attempts=max_attempts, timeout_s=timeout)
        #: whether our SDK client says when a request goes out (one passed in may not)
        self._tracks_sending = sdk_client is None
        if sdk_client is None:
            effective_base = base_url or os.environ.get("OPENAI_BASE_URL")
            if api_key is None and not os.environ.get("OPENAI_API_KEY") and effective_base:
                api_key = PLACEHOLDER_API_KEY
            try:
                sdk_client = openai.AsyncOpenAI(
                    api_key=api_key,
                    base_url=base_url,
                    timeout=self.policy.timeout_s,
                    max_retries=0,
                    http_client=openai.DefaultAsyncHttpxClient(event_hooks=sending_hooks()),
                )
            except openai.OpenAIError as exc:
                raise LLMConfigError(
                    "openai: no credentials; set OPENAI_API_KEY, or OPENAI_BASE_URL for a "
                    f"local server ({exc})"
                ) from exc
        self._sdk = sdk_client
        if max_tokens_param is None:
            is_openai = self._sdk.base_url.host == _OPENAI_HOST
            max_tokens_param = "max_completion_tokens" if is_openai else "max_tokens"
        self.max_tokens_param: MaxTokensParam = max_tokens_param
        is_openai = self._sdk.base_url.host == _OPENAI_HOST
        auto = ("json_schema", "off") if is_openai else ("json_schema", "json_object", "off")
        self.forms = FormPicker(structured, auto, self.name)

    async def complete(self, req: LLMRequest) -> LLMResponse:
        if self._tracks_sending:
            note_tracking()
        started = time.monotonic()
        completion, attempts, form = await step_down(
            req,
            self.forms,
            policy_for(req, self.policy),
            f"{self.name} [{req.kind}]",
            self._attempt,
        )
        return self._to_response(req, completion, attempts, time.monotonic() - started, form)

    async def aclose(self) -> None:
        await self._sdk.close()

    def _build_messages(self, req: LLMRequest) -> list[ChatCompletionMessageParam]:
        messages: list[ChatCompletionMessageParam] = []
        if req.system:
            messages.append({"role": "system", "content": req.system})
        for role, content in req.messages:
            if role == "user":
                messages.append({"role": "user", "content": content})
            else:
                messages.append({"role": "assistant", "content": content})
        return messages

    def _structured_params(self, req: LLMRequest, form: str) -> dict[str, Any]:
        if req.schema is None or form == "off":
            return {}
        schema = schema_json(req.schema)
        if form == "json_schema":
            return {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": req.schema_name, "schema": schema, "strict": True},
                }
            }
        if form == "json_object":
            return {"response_format": {"type": "json_object", "schema": schema}}
        function = {"name": req.schema_name, "description": _TOOL_DESCRIPTION, "parameters": schema}
        return {
            "tools": [{"type": "function", "function": function}],
            "tool_choice": {"type": "function", "function": {"name": req.schema_name}},
        }

    async def _attempt(self, req: LLMRequest, form: str = "off") -> ChatCompletion:
        messages = self._build_messages(req)
        send_temperature = req.temperature is not None and _accepts_temperature(self.model)
        extra = self._structured_params(req, form)
        cap = max(req.max_tokens, STRUCTURED_MIN_TOKENS) if extra else req.max_tokens
        timeout = policy_for(req, self.policy).timeout_s
        try:
            with sdk_errors(openai, openai.OpenAIError, self.name):
                completion = await self._sdk.chat.completions.create(
                    model=self.model,
                    messages=messages,
                    max_tokens=cap if self.max_tokens_param == "max_tokens" else openai.omit,
                    max_completion_tokens=(
                        cap if self.max_tokens_param == "max_completion_tokens" else openai.omit
                    ),
                    temperature=req.temperature if send_temperature else openai.omit,
                    stop=list(req.stop) if req.stop else openai.omit,
                    timeout=timeout,
                    **extra,
                )
        except LLMError as err:
            if extra and is_form_refused(err):
                err.retryable = False  # the same form is refused again: step down at once
            raise
        if not isinstance(completion, ChatCompletion):
            raise LLMBadResponse(
                f"{self.name}: expected a chat completion, got {type(completion).__name__}"
            )
        self._check_shape(completion)
        return completion

    def _check_shape(self, completion: ChatCompletion) -> None:
        """Non-strict SDK parsing tolerates missing fields until they are read; check the
        ones we read here, where a failure can still be retried."""
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise LLMBadResponse(f"{self.name}: response has no choices")
        message = getattr(choices[0], "message", None)
        if message is None:
            raise LLMBadResponse(f"{self.name}: first choice has no message")
        content = getattr(message, "content", None)
        if content is not None and not isinstance(content, str):
            raise LLMBadResponse(f"{self.name}: message content is not text")

    def _to_response(
        self,
        req: LLMRequest,
        completion: ChatCompletion,
        attempts: int,
        latency_s: float,
        form: str = "off",
    ) -> LLMResponse:
        choice = completion.choices[0]
        content = getattr(choice.message, "content", None)
        refusal = getattr(choice.message, "refusal", None)
        finish_reason = normalise_finish_reason(getattr(choice, "finish_reason", None))
        arguments = _tool_arguments(choice.message) if form == "tool" else None
        if arguments is not None:
            text = arguments
        elif content:
            text = content
        elif isinstance(refusal, str) and refusal:
            # A refusal is an answer, not a failure: surface it as text, flagged.
            text = refusal
            finish_reason = FINISH_REFUSAL
        else:
            text = ""
        model = getattr(completion, "model", None) or self.model
        usage = getattr(completion, "usage", None)
        prompt = getattr(usage, "prompt_tokens", None)
        output = getattr(usage, "completion_tokens", None)
        if isinstance(prompt, int) and isinstance(output, int):
            input_tokens, output_tokens = prompt, output
            details = getattr(usage, "prompt_tokens_details", None)
            cached = getattr(details, "cached_tokens", None) or 0
        else:
            log.debug("%s: response without usage; estimating tokens", self.name)
            input_tokens = approx_tokens(req.system) + sum(
                approx_tokens(turn) for _, turn in req.messages
            )
            output_tokens = approx_tokens(text)
            cached = 0
        cost = estimate_cost(model, input_tokens, output_tokens, cached)
        return LLMResponse(
            text=text,
            model=str(model),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cached_input_tokens=cached,
            latency_s=latency_s,
            finish_reason=finish_reason,
            attempts=attempts,
            cost_usd=cost.usd,
            cost_known=cost.known,
            backend=self.name,
            structured="" if form == "off" else form,
        )


def _tool_arguments(message: object) -> str | None:
    """The arguments (JSON text) of the first function call in ``message``, if any."""
    calls = getattr(message, "tool_calls", None)
    if not isinstance(calls, list) or not calls:
        return None
    function = getattr(calls[0], "function", None)
    arguments = getattr(function, "arguments", None)
    return arguments if isinstance(arguments, str) else None
