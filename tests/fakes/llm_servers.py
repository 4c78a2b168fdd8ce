"""Loopback fake LLM servers that speak the real Anthropic and OpenAI wire formats.

The real SDK clients are pointed at these (127.0.0.1, ephemeral port), so tests exercise
the SDKs' own request building and response parsing, not a mock of them.

    async with FakeAnthropicServer(responder=lambda req: "<send>hi</send>") as server:
        client = AnthropicClient("claude-haiku-4-5", api_key="test", base_url=server.base_url)
        server.inject(Fault.rate_limit(retry_after=0.2))     # the next request gets a 429
        resp = await client.complete(...)
        assert server.requests[-1].json["system"][0]["cache_control"] == {"type": "ephemeral"}

* `responder(request_json) -> str` (sync or async) decides the completion text.
  `scripted(...)` and `last_user_text(...)` help write one.
* `inject(*faults, times=n)` queues faults for the next requests, one per request, in
  order: `Fault.timeout()`, `.server_error()`, `.http_error(401)`, `.rate_limit(retry_after=...)`,
  `.malformed_json()`, `.missing_content()`, `.empty()`, `.refusal()`.
* Every request is recorded in `requests` (path, headers, parsed JSON, fault applied).
* Like the real services the fakes stop at `max_tokens` (counted in words), cut at stop
  sequences, report usage, and simulate prompt caching (without the real 1024-token
  minimum): Anthropic reads from its cache the longest prefix, up to a block marked
  `cache_control` (in the system or a message), that an earlier request marked too, and
  writes the rest up to its last marked block (`cache_read_input_tokens`,
  `cache_creation_input_tokens`); OpenAI reports the longest prefix of the prompt (the
  messages' text, in order) an earlier request shared, in whole words, as
  `usage.prompt_tokens_details.cached_tokens`.  The Anthropic fake rejects `temperature`,
  `top_p` and `top_k` with 400, as API version 2026-10-21 does.

`FakeAnthropicServer.base_url` is the host root (the SDK appends `/v1/messages`);
`FakeOpenAIServer.base_url` ends in `/v1`, as OpenAI-compatible base URLs do.

Structured output, as the servers do it: a request with `response_format` (`json_schema`, or
`json_object` with a `schema`) or a forced tool call (`tools` + `tool_choice`) is answered with
JSON that fits the schema whatever the responder said, as grammar-constrained decoding does:
`constrain(text, schema)` keeps the responder's text when it is already a fitting answer, else
picks the enum value the text names (the first when it names none). `FakeOpenAIServer(flavour=...)`
picks whose rules it follows: "openai" and "llama-server" (also vLLM, Ollama) accept every form;
"llama-cpp-python" refuses `json_schema` (it only knows `text` and `json_object`) as its 0.3.x
server really does: the request validation error caught by its route handler and answered as
HTTP 500 `internal_server_error`; "plain" refuses `response_format` and `tools` with 400.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import inspect
import itertools
import json
import re
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar, Self

from aiohttp import web

JSON = dict[str, Any]
Responder = Callable[[JSON], str | Awaitable[str]]

DEFAULT_TEXT = "OK"
DEFAULT_REFUSAL = "I'm sorry, but I can't help with that."


class FaultKind(enum.StrEnum):
    TIMEOUT = "timeout"
    SERVER_ERROR = "server_error"
    RATE_LIMIT = "rate_limit"
    MALFORMED_JSON = "malformed_json"
    MISSING_CONTENT = "missing_content"
    EMPTY = "empty"
    REFUSAL = "refusal"


@dataclass(frozen=True)
class Fault:
    """One injected misbehaviour, applied to exactly one request."""

    kind: FaultKind
    delay_s: float = 30.0
    status: int = 500
    retry_after: float | None = None
    retry_after_ms: float | None = None
    text: str = DEFAULT_REFUSAL
    error_type: str = "api_error"

    @classmethod
    def timeout(cls, delay_s: float = 30.0) -> Fault:
        """Hold the request `delay_s` (longer than the client's timeout), then answer."""
        return cls(FaultKind.TIMEOUT, delay_s=delay_s)

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        """A 5xx (529 is Anthropic's "overloaded") with the provider's error body."""
        error_type = "overloaded_error" if status == 529 else "api_error"
        return cls(FaultKind.SERVER_ERROR, status=status, error_type=error_type)

    @classmethod
    def http_error(cls, status: int, error_type: str = "invalid_request_error") -> Fault:
        """Any other error status, e.g. 401 with "authentication_error"."""
        return cls(FaultKind.SERVER_ERROR, status=status, error_type=error_type)

    @classmethod
    def rate_limit(
        cls, retry_after: float | None = None, retry_after_ms: float | None = None
    ) -> Fault:
        """HTTP 429, with `retry-after` (seconds) and/or `retry-after-ms` headers if given."""
        return cls(
            FaultKind.RATE_LIMIT, status=429, retry_after=retry_after, retry_after_ms=retry_after_ms
        )

    @classmethod
    def malformed_json(cls) -> Fault:
        """HTTP 200, `Content-Type: application/json`, truncated body."""
        return cls(FaultKind.MALFORMED_JSON)

    @classmethod
    def missing_content(cls) -> Fault:
        """HTTP 200, valid JSON, but without `content` (Anthropic) / `choices` (OpenAI)."""
        return cls(FaultKind.MISSING_CONTENT)

    @classmethod
    def empty(cls) -> Fault:
        """A well-formed completion with no text."""
        return cls(FaultKind.EMPTY)

    @classmethod
    def refusal(cls, text: str = DEFAULT_REFUSAL) -> Fault:
        """A well-formed refusal, in the provider's own refusal shape."""
        return cls(FaultKind.REFUSAL, text=text)


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    raw: bytes
    json: JSON | None
    fault: Fault | None
    received_at: float = field(default_factory=time.monotonic)


def scripted(*texts: str) -> Responder:
    """A responder answering `texts` in order, then repeating the last one."""
    if not texts:
        raise ValueError("scripted() needs at least one text")
    items = list(texts)
    counter = itertools.count()

    def respond(_req: JSON) -> str:
        return items[min(next(counter), len(items) - 1)]

    return respond


def content_text(content: Any) -> str:
    """Text of a message `content` in either wire format (string or list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return ""


def anthropic_breakpoints(payload: JSON) -> list[str]:
    """The prompt prefixes a Messages API request's `cache_control` blocks close, shortest
    first: the system blocks, then each message's content blocks, in order (a string content
    is one unmarked block)."""
    blocks: list[Any] = []
    system = payload.get("system")
    if isinstance(system, list):
        blocks.extend(system)
    elif isinstance(system, str):
        blocks.append({"text": system})
    for message in payload.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks.extend(content if isinstance(content, list) else [{"text": content_text(content)}])
    out: list[str] = []
    text = ""
    for block in blocks:
        if not isinstance(block, dict):
            continue
        text += "\x1e" + str(block.get("text", ""))
        if block.get("cache_control"):
            out.append(text)
    return out


def last_user_text(request_json: JSON) -> str:
    """Text of the last user message of an Anthropic or OpenAI request."""
    for message in reversed(request_json.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return content_text(message.get("content"))
    return ""


def count_tokens(text: str) -> int:
    """The fakes' tokenizer: whitespace-separated words.  Crude but deterministic."""
    return len(text.split())


def apply_limits(
    text: str, max_tokens: int | None, stops: Iterable[str]
) -> tuple[str, str | None, bool]:
    """Cut `text` at the first stop sequence, then at `max_tokens` words.

    Returns (text, matched stop sequence or None, hit max_tokens)."""
    matched: str | None = None
    cut = len(text)
    for stop in stops:
        if stop and (pos := text.find(stop)) != -1 and pos < cut:
            cut, matched = pos, stop
    text = text[:cut]
    if max_tokens is not None:
        words = list(re.finditer(r"\S+", text))
        if len(words) > max_tokens:
            end = words[max_tokens - 1].end() if max_tokens > 0 else 0
            return text[:end], None, True
    return text, matched, False


def _enum_pick(text: str, options: list[Any]) -> Any:
    folded = text.casefold()
    hits = [
        o
        for o in options
        if isinstance(o, str) and re.search(rf"(?<!\w){re.escape(o.casefold())}(?!\w)", folded)
    ]
    return hits[0] if hits else options[0]


def _fits(value: Any, schema: JSON) -> bool:
    kind = schema.get("type")
    if "enum" in schema:
        return value in schema["enum"]
    if kind == "object":
        props = schema.get("properties") or {}
        return (
            isinstance(value, dict)
            and all(k in value for k in schema.get("required") or [])
            and all(k in props and _fits(v, props[k]) for k, v in value.items())
        )
    if kind == "array":
        items = schema.get("items") or {}
        return isinstance(value, list) and all(_fits(v, items) for v in value)
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return True


def _shape(text: str, schema: JSON) -> Any:
    if "enum" in schema:
        return _enum_pick(text, list(schema["enum"]))
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: _shape(text, sub) for k, sub in props.items()}
    if kind == "array":
        return [_shape(text, schema.get("items") or {})]
    if kind in ("integer", "number"):
        m = re.search(r"-?\d+", text)
        return int(m.group()) if m else 0
    return text


def constrain(text: str, schema: JSON) -> Any:
    """What grammar-constrained decoding makes of a model that "wanted" to say ``text``."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if value is not None and _fits(value, schema):
        return value
    return _shape(text, schema)


def openai_schema(payload: JSON) -> tuple[JSON | None, str]:
    """(the schema a Chat Completions request asks its answer to fit, in which form)."""
    fmt = payload.get("response_format")
    if isinstance(fmt, dict):
        if fmt.get("type") == "json_schema":
            spec = fmt.get("json_schema") or {}
            return spec.get("schema") or {}, "json_schema"
        if fmt.get("type") == "json_object":
            return fmt.get("schema") or {"type": "object"}, "json_object"
    choice = payload.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "function":
        name = (choice.get("function") or {}).get("name")
        for tool in payload.get("tools") or []:
            function = tool.get("function") or {}
            if function.get("name") == name:
                return function.get("parameters") or {}, "tool"
    return None, "off"


class FakeLLMServer:
    """Shared machinery: aiohttp app on loopback, fault queue, request log."""

    path: ClassVar[str]
    request_id_header: ClassVar[str]
    content_key: ClassVar[str]

    def __init__(self, responder: Responder | None = None) -> None:
        self.responder: Responder = responder or (lambda _req: DEFAULT_TEXT)
        self.requests: list[RecordedRequest] = []
        self.responder_errors: list[BaseException] = []
        self._faults: deque[Fault] = deque()
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._closing = asyncio.Event()
        self._seen_prefixes: set[str] = set()
        self._seen_prompts: deque[list[str]] = deque(maxlen=64)

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> Self:
        app = web.Application()
        app.router.add_post(self.path, self._handle)
        # handler_cancellation: a client that gives up on a held (timeout) request frees it.
        runner = web.AppRunner(
            app, handler_cancellation=True, access_log=None, shutdown_timeout=1.0
        )
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self._runner = runner
        self._port = int(runner.addresses[0][1])
        return self

    async def close(self) -> None:
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("server not started")
        return self._port

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        raise NotImplementedError

    # -- scripting -------------------------------------------------------------------------

    def inject(self, *faults: Fault, times: int = 1) -> None:
        """Queue `faults` (repeated `times` times) for the next requests, in order."""
        for _ in range(times):
            self._faults.extend(faults)

    @property
    def pending_faults(self) -> int:
        return len(self._faults)

    def clear_faults(self) -> None:
        self._faults.clear()

    @property
    def last_json(self) -> JSON:
        for recorded in reversed(self.requests):
            if recorded.json is not None:
                return recorded.json
        raise AssertionError("no JSON request recorded yet")

    # -- request handling ------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        return await self._handle_body(request, raw, body)

    async def _handle_body(self, request: web.Request, raw: bytes, body: Any) -> web.Response:
        payload = body if isinstance(body, dict) else None
        fault = self._faults.popleft() if self._faults else None
        self.requests.append(
            RecordedRequest(request.path, dict(request.headers), raw, payload, fault)
        )
        if payload is None:
            return self.error(400, "invalid_request_error", "request body is not a JSON object")
        problem = self.validate(payload)
        if problem is not None:
            return self.error(400, "invalid_request_error", problem)

        if fault is not None:
            if fault.kind is FaultKind.TIMEOUT:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), fault.delay_s)
            elif fault.kind is FaultKind.SERVER_ERROR:
                return self.error(fault.status, fault.error_type, "Injected error")
            elif fault.kind is FaultKind.RATE_LIMIT:
                headers: dict[str, str] = {}
                if fault.retry_after is not None:
                    headers["retry-after"] = f"{fault.retry_after:g}"
                if fault.retry_after_ms is not None:
                    headers["retry-after-ms"] = f"{fault.retry_after_ms:g}"
                return self.error(429, "rate_limit_error", "Rate limited (injected)", headers)
            elif fault.kind is FaultKind.MALFORMED_JSON:
                return self.json_response(b'{"id": "broken", "content": [{"type": "te')
            elif fault.kind is FaultKind.MISSING_CONTENT:
                body = self.render(payload, "lost", "normal")
                body.pop(self.content_key, None)
                return self.json_response(body)
            elif fault.kind is FaultKind.EMPTY:
                return self.json_response(self.render(payload, "", "empty"))
            elif fault.kind is FaultKind.REFUSAL:
                return self.json_response(self.render(payload, fault.text, "refusal"))

        try:
            result = self.responder(payload)
            text = await result if inspect.isawaitable(result) else result
        except Exception as exc:  # surfaced to the test through responder_errors
            self.responder_errors.append(exc)
            return self.error(500, "api_error", f"responder failed: {exc!r}")
        return self.json_response(self.render(payload, str(text), "normal"))

    def json_response(
        self, body: JSON | bytes, status: int = 200, headers: dict[str, str] | None = None
    ) -> web.Response:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        all_headers = {
            "Content-Type": "application/json",
            self.request_id_header: f"req_{uuid.uuid4().hex[:24]}",
            **(headers or {}),
        }
        return web.Response(body=data, status=status, headers=all_headers)

    def cached_breakpoints(self, prefixes: Sequence[str]) -> tuple[int, int]:
        """(tokens read, tokens written) for a request whose cache breakpoints close the
        prompt prefixes ``prefixes`` (shortest first): the longest one an earlier request
        marked is read, the rest up to the last one is written; all are remembered."""
        read = max((count_tokens(p) for p in prefixes if p in self._seen_prefixes), default=0)
        last = count_tokens(prefixes[-1]) if prefixes else 0
        self._seen_prefixes.update(prefixes)
        return read, max(last - read, 0)

    def shared_prefix_tokens(self, prompt: str) -> int:
        """Words at the start of ``prompt`` that an earlier prompt started with, remembering
        it (the longest such run over the recent prompts)."""
        words = prompt.split()
        best = 0
        for seen in self._seen_prompts:
            n = 0
            for a, b in zip(words, seen, strict=False):
                if a != b:
                    break
                n += 1
            best = max(best, n)
        self._seen_prompts.append(words)
        return best

    # -- provider specifics ----------------------------------------------------------------

    def validate(self, payload: JSON) -> str | None:
        raise NotImplementedError

    def render(self, payload: JSON, text: str, mode: str) -> JSON:
        raise NotImplementedError

    def error(
        self, status: int, kind: str, message: str, headers: dict[str, str] | None = None
    ) -> web.Response:
        raise NotImplementedError


class FakeAnthropicServer(FakeLLMServer):
    """`POST /v1/messages` in the Messages API format."""

    path = "/v1/messages"
    request_id_header = "request-id"
    content_key = "content"

    @property
    def base_url(self) -> str:
        return self.origin

    def validate(self, payload: JSON) -> str | None:
        if not isinstance(payload.get("model"), str) or not payload["model"]:
            return "model: Field required"
        if not isinstance(payload.get("max_tokens"), int):
            return "max_tokens: Field required"
        messages = payload.get("messages")
        if not isinstance(messages, list) or not messages:
            return "messages: at least one message is required"
        for name in ("temperature", "top_p", "top_k"):
            if name in payload:
                return f"{name}: Extra inputs are not permitted"
        return None

    def render(self, payload: JSON, text: str, mode: str) -> JSON:
        system = payload.get("system")
        system_text = content_text(system) if system is not None else ""
        prompt_tokens = count_tokens(system_text) + sum(
            count_tokens(content_text(m.get("content")))
            for m in payload["messages"]
            if isinstance(m, dict)
        )
        cache_read, cache_write = self.cached_breakpoints(anthropic_breakpoints(payload))

        stop_sequence: str | None = None
        tools = payload.get("tools") or []
        choice = payload.get("tool_choice") or {}
        forced = next(
            (
                t
                for t in tools
                if choice.get("type") == "tool" and t.get("name") == choice.get("name")
            ),
            None,
        )
        if mode == "normal" and forced is not None:
            value = constrain(text, forced.get("input_schema") or {})
            block = {
                "type": "tool_use",
                "id": f"toolu_{uuid.uuid4().hex[:24]}",
                "name": forced["name"],
                "input": value,
            }
            return {
                "id": f"msg_{uuid.uuid4().hex[:24]}",
                "type": "message",
                "role": "assistant",
                "model": payload["model"],
                "content": [block],
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": prompt_tokens - cache_read - cache_write,
                    "output_tokens": count_tokens(json.dumps(value)),
                    "cache_creation_input_tokens": cache_write,
                    "cache_read_input_tokens": cache_read,
                },
            }
        if mode == "refusal":
            stop_reason = "refusal"
        elif mode == "empty":
            stop_reason = "end_turn"
        else:
            text, stop_sequence, truncated = apply_limits(
                text, payload.get("max_tokens"), payload.get("stop_sequences") or []
            )
            stop_reason = (
                "max_tokens" if truncated else "stop_sequence" if stop_sequence else "end_turn"
            )
        content = [{"type": "text", "text": text}] if text else []
        return {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": payload["model"],
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": stop_sequence,
            "usage": {
                "input_tokens": prompt_tokens - cache_read - cache_write,
                "output_tokens": count_tokens(text),
                "cache_creation_input_tokens": cache_write,
                "cache_read_input_tokens": cache_read,
            },
        }

    def error(
        self, status: int, kind: str, message: str, headers: dict[str, str] | None = None
    ) -> web.Response:
        body = {
            "type": "error",
            "error": {"type": kind, "message": message},
            "request_id": f"req_{uuid.uuid4().hex[:24]}",
        }
        return self.json_response(body, status=status, headers=headers)


class FakeOpenAIServer(FakeLLMServer):
    """`POST /v1/chat/completions` in the Chat Completions format."""

    path = "/v1/chat/completions"
    request_id_header = "x-request-id"
    content_key = "choices"
    FLAVOURS: ClassVar[tuple[str, ...]] = ("openai", "llama-server", "llama-cpp-python", "plain")

    def __init__(self, responder: Responder | None = None, *, flavour: str = "openai") -> None:
        if flavour not in self.FLAVOURS:
            raise ValueError(f"unknown flavour {flavour!r}")
        super().__init__(responder)
        self.flavour = flavour
        #: (status, body) of every refused request, for tests that check the step down
        self.refusals: list[tuple[int, JSON]] = []

    def _refuse(self, status: int, body: JSON) -> web.Response:
        self.refusals.append((status, body))
        return self.json_response(body, status=status)

    def structured_refusal(self, payload: JSON) -> web.Response | None:
        fmt = payload.get("response_format")
        tools = payload.get("tools")
        if self.flavour == "plain" and (fmt is not None or tools is not None):
            field = "response_format" if fmt is not None else "tools"
            return self._refuse(
                400,
                {
                    "error": {
                        "message": f"Unrecognized request argument supplied: {field}",
                        "type": "invalid_request_error",
                        "param": field,
                        "code": None,
                    }
                },
            )
        if (
            self.flavour == "llama-cpp-python"
            and isinstance(fmt, dict)
            and fmt.get("type") not in ("text", "json_object")
        ):
            # FastAPI's RequestValidationError for ChatCompletionRequestResponseFormat.type,
            # which llama_cpp.server's RouteErrorHandler wraps as a 500 (llama-cpp-python 0.3.36)
            detail = {
                "type": "literal_error",
                "loc": ("body", "response_format", "type"),
                "msg": "Input should be 'text' or 'json_object'",
                "input": fmt.get("type"),
                "ctx": {"expected": "'text' or 'json_object'"},
            }
            return self._refuse(
                500,
                {
                    "error": {
                        "message": f"1 validation error:\n  {detail}\n",
                        "type": "internal_server_error",
                        "param": None,
                        "code": None,
                    }
                },
            )
        return None

    async def _handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if isinstance(body, dict):
            refused = self.structured_refusal(body)
            if refused is not None:
                self.requests.append(
                    RecordedRequest(request.path, dict(request.headers), raw, body, None)
                )
                return refused
        return await super()._handle_body(request, raw, body)

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def validate(self, payload: JSON) -> str | None:
        if not isinstance(payload.get("model"), str) or not payload["model"]:
            return "you must provide a model parameter"
        messages = payload.get("messages")
        if not isinstance(messages, list) or not messages:
            return "'messages' must contain at least one message"
        if "max_tokens" in payload and "max_completion_tokens" in payload:
            return "max_tokens and max_completion_tokens cannot both be set"
        return None

    def render(self, payload: JSON, text: str, mode: str) -> JSON:
        messages = [m for m in payload["messages"] if isinstance(m, dict)]
        prompt_tokens = sum(count_tokens(content_text(m.get("content"))) for m in messages)
        cached_tokens = self.shared_prefix_tokens(
            "\n".join(content_text(m.get("content")) for m in messages)
        )

        content: str | None = text
        refusal: str | None = None
        finish_reason = "stop"
        tool_calls: list[JSON] | None = None
        schema, form = openai_schema(payload)
        if mode == "refusal":
            content, refusal = None, text
        elif mode == "normal" and schema is not None:
            text = json.dumps(constrain(text, schema))
            if form == "tool":
                name = payload["tool_choice"]["function"]["name"]
                tool_calls = [
                    {
                        "id": f"call_{uuid.uuid4().hex[:24]}",
                        "type": "function",
                        "function": {"name": name, "arguments": text},
                    }
                ]
                content, finish_reason = None, "tool_calls"
            else:
                content = text
        elif mode == "normal":
            stop = payload.get("stop") or []
            stops = [stop] if isinstance(stop, str) else list(stop)
            limit = payload.get("max_completion_tokens", payload.get("max_tokens"))
            text, _matched, truncated = apply_limits(text, limit, stops)
            content = text
            finish_reason = "length" if truncated else "stop"
        completion_tokens = count_tokens(text)
        message: JSON = {"role": "assistant", "content": content, "refusal": refusal}
        if tool_calls is not None:
            message["tool_calls"] = tool_calls
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": payload["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached_tokens},
            },
        }

    def error(
        self, status: int, kind: str, message: str, headers: dict[str, str] | None = None
    ) -> web.Response:
        body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
        return self.json_response(body, status=status, headers=headers)


class SingleSlot:
    """A responder that models a slow one-at-a-time server (the ``llama-cpp-python`` server,
    one ``llama-server`` slot): requests are computed one after another, each for
    ``service_s``, in the order they reach the lock; a request whose client gave up is still
    computed to the end (a non-streamed completion is not interrupted). ``order`` lists the
    last user message of each request as its computation began; ``most_at_once`` is the most
    requests the server held at once (computing or waiting inside it)."""

    def __init__(self, service_s: float, answer: str = DEFAULT_TEXT) -> None:
        self.service_s = service_s
        self.answer = answer
        self.order: list[str] = []
        self.finished: list[str] = []
        self.held = 0
        self.most_at_once = 0
        self._lock = asyncio.Lock()
        self._began = asyncio.Event()

    async def started(self, n: int) -> None:
        """Wait until the server began computing ``n`` requests."""
        while len(self.order) < n:
            self._began.clear()
            await self._began.wait()

    async def __call__(self, payload: JSON) -> str:
        work = asyncio.ensure_future(self._compute(last_user_text(payload)))
        return await asyncio.shield(work)

    async def _compute(self, text: str) -> str:
        self.held += 1
        self.most_at_once = max(self.most_at_once, self.held)
        try:
            async with self._lock:
                self.order.append(text)
                self._began.set()
                await asyncio.sleep(self.service_s)
                self.finished.append(text)
                return self.answer
        finally:
            self.held -= 1
