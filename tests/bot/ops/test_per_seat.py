"""Scrapers learn nothing per seat: the relay latency series times every line alike (an
agent's has no "received" moment, and used to go untimed, so the series counted people's
lines only), and a game's model calls are counted when it ends, not as each line is written.
Export files sent in chat carry no platform ids in their names."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from bot.ops.discord_relay import RelayTimer
from bot.ops.metrics import Metrics
from bot.protection.dataset.export import export_file_name
from bot.table.latency import RelayLatency
from tests.bot.ops.test_service_metrics import record


def samples(meter: Metrics, name: str, **labels: str) -> float:
    found = meter.registry.get_sample_value(name, labels)
    return 0.0 if found is None else found


def test_discord_relay_times_every_line_alike() -> None:
    meter = Metrics()
    timer = RelayTimer(meter)
    # a person's line: received from the booth, committed, posted
    timer.received("g", 1, "hi all", 0.0)
    timer.committed("g", 1, "hi all")
    timer.sending("g", 1, "hi all")
    # an agent's line: never received from a booth, committed, posted
    timer.committed("g", 0, "hey")
    timer.sending("g", 0, "hey")
    timer.sending("g", 0, "hey")  # a second piece or den reader: the line is timed once
    count = samples(meter, "mafiabot_relay_seconds_count", platform="discord")
    assert count == 2
    # both from their commit: no line's figure includes a booth's trip to the bot
    assert samples(meter, "mafiabot_relay_seconds_sum", platform="discord") < 1.0


def test_slack_relay_times_every_line_alike() -> None:
    seen: list[float] = []
    latency = RelayLatency(seen.append)
    latency.received("g", 1)  # a person's line
    person = latency.posting("g", 1)
    agent = latency.posting("g", 0)  # an agent's: never received
    assert person is not None and agent is not None
    latency.posted(person)
    latency.posted(agent)
    assert len(seen) == 2


def test_model_calls_are_counted_when_the_game_ends() -> None:
    meter = Metrics()
    meter.llm_record(record("generator", tokens=10))
    meter.llm_record(record("scheduler", tokens=10))
    assert samples(meter, "mafiabot_llm_calls_total", kind="generator") == 0
    meter.game_over("g")
    assert samples(meter, "mafiabot_llm_calls_total", kind="generator") == 1
    meter.llm_record(record("reflection", tokens=10))  # the debrief, after the game: at once
    assert samples(meter, "mafiabot_llm_calls_total", kind="reflection") == 1


def test_export_file_names_carry_no_platform_ids() -> None:
    name = export_file_name(datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC))
    assert name == "mafiabot-export-20260304-050607.zip"
    assert re.fullmatch(r"mafiabot-export-\d{8}-\d{6}\.zip", export_file_name())
