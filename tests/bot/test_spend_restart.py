"""The operator's daily spend caps outlive a restart: the day's count starts from the calls the
store recorded that day (`bot.store.decisions.spent_on`), so a crash-looping or redeployed bot
cannot spend its cap once per start; and a cap whose refusal the store recorded was reported
already, so its host is not told again."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

import bot.service.port
from agent.llm import LLMResponse
from agent.llm.spend import SpendLimits
from bot.seats.llm_agents import LLMAgentConfig, LLMClients, llm_player_factory
from bot.service.clock import GameClock
from bot.store import models as m
from bot.store.decisions import DBDecisionLog, records_for_game, spent_on
from tests.bot.test_llm_agents import PLAYER, Table, play

DAY = date(2026, 3, 1)
NOON = datetime(2026, 3, 1, 12, tzinfo=UTC)


class Model:
    """A local model: 100 prompt and 5 answer tokens a call; ``sent`` counts the calls."""

    name = "local"

    def __init__(self) -> None:
        self.table = Table()
        self.sent: list[str] = []

    async def complete(self, req: Any) -> Any:
        self.sent.append(req.kind)
        text = self.table(
            {"system": req.system, "messages": [{"role": r, "content": c} for r, c in req.messages]}
        )
        return LLMResponse(text, "local", 100, 5, 0, 0.0, "stop", 1, 0.0)


async def test_a_spent_cap_stays_spent_after_a_restart(
    engine: Engine, scheduler: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server's cap is spent in a first process's game (its host told once); the process
    restarts (a new factory, decision log and service on the same database): its next game
    sends no call, every seat plays it out as the baseline, and the host is not told again."""
    # the games' time (what `llm_calls.t` records) and the caps' day are one fixed day, so the
    # test does not depend on the hour it runs at
    monkeypatch.setattr("agent.llm.spend._utc_today", lambda: DAY)
    monkeypatch.setattr(bot.service.port, "GameClock", lambda speed: GameClock(speed, NOON))
    config = LLMAgentConfig(
        llm="local:x", spend_limits=SpendLimits(server_tokens=300), player=PLAYER
    )

    async def run_process() -> tuple[str, Model, list[str], int]:
        model = Model()
        decisions = DBDecisionLog(engine)
        factory = llm_player_factory(config, decisions, clients=LLMClients(model, model))
        told: list[str] = []
        factory.alert = lambda game, message: told.append(message)
        try:
            played = await play(engine, scheduler, factory)
        finally:
            await decisions.aclose()
        assert played.refused == []
        assert played.history[-1]["kind"] == "game_over"
        assert factory.spend is not None
        server = str(played.service.games[played.game_id].server_id)
        return played.game_id, model, told, factory.spend.spent(server)[0]

    first, model, told, spent = await run_process()
    assert 3 <= len(model.sent) <= 3 + 7  # the calls in flight when the cap was reached finish
    assert spent == 105 * len(model.sent)
    assert len(told) == 1 and "this server's daily cap of 300 tokens" in told[0]

    second, model, told, spent_after = await run_process()
    assert model.sent == []  # nothing sent: the cap was spent before the restart
    assert spent_after == spent
    assert told == []  # told once today, before the restart
    records = records_for_game(engine, second)
    degraded = [r for r in records if (r.decision or "").startswith("degraded")]
    assert {r.seat for r in degraded} == set(range(7))  # every seat played on as the baseline
    refusals = [r for r in records if "daily cap of 300 tokens" in (r.error or "")]
    assert refusals and all(not r.called for r in refusals)
    assert records_for_game(engine, first)  # the first game's calls are still there


def test_the_days_calls_are_read_with_their_games_server(engine: Engine) -> None:
    """`spent_on` reads a day's calls that spent tokens or were refused, each with its game's
    server, and nothing of another day, of a call that spent nothing, or of a game long over."""
    with Session(engine) as session:
        guild = m.Server(platform="discord", external_id="g1")
        session.add(guild)
        session.flush()
        assert guild.id is not None
        g = str(guild.id)

        def game(gid: str, server: int | None, ended: datetime | None = None) -> None:
            session.add(m.Game(id=gid, server_id=server, seed=1, ended_at=ended))

        game("on", guild.id)
        game("local", None, ended=NOON + timedelta(hours=1))
        game("late", guild.id, ended=NOON - timedelta(hours=12, minutes=30))  # debriefs after
        game("old", guild.id, ended=NOON - timedelta(days=3))
        session.flush()

        def call(gid: str, t: datetime, tokens: int = 10, error: str | None = None) -> None:
            session.add(
                m.LLMCall(
                    game_id=gid, seat_index=0, kind="generator", model="gpt-4o-mini",
                    input_tokens=tokens, output_tokens=tokens and 1, cached_input_tokens=2,
                    cost_usd=0.5, error=error, t=t,
                )
            )  # fmt: skip

        call("on", NOON)
        call("on", NOON - timedelta(hours=12, seconds=1))  # the day before
        call("on", NOON + timedelta(hours=12))  # the day after
        call("on", NOON, tokens=0)  # a baseline decision: nothing spent
        call("on", NOON, tokens=0, error="LLMBudgetExceeded: ... (vote call not sent)")
        call("local", NOON, tokens=20)
        call("late", NOON - timedelta(hours=11, minutes=59))
        call("old", NOON)  # a game over for days: not read
        session.commit()

    calls = spent_on(engine, DAY)
    by = sorted((c.server or "", c.input_tokens, c.output_tokens, c.error or "") for c in calls)
    assert by == [
        ("", 20, 1, ""),
        (g, 0, 0, "LLMBudgetExceeded: ... (vote call not sent)"),
        (g, 10, 1, ""),
        (g, 10, 1, ""),
    ]
    assert {(c.model, c.cached_input_tokens, c.cost_usd) for c in calls if c.input_tokens} == {
        ("gpt-4o-mini", 2, 0.5)
    }
    assert spent_on(engine, DAY - timedelta(days=5)) == []


def test_the_bot_reads_the_day_from_the_log_it_records_to(engine: Engine) -> None:
    """The runtime records through a metering wrapper: the day is still read from the store
    beneath it; a log that stores nothing gives no history (the count is the process's)."""
    from agent.decisions import InMemoryDecisionLog
    from bot.ops.metrics import MeteredDecisionLog, Metrics
    from bot.seats.llm_agents import stored_spend

    stored = DBDecisionLog(engine)
    try:
        history = stored_spend(MeteredDecisionLog(stored, Metrics()))
        assert history is not None and list(history(DAY)) == []
    finally:
        stored.close()
    assert stored_spend(InMemoryDecisionLog()) is None
