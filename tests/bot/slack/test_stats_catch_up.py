"""The board's counting never sits inside a Slack command (Slack gives 3 seconds): on a
workspace whose revealed games were never counted (say, just after the upgrade that added the
ratings), ``/mafia stats`` is acknowledged at once and answered after counting a bounded batch
at most; the start-up catch-up (`bot.runtime.start_counting`) counts the rest, off the event
loop."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, func, select

import bot.players.stats
import bot.runtime
from bench.stats import populate
from bot.players.stats import QUERY_BATCH, START_BATCH, servers_behind
from bot.runtime import start_counting
from bot.settings import Settings
from bot.store.models import RatedGame
from tests.bot.slack.conftest import SlackHarness

GAMES = 3 * QUERY_BATCH + 7


def counted(engine: Engine) -> int:
    with Session(engine) as session:
        return int(session.exec(select(func.count()).select_from(RatedGame)).one())


async def test_stats_answers_in_time_and_the_start_up_counts_the_rest(
    harness: SlackHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, engine = harness.fake, harness.engine
    assert engine is not None
    asker = fake.add_user("pat")
    channel = fake.add_channel("games", members=[asker])
    populate(engine, GAMES, 8, platform="slack", server=fake.team_id)
    assert servers_behind(engine) == [("slack", fake.team_id)]

    # every batch waits until the test lets it go: the acknowledgement must not wait for it
    go, begun = threading.Event(), threading.Event()
    sizes: list[int] = []
    batch = bot.players.stats._catch_up_batch

    def held(*args: Any) -> int:
        begun.set()
        go.wait(30)
        sizes.append(args[-1])
        return batch(*args)

    monkeypatch.setattr(bot.players.stats, "_catch_up_batch", held)
    result = await fake.slash(user=asker, channel=channel, text="stats")
    assert result.status == 200 and not result.late
    assert fake.responses == [] and counted(engine) == 0  # acknowledged before any counting
    await fake.wait_until(begun.is_set, what="the query's count begun")
    go.set()
    [answer] = await fake.wait_for_responses(1, within=30)
    assert f"<@{asker.id}>" in answer.text
    # the query counted one bounded batch, not the workspace's whole history
    assert sizes == [QUERY_BATCH] and counted(engine) == QUERY_BATCH

    # start-up: everything left is counted in the background, in batches
    counting = start_counting(engine)
    assert await counting.task == GAMES - QUERY_BATCH
    await counting.stop()
    assert sizes[1:] == [START_BATCH] * (len(sizes) - 1) and len(sizes) >= 3  # short ones
    assert counted(engine) == GAMES and servers_behind(engine) == []
    before = len(sizes)
    await harness.slash(asker, "leaderboard")
    assert len(sizes) == before + 1 and counted(engine) == GAMES  # a query finds nothing left


def test_the_start_up_count_stops_between_batches(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bot.players.stats, "START_BATCH", 2)
    populate(engine, 5, 6, platform="slack", server="T1")
    assert bot.players.stats.catch_up_all(engine, stop=lambda: True) == 0 == counted(engine)
    assert bot.players.stats.catch_up_all(engine, stop=lambda: counted(engine) >= 2) == 2
    assert bot.players.stats.catch_up_all(engine) == 3 and servers_behind(engine) == []


async def test_the_service_counts_every_server_behind_at_start_up(
    engine: Engine, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`running_service` (what every platform's bot runs in) starts the count after the
    migrations, for every server with uncounted revealed games, and the bot runs meanwhile."""
    populate(engine, 7, 6, platform="discord", server="G1")
    populate(engine, 4, 6, platform="slack", server="T1", start=7)
    started: list[bot.runtime.Counting] = []

    def counting(e: Engine) -> bot.runtime.Counting:
        started.append(bot.runtime.Counting(e))
        return started[-1]

    monkeypatch.setattr(bot.runtime, "start_counting", counting)
    settings = Settings(data_dir=tmp_path / "data", database_url=db_url, _env_file=None)
    async with bot.runtime.running_service(settings) as service:
        assert service.engine is not None  # serving already
        [count] = started
        assert await count.task == 11
    assert counted(engine) == 11 and servers_behind(engine) == []
