"""The one retry loop every backend shares.

Backends hand the SDK `max_retries=0` and call `run_with_retries` with a single-attempt
coroutine that already translates SDK exceptions into our `LLMError` types.  Keeping the
policy here (not inside each SDK) means both providers back off the same way, the game can
bound the total wait, and tests can observe every attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeVar

from agent.llm.base import (
    CALL_PROGRESS,
    LLMBadResponse,
    LLMError,
    LLMRateLimited,
    LLMTimeout,
    LLMUnavailable,
    note_sent,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try.

    `timeout_s` bounds each attempt (the SDK's own timeout plus an outer asyncio deadline,
    so a server that trickles bytes cannot hold the game).  Backoff is exponential with
    jitter; a server's `retry-after` hint replaces the backoff but is capped by
    `max_retry_after_s` so a long hint cannot stall a live game.  A malformed body is
    retried at most `bad_response_retries` times: repeating a deterministic bug is waste.
    """

    max_attempts: int = 3
    timeout_s: float = 20.0
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    max_retry_after_s: float = 10.0
    bad_response_retries: int = 1
    #: False: an attempt that timed out is not tried again (the server is slow; a second
    #: request would only queue behind the first, which it keeps computing)
    retry_timeouts: bool = True

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")
        if self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {self.timeout_s}")
        if self.base_delay_s < 0 or self.max_delay_s < 0 or self.max_retry_after_s < 0:
            raise ValueError("delays must be non-negative")
        if self.bad_response_retries < 0:
            raise ValueError("bad_response_retries must be non-negative")

    def backoff_s(self, failed_attempts: int, rng: Callable[[], float] = random.random) -> float:
        """Delay before the next attempt after `failed_attempts` failures (1-based).

        "Equal jitter": half the exponential step is fixed, half random, so concurrent
        games that failed together do not retry in lockstep yet still back off.
        """
        step = min(self.max_delay_s, self.base_delay_s * 2.0 ** (failed_attempts - 1))
        return step / 2 + (step / 2) * rng()

    def delay_for(
        self, err: LLMError, failed_attempts: int, rng: Callable[[], float] = random.random
    ) -> float:
        if isinstance(err, LLMRateLimited) and err.retry_after_s is not None:
            return min(max(err.retry_after_s, 0.0), self.max_retry_after_s)
        return self.backoff_s(failed_attempts, rng)


async def run_with_retries(
    attempt: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    label: str = "llm",
    sleep: Sleep = asyncio.sleep,
    rng: Callable[[], float] = random.random,
) -> tuple[T, int]:
    """Run `attempt` until it succeeds or the policy gives up.

    Returns the result and the number of attempts made.  On giving up, re-raises the last
    `LLMError` with `.attempts` set.  Anything that is not an `LLMError` (a bug, or
    cancellation) propagates immediately: retrying it would only hide it.
    """
    bad_responses = 0
    attempts = 0
    while True:
        attempts += 1
        try:
            async with asyncio.timeout(policy.timeout_s):
                result = await attempt()
            return result, attempts
        except TimeoutError:
            err: LLMError = LLMTimeout(f"{label}: no answer within {policy.timeout_s:g} s")
        except LLMError as exc:
            err = exc

        if isinstance(err, LLMBadResponse):
            bad_responses += 1
            may_retry = bad_responses <= policy.bad_response_retries
        elif isinstance(err, LLMTimeout) and not policy.retry_timeouts:
            may_retry = False
        else:
            may_retry = err.retryable
        if not may_retry or attempts >= policy.max_attempts:
            err.attempts = attempts
            log.warning(
                "%s: giving up after %d attempt(s): %s: %s",
                label,
                attempts,
                type(err).__name__,
                err.message,
            )
            raise err

        delay = policy.delay_for(err, attempts, rng)
        log.info(
            "%s: attempt %d failed (%s: %s); retrying in %.2f s",
            label,
            attempts,
            type(err).__name__,
            err.message,
            delay,
        )
        await sleep(delay)


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asked us to wait, or None.

    Same precedence as the vendor SDKs: the non-standard, precise `retry-after-ms` first,
    then `retry-after` as (possibly fractional) seconds, then as an HTTP date.
    """
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(raw)
    if parsed is None:
        return None
    return max(float(email.utils.mktime_tz(parsed)) - time.time(), 0.0)


def error_for_status(status: int, headers: Mapping[str, str] | None, message: str) -> LLMError:
    """Map an HTTP error status to our error type: 429 rate-limited, 408 timeout and 5xx
    (incl. Anthropic's 529 "overloaded") transient, any other 4xx final (auth, bad request:
    retrying cannot fix those)."""
    text = f"HTTP {status}: {message}"
    if status == 429:
        return LLMRateLimited(text, retry_after_s=parse_retry_after(headers), status_code=status)
    if status == 408:
        return LLMTimeout(text, status_code=status)
    if status >= 500:
        return LLMUnavailable(text, status_code=status)
    return LLMError(text, status_code=status, retryable=False)


_MAX_ERROR_TEXT = 300


async def _follow_request(request: Any) -> None:
    """An ``httpx`` request hook: the request's transport reports (``httpcore``'s trace) when
    it starts writing the request's body, and from there the whole body is handed to the
    socket with no pause in which the call could be cut short: that is when the followed call
    may have reached the model. A refused connection, or a call cut short before (while
    connecting, writing the headers), never did. (Its "complete" comes a turn of the event
    loop after the write: a call cancelled in that turn had reached the server all the same.)"""
    if CALL_PROGRESS.get() is None:
        return
    earlier = request.extensions.get("trace")

    async def trace(event: str, info: dict[str, Any]) -> None:
        if event.endswith(".send_request_body.started"):
            note_sent()
        if earlier is not None:
            await earlier(event, info)

    request.extensions["trace"] = trace


def sending_hooks() -> dict[str, list[Callable[..., Awaitable[None]]]]:
    """The ``event_hooks`` of an SDK's HTTP client (``httpx``) that tell the call being
    followed (`agent.llm.base.CALL_PROGRESS`) when its request has gone out: a call cut short
    before that never reached the model, and is not counted as a call."""
    return {"request": [_follow_request], "response": []}


@contextlib.contextmanager
def sdk_errors(sdk: ModuleType, base: type[Exception], name: str) -> Iterator[None]:
    """Turn an official SDK's exceptions into ours, for ``anthropic`` and ``openai`` alike
    (both SDKs share the same exception family, generated from one template)."""
    try:
        yield
    except sdk.APITimeoutError as exc:
        raise LLMTimeout(f"{name}: request timed out") from exc
    except sdk.APIConnectionError as exc:
        raise LLMUnavailable(f"{name}: connection failed: {exc.message}") from exc
    except sdk.APIResponseValidationError as exc:
        raise LLMBadResponse(f"{name}: response failed validation") from exc
    except sdk.APIStatusError as exc:
        raise error_for_status(
            exc.status_code, exc.response.headers, exc.message[:_MAX_ERROR_TEXT]
        ) from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LLMBadResponse(f"{name}: response body is not valid JSON") from exc
    except LLMError:
        raise
    except base as exc:
        raise LLMError(f"{name}: {type(exc).__name__}: {exc}") from exc
