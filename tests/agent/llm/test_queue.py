"""QueuedClient: one queue per model server, the game's calls first, on a loopback fake that
computes one request at a time (like the llama-cpp-python server)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from agent.llm.base import LLMError, LLMRequest, LLMResponse, LLMTimeout
from agent.llm.openai_backend import OpenAIClient
from agent.llm.queue import (
    LLMSkipped,
    QueuedClient,
    ServiceTimes,
    concurrency_for,
    parse_concurrency,
)
from agent.llm.retry import RetryPolicy
from tests.fakes.llm_servers import FakeOpenAIServer, SingleSlot

POLICY = RetryPolicy(max_attempts=3, timeout_s=5.0, base_delay_s=0.01, max_delay_s=0.02)


def req(kind: str, text: str, timeout_s: float | None = None) -> LLMRequest:
    return LLMRequest(system="rules", messages=[("user", text)], kind=kind, timeout_s=timeout_s)


@pytest.fixture
async def slot() -> AsyncIterator[tuple[SingleSlot, FakeOpenAIServer, OpenAIClient]]:
    single = SingleSlot(service_s=0.15)
    async with FakeOpenAIServer(single, flavour="llama-cpp-python") as server:
        client = OpenAIClient("smollm2", api_key="k", base_url=server.base_url, policy=POLICY)
        yield single, server, client
        await client.aclose()


async def started(single: SingleSlot, n: int) -> None:
    """Wait until the server began computing ``n`` requests."""
    async with asyncio.timeout(10):
        await single.started(n)


async def test_vote_goes_ahead_of_queued_background_work(
    slot: tuple[SingleSlot, FakeOpenAIServer, OpenAIClient],
) -> None:
    """Seats' reflections queued first, a vote asked after them: the server holds one request
    at a time and computes the vote right after the one it is at, not behind the others."""
    single, _server, client = slot
    queued = QueuedClient(client, 1, timeout=5.0)
    first = asyncio.create_task(queued.complete(req("reflection", "bg-0")))
    await started(single, 1)
    rest = [asyncio.create_task(queued.complete(req("suspicion", f"bg-{i}"))) for i in (1, 2, 3)]
    await asyncio.sleep(0.02)
    talk = asyncio.create_task(queued.complete(req("scheduler", "talk")))
    await asyncio.sleep(0.02)
    vote = asyncio.create_task(queued.complete(req("vote", "vote")))
    await asyncio.gather(first, *rest, talk, vote)
    assert single.most_at_once == 1
    assert single.order == ["bg-0", "vote", "talk", "bg-1", "bg-2", "bg-3"]
    assert queued.max_in_flight_seen == 1


async def test_without_the_queue_the_server_holds_every_request(
    slot: tuple[SingleSlot, FakeOpenAIServer, OpenAIClient],
) -> None:
    """What the queue prevents: sent straight through, the requests pile up in the server."""
    single, _server, client = slot
    await asyncio.gather(*(client.complete(req("reflection", f"bg-{i}")) for i in range(4)))
    assert single.most_at_once == 4


async def test_no_limit_passes_requests_straight_through(
    slot: tuple[SingleSlot, FakeOpenAIServer, OpenAIClient],
) -> None:
    single, _server, client = slot
    queued = QueuedClient(client, 0)
    await asyncio.gather(*(queued.complete(req("vote", f"v-{i}")) for i in range(3)))
    assert single.most_at_once == 3


async def test_background_call_that_cannot_come_back_in_time_is_skipped(
    slot: tuple[SingleSlot, FakeOpenAIServer, OpenAIClient],
) -> None:
    """Service times measured at ~0.15 s; with a vote in flight and one queued, a suspicion
    call whose deadline is 0.1 s away is not sent at all."""
    single, server, client = slot
    queued = QueuedClient(client, 1, timeout=5.0)
    for i in range(3):
        await queued.complete(req("suspicion", f"warm-{i}"))
    busy = [asyncio.create_task(queued.complete(req("vote", f"v-{i}"))) for i in range(2)]
    await started(single, 4)
    sent = len(server.requests)
    with pytest.raises(LLMSkipped):
        await queued.complete(req("suspicion", "late", timeout_s=0.1))
    await asyncio.gather(*busy)
    assert "late" not in single.order
    assert len(server.requests) == sent + 1  # only the queued vote went out
    # with time to spare it is sent
    resp = await queued.complete(req("suspicion", "in time", timeout_s=3.0))
    assert isinstance(resp, LLMResponse)
    assert single.order[-1] == "in time"


async def test_background_call_overtaken_while_it_waited_is_skipped_not_sent(
    slot: tuple[SingleSlot, FakeOpenAIServer, OpenAIClient],
) -> None:
    """A suspicion call with time for its answer when it arrived; votes asked after it go
    first, and by its turn its deadline is too close for an answer: it is skipped then too,
    not sent with a sliver of a timeout (the server would go on computing it, holding the
    next phase's votes back)."""
    single, _server, client = slot
    queued = QueuedClient(client, 1, timeout=5.0)
    for i in range(3):
        await queued.complete(req("suspicion", f"warm-{i}"))
    first = asyncio.create_task(queued.complete(req("vote", "v-0")))
    await started(single, 4)
    late = asyncio.create_task(queued.complete(req("suspicion", "late", timeout_s=0.5)))
    await asyncio.sleep(0.01)
    assert queued.waiting == 1  # (it was let into the queue: time enough then)
    votes = [asyncio.create_task(queued.complete(req("vote", f"v-{i}"))) for i in (1, 2, 3)]
    with pytest.raises(LLMSkipped):
        await late
    await asyncio.gather(first, *votes)
    assert "late" not in single.order
    assert single.order[-3:] == ["v-1", "v-2", "v-3"]


async def test_a_request_given_up_on_keeps_the_server_until_it_would_have_finished(
    slot: tuple[SingleSlot, FakeOpenAIServer, OpenAIClient],
) -> None:
    """The caller cancels a request in flight (its phase ended); the server keeps computing
    it, so the next request is not sent into the busy server."""
    single, _server, client = slot
    queued = QueuedClient(client, 1, timeout=5.0)
    for i in range(3):
        await queued.complete(req("generator", f"warm-{i}"))
    gone = asyncio.create_task(queued.complete(req("generator", "given up")))
    await started(single, 4)
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    single.most_at_once = 0
    await queued.complete(req("vote", "next"))
    assert single.most_at_once == 1  # "next" reached the server only once "given up" was done


async def test_attempt_timeout_comes_from_measured_service_times() -> None:
    """No fixed constant: once three answers of a kind came back in ~0.01 s, an attempt of
    that kind is given MIN_TIMEOUT_S, not the configured 20 s; a timed-out attempt on a
    one-at-a-time server is not retried (the retry would queue behind it)."""
    seen: list[LLMRequest] = []

    class Quick:
        name = "quick"

        async def complete(self, r: LLMRequest) -> LLMResponse:
            seen.append(r)
            return LLMResponse("ok", "m", 1, 1, 0, 0.01, "stop", 1, 0.0)

    queued = QueuedClient(Quick(), 1, timeout=20.0)
    for i in range(4):
        await queued.complete(req("scheduler", f"s-{i}"))
    assert [r.timeout_s for r in seen[:3]] == [None, None, None]
    assert seen[3].timeout_s == ServiceTimes.MIN_TIMEOUT_S
    assert all(r.retry_timeouts is False for r in seen)
    await queued.complete(req("vote", "v"))
    assert seen[-1].timeout_s == ServiceTimes.MIN_TIMEOUT_S  # no vote yet: every kind's times


async def test_a_timed_out_attempt_holds_the_place() -> None:
    times = ServiceTimes()
    for _ in range(3):
        times.add("vote", 1.0)
    assert times.timeout_for("vote", 20.0) == 3.0
    assert times.timeout_for("vote", 0.5) == 2.5  # at most 5x the configured one
    assert times.timeout_for("scheduler", 20.0) == 3.0  # from every kind's times
    assert ServiceTimes().timeout_for("vote", 20.0) is None

    class Hung:
        name = "hung"
        calls = 0

        async def complete(self, r: LLMRequest) -> LLMResponse:
            Hung.calls += 1
            raise LLMTimeout("no answer")

    queued = QueuedClient(Hung(), 1, timeout=20.0)
    queued.times.add("vote", 0.3)
    with pytest.raises(LLMTimeout):
        await queued.complete(req("vote", "a"))
    assert queued.in_flight == 1  # the server is taken to be still at it ...
    await asyncio.sleep(0.4)
    assert queued.in_flight == 0  # ... for the time it was expected to take


async def test_a_server_slower_than_the_timeout_gets_longer_timeouts() -> None:
    """Every answer takes longer than the configured timeout: the timed-out attempts count
    as "at least that long", and later attempts are given three times as long, so answers
    come back instead of every call timing out forever."""
    sent: list[float | None] = []

    class Slow:
        name = "slow"

        async def complete(self, r: LLMRequest) -> LLMResponse:
            sent.append(r.timeout_s)
            limit = r.timeout_s if r.timeout_s is not None else 0.05
            if limit < 0.1:
                await asyncio.sleep(limit)
                raise LLMTimeout("no answer")
            await asyncio.sleep(0.1)
            return LLMResponse("ok", "m", 1, 1, 0, 0.1, "stop", 1, 0.0)

    queued = QueuedClient(Slow(), 1, timeout=0.05)
    queued.times.MIN_TIMEOUT_S = 0.01
    for i in range(3):
        with pytest.raises(LLMTimeout):
            await queued.complete(req("scheduler", f"s-{i}"))
        await asyncio.sleep(0.1)  # the held place is given back
    resp = await queued.complete(req("scheduler", "answered"))
    assert resp.text == "ok"
    assert sent[:3] == [None, None, None]
    assert sent[3] is not None and sent[3] >= 0.14


async def test_cut_short_attempts_and_error_answers_do_not_shrink_the_measured_times() -> None:
    """An attempt that timed out after a sliver of time, and a quick error answer (HTTP 400),
    are no measure of the server's speed: the typical time stays what the answers showed."""

    class Failing:
        name = "failing"
        error: LLMError = LLMTimeout("no answer")

        async def complete(self, r: LLMRequest) -> LLMResponse:
            raise Failing.error

    queued = QueuedClient(Failing(), 0, timeout=20.0)  # (measured without a limit too)
    for _ in range(3):
        queued.times.add("vote", 1.0)
    for error in (LLMTimeout("no answer"), LLMError("bad request", status_code=400)):
        Failing.error = error
        for _ in range(5):
            with pytest.raises(LLMError):
                await queued.complete(req("vote", "v", timeout_s=0.05))
            await asyncio.sleep(0)
    assert queued.times.typical("vote") == 1.0
    assert queued.times.slow("vote") == 1.0


async def test_background_work_longer_than_the_gap_between_the_games_calls_is_skipped() -> None:
    """Five seats share a one-at-a-time server. A reflection the server takes 30 s over, in
    a phase where some seat's vote or line comes every few seconds, would hold one of those
    back (a sent request is computed to its end): it is skipped, not sent, even with time
    left in its phase. Sent when the game's calls are rare, and after the game (no phase)."""
    now = [0.0]
    sent: list[str] = []
    took = {"scheduler": 2.0, "reflect_answers": 30.0}

    class Timed:
        name = "timed"

        async def complete(self, r: LLMRequest) -> LLMResponse:
            sent.append(r.messages[-1][1])
            now[0] += took[r.kind]
            return LLMResponse("{}", "m", 1, 1, 0, took[r.kind], "stop", 1, 0.0)

    queued = QueuedClient(Timed(), 1, timeout=20.0, clock=lambda: now[0])
    for i in range(3):  # t = 0, 5, 10: a seat's call every 5 s
        now[0] = 5.0 * i
        await queued.complete(req("scheduler", f"s-{i}"))
    # unmeasured, and short next to a 20-s gap (3 calls in a minute): sent, and measured
    await queued.complete(req("reflect_answers", "r-0", timeout_s=80.0))
    assert sent[-1] == "r-0" and now[0] == 42.0
    for i in range(3, 7):  # the seats' calls again, every 2 s
        await queued.complete(req("scheduler", f"s-{i}"))
    with pytest.raises(LLMSkipped, match="delay"):
        await queued.complete(req("reflect_answers", "r-1", timeout_s=80.0))
    assert "r-1" not in sent
    # after the game (no phase to end: no deadline), nothing to delay: sent
    await queued.complete(req("reflect_answers", "r-2"))
    assert sent[-1] == "r-2"
    # a quiet minute later the game's calls are rare again: sent
    now[0] += 120.0
    await queued.complete(req("scheduler", "s-7"))
    await queued.complete(req("reflect_answers", "r-3", timeout_s=80.0))
    assert sent[-1] == "r-3"


def test_concurrency_setting() -> None:
    limits = parse_concurrency("auto, openai:qwen=4,openai:big=0")
    assert concurrency_for(limits, "openai:qwen", "http://127.0.0.1:8000/v1") == 4
    assert concurrency_for(limits, "openai:big", "http://127.0.0.1:8000/v1") == 0
    assert concurrency_for(limits, "openai:smollm2", "http://127.0.0.1:8089/v1") == 1
    assert concurrency_for(limits, "openai:gpt-4o-mini", None) == 0
    assert concurrency_for(limits, "openai:gpt-4o", "https://api.openai.com/v1") == 0
    assert concurrency_for(limits, "anthropic:claude-haiku-4-5", None) == 0
    assert concurrency_for(parse_concurrency("2"), "openai:x", None) == 2
    for bad in ("many", "-1", "=3", "openai:x=lots"):
        with pytest.raises(ValueError):
            parse_concurrency(bad)
