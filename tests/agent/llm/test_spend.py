"""The operator's daily spend caps: per server and per process, in tokens or dollars, checked
before a call, reported once a day, reset at the day's turn."""

from __future__ import annotations

from datetime import date

import pytest

from agent.llm.base import LLMBudgetExceeded, LLMRequest, LLMResponse
from agent.llm.spend import (
    CappedClient,
    DailySpend,
    SpendLimits,
    StoredCall,
    parse_prices,
    price_usd,
    refusal_of,
)

REQ = LLMRequest(system="s", messages=[("user", "hi")], kind="scheduler")


class Counting:
    """A model that answers every call with ``tokens`` prompt tokens at ``usd``."""

    name = "stub:m"

    def __init__(self, tokens: int = 100, usd: float = 0.0, model: str = "gpt-4o-mini") -> None:
        self.tokens = tokens
        self.usd = usd
        self.model = model
        self.calls = 0

    async def complete(self, req: LLMRequest) -> LLMResponse:
        self.calls += 1
        return LLMResponse(
            text="<wait>",
            model=self.model,
            input_tokens=self.tokens,
            output_tokens=0,
            cached_input_tokens=0,
            latency_s=0.0,
            finish_reason="stop",
            attempts=1,
            cost_usd=self.usd,
        )


class Day:
    def __init__(self) -> None:
        self.day = date(2026, 3, 1)

    def __call__(self) -> date:
        return self.day


async def test_a_server_over_its_token_cap_sends_nothing_and_is_reported_once() -> None:
    day = Day()
    spend = DailySpend(SpendLimits(server_tokens=250), today=day)
    told: list[str] = []
    model = Counting(tokens=100)
    a1 = CappedClient(model, spend, "s1", told.append)
    a2 = CappedClient(model, spend, "s1", told.append)  # another seat of the same server
    other = CappedClient(model, spend, "s2", told.append)
    for _ in range(3):
        await a1.complete(REQ)  # 0, 100, 200 spent before each: all may go (300 after)
    with pytest.raises(LLMBudgetExceeded):
        await a1.complete(REQ)
    with pytest.raises(LLMBudgetExceeded):
        await a2.complete(REQ)
    assert model.calls == 3  # refused before a request was sent
    assert len(told) == 1 and "this server's daily cap of 250 tokens" in told[0]
    await other.complete(REQ)  # another server is not held back
    assert model.calls == 4
    assert spend.spent("s1") == (300, 0.0) and spend.spent() == (400, 0.0)

    day.day = date(2026, 3, 2)  # a new day: the count starts again
    await a1.complete(REQ)
    assert model.calls == 5 and spend.spent("s1") == (100, 0.0)
    for _ in range(2):
        await a1.complete(REQ)
    with pytest.raises(LLMBudgetExceeded):
        await a1.complete(REQ)
    assert len(told) == 2  # once a day


async def test_the_process_cap_holds_every_server_and_local_games() -> None:
    spend = DailySpend(SpendLimits(process_usd=0.01), today=Day())
    told: list[str] = []
    model = Counting(tokens=10, usd=0.006)
    s1 = CappedClient(model, spend, "s1", told.append)
    local = CappedClient(model, spend, None, told.append)
    await s1.complete(REQ)
    await local.complete(REQ)
    for client in (s1, local):
        with pytest.raises(LLMBudgetExceeded, match=r"the bot's daily cap of \$0.01"):
            await client.complete(REQ)
    assert model.calls == 2 and len(told) == 1


async def test_dollars_use_the_operators_prices_else_the_backends_estimate() -> None:
    prices = parse_prices("gpt-4o-mini=1/2/0.5, local=0.5/0.5")
    resp = await Counting(tokens=1_000_000, usd=99.0, model="gpt-4o-mini-2024-07-18").complete(REQ)
    assert price_usd(resp, prices) == pytest.approx(1.0)  # the operator's, not the backend's
    unknown = await Counting(tokens=1_000_000, usd=0.25, model="claude-haiku-4-5").complete(REQ)
    assert price_usd(unknown, prices) == pytest.approx(0.25)
    assert prices["local"].cached_input_per_mtok == 0.5  # cached costs what input does


@pytest.mark.parametrize("bad", ["gpt", "gpt=1", "gpt=a/b", "=1/2", "gpt=1/2/3/4", "gpt=-1/2"])
def test_bad_prices_are_refused_with_the_entry_named(bad: str) -> None:
    with pytest.raises(ValueError, match="bad price"):
        parse_prices(f"ok=1/2, {bad}")


def test_no_cap_set_is_no_cap() -> None:
    assert not SpendLimits().any
    assert SpendLimits(process_tokens=1).any
    with pytest.raises(ValueError):
        SpendLimits(server_usd=-1.0)


# --- what the store recorded: a restart goes on counting the day -------------------------------


class Stored:
    """The store's calls by day (what the bot reads from its database)."""

    def __init__(self, **days: list[StoredCall]) -> None:
        self.days = {date.fromisoformat(d.removeprefix("d")): calls for d, calls in days.items()}
        self.asked: list[date] = []

    def __call__(self, day: date) -> list[StoredCall]:
        self.asked.append(day)
        return self.days.get(day, [])


async def refusal_error(spend: DailySpend, server: str | None) -> str:
    """The error a seat records for a call refused by ``spend`` (as `agent.llm_seat` words it)."""
    with pytest.raises(LLMBudgetExceeded) as refused:
        await CappedClient(Counting(), spend, server).complete(REQ)
    return f"{type(refused.value).__name__}: {refused.value.message}"


async def test_a_restart_counts_what_the_store_recorded_that_day() -> None:
    """The day's calls the store holds count from the start: a cap spent before a restart is
    spent after it (nothing is sent), and the operator, not told before, is told once."""
    day = Day()
    stored = Stored(
        d20260301=[StoredCall("s1", "m", 150, 10), StoredCall("s1", "m", 90, 10)],
        d20260228=[StoredCall("s1", "m", 10_000, 0)],  # another day's: not counted
    )
    spend = DailySpend(
        SpendLimits(server_tokens=250, process_tokens=1_000), today=day, history=stored
    )
    assert spend.spent("s1") == (260, 0.0) and spend.spent() == (260, 0.0)
    assert stored.asked == [date(2026, 3, 1)]
    told: list[str] = []
    model = Counting(tokens=100)
    with pytest.raises(LLMBudgetExceeded):
        await CappedClient(model, spend, "s1", told.append).complete(REQ)
    await CappedClient(model, spend, "s2", told.append).complete(REQ)  # another server may
    assert model.calls == 1 and len(told) == 1 and "250 tokens" in told[0]
    assert spend.spent() == (360, 0.0)

    day.day = date(2026, 3, 2)  # the day's turn reads the new day (nothing yet)
    await CappedClient(model, spend, "s1", told.append).complete(REQ)
    assert stored.asked[-1] == date(2026, 3, 2) and spend.spent("s1") == (100, 0.0)


async def test_a_refusal_the_store_recorded_was_reported_already() -> None:
    """The first refusal of the day was reported before the restart (its record says which
    cap): not again after it, for that cap; another cap, or the same one at another figure
    (the operator changed it), is still reported once."""
    before = DailySpend(SpendLimits(server_tokens=100, process_tokens=300), today=Day())
    await CappedClient(Counting(tokens=100), before, "s1").complete(REQ)
    server_refusal = await refusal_error(before, "s1")
    assert refusal_of(server_refusal, "s1") == (
        "this server's daily cap of 100 tokens is spent",
        "s1",
    )
    assert refusal_of("LLMTimeout: no answer in 20 s", "s1") is None
    calls = [StoredCall("s1", "m", 100, 0), StoredCall("s1", error=server_refusal)]
    spend = DailySpend(
        SpendLimits(server_tokens=100, process_tokens=200), today=Day(), history=lambda d: calls
    )
    told: list[str] = []
    model = Counting(tokens=100)
    for _ in range(2):
        with pytest.raises(LLMBudgetExceeded):
            await CappedClient(model, spend, "s1", told.append).complete(REQ)
    assert told == []  # told before the restart
    await CappedClient(model, spend, "s2", told.append).complete(REQ)  # another server may
    with pytest.raises(LLMBudgetExceeded, match="the bot's daily cap"):
        await CappedClient(model, spend, "s3", told.append).complete(REQ)
    assert len(told) == 1 and "the bot's daily cap of 200 tokens" in told[0]

    raised = DailySpend(SpendLimits(server_tokens=50), today=Day(), history=lambda d: calls)
    told.clear()
    with pytest.raises(LLMBudgetExceeded):
        await CappedClient(model, raised, "s1", told.append).complete(REQ)
    assert len(told) == 1 and "50 tokens" in told[0]


async def test_dollars_read_back_at_the_operators_prices() -> None:
    calls = [StoredCall("s1", "gpt-4o-mini", 1_000_000, 0, cost_usd=9.0)]
    spend = DailySpend(
        SpendLimits(server_usd=5.0), parse_prices("gpt-4o-mini=1/2"), history=lambda d: calls
    )
    tokens, usd = spend.spent("s1")
    assert tokens == 1_000_000 and usd == pytest.approx(1.0)  # not the backend's $9


async def test_a_store_that_cannot_be_read_counts_the_day_from_zero(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(day: date) -> list[StoredCall]:
        raise OSError("database is locked")

    spend = DailySpend(SpendLimits(server_tokens=250), today=Day(), history=broken)
    await CappedClient(Counting(), spend, "s1").complete(REQ)
    assert spend.spent("s1") == (100, 0.0)
    assert "could not read 2026-03-01's spending" in caplog.text
