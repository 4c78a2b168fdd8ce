"""Socket Mode: bolt's AsyncSocketModeHandler connected to the fake's loopback websocket."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp

from tests.fakes.slack import FakeSlack


@pytest.fixture
async def socket_handler(
    fake_slack: FakeSlack, slack_app: AsyncApp
) -> AsyncIterator[AsyncSocketModeHandler]:
    handler = AsyncSocketModeHandler(slack_app, fake_slack.app_token)
    await handler.connect_async()  # type: ignore[no-untyped-call]
    await fake_slack.wait_socket_connected()
    try:
        yield handler
    finally:
        await handler.close_async()  # type: ignore[no-untyped-call]


async def test_slash_command_envelope_is_acked(
    fake_slack: FakeSlack, slack_app: AsyncApp, socket_handler: AsyncSocketModeHandler
) -> None:
    seen: list[dict[str, Any]] = []

    @slack_app.command("/mafia")
    async def mafia(ack: Any, command: dict[str, Any], respond: Any) -> None:
        seen.append(command)
        await ack("Game created")
        await respond("and an ephemeral follow-up")

    alice = fake_slack.add_user("alice")
    [opened] = fake_slack.calls("apps.connections.open")
    assert opened.token == fake_slack.app_token
    result = await fake_slack.slash(fake_slack.socket, user=alice, text="new")
    assert result.acked and result.status == 200
    assert result.json() == {"text": "Game created"}
    assert seen[0]["text"] == "new" and seen[0]["user_id"] == alice.id
    assert fake_slack.socket_acks[-1].type == "slash_commands"
    [reply] = await fake_slack.wait_for_responses(1)
    assert reply.text == "and an ephemeral follow-up"


async def test_events_and_interactivity_over_socket(
    fake_slack: FakeSlack, slack_app: AsyncApp, socket_handler: AsyncSocketModeHandler
) -> None:
    events: list[str] = []

    @slack_app.event("message")
    async def on_message(event: dict[str, Any]) -> None:
        events.append(event["text"])

    alice = fake_slack.add_user("alice")
    result = await fake_slack.message_event(fake_slack.socket, user=alice, text="hello")
    assert result.acked and result.body == ""
    await fake_slack.wait_until(lambda: events, what="the message handler")
    assert events == ["hello"]


async def test_disconnect_makes_the_sdk_reconnect(
    fake_slack: FakeSlack, slack_app: AsyncApp, socket_handler: AsyncSocketModeHandler
) -> None:
    @slack_app.command("/mafia")
    async def mafia(ack: Any) -> None:
        await ack()

    alice = fake_slack.add_user("alice")
    await fake_slack.socket_disconnect()
    await fake_slack.wait_until(
        lambda: fake_slack.hub.connects == 2 and fake_slack.hub.connected,
        what="a second connection",
    )
    assert len(fake_slack.calls("apps.connections.open")) == 2
    result = await fake_slack.slash(fake_slack.socket, user=alice, text="again")
    assert result.acked
