"""An LLM seat on a tiny model's manners, through the real `openai` SDK and the loopback fake
of a llama-cpp-python server: prose for every answer ("You're right. The next round is").

With structured output on ("auto": json_schema refused, with HTTP 500 as the real server does,
then json_object), every scheduler answer and every vote comes from the model and is valid;
with it off, the same model's answers are unusable, and the seat still speaks every day and
votes legally, through logged fallbacks."""

from __future__ import annotations

import random

from agent.decisions import InMemoryDecisionLog, summarize
from agent.llm.openai_backend import OpenAIClient
from agent.llm.structured import parse_mode
from agent.llm_player import LLMPlayer
from games import GameConfig
from games.events import PhaseStarted
from games.state import PhaseKind
from tests.agent.test_llm_player import DEAL, NAMES, QUICK, ROLES, Table
from tests.fakes.llm_servers import FakeOpenAIServer

PROSE = "You're right. The next round is"


async def play(structured: str) -> tuple[Table, InMemoryDecisionLog, FakeOpenAIServer]:
    config = GameConfig(
        deal=DEAL,
        roles=ROLES,
        day_seconds=60,
        vote_seconds=30,
        night_seconds=30,
        night_vote_seconds=20,
    )
    table = Table(config)
    log = InMemoryDecisionLog()
    async with FakeOpenAIServer(lambda _req: PROSE, flavour="llama-cpp-python") as server:
        client = OpenAIClient(
            "smollm2", base_url=server.base_url, api_key="k", structured=parse_mode(structured)
        )
        player = LLMPlayer(
            seat=0,
            name=NAMES[0],
            persona="You are calm.",
            port=table.port(0),
            clock=table.clock,
            timers=table.timers,
            generator=client,
            scheduler=client,
            decisions=log,
            rng=random.Random(3),
            settings=QUICK,
            game_id="g-structured",
        )
        table.players[0] = player
        for _ in range(900):
            if table.state.over or not table.state.seats[0].alive:
                break
            await table.advance(1)
            await player.idle()
            await table.settle()
        await player.close()
        await client.aclose()
    return table, log, server


def silent_days(table: Table) -> list[int]:
    days = [
        e.seq
        for e in table.events
        if isinstance(e, PhaseStarted) and e.phase == PhaseKind.DAY.value
    ]
    said = {e.phase_seq for e in table.said(0)}
    ended = {e.seq - 1 for e in table.events if isinstance(e, PhaseStarted)}
    return [d for d in days if d in ended and d not in said]


async def test_structured_auto_makes_a_prose_model_valid() -> None:
    table, log, server = await play("auto")
    summary = summarize(log.records)
    sched = [r for r in log.records if r.kind == "scheduler" and r.called]
    votes = [r for r in log.records if r.kind == "vote" and r.called]
    assert sched and all(r.valid for r in sched)
    assert votes and all(r.valid for r in votes)
    assert summary.fallbacks_by_kind.get("vote", 0) == 0
    # the counters a benchmark reads
    assert summary.valid_by_kind["scheduler"] == summary.answered_by_kind["scheduler"] == len(sched)
    assert summary.valid_by_kind["vote"] == len(votes)
    assert summary.latency_p50_s is not None and summary.latency_p95_s is not None
    assert 0 < summary.latency_p50_s <= summary.latency_p95_s
    assert set(summary.latency_by_kind) >= {"scheduler", "vote"}
    assert any(line.startswith("valid by kind: ") for line in summary.lines())
    assert summary.by_model()["vote"] == (len(votes), len(votes))
    assert any(line.startswith("decided by the model itself: ") for line in summary.lines())
    assert [status for status, _ in server.refusals] == [500]  # once, then remembered
    assert silent_days(table) == []  # no day without a line
    assert table.refused == []


async def test_structured_off_falls_back_but_never_mutes() -> None:
    table, log, _ = await play("off")
    sched = [r for r in log.records if r.kind == "scheduler" and r.called]
    assert sched and not any(r.valid for r in sched)
    summary = summarize(log.records)
    falls = summary.fallbacks_by_kind
    assert falls.get("scheduler", 0) >= 1 and falls.get("vote", 0) >= 1
    # what the summary says: the baseline, not the model, decided when to talk
    made, total = summary.by_model()["scheduler"]
    assert made == 0 and total == falls["scheduler"]
    assert silent_days(table) == []
    assert table.votes_by(0)  # legal votes (the engine refused none)
    assert table.refused == []
