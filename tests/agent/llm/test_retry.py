"""The shared retry loop and its helpers, driven by scripted attempts (no network)."""

from __future__ import annotations

import asyncio
import email.utils
import time

import pytest

from agent.llm.base import (
    LLMBadResponse,
    LLMError,
    LLMRateLimited,
    LLMTimeout,
    LLMUnavailable,
)
from agent.llm.retry import RetryPolicy, error_for_status, parse_retry_after, run_with_retries


class Script:
    """An attempt coroutine that raises the queued errors, then returns "done"."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "done"


class SleepLog:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


POLICY = RetryPolicy(max_attempts=4, timeout_s=1.0, base_delay_s=0.5, max_delay_s=2.0)


async def test_success_first_try() -> None:
    script, sleep = Script(), SleepLog()
    result, attempts = await run_with_retries(script, POLICY, sleep=sleep)
    assert (result, attempts, sleep.delays) == ("done", 1, [])


async def test_exponential_backoff_is_bounded_and_jittered() -> None:
    script, sleep = Script(*(LLMUnavailable("down") for _ in range(3))), SleepLog()

    _, attempts = await run_with_retries(script, POLICY, sleep=sleep, rng=lambda: 1.0)

    assert attempts == 4
    assert sleep.delays == [0.5, 1.0, 2.0]

    script, low = Script(*(LLMUnavailable("down") for _ in range(3))), SleepLog()
    await run_with_retries(script, POLICY, sleep=low, rng=lambda: 0.0)
    assert low.delays == [0.25, 0.5, 1.0]  # equal jitter: never below half the step


def test_backoff_caps_at_max_delay() -> None:
    assert POLICY.backoff_s(20, rng=lambda: 1.0) == POLICY.max_delay_s


async def test_retry_after_replaces_backoff_and_is_capped() -> None:
    policy = RetryPolicy(max_attempts=3, base_delay_s=0.5, max_retry_after_s=3.0)
    script = Script(
        LLMRateLimited("slow", retry_after_s=1.5), LLMRateLimited("x", retry_after_s=60)
    )
    sleep = SleepLog()

    await run_with_retries(script, policy, sleep=sleep, rng=lambda: 1.0)

    assert sleep.delays == [1.5, 3.0]


async def test_gives_up_after_max_attempts_with_last_error() -> None:
    script = Script(*(LLMTimeout(f"t{i}") for i in range(10)))

    with pytest.raises(LLMTimeout, match="t3") as info:
        await run_with_retries(script, POLICY, sleep=SleepLog())

    assert info.value.attempts == 4
    assert script.calls == 4


async def test_non_retryable_error_raises_immediately() -> None:
    script = Script(LLMError("HTTP 401", status_code=401, retryable=False))

    with pytest.raises(LLMError) as info:
        await run_with_retries(script, POLICY, sleep=SleepLog())

    assert info.value.attempts == 1
    assert script.calls == 1


async def test_bad_response_gets_limited_retries() -> None:
    policy = RetryPolicy(max_attempts=5, bad_response_retries=1)
    script = Script(LLMBadResponse("a"), LLMUnavailable("b"), LLMBadResponse("c"))

    with pytest.raises(LLMBadResponse, match="c") as info:
        await run_with_retries(script, policy, sleep=SleepLog())

    # Other failures in between do not reset the bad-response allowance.
    assert info.value.attempts == 3


async def test_programming_errors_are_not_retried() -> None:
    script = Script(KeyError("bug"))
    with pytest.raises(KeyError):
        await run_with_retries(script, POLICY, sleep=SleepLog())
    assert script.calls == 1


async def test_per_attempt_timeout_turns_a_hang_into_llm_timeout() -> None:
    calls = 0

    async def hang_once() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            await asyncio.sleep(10)
        return "late"

    policy = RetryPolicy(max_attempts=2, timeout_s=0.05, base_delay_s=0.0)
    started = time.monotonic()
    result, attempts = await run_with_retries(hang_once, policy)

    assert (result, attempts) == ("late", 2)
    assert time.monotonic() - started < 1.0


async def test_a_timeout_is_not_retried_when_the_policy_says_so() -> None:
    calls = 0

    async def hang_once() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            await asyncio.sleep(10)
        return "late"

    policy = RetryPolicy(max_attempts=3, timeout_s=0.05, base_delay_s=0.0, retry_timeouts=False)
    with pytest.raises(LLMTimeout) as failed:
        await run_with_retries(hang_once, policy)
    assert calls == 1 and failed.value.attempts == 1


async def test_cancellation_is_not_swallowed() -> None:
    async def forever() -> str:
        await asyncio.sleep(10)
        return "never"

    task = asyncio.create_task(run_with_retries(forever, POLICY))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_policy_validation() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError):
        RetryPolicy(timeout_s=0)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "0.2"}, 0.2),
        ({"retry-after-ms": "100", "retry-after": "7"}, 0.1),  # ms is more precise: wins
        ({"retry-after-ms": "junk", "retry-after": "3"}, 3.0),
        ({"retry-after": "-5"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers) == expected


def test_parse_retry_after_http_date() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    parsed = parse_retry_after({"retry-after": when})
    assert parsed is not None
    assert 25 <= parsed <= 31


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [
        (429, LLMRateLimited, True),
        (408, LLMTimeout, True),
        (500, LLMUnavailable, True),
        (529, LLMUnavailable, True),
        (400, LLMError, False),
        (401, LLMError, False),
        (404, LLMError, False),
    ],
)
def test_error_for_status(status: int, kind: type[LLMError], retryable: bool) -> None:
    err = error_for_status(status, {"retry-after": "1"}, "boom")
    assert type(err) is kind
    assert err.retryable is retryable
    assert err.status_code == status
    if isinstance(err, LLMRateLimited):
        assert err.retry_after_s == 1.0
