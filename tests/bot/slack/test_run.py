"""`run_slack` itself: Socket Mode against the fake's websocket, HTTP mode with signatures
checked, clear errors for missing tokens."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import aiohttp
import pytest

from bot.settings import Settings
from bot.slack.app import SlackSetupError, run_slack
from tests.fakes.slack import FakeSlack


def _settings(db_url: str, **tokens: Any) -> Settings:
    return Settings(_env_file=None, database_url=db_url, **tokens)


@contextlib.asynccontextmanager
async def _running(coro: Coroutine[Any, Any, None]) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(coro)
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_socket_mode_smoke(fake_slack: FakeSlack, db_url: str) -> None:
    settings = _settings(
        db_url, slack_bot_token=fake_slack.bot_token, slack_app_token=fake_slack.app_token
    )
    alice = fake_slack.add_user("alice")
    channel = fake_slack.add_channel("mafia", members=[alice])
    async with _running(run_slack(settings, base_url=fake_slack.base_url)) as task:
        await fake_slack.wait_until(
            lambda: fake_slack.hub.connected or task.done(), within=10, what="Socket Mode"
        )
        assert not task.done(), task
        [opened] = fake_slack.calls("apps.connections.open")
        assert opened.token == fake_slack.app_token
        result = await fake_slack.slash(fake_slack.socket, user=alice, channel=channel, text="new")
        assert result.acked
        [lobby] = await fake_slack.wait_for_messages(channel, 1)
        assert lobby.blocks is not None and "mafia_join" in str(lobby.blocks)
        await fake_slack.click(
            fake_slack.socket, user=alice, action_id="mafia_join", channel=channel
        )
        await fake_slack.wait_until(lambda: fake_slack.open_views(alice), what="the notice")
    assert task.cancelled()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_http_mode_verifies_signatures(fake_slack: FakeSlack, db_url: str) -> None:
    settings = _settings(
        db_url,
        slack_bot_token=fake_slack.bot_token,
        slack_signing_secret=fake_slack.signing_secret,
    )
    port = _free_port()
    url = f"http://127.0.0.1:{port}/slack/events"
    alice = fake_slack.add_user("alice")
    channel = fake_slack.add_channel("mafia", members=[alice])
    run = run_slack(settings, http_port=port, host="127.0.0.1", base_url=fake_slack.base_url)
    async with _running(run) as task:
        for _ in range(100):
            with contextlib.suppress(aiohttp.ClientError):
                await fake_slack.url_verification(url, challenge="ping")
                break
            assert not task.done(), task
            await asyncio.sleep(0.05)
        forged = await fake_slack.slash(url, user=alice, channel=channel, text="new", forge=True)
        assert forged.status == 401
        assert fake_slack.messages_in(channel) == []
        good = await fake_slack.slash(url, user=alice, channel=channel, text="new")
        assert good.status == 200
        await fake_slack.wait_for_messages(channel, 1)


async def test_missing_tokens_are_named(fake_slack: FakeSlack, db_url: str) -> None:
    with pytest.raises(SlackSetupError, match="MAFIABOT_SLACK_BOT_TOKEN"):
        await run_slack(_settings(db_url), base_url=fake_slack.base_url)
    no_app_token = _settings(db_url, slack_bot_token=fake_slack.bot_token)
    with pytest.raises(SlackSetupError, match="MAFIABOT_SLACK_APP_TOKEN"):
        await run_slack(no_app_token, base_url=fake_slack.base_url)
    with pytest.raises(SlackSetupError, match="MAFIABOT_SLACK_SIGNING_SECRET"):
        await run_slack(no_app_token, http_port=_free_port(), base_url=fake_slack.base_url)
