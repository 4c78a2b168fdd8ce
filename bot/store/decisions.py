"""The LLM agent's decision log in the database (`llm_calls` rows).

`DBDecisionLog.record` only appends to a buffer and, if no write is pending, hands one to a
private single-thread executor, so an agent never waits on the database: records that arrive
while a write runs are written together by the next one. `flush()` (async, awaited by each
agent when its game ends) and `close()` write out whatever is buffered, so nothing is lost
when a game finishes or the bot stops.

A batch is written in one transaction; if that fails (e.g. a record for a game row that does
not exist), the rows are retried one by one so one bad record cannot take its batch with it;
a row that still fails is logged and dropped.

`spent_on` reads a day's calls back for the operator's daily spend caps
(`agent.llm.spend.DailySpend`), so a restarted bot goes on counting the day where it was.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, date, datetime, time, timedelta

import sqlalchemy as sa
from sqlmodel import Session, col, select

from agent.decisions import DECISION_KINDS, DecisionRecord, DecisionSummary, summarize
from agent.llm.spend import StoredCall
from bot.store.db import session_scope
from bot.store.models import Game, LLMCall

__all__ = ["DBDecisionLog", "records_for_game", "spent_on", "summary_for_game"]

log = logging.getLogger(__name__)


def to_row(rec: DecisionRecord) -> LLMCall:
    return LLMCall(
        game_id=rec.game_id,
        seat_index=rec.seat,
        kind=rec.kind,
        model=rec.model or None,
        prompt=rec.prompt,
        output=rec.output,
        decision=rec.decision,
        fallback=rec.fallback,
        valid=rec.valid,
        error=rec.error,
        latency_s=rec.latency_s,
        input_tokens=rec.input_tokens,
        output_tokens=rec.output_tokens,
        cached_input_tokens=rec.cached_input_tokens,
        cost_usd=rec.cost_usd,
        t=rec.t,
    )


def from_row(row: LLMCall) -> DecisionRecord:
    kind = row.kind if row.kind in DECISION_KINDS else "other"
    return DecisionRecord(
        game_id=row.game_id,
        seat=row.seat_index,
        kind=kind,
        prompt=row.prompt,
        output=row.output,
        decision=row.decision,
        fallback=row.fallback,
        valid=row.valid,
        error=row.error,
        latency_s=row.latency_s,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        cost_usd=row.cost_usd,
        t=row.t,
        model=row.model or "",
        cached_input_tokens=row.cached_input_tokens,
    )


class DBDecisionLog:
    """A `agent.decisions.DecisionLog` writing `llm_calls` rows off the event loop."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self._buffer: list[DecisionRecord] = []
        self._lock = threading.Lock()
        self._pending: Future[None] | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mafiabot-llmlog")
        self._closed = False
        self.written = 0
        self.dropped = 0

    def record(self, rec: DecisionRecord) -> None:
        with self._lock:
            closed = self._closed
            if not closed:
                self._buffer.append(rec)
                if self._pending is None:
                    self._pending = self._executor.submit(self._drain)
        if closed:  # a straggler after shutdown: write it now rather than lose it
            log.warning("decision recorded after the log was closed; writing it synchronously")
            self._write([rec])

    def _drain(self) -> None:
        with self._lock:
            batch, self._buffer = self._buffer, []
            self._pending = None
        if batch:
            self._write(batch)

    def _write(self, batch: list[DecisionRecord]) -> None:
        try:
            with session_scope(self.engine) as session:
                session.add_all(to_row(r) for r in batch)
            self.written += len(batch)
            return
        except Exception:
            if len(batch) == 1:
                self.dropped += 1
                log.exception("could not store a decision record for game %s", batch[0].game_id)
                return
        for rec in batch:  # find the bad ones; keep the rest
            self._write([rec])

    async def flush(self) -> None:
        """Write everything recorded so far (awaitable; the writing happens in a thread)."""
        if self._closed:
            return
        await asyncio.wrap_future(self._executor.submit(self._drain))

    def close(self) -> None:
        """Write out the buffer and stop the writer thread (blocking)."""
        if self._closed:
            return
        with self._lock:
            self._closed = True
        self._executor.submit(self._drain)
        self._executor.shutdown(wait=True)

    async def aclose(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    def spent_on(self, day: date) -> list[StoredCall]:
        """The calls stored for ``day`` (see `spent_on`)."""
        return spent_on(self.engine, day)


#: how long after its game's end a call may still come (the end-of-game debriefs)
AFTER_END = timedelta(hours=1)


def spent_on(engine: sa.Engine, day: date) -> list[StoredCall]:
    """The calls recorded on ``day`` (UTC; by the call's time ``t``, which is the wall clock
    for games at real speed) that spent tokens or name an error, with their game's server.

    Only the calls of games not over before the day (less `AFTER_END`) are read, through the
    index on ``llm_calls.game_id``: a day's reading costs that day's games, not the table."""
    start = datetime.combine(day, time.min, UTC)
    recent = select(Game.id).where(
        sa.or_(col(Game.ended_at).is_(None), col(Game.ended_at) >= start - AFTER_END)
    )
    query = (
        sa.select(
            col(Game.server_id),
            col(LLMCall.model),
            col(LLMCall.input_tokens),
            col(LLMCall.output_tokens),
            col(LLMCall.cached_input_tokens),
            col(LLMCall.cost_usd),
            col(LLMCall.error),
        )
        .join(Game, col(Game.id) == col(LLMCall.game_id))
        .where(
            col(LLMCall.game_id).in_(recent),
            col(LLMCall.t) >= start,
            col(LLMCall.t) < start + timedelta(days=1),
            sa.or_(
                col(LLMCall.input_tokens) + col(LLMCall.output_tokens) > 0,
                col(LLMCall.error).is_not(None),
            ),
        )
    )
    with Session(engine) as session:
        return [
            StoredCall(
                server=None if server is None else str(server),
                model=model or "",
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                cached_input_tokens=cached,
                cost_usd=cost,
                error=error,
            )
            for server, model, tokens_in, tokens_out, cached, cost, error in session.execute(query)
        ]


def records_for_game(
    engine: sa.Engine, game_id: str, seat: int | None = None
) -> list[DecisionRecord]:
    """Every stored record of a game (one seat's, if given), in the order written."""
    with Session(engine) as session:
        query = select(LLMCall).where(LLMCall.game_id == game_id)
        if seat is not None:
            query = query.where(LLMCall.seat_index == seat)
        rows: Iterable[LLMCall] = session.exec(query.order_by(col(LLMCall.id))).all()
        return [from_row(r) for r in rows]


def summary_for_game(engine: sa.Engine, game_id: str, seat: int | None = None) -> DecisionSummary:
    """Calls by kind, tokens, cost, valid-answer rate and fallbacks for a stored game."""
    return summarize(records_for_game(engine, game_id, seat))
