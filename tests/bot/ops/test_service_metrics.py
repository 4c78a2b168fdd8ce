"""/healthz and /metrics scraped over HTTP while a game of agents runs through the service."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from agent.decisions import UNREACHED, DecisionRecord, InMemoryDecisionLog
from bot.ops.health import Health, database_check
from bot.ops.http import OpsServer
from bot.ops.metrics import MeteredDecisionLog, Metrics, watch_slack_rate_limits
from bot.ops.serve import Ops, operations
from bot.runtime import running_service
from bot.service.port import GameService
from bot.settings import SettingsError
from bot.slack.app import make_client
from bot.store.decisions import summary_for_game
from games.config import GameConfig
from games.events import MessageAccepted
from tests.bot.ops.conftest import base_url, settings_in
from tests.bot.ops.scrape import healthz, metrics, value
from tests.bot.test_llm_agents import Table as LLMTable
from tests.fakes.llm_servers import FakeOpenAIServer, Fault
from tests.fakes.slack import FakeSlack

CONFIG = GameConfig(day_seconds=60, vote_seconds=20, night_seconds=20, night_vote_seconds=20)


class FirstLine:
    """A listener that says when the game's first line was committed."""

    def __init__(self) -> None:
        self.said = asyncio.Event()

    async def on_events(self, game: object, events: object) -> None:
        if any(isinstance(e, MessageAccepted) for e in events):  # type: ignore[attr-defined]
            self.said.set()


async def agents_talking(service: GameService, kind: str, *, seed: int, speed: float = 40.0) -> str:
    """A game of six ``kind`` agents at ``speed``, once its first line has been said and
    counted (the line counter is a listener too)."""
    first = FirstLine()
    service.subscribe(first)
    game_id = await service.create_game(CONFIG, seed=seed, speed=speed)
    for _ in range(6):
        await service.join(game_id, None, is_agent=True, agent_kind=kind)
    await service.start(game_id)
    await asyncio.wait_for(first.said.wait(), 30)
    await service.drain()
    return game_id


async def test_metrics_move_and_health_is_ok_during_a_game(ops: Ops) -> None:
    service, base = ops.service, base_url(ops)
    assert await healthz(base) == (200, {"status": "ok"})
    before = await metrics(base)
    assert value(before, "mafiabot_games", status="running") == 0
    assert value(before, "mafiabot_lines_total", place="stage") == 0

    game_id = await agents_talking(service, "baseline", seed=5)

    during = await metrics(base)
    assert value(during, "mafiabot_games", status="running") == 1
    assert value(during, "mafiabot_players", kind="agent") == 6
    assert value(during, "mafiabot_players", kind="human") == 0
    assert value(during, "mafiabot_lines_total", place="stage") >= 1
    assert await healthz(base) == (200, {"status": "ok"})

    await asyncio.wait_for(service.wait_finished(game_id), 60)
    await service.drain(game_id)
    after = await metrics(base)
    assert value(after, "mafiabot_games", status="running") == 0
    assert value(after, "mafiabot_games", status="finished") == 1
    assert value(after, "mafiabot_lines_total", place="stage") >= value(
        during, "mafiabot_lines_total", place="stage"
    )
    # every action was one committed transaction: at least a start and a few lines/votes
    writes = value(after, "mafiabot_db_write_seconds_count")
    assert writes > value(before, "mafiabot_db_write_seconds_count") + 5
    assert value(after, "mafiabot_db_write_seconds_sum") > 0
    assert value(after, "mafiabot_event_loop_lag_seconds_count") > 0


async def test_healthz_names_what_is_down(ops: Ops) -> None:
    base = base_url(ops)
    connected = False
    ops.health.add("discord", lambda: connected)
    assert await healthz(base) == (503, {"status": "down", "down": ["discord"]})
    connected = True
    assert await healthz(base) == (200, {"status": "ok"})
    ops.health.stopping = True
    assert await healthz(base) == (503, {"status": "down", "down": ["shutting down"]})


async def test_a_database_that_does_not_answer_is_down(tmp_path: Path) -> None:
    health = Health()
    (tmp_path / "not-a-dir").write_text("a file where the database's folder should be")
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'not-a-dir' / 'x.db'}")
    health.add("database", database_check(engine))
    assert await health.down() == ["database"]
    ok = sa.create_engine(f"sqlite:///{tmp_path / 'ok.db'}")
    assert await Health()._passes("database", database_check(ok))


def record(
    kind: str, *, prompt: str = "p", error: str | None = None, tokens: int = 0, cost: float = 0.0
) -> DecisionRecord:
    return DecisionRecord(
        game_id="g", seat=1, kind=kind, prompt=prompt, output=None if error else "x",  # type: ignore[arg-type]
        decision=None, fallback=not prompt, valid=not error, error=error, latency_s=0.1,
        input_tokens=tokens, output_tokens=tokens // 2, cost_usd=cost,
        t=datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip


def test_a_call_that_never_reached_the_model_counts_as_an_error_not_a_call() -> None:
    """The model's server refused the connection: no request, no call, no tokens; but an
    error an operator sees. One cut short before it went out is neither."""
    meter = Metrics()
    meter.game_over("g")
    down = record("scheduler", prompt="", error="LLMUnavailable: Connection refused")
    meter.llm_record(dataclasses.replace(down, decision=UNREACHED))
    cut = record("generator", prompt="")
    meter.llm_record(dataclasses.replace(cut, decision="not sent (cancelled: seat closed)"))
    assert (
        meter.registry.get_sample_value("mafiabot_llm_calls_total", {"kind": "scheduler"}) is None
    )
    errors = {"kind": "scheduler", "error": "LLMUnavailable"}
    assert meter.registry.get_sample_value("mafiabot_llm_errors_total", errors) == 1
    assert (
        meter.registry.get_sample_value("mafiabot_llm_calls_total", {"kind": "generator"}) is None
    )


async def test_llm_calls_tokens_cost_and_errors_are_counted_by_kind() -> None:
    meter = Metrics()
    inner = InMemoryDecisionLog()
    log = MeteredDecisionLog(inner, meter)
    log.record(
        dataclasses.replace(record("generator", tokens=100, cost=0.25), cached_input_tokens=80)
    )
    log.record(record("generator", tokens=40, cost=0.05))
    log.record(record("vote", error="LLMTimeout: no answer in 20 s"))
    log.record(record("vote", prompt="", error="no answer: heuristic"))  # no call was made
    log.record(record("scheduler", error="something without a class name"))
    await log.flush()
    assert len(inner.records) == 5  # every record still reaches the database log

    def get(name: str, **labels: str) -> float:
        found = meter.registry.get_sample_value(name, labels)
        return 0.0 if found is None else found

    # held while game "g" runs (a scraper must not see a call just before an agent's line)
    assert get("mafiabot_llm_calls_total", kind="generator") == 0
    meter.game_over("g")

    assert get("mafiabot_llm_calls_total", kind="generator") == 2
    assert get("mafiabot_llm_calls_total", kind="vote") == 1
    assert get("mafiabot_llm_tokens_total", kind="generator", direction="input") == 140
    assert get("mafiabot_llm_tokens_total", kind="generator", direction="output") == 70
    assert get("mafiabot_llm_tokens_total", kind="generator", direction="cached") == 80
    assert abs(get("mafiabot_llm_cost_usd_total", kind="generator") - 0.30) < 1e-9
    assert get("mafiabot_llm_errors_total", kind="vote", error="LLMTimeout") == 1
    assert get("mafiabot_llm_errors_total", kind="scheduler", error="other") == 1


async def test_slack_rate_limit_waits_are_counted(fake_slack: FakeSlack) -> None:
    meter = Metrics()
    client = make_client(fake_slack.bot_token, base_url=fake_slack.base_url)  # as SlackRunner
    watch_slack_rate_limits(client, meter)
    fake_slack.rate_limit("auth.test", retry_after=0)
    assert (await client.auth_test())["ok"]
    assert (
        meter.registry.get_sample_value("mafiabot_rate_limit_waits_total", {"platform": "slack"})
        == 1
    )
    waited = meter.registry.get_sample_value(
        "mafiabot_rate_limit_wait_seconds_total", {"platform": "slack"}
    )
    assert waited is not None and 0 < waited < 1.5


async def test_an_address_in_use_is_one_clear_settings_error(ops: Ops) -> None:
    assert ops.server is not None
    taken = f"127.0.0.1:{ops.server.port}"
    with pytest.raises(SettingsError, match=rf"MAFIABOT_HTTP_ADDR={taken}: .*another mafiabot"):
        await OpsServer(taken, Health(), Metrics()).start()


async def test_llm_families_move_during_a_game_of_llm_agents(
    fake_openai: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real OpenAI client against the fake OpenAI server: calls, tokens and cost by kind
    as the agents play, and the calls the server fails counted by error."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    fake_openai.responder = LLMTable(seed=6)
    # authentication refused on the first calls: not retried, each one failed call
    fake_openai.inject(Fault.http_error(401, "authentication_error"), times=3)
    settings = settings_in(tmp_path).model_copy(
        update={"llm": "openai:gpt-4o-mini", "llm_timeout": 5.0, "llm_max_attempts": 2,
                "data_dir": tmp_path / "data"}
    )  # fmt: skip
    meter = Metrics()
    async with (
        running_service(settings, agent_kind="llm", metrics=meter) as service,
        operations(settings, service, meter) as ops,
    ):
        base = base_url(ops)
        before = await metrics(base)
        assert value(before, "mafiabot_llm_calls_total", kind="generator") == 0
        # 10x: the seats' memories (MiniLM) load before their first prompt, and on a loaded
        # machine that took most of a game at 40x, its lines all the baseline's stand-ins
        game_id = await agents_talking(service, "llm", seed=9, speed=10.0)  # a line was said
        # the first line may be a seat's baseline stand-in: play on until a generator call
        # has come back and been logged (the game's figures are counted from that log)
        for _ in range(600):
            summary = await asyncio.to_thread(summary_for_game, service.engine, game_id)
            # (answered: the 401s injected above may fall on the first generator calls)
            if summary.answered_by_kind.get("generator", 0) > 0:
                break
            await asyncio.sleep(0.05)
        talking = await metrics(base)  # nothing per call while the game runs
        assert value(talking, "mafiabot_llm_calls_total", kind="generator") == 0
        await service.end(game_id, "enough")  # counted once the game is over
        await service.drain()

        def total(name: str) -> float:
            return sum(v for (n, _labels), v in during.items() if n == name)

        during = await metrics(base)
        # a refused call is counted as it returns: within 10 s; the first line said may be
        # the baseline's (a seat's memory still loading), a generated one follows
        for _ in range(600):
            generated = value(during, "mafiabot_llm_calls_total", kind="generator")
            if total("mafiabot_llm_errors_total") >= 3 and generated > 0:
                break
            await asyncio.sleep(0.05)
            during = await metrics(base)

    assert value(during, "mafiabot_llm_calls_total", kind="scheduler") > 0
    assert value(during, "mafiabot_llm_calls_total", kind="generator") > 0
    assert value(during, "mafiabot_llm_tokens_total", kind="generator", direction="input") > 0
    assert value(during, "mafiabot_llm_tokens_total", kind="generator", direction="output") > 0
    assert value(during, "mafiabot_llm_cost_usd_total", kind="generator") > 0
    # each counted call is a request the fake answered (a failed one included; a call still
    # under way when scraped is counted once it returns)
    assert 3 < total("mafiabot_llm_calls_total") <= len(fake_openai.requests)
    assert total("mafiabot_llm_errors_total") == 3
    errors = {
        dict(ls)["error"] for (n, ls), v in during.items() if n == "mafiabot_llm_errors_total"
    }
    assert errors and "other" not in errors, errors
