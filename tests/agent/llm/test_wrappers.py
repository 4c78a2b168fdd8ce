"""FallbackClient, TokenBudget and BudgetedClient."""

from __future__ import annotations

import pytest

from agent.llm.anthropic_backend import AnthropicClient
from agent.llm.base import (
    LLMBudgetExceeded,
    LLMClient,
    LLMError,
    LLMRequest,
    LLMResponse,
    LLMTimeout,
    LLMUnavailable,
    aclose_client,
)
from agent.llm.openai_backend import OpenAIClient
from agent.llm.queue import LLMSkipped
from agent.llm.wrappers import BudgetedClient, FallbackClient, TokenBudget
from tests.agent.llm.conftest import FAST
from tests.fakes.llm_servers import FakeAnthropicServer, FakeOpenAIServer, Fault

REQ = LLMRequest(system="rules", messages=[("user", "go")], kind="vote")


class Stub:
    """A scripted LLMClient: raises queued errors, else answers with fixed usage."""

    def __init__(self, name: str, *errors: LLMError, tokens: tuple[int, int] = (100, 20)) -> None:
        self.name = name
        self.errors = list(errors)
        self.tokens = tokens
        self.calls = 0

    async def complete(self, req: LLMRequest) -> LLMResponse:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return LLMResponse(
            text=f"from {self.name}",
            model=self.name,
            input_tokens=self.tokens[0],
            output_tokens=self.tokens[1],
            cached_input_tokens=0,
            latency_s=0.0,
            finish_reason="stop",
            attempts=1,
            cost_usd=0.001,
            backend=self.name,
        )


def test_stub_satisfies_protocol() -> None:
    assert isinstance(Stub("s"), LLMClient)


# -- FallbackClient ---------------------------------------------------------------------


async def test_fallback_unused_when_primary_succeeds() -> None:
    primary, backup = Stub("p"), Stub("b")
    client = FallbackClient(primary, backup)

    resp = await client.complete(REQ)

    assert resp.text == "from p"
    assert backup.calls == 0
    assert client.fallbacks == 0


async def test_fallback_used_after_primary_error() -> None:
    primary = Stub("p", LLMUnavailable("down", attempts=3))
    backup = Stub("b")
    client = FallbackClient(primary, backup)

    resp = await client.complete(REQ)

    assert resp.text == "from b"
    assert resp.attempts == 4  # 3 lost on the primary + 1
    assert client.fallbacks == 1
    assert client.name == "p>b"


async def test_both_failing_raises_backup_error_chained() -> None:
    primary_err = LLMUnavailable("primary down", attempts=3)
    client = FallbackClient(Stub("p", primary_err), Stub("b", LLMTimeout("slow", attempts=2)))

    with pytest.raises(LLMTimeout) as info:
        await client.complete(REQ)

    assert info.value.__cause__ is primary_err
    assert info.value.attempts == 5


async def test_budget_exhaustion_is_not_rerouted() -> None:
    backup = Stub("b")
    client = FallbackClient(Stub("p", LLMBudgetExceeded("spent")), backup)

    with pytest.raises(LLMBudgetExceeded):
        await client.complete(REQ)

    assert backup.calls == 0


async def test_a_skipped_background_request_is_not_sent_to_the_backup() -> None:
    """The request queue skipped it (it could not come back in time without delaying the game's
    own calls): the backup model must not be asked instead (the skip would be undone)."""
    backup = Stub("b")
    client = FallbackClient(Stub("p", LLMSkipped("no time left in the phase")), backup)

    with pytest.raises(LLMSkipped):
        await client.complete(REQ)

    assert backup.calls == 0 and client.fallbacks == 0


async def test_fallback_between_real_backends(
    fake_anthropic: FakeAnthropicServer,
    fake_openai: FakeOpenAIServer,
    anthropic_client: AnthropicClient,
    openai_client: OpenAIClient,
) -> None:
    fake_anthropic.inject(Fault.server_error(), times=FAST.max_attempts)
    fake_openai.responder = lambda _req: "backup says hi"
    client = FallbackClient(anthropic_client, openai_client)

    resp = await client.complete(REQ)

    assert resp.text == "backup says hi"
    assert resp.backend == openai_client.name
    assert resp.attempts == FAST.max_attempts + 1
    assert len(fake_anthropic.requests) == FAST.max_attempts
    assert len(fake_openai.requests) == 1


class Closable(Stub):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.closed = 0

    async def aclose(self) -> None:
        self.closed += 1


async def test_wrappers_close_what_they_wrap() -> None:
    primary, backup, cheaper = Closable("p"), Closable("b"), Closable("c")
    client = BudgetedClient(FallbackClient(primary, backup), TokenBudget(10), cheaper=cheaper)

    await aclose_client(client)
    await aclose_client(Stub("no-aclose"))  # clients without aclose are fine

    assert (primary.closed, backup.closed, cheaper.closed) == (1, 1, 1)


# -- TokenBudget / BudgetedClient -------------------------------------------------------


def test_budget_accounting() -> None:
    budget = TokenBudget(1000)
    assert (budget.spent, budget.remaining, budget.exhausted) == (0, 1000, False)

    budget.charge(400, 0.01)
    budget.charge(600, 0.02)

    assert (budget.spent, budget.remaining, budget.exhausted) == (1000, 0, True)
    assert budget.spent_usd == pytest.approx(0.03)
    assert budget.calls == 2


def test_budget_validation() -> None:
    with pytest.raises(ValueError):
        TokenBudget(0)
    with pytest.raises(ValueError):
        TokenBudget(10).charge(-1)


async def test_budgeted_client_charges_then_raises_when_spent() -> None:
    budget = TokenBudget(250)
    inner = Stub("p", tokens=(100, 20))
    client = BudgetedClient(inner, budget)

    await client.complete(REQ)
    await client.complete(REQ)
    assert budget.spent == 240 and not budget.exhausted
    await client.complete(REQ)  # allowed to start under the limit, overshoots it
    assert budget.exhausted

    with pytest.raises(LLMBudgetExceeded, match="vote"):
        await client.complete(REQ)
    assert inner.calls == 3


async def test_budgeted_client_routes_to_cheaper_when_spent() -> None:
    budget = TokenBudget(100)
    inner, cheaper = Stub("big", tokens=(90, 20)), Stub("small", tokens=(10, 5))
    client = BudgetedClient(inner, budget, cheaper=cheaper)

    first = await client.complete(REQ)
    second = await client.complete(REQ)

    assert first.text == "from big"
    assert second.text == "from small"
    assert (inner.calls, cheaper.calls) == (1, 1)
    assert budget.spent == 110 + 15  # cheaper calls are recorded too


async def test_budget_is_shared_across_clients_of_a_game() -> None:
    budget = TokenBudget(200)
    scheduler = BudgetedClient(Stub("a", tokens=(100, 50)), budget)
    generator = BudgetedClient(Stub("b", tokens=(40, 10)), budget)

    await scheduler.complete(REQ)
    await generator.complete(REQ)

    assert budget.exhausted
    with pytest.raises(LLMBudgetExceeded):
        await scheduler.complete(REQ)


async def test_failed_calls_are_not_charged() -> None:
    budget = TokenBudget(100)
    client = BudgetedClient(Stub("p", LLMUnavailable("down")), budget)

    with pytest.raises(LLMUnavailable):
        await client.complete(REQ)

    assert budget.spent == 0


async def test_budget_with_real_backend_counts_reported_usage(
    fake_openai: FakeOpenAIServer, openai_client: OpenAIClient
) -> None:
    fake_openai.responder = lambda _req: "one two three"
    budget = TokenBudget(10)
    client = BudgetedClient(openai_client, budget)

    resp = await client.complete(REQ)

    assert budget.spent == resp.total_tokens == 2 + 3  # "rules" + "go", three words out
    await client.complete(REQ)
    assert budget.exhausted
    with pytest.raises(LLMBudgetExceeded):
        await client.complete(REQ)
    assert len(fake_openai.requests) == 2
