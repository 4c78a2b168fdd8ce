"""Retry behaviour of both real SDK backends against injected faults on the fake servers."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from agent.llm.base import (
    CALL_PROGRESS,
    CallProgress,
    LLMBadResponse,
    LLMError,
    LLMRateLimited,
    LLMRequest,
    LLMTimeout,
    LLMUnavailable,
)
from tests.agent.llm.conftest import FAST, Backend
from tests.fakes.llm_servers import Fault

REQ = LLMRequest(system="You are a Mafia player.", messages=[("user", "Who do you suspect?")])


def gaps(backend: Backend) -> list[float]:
    """Seconds between consecutive requests as the server received them."""
    times = [r.received_at for r in backend.server.requests]
    return [b - a for a, b in itertools.pairwise(times)]


async def test_server_error_is_retried_then_succeeds(backend: Backend) -> None:
    backend.server.responder = lambda _req: "I suspect Bob."
    backend.server.inject(Fault.server_error(500), times=2)

    resp = await backend.client.complete(REQ)

    assert resp.text == "I suspect Bob."
    assert resp.attempts == 3
    assert len(backend.server.requests) == 3


async def test_persistent_server_error_gives_up_after_max_attempts(backend: Backend) -> None:
    backend.server.inject(Fault.server_error(503), times=10)

    with pytest.raises(LLMUnavailable) as info:
        await backend.client.complete(REQ)

    assert info.value.attempts == FAST.max_attempts
    assert info.value.status_code == 503
    assert len(backend.server.requests) == FAST.max_attempts


async def test_overloaded_529_is_retried(backend: Backend) -> None:
    backend.server.inject(Fault.server_error(529))
    resp = await backend.client.complete(REQ)
    assert resp.attempts == 2


async def test_client_error_is_not_retried(backend: Backend) -> None:
    backend.server.inject(Fault.http_error(401, "authentication_error"), times=3)

    with pytest.raises(LLMError) as info:
        await backend.client.complete(REQ)

    assert not info.value.retryable
    assert info.value.status_code == 401
    assert info.value.attempts == 1
    assert len(backend.server.requests) == 1


async def test_rate_limit_honours_retry_after_seconds(backend: Backend) -> None:
    backend.server.inject(Fault.rate_limit(retry_after=0.2))

    resp = await backend.client.complete(REQ)

    assert resp.attempts == 2
    # Plain backoff in FAST is <= 0.02 s, so only the header explains a 0.2 s wait.
    assert gaps(backend)[0] >= 0.2
    assert resp.latency_s >= 0.2


async def test_rate_limit_honours_retry_after_ms(backend: Backend) -> None:
    backend.server.inject(Fault.rate_limit(retry_after_ms=150))

    resp = await backend.client.complete(REQ)

    assert resp.attempts == 2
    assert gaps(backend)[0] >= 0.15


async def test_retry_after_is_capped(backend: Backend) -> None:
    # FAST caps server hints at 1 s: a 30 s hint must not stall the game.
    backend.server.inject(Fault.rate_limit(retry_after=30))

    resp = await backend.client.complete(REQ)

    assert resp.attempts == 2
    assert 1.0 <= gaps(backend)[0] < 5.0


async def test_persistent_rate_limit_raises_rate_limited(backend: Backend) -> None:
    backend.server.inject(Fault.rate_limit(retry_after=0.01), times=3)

    with pytest.raises(LLMRateLimited) as info:
        await backend.client.complete(REQ)

    assert info.value.retry_after_s == pytest.approx(0.01)
    assert info.value.attempts == 3


async def test_timeout_is_retried_then_succeeds(backend: Backend) -> None:
    backend.server.responder = lambda _req: "late but fine"
    backend.server.inject(Fault.timeout(delay_s=10))
    started = time.monotonic()

    resp = await backend.client.complete(REQ)

    assert resp.text == "late but fine"
    assert resp.attempts == 2
    elapsed = time.monotonic() - started
    assert FAST.timeout_s <= elapsed < FAST.timeout_s + 2


async def test_persistent_timeout_raises_after_bounded_attempts(backend: Backend) -> None:
    backend.server.inject(Fault.timeout(delay_s=10), times=3)
    started = time.monotonic()

    with pytest.raises(LLMTimeout) as info:
        await backend.client.complete(REQ)

    assert info.value.attempts == 3
    elapsed = time.monotonic() - started
    assert 3 * FAST.timeout_s <= elapsed < 3 * FAST.timeout_s + 2


async def test_waiting_does_not_block_the_event_loop(backend: Backend) -> None:
    backend.server.inject(Fault.timeout(delay_s=10))
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    try:
        await backend.client.complete(REQ)
    finally:
        task.cancel()
    # ~0.4 s of waiting: a loop blocked by the call would have ticked (almost) never.
    assert ticks >= 10


async def test_malformed_json_is_retried_once(backend: Backend) -> None:
    backend.server.responder = lambda _req: "recovered"
    backend.server.inject(Fault.malformed_json())

    resp = await backend.client.complete(REQ)

    assert resp.text == "recovered"
    assert resp.attempts == 2


async def test_malformed_json_twice_raises_bad_response(backend: Backend) -> None:
    # max_attempts is 3, but a malformed body earns only one retry.
    backend.server.inject(Fault.malformed_json(), times=3)

    with pytest.raises(LLMBadResponse) as info:
        await backend.client.complete(REQ)

    assert info.value.attempts == 2
    assert len(backend.server.requests) == 2


async def test_missing_content_is_a_bad_response_retried_once(backend: Backend) -> None:
    backend.server.inject(Fault.missing_content())
    resp = await backend.client.complete(REQ)
    assert resp.attempts == 2

    backend.server.inject(Fault.missing_content(), times=2)
    with pytest.raises(LLMBadResponse):
        await backend.client.complete(REQ)


async def test_empty_completion_is_returned_not_retried(backend: Backend) -> None:
    backend.server.inject(Fault.empty())

    resp = await backend.client.complete(REQ)

    assert resp.text == ""
    assert resp.attempts == 1
    assert resp.output_tokens == 0
    assert len(backend.server.requests) == 1


async def test_refusal_is_text_flagged_not_an_error(backend: Backend) -> None:
    backend.server.inject(Fault.refusal("I won't play this role."))

    resp = await backend.client.complete(REQ)

    assert resp.text == "I won't play this role."
    assert resp.finish_reason == "refusal"
    assert resp.attempts == 1


async def test_faults_apply_in_order_to_successive_requests(backend: Backend) -> None:
    backend.server.inject(Fault.server_error(), Fault.rate_limit(retry_after=0.01))

    resp = await backend.client.complete(REQ)

    assert resp.attempts == 3
    assert [r.fault.kind if r.fault else None for r in backend.server.requests] == [
        "server_error",
        "rate_limit",
        None,
    ]
    assert backend.server.pending_faults == 0


async def test_connection_refused_is_unavailable(backend: Backend) -> None:
    await backend.server.close()

    with pytest.raises(LLMUnavailable) as info:
        await backend.client.complete(REQ)

    assert info.value.attempts == FAST.max_attempts


# --- whether a call reached the model (`agent.llm.base.CallProgress`) ----------------------


async def followed(backend: Backend, progress: CallProgress) -> LLMError | None:
    """One call of ``backend.client`` followed by ``progress``; its error, if any."""
    token = CALL_PROGRESS.set(progress)
    try:
        await backend.client.complete(REQ)
    except LLMError as err:
        return err
    finally:
        CALL_PROGRESS.reset(token)
    return None


async def test_a_call_says_when_its_request_went_out(backend: Backend) -> None:
    """The metrics count a call only if it may have reached the model: the SDK's HTTP client
    tells the followed call once its request is written out (a failed one included)."""
    answered = CallProgress(started=True)
    assert await followed(backend, answered) is None
    assert answered.sent is True and answered.reached_server

    backend.server.inject(Fault.http_error(401, "authentication_error"))
    refused = CallProgress(started=True)
    assert isinstance(await followed(backend, refused), LLMError)
    assert refused.sent is True and refused.reached_server
    assert len(backend.server.requests) == 2


async def test_a_refused_connection_never_reached_the_model(backend: Backend) -> None:
    """Before: any failed call was counted as a model call, so the service counted more calls
    than the server ever saw (CI: 9 calls counted, 8 requests received)."""
    await backend.server.close()
    progress = CallProgress(started=True)
    assert isinstance(await followed(backend, progress), LLMUnavailable)
    assert progress.sent is False and not progress.reached_server


def test_a_call_that_never_ran_never_reached_the_model() -> None:
    assert not CallProgress().reached_server  # its task was cut short before it ran
    assert not CallProgress(started=True, held=True).reached_server  # waiting in our queue
    assert CallProgress(started=True).reached_server  # a client that does not say: counted


async def test_a_call_cut_short_at_any_moment_is_counted_exactly_when_the_server_got_it(
    backend: Backend,
) -> None:
    """The seat's call is cancelled (its game ended) after ``k`` turns of the event loop, for
    every ``k`` from before the request is built to after the answer: the call says it reached
    the model exactly when the server received it. Before: a cancel in the one turn between
    the body being written and its trace's "complete" said "never sent" although the server
    had the request (CI: 21 scheduler requests received, 20 counted)."""
    backend.server.responder = lambda _req: "I suspect Bob."
    seen: list[tuple[int, bool, bool]] = []
    for k in range(60):
        before = len(backend.server.requests)
        progress = CallProgress()

        async def run(progress: CallProgress = progress) -> None:
            progress.started = True  # as the seat's call task does
            await followed(backend, progress)

        call = asyncio.create_task(run())
        for _ in range(k):
            await asyncio.sleep(0)
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        # a call that is answered: by then the server has read whatever the cut one wrote
        assert await followed(backend, CallProgress(started=True)) is None
        got = len(backend.server.requests) - before - 1
        seen.append((k, progress.reached_server, got == 1))
        if call.done() and not call.cancelled():
            break  # answered before the cancel: every later k is the same
    assert [s for s in seen if s[1] != s[2]] == []
    assert {s[2] for s in seen} == {False, True}  # the sweep crossed the request going out
