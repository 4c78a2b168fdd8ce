"""Anthropic Messages API backend (official `anthropic` SDK, `AsyncAnthropic`).

The static system prompt goes in a system block marked `cache_control: ephemeral`: the
agent sends the same rules/persona on every call of a game, and a cache hit makes those
tokens ~10x cheaper and faster.  The settled start of the first user message
(`LLMRequest.settled`: the game's chat so far, in whole pages) is a text block of its own,
marked too, ahead of a block with the rest of that message (two of the API's four
breakpoints).  Usage reports `cache_read_input_tokens` (served from the cache) apart from
`input_tokens`; both, with `cache_creation_input_tokens`, make `LLMResponse.input_tokens`.
The SDK's own retries are off (`max_retries=0`) so that `agent.llm.retry` alone decides how
long a live game waits.

No sampling temperature is sent: SDK 2.x removed the parameter and the API version it
speaks (2026-10-21) rejects `temperature`/`top_p`/`top_k` with HTTP 400.
`LLMRequest.temperature` is therefore ignored here.

A request with a `schema` is asked as a forced tool call (`tools` with the schema as
`input_schema`, `tool_choice` naming it): the answer is the tool call's input, returned as
JSON text. Structured mode "off" sends plain text; any other mode means the tool call.
"""

from __future__ import annotations

import json
import logging
import os
import time

import anthropic
from anthropic.types import Message, MessageParam, TextBlock, TextBlockParam, ToolUseBlock

from agent.llm.base import (
    LLMBadResponse,
    LLMConfigError,
    LLMRequest,
    LLMResponse,
    StructuredMode,
    approx_tokens,
    normalise_finish_reason,
    note_tracking,
)
from agent.llm.pricing import estimate_cost
from agent.llm.retry import RetryPolicy, sdk_errors, sending_hooks
from agent.llm.structured import FormPicker, policy_for, schema_json, step_down

log = logging.getLogger(__name__)


#: Sent as the key to a keyless Anthropic-compatible proxy; never a real secret.
PLACEHOLDER_API_KEY = "sk-ant-no-key-required"
#: a forced tool call needs room for its input, whatever the plain-text cap was
TOOL_MIN_TOKENS = 64
_TOOL_DESCRIPTION = "Give your answer by calling this tool."


def _make_sdk_client(
    api_key: str | None, base_url: str | None, timeout_s: float
) -> anthropic.AsyncAnthropic:
    """Build the SDK client, failing now rather than on the first move of a game.

    Without any credential the SDK only fails at request time, and with a TypeError; we
    raise `LLMConfigError` instead, unless a custom base URL is set (a local proxy may not
    check keys), where a placeholder key keeps the SDK happy.
    """
    http = anthropic.DefaultAsyncHttpxClient(event_hooks=sending_hooks())
    try:
        sdk = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0, http_client=http
        )
    except anthropic.AnthropicError as exc:
        raise LLMConfigError(f"anthropic: cannot load credentials: {exc}") from exc
    if sdk.api_key is None and sdk.auth_token is None and sdk.credentials is None:
        if base_url or os.environ.get("ANTHROPIC_BASE_URL"):
            return anthropic.AsyncAnthropic(
                api_key=PLACEHOLDER_API_KEY,
                base_url=base_url,
                timeout=timeout_s,
                max_retries=0,
                http_client=http,
            )
        raise LLMConfigError("anthropic: no credentials; set ANTHROPIC_API_KEY (or pass api_key)")
    return sdk


class AnthropicClient:
    """`LLMClient` over the Anthropic Messages API.

    Credentials and endpoint come from the SDK's own environment variables
    (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, ...) unless `api_key`/`base_url` are given.
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
        sdk_client: anthropic.AsyncAnthropic | None = None,
        structured: StructuredMode = "auto",
    ) -> None:
        if not model:
            raise ValueError("an Anthropic model name is required")
        self.model = model
        self.name = f"anthropic:{model}"
        self.policy = policy or RetryPolicy(max_attempts=max_attempts, timeout_s=timeout)
        #: whether our SDK client says when a request goes out (one passed in may not)
        self._tracks_sending = sdk_client is None
        if sdk_client is None:
            sdk_client = _make_sdk_client(api_key, base_url, self.policy.timeout_s)
        self._sdk = sdk_client
        # the Messages API's one structured form is the forced tool call
        self.forms = FormPicker(
            "auto" if structured == "auto" else "off" if structured == "off" else "tool",
            ("tool", "off"),
            self.name,
        )

    async def complete(self, req: LLMRequest) -> LLMResponse:
        if self._tracks_sending:
            note_tracking()
        started = time.monotonic()
        message, attempts, form = await step_down(
            req,
            self.forms,
            policy_for(req, self.policy),
            f"{self.name} [{req.kind}]",
            self._attempt,
        )
        return self._to_response(req, message, attempts, time.monotonic() - started, form)

    async def aclose(self) -> None:
        await self._sdk.close()

    def _build_params(self, req: LLMRequest) -> tuple[list[TextBlockParam], list[MessageParam]]:
        system: list[TextBlockParam] = []
        if req.system:
            system.append(
                {"type": "text", "text": req.system, "cache_control": {"type": "ephemeral"}}
            )
        messages: list[MessageParam] = []
        for i, (role, content) in enumerate(req.messages):
            if i == 0 and role == "user" and 0 < req.settled < len(content):
                blocks: list[TextBlockParam] = [
                    {
                        "type": "text",
                        "text": content[: req.settled],
                        "cache_control": {"type": "ephemeral"},
                    },
                    {"type": "text", "text": content[req.settled :]},
                ]
                messages.append({"role": "user", "content": blocks})
            elif role == "user":
                messages.append({"role": "user", "content": content})
            else:
                messages.append({"role": "assistant", "content": content})
        return system, messages

    async def _attempt(self, req: LLMRequest, form: str = "off") -> Message:
        system, messages = self._build_params(req)
        tool = req.schema is not None and form == "tool"
        with sdk_errors(anthropic, anthropic.AnthropicError, self.name):
            message = await self._sdk.messages.create(
                model=self.model,
                max_tokens=max(req.max_tokens, TOOL_MIN_TOKENS) if tool else req.max_tokens,
                system=system if system else anthropic.omit,
                messages=messages,
                stop_sequences=list(req.stop) if req.stop else anthropic.omit,
                tools=(
                    [
                        {
                            "name": req.schema_name,
                            "description": _TOOL_DESCRIPTION,
                            "input_schema": schema_json(req.schema or {}),
                        }
                    ]
                    if tool
                    else anthropic.omit
                ),
                tool_choice=({"type": "tool", "name": req.schema_name} if tool else anthropic.omit),
                timeout=policy_for(req, self.policy).timeout_s,
            )
        if not isinstance(message, Message):
            raise LLMBadResponse(f"{self.name}: expected a message, got {type(message).__name__}")
        self._check_shape(message)
        return message

    def _check_shape(self, message: Message) -> None:
        """Non-strict SDK parsing builds models even from incomplete JSON; missing
        required fields only surface as AttributeError later, so check them here, where
        a failure can still be retried."""
        content = getattr(message, "content", None)
        if not isinstance(content, list):
            raise LLMBadResponse(f"{self.name}: response has no content list")
        for block in content:
            if isinstance(block, TextBlock) and not isinstance(getattr(block, "text", None), str):
                raise LLMBadResponse(f"{self.name}: text block without text")

    def _to_response(
        self, req: LLMRequest, message: Message, attempts: int, latency_s: float, form: str = "off"
    ) -> LLMResponse:
        used = next((b for b in message.content if isinstance(b, ToolUseBlock)), None)
        if form == "tool" and used is not None:
            text = json.dumps(used.input)
        else:
            text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
        model = getattr(message, "model", None) or self.model
        usage = getattr(message, "usage", None)
        fresh = getattr(usage, "input_tokens", None)
        output = getattr(usage, "output_tokens", None)
        if isinstance(fresh, int) and isinstance(output, int):
            cache_read = getattr(usage, "cache_read_input_tokens", None) or 0
            cache_write = getattr(usage, "cache_creation_input_tokens", None) or 0
            # Anthropic's input_tokens excludes both cache reads and cache writes.
            input_tokens = fresh + cache_read + cache_write
            output_tokens = output
        else:
            log.debug("%s: response without usage; estimating tokens", self.name)
            cache_read = 0
            input_tokens = approx_tokens(req.system) + sum(
                approx_tokens(turn) for _, turn in req.messages
            )
            output_tokens = approx_tokens(text)
        cost = estimate_cost(model, input_tokens, output_tokens, cache_read)
        return LLMResponse(
            text=text,
            model=str(model),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cached_input_tokens=cache_read,
            latency_s=latency_s,
            finish_reason=normalise_finish_reason(getattr(message, "stop_reason", None)),
            attempts=attempts,
            cost_usd=cost.usd,
            cost_known=cost.known,
            backend=self.name,
            structured="" if form == "off" else form,
        )
