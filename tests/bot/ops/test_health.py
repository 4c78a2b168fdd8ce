"""/healthz follows what is really up: the database and each platform connection, each
going down and coming back while the bot runs, scraped over HTTP as a monitor would."""

from __future__ import annotations

import asyncio
import time
from math import inf
from pathlib import Path
from typing import Any

from bot.discord.app import MafiaBot
from bot.ops.serve import Ops
from bot.service.timers import Backoff
from games.config import GameConfig
from tests.bot.db_faults import Faults, action
from tests.bot.discord.harness import test_options as discord_options
from tests.bot.ops.conftest import base_url, ops_on, slack_serving
from tests.bot.ops.scrape import healthz
from tests.fakes.discord import FakeDiscord
from tests.fakes.discord_fixtures import running_client
from tests.fakes.slack import FakeSlack

OK = (200, {"status": "ok"})
FAST = GameConfig(day_seconds=30, vote_seconds=600, night_seconds=600, night_vote_seconds=600)


async def health_becomes(ops: Ops, expected: tuple[int, dict[str, Any]], within: float) -> None:
    """Poll /healthz (as a load balancer does) until it answers ``expected``."""
    deadline = time.monotonic() + within
    while (got := await healthz(base_url(ops))) != expected:
        assert time.monotonic() < deadline, f"/healthz still {got}, expected {expected}"
        await asyncio.sleep(0.05)


async def test_a_database_outage_turns_healthz_503_and_back(db_url: str) -> None:
    async with ops_on(db_url) as ops:
        assert await healthz(base_url(ops)) == OK
        faults = Faults(ops.service.engine)
        faults.outage()
        await health_becomes(ops, (503, {"status": "down", "down": ["database"]}), 10)
        faults.lift()
        await health_becomes(ops, OK, 10)


async def test_a_dropped_discord_gateway_turns_healthz_503_until_it_resumes(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'db' / 'mafiabot.db'}"
    async with ops_on(url) as ops:
        bot = MafiaBot(ops.service, ops.settings, discord_options(), guild_ready_timeout=0.05)
        ops.watch_discord(bot)
        down = (503, {"status": "down", "down": ["discord"]})
        assert await healthz(base_url(ops)) == down  # not connected yet
        async with running_client(bot, fake_discord):
            await health_becomes(ops, OK, 10)
            resumed = fake_discord.resume_count
            await fake_discord.hold_gateway()
            await health_becomes(ops, down, 10)
            fake_discord.release_gateway()
            await health_becomes(ops, OK, 30)
            assert fake_discord.resume_count == resumed + 1  # the same session carried on
        await health_becomes(ops, down, 10)  # closed


async def test_a_dropped_slack_socket_turns_healthz_503_until_it_reconnects(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'db' / 'mafiabot.db'}"
    tokens = {"slack_bot_token": fake_slack.bot_token, "slack_app_token": fake_slack.app_token}
    async with ops_on(url, **tokens) as ops, slack_serving(ops, fake_slack):
        await health_becomes(ops, OK, 10)
        opened = len(fake_slack.calls("apps.connections.open"))
        await fake_slack.hub.hold()
        await health_becomes(ops, (503, {"status": "down", "down": ["slack"]}), 10)
        fake_slack.hub.release()
        await health_becomes(ops, OK, 20)
        assert len(fake_slack.calls("apps.connections.open")) > opened  # a new connection


async def test_slack_http_mode_is_up_while_it_listens(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'db' / 'mafiabot.db'}"
    secrets = {
        "slack_bot_token": fake_slack.bot_token,
        "slack_signing_secret": fake_slack.signing_secret,
    }
    async with ops_on(url, **secrets) as ops, slack_serving(ops, fake_slack, http_port=0) as slack:
        await health_becomes(ops, OK, 10)
        await slack.stop_input()
        assert await healthz(base_url(ops)) == (503, {"status": "down", "down": ["slack"]})


async def test_a_database_that_refuses_writes_but_still_reads_is_down(db_url: str) -> None:
    """A full disk or a lock held by another program: the ping still reads, but a phase's end
    cannot be stored. Down while that lasts, up once the end is stored."""
    async with ops_on(db_url) as ops:
        service = ops.service
        service.tick_backoff = Backoff(first=0.02, cap=0.1)
        faults = Faults(service.engine)
        faults.refuse("actions", action("tick"), message="database or disk is full", times=inf)
        game_id = await service.create_game(FAST, seed=3, speed=100.0)
        for _ in range(5):
            await service.join(game_id, None, is_agent=True, agent_kind="baseline")
        await service.start(game_id)
        await health_becomes(ops, (503, {"status": "down", "down": ["database"]}), 10)
        faults.lift()
        await health_becomes(ops, OK, 10)
        state = service.games[game_id].state
        assert state is not None and state.phase.seq > 1  # the day's end was stored
