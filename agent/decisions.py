"""What the LLM agent decided, and why: one record per model call or fallback.

Every LLM call (scheduler, generator, vote, night action) is logged with its prompt, raw
output, parsed decision and cost, so a game can be audited afterwards ("why did it vote for
Blake?") and evaluations can tell the model's choices from the heuristics that stood in for
it. A decision the model did not make (a fallback vote, a discarded draft, degrading to the
baseline) is a record too, with an empty prompt and ``fallback`` or ``kind="other"`` set, so
counts of fallbacks come from the same log as counts of calls.

``DecisionLog`` is deliberately one synchronous method: the agent must never wait on its
logging. Implementations that write somewhere slow (the database) buffer and flush off the
event loop and may offer an async ``flush()``, which :func:`flush_log` calls when present.
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

__all__ = [
    "DECISION_KINDS",
    "DecisionKind",
    "DecisionLog",
    "DecisionRecord",
    "DecisionSummary",
    "InMemoryDecisionLog",
    "flush_log",
    "summarize",
]

DecisionKind = Literal[
    "scheduler",
    "generator",
    "vote",
    "night_action",
    "reflection",
    "suspicion",
    "experience",
    "other",
]
#: "reflection" (picking questions, answering them, the phase's note), "suspicion" (the scores,
#: or the heuristic that stood in) and "experience" (suggestions from past games, lessons and
#: strategy notes after a game) come from the memory and learning steps (agent.reflection)
DECISION_KINDS: tuple[DecisionKind, ...] = (
    "scheduler",
    "generator",
    "vote",
    "night_action",
    "reflection",
    "suspicion",
    "experience",
    "other",
)


#: the start of the decision of a note for a call that failed before its request reached the
#: model (the server refused the connection, ...): no call, but a failure all the same
UNREACHED = "did not reach the model"


@dataclass(frozen=True)
class DecisionRecord:
    """One model call or one decision taken without the model.

    ``prompt`` is the request as text (system, then each message); it is empty exactly when
    no call was made. ``output`` is the model's raw text (None when the call failed).
    ``valid`` says the model's answer was usable as it stood; ``fallback`` that the decision
    was taken by the heuristic instead. ``t`` is game time.
    """

    game_id: str
    seat: int
    kind: DecisionKind
    prompt: str
    output: str | None
    decision: str | None
    fallback: bool
    valid: bool
    error: str | None
    latency_s: float
    input_tokens: int
    output_tokens: int
    cost_usd: float
    t: datetime
    model: str = ""
    #: of ``input_tokens``, those the provider served from its prompt cache
    cached_input_tokens: int = 0

    @property
    def called(self) -> bool:
        """A request was sent to a model (answered or not)."""
        return bool(self.prompt)

    @property
    def unreached(self) -> bool:
        """A call that failed before its request reached the model (not a call, as `called`
        says, but a failure: its server is down or unreachable)."""
        decision = self.decision or ""
        return not self.called and self.error is not None and decision.startswith(UNREACHED)

    @property
    def answered(self) -> bool:
        """The model answered (possibly with something unusable)."""
        return self.called and self.output is not None and self.error is None


class DecisionLog(Protocol):
    def record(self, rec: DecisionRecord) -> None: ...


class InMemoryDecisionLog:
    """Keeps records in a list: tests, benchmarks, and games without a database."""

    def __init__(self) -> None:
        self.records: list[DecisionRecord] = []

    def record(self, rec: DecisionRecord) -> None:
        self.records.append(rec)

    def for_seat(self, seat: int) -> list[DecisionRecord]:
        return [r for r in self.records if r.seat == seat]

    def summary(self, seat: int | None = None) -> DecisionSummary:
        return summarize(self.records if seat is None else self.for_seat(seat))


async def flush_log(log: DecisionLog) -> None:
    """Flush ``log`` if it buffers (it has a ``flush`` method, sync or async)."""
    flush = getattr(log, "flush", None)
    if callable(flush):
        result = flush()
        if inspect.isawaitable(result):
            await result


@dataclass(frozen=True)
class DecisionSummary:
    """Totals over a set of records.

    ``valid_rate`` = valid model answers / decisions the model answered (None when it never
    answered); fallbacks are counted apart and never as the model's choices.

    By kind of call ("scheduler", "generator", "vote", "night_action", "reflection", ...):
    ``calls_by_kind`` requests sent, ``answered_by_kind`` answered (no error),
    ``valid_by_kind`` answers usable as they stood (the model's own decisions),
    ``invalid_by_kind`` answered but unusable, ``errors_by_kind`` failed calls (error,
    time-out), ``fallbacks_by_kind`` decisions the baseline took instead (a fallback vote, the
    baseline's send/wait or line). ``latency_p50_s``/``latency_p95_s`` cover every call sent
    (wall seconds, retries included), ``latency_by_kind`` the same per kind as (p50, p95).
    """

    calls: int
    calls_by_kind: dict[str, int]
    answered: int
    valid: int
    valid_rate: float | None
    errors: int
    fallbacks: int
    fallbacks_by_kind: dict[str, int]
    discards: int
    degraded: bool
    input_tokens: int
    output_tokens: int
    cost_usd: float
    mean_latency_s: float | None
    invalid_by_kind: dict[str, int] = field(default_factory=dict)
    answered_by_kind: dict[str, int] = field(default_factory=dict)
    valid_by_kind: dict[str, int] = field(default_factory=dict)
    errors_by_kind: dict[str, int] = field(default_factory=dict)
    latency_p50_s: float | None = None
    latency_p95_s: float | None = None
    latency_by_kind: dict[str, tuple[float, float]] = field(default_factory=dict)

    def by_model(self) -> dict[str, tuple[int, int]]:
        """(decisions the model made itself, decisions) by kind, for the decisions the seat
        takes one at a time (when to talk, votes, night actions): a valid answer is the
        model's decision; a fallback (its call failed, came too late or answered unusably)
        is one it did not make."""
        out: dict[str, tuple[int, int]] = {}
        for kind in ("scheduler", "vote", "night_action"):
            made = self.valid_by_kind.get(kind, 0)
            total = made + self.fallbacks_by_kind.get(kind, 0)
            if total:
                out[kind] = (made, total)
        return out

    def lines(self) -> list[str]:
        """A short human-readable report."""
        rate = "n/a" if self.valid_rate is None else f"{self.valid_rate:.0%}"
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.calls_by_kind.items())) or "none"
        falls = ", ".join(f"{k} {n}" for k, n in sorted(self.fallbacks_by_kind.items()))
        return [
            f"LLM calls: {self.calls} ({kinds})",
            f"valid answers: {self.valid}/{self.answered} ({rate}); errors: {self.errors}",
            f"fallbacks: {self.fallbacks}" + (f" ({falls})" if falls else ""),
            "valid by kind: "
            + (
                ", ".join(
                    f"{k} {self.valid_by_kind.get(k, 0)}/{n}"
                    for k, n in sorted(self.answered_by_kind.items())
                )
                or "none"
            ),
            "decided by the model itself: "
            + (
                ", ".join(
                    f"{k} {made}/{total} ({made / total:.0%})"
                    for k, (made, total) in sorted(self.by_model().items())
                )
                or "none"
            )
            + " (a fallback counts against it)",
            "latency: "
            + (
                "n/a"
                if self.latency_p50_s is None or self.latency_p95_s is None
                else f"p50 {self.latency_p50_s:.2f} s, p95 {self.latency_p95_s:.2f} s"
            ),
            f"discarded drafts: {self.discards}; degraded: {'yes' if self.degraded else 'no'}",
            f"tokens: {self.input_tokens} in / {self.output_tokens} out; "
            f"cost ~${self.cost_usd:.4f}",
        ]


def is_discard(rec: DecisionRecord) -> bool:
    return rec.kind == "other" and (rec.decision or "").startswith("discard")


def is_degrade(rec: DecisionRecord) -> bool:
    return rec.kind == "other" and (rec.decision or "").startswith("degrade")


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (non-empty), nearest rank on the sorted values."""
    xs = sorted(values)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def summarize(records: Iterable[DecisionRecord]) -> DecisionSummary:
    calls: Counter[str] = Counter()
    fallbacks: Counter[str] = Counter()
    invalid: Counter[str] = Counter()
    answered_by: Counter[str] = Counter()
    valid_by: Counter[str] = Counter()
    errors_by: Counter[str] = Counter()
    latency_by: dict[str, list[float]] = {}
    answered = valid = errors = discards = 0
    degraded = False
    tokens_in = tokens_out = 0
    cost = 0.0
    latencies: list[float] = []
    for rec in records:
        if rec.called:
            calls[rec.kind] += 1
            tokens_in += rec.input_tokens
            tokens_out += rec.output_tokens
            cost += rec.cost_usd
            latencies.append(rec.latency_s)
            latency_by.setdefault(rec.kind, []).append(rec.latency_s)
            if rec.error is not None:
                errors += 1
                errors_by[rec.kind] += 1
            elif rec.answered:
                answered += 1
                answered_by[rec.kind] += 1
                if rec.valid:
                    valid += 1
                    valid_by[rec.kind] += 1
                else:
                    invalid[rec.kind] += 1
        if rec.fallback:
            fallbacks[rec.kind] += 1
        if is_discard(rec):
            discards += 1
        if is_degrade(rec):
            degraded = True
    return DecisionSummary(
        calls=sum(calls.values()),
        calls_by_kind=dict(calls),
        answered=answered,
        valid=valid,
        valid_rate=(valid / answered) if answered else None,
        errors=errors,
        fallbacks=sum(fallbacks.values()),
        fallbacks_by_kind=dict(fallbacks),
        discards=discards,
        degraded=degraded,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost_usd=cost,
        mean_latency_s=(sum(latencies) / len(latencies)) if latencies else None,
        invalid_by_kind=dict(invalid),
        answered_by_kind=dict(answered_by),
        valid_by_kind=dict(valid_by),
        errors_by_kind=dict(errors_by),
        latency_p50_s=quantile(latencies, 0.5) if latencies else None,
        latency_p95_s=quantile(latencies, 0.95) if latencies else None,
        latency_by_kind={
            k: (quantile(xs, 0.5), quantile(xs, 0.95)) for k, xs in latency_by.items()
        },
    )
