"""Composable `LLMClient` wrappers: provider fallback and a per-game token budget.

Both are plain `LLMClient`s, so they stack: e.g.
`BudgetedClient(FallbackClient(sonnet, gpt4o), budget, cheaper=haiku)`.
"""

from __future__ import annotations

import dataclasses
import logging
import time

from agent.llm.base import (
    LLMBudgetExceeded,
    LLMClient,
    LLMError,
    LLMRequest,
    LLMResponse,
    aclose_client,
)
from agent.llm.queue import LLMSkipped

log = logging.getLogger(__name__)


class FallbackClient:
    """Use `backup` when `primary` fails (after its own retries).

    A spent budget is not a provider failure, so `LLMBudgetExceeded` is not rerouted: that
    would silently bypass the budget.  When both fail, the backup's error is raised,
    chained to the primary's.  The response's `attempts` and `latency_s` include the time
    lost on the primary, since that is what the game experienced.
    """

    def __init__(self, primary: LLMClient, backup: LLMClient) -> None:
        self.primary = primary
        self.backup = backup
        self.name = f"{primary.name}>{backup.name}"
        self.fallbacks = 0

    async def complete(self, req: LLMRequest) -> LLMResponse:
        started = time.monotonic()
        try:
            return await self.primary.complete(req)
        except (LLMBudgetExceeded, LLMSkipped):
            raise  # (spent, or skipped by the request queue: not the backup's to answer)
        except LLMError as primary_err:
            self.fallbacks += 1
            log.warning(
                "%s failed for %s (%s: %s); falling back to %s",
                self.primary.name,
                req.kind,
                type(primary_err).__name__,
                primary_err.message,
                self.backup.name,
            )
            try:
                resp = await self.backup.complete(req)
            except LLMError as backup_err:
                backup_err.attempts += primary_err.attempts
                raise backup_err from primary_err
            return dataclasses.replace(
                resp,
                attempts=resp.attempts + primary_err.attempts,
                latency_s=time.monotonic() - started,
            )

    async def aclose(self) -> None:
        await aclose_client(self.primary)
        await aclose_client(self.backup)


class TokenBudget:
    """Total tokens (input + output) one game may spend, shared by all its clients.

    Checked before each call and charged after it, so concurrent calls can overshoot the
    limit by at most their own size; good enough for a cost guard, and it never blocks.
    """

    def __init__(self, limit: int) -> None:
        if limit <= 0:
            raise ValueError(f"token budget limit must be positive, got {limit}")
        self.limit = limit
        self._spent = 0
        self._spent_usd = 0.0
        self.calls = 0

    @property
    def spent(self) -> int:
        return self._spent

    @property
    def spent_usd(self) -> float:
        return self._spent_usd

    @property
    def remaining(self) -> int:
        return max(self.limit - self._spent, 0)

    @property
    def exhausted(self) -> bool:
        return self._spent >= self.limit

    def charge(self, tokens: int, cost_usd: float = 0.0) -> None:
        if tokens < 0:
            raise ValueError(f"cannot charge a negative token count ({tokens})")
        self._spent += tokens
        self._spent_usd += max(cost_usd, 0.0)
        self.calls += 1

    def __repr__(self) -> str:
        return f"TokenBudget(spent={self._spent}, limit={self.limit})"


class BudgetedClient:
    """Charge every response to `budget`; once it is spent, route to `cheaper` if given,
    else raise `LLMBudgetExceeded` so the agent degrades to its offline baseline.

    Calls served by `cheaper` are charged too (the budget records what the game really
    used) but are not limited by it; wrap `cheaper` in its own `BudgetedClient` for a hard
    ceiling.
    """

    def __init__(
        self, inner: LLMClient, budget: TokenBudget, cheaper: LLMClient | None = None
    ) -> None:
        self.inner = inner
        self.budget = budget
        self.cheaper = cheaper
        self.name = inner.name

    async def complete(self, req: LLMRequest) -> LLMResponse:
        if not self.budget.exhausted:
            client = self.inner
        elif self.cheaper is not None:
            client = self.cheaper
        else:
            raise LLMBudgetExceeded(
                f"token budget spent: {self.budget.spent} of {self.budget.limit} tokens "
                f"({req.kind} call not sent)"
            )
        resp = await client.complete(req)
        self.budget.charge(resp.total_tokens, resp.cost_usd)
        return resp

    async def aclose(self) -> None:
        await aclose_client(self.inner)
        if self.cheaper is not None:
            await aclose_client(self.cheaper)
