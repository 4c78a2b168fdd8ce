"""Slack having trouble (HTTP 5xx with a plain-text body, a call that times out): every line
still reaches the channel, in order, and the host hears of it only when a line is given up.
Also: ``MAFIABOT_SLACK_API_URL`` points every client the app makes at another Web API."""

from __future__ import annotations

import asyncio
import contextlib

from bot.settings import Settings
from bot.slack.app import run_slack
from bot.slack.delivery import MAX_TRANSIENT_RETRIES
from tests.bot.slack.conftest import SlackHarness
from tests.fakes.slack import FakeSlack


def _problems(harness: SlackHarness) -> list[str]:
    return [t for t in harness.dm_texts(harness.users[0]) if "couldn't" in t]


async def _burst(harness: SlackHarness, game_id: str, n: int) -> list[tuple[str, str]]:
    bob, carol = harness.users[1], harness.users[2]
    sent = []
    for i in range(n):
        who = bob if i % 2 else carol
        text = f"line {i} while Slack struggles"
        sent.append((harness.character(game_id, who), text))
        await harness.fake.message_event(user=who, text=text)
    return sent


async def test_5xx_with_a_text_body_is_retried_in_order(harness: SlackHarness) -> None:
    fake = harness.fake
    game_id = await harness.running_game()
    assert harness.adapter is not None
    harness.adapter.out.delivery.backoff = 0.05
    fake.server_error("chat.postMessage", status=503, times=3)
    sent = await _burst(harness, game_id, 4)
    await harness.wait_stage(
        lambda: [x for x in harness.persona_lines() if x in sent] == sent,
        within=20,
        what="every line, in order",
    )
    await harness.adapter.drain()
    assert [c.status for c in fake.calls("chat.postMessage")].count(503) == 3
    assert _problems(harness) == []  # nothing was given up: the host is not bothered


async def test_a_line_given_up_is_told_to_the_host_once(harness: SlackHarness) -> None:
    fake = harness.fake
    game_id = await harness.running_game()
    assert harness.adapter is not None
    harness.adapter.out.delivery.backoff = 0.01
    stage = harness.channel
    assert stage is not None
    fake.server_error(
        "chat.postMessage", status=500, times=MAX_TRANSIENT_RETRIES + 1, channel=stage
    )
    sent = await _burst(harness, game_id, 3)
    await fake.wait_until(lambda: _problems(harness), what="the host is told")
    await harness.adapter.drain()
    [problem] = _problems(harness)  # told once
    assert game_id in problem and "500" in problem
    # one line (a player's or the agent's, whichever came first) was tried 9 times, then
    # given up; every other line got through, in order
    failed = [c.args.get("text") for c in fake.calls("chat.postMessage") if c.status == 500]
    assert len(failed) == MAX_TRANSIENT_RETRIES + 1 and len(set(failed)) == 1
    shown = harness.persona_lines()
    assert failed[0] not in [text for _, text in shown]
    rest = [x for x in sent if x[1] != failed[0]]
    assert [x for x in shown if x in rest] == rest


async def test_a_timed_out_post_is_sent_again(harness: SlackHarness) -> None:
    fake = harness.fake
    game_id = await harness.running_game()
    assert harness.adapter is not None and harness.adapter.client is not None
    harness.adapter.out.delivery.backoff = 0.05
    harness.adapter.client.timeout = 1
    fake.stall("chat.postMessage", seconds=2)
    sent = await _burst(harness, game_id, 2)
    await harness.wait_stage(
        lambda: [x for x in harness.persona_lines() if x in sent] == sent,
        within=20,
        what="both lines, in order",
    )
    assert _problems(harness) == []


async def test_export_explains_a_plain_text_error(harness: SlackHarness) -> None:
    fake = harness.fake
    game_id = await harness.running_game()
    host = harness.users[0]
    assert "ended" in await harness.slash(host, "end")
    await fake.wait_until(lambda: harness.live(game_id).status != "running", what="the end")
    fake.server_error("files.getUploadURLExternal", status=502, times=1)
    reply = await harness.slash(host, "export")
    assert "export file" in reply and "502" in reply, reply


async def test_api_url_setting_reaches_every_client(fake_slack: FakeSlack, db_url: str) -> None:
    settings = Settings(
        _env_file=None,
        database_url=db_url,
        slack_bot_token=fake_slack.bot_token,
        slack_app_token=fake_slack.app_token,
        slack_api_url=fake_slack.base_url,
    )
    task = asyncio.create_task(run_slack(settings))
    try:
        await fake_slack.wait_until(
            lambda: fake_slack.hub.connected or task.done(), within=10, what="Socket Mode"
        )
        assert not task.done(), task
        assert fake_slack.calls("auth.test") and fake_slack.calls("apps.connections.open")
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
