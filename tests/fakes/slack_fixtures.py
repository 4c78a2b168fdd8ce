"""Pytest fixtures for the fake Slack (`tests.fakes.slack`), function-scoped.

Import them into a conftest.py (importing into a test module makes ruff flag the fixture
parameters as redefinitions)::

    from tests.fakes.slack_fixtures import (  # noqa: F401
        fake_slack, slack_app, slack_client, slack_signing_secret,
    )

* `slack_signing_secret` -> str: the secret the fake signs with and the app verifies with.
* `fake_slack` -> started `FakeSlack` (127.0.0.1, ephemeral port), fresh per test.
* `slack_client` -> `AsyncWebClient` on the fake with the bot token and slack_sdk's
  `AsyncRateLimitErrorRetryHandler(max_retry_count=5)` attached (the SDK attaches no 429
  retry by default), plus the default connection-error handler.
* `slack_app` -> `AsyncApp(client=slack_client, signing_secret=...)` with request
  verification ON, already served over HTTP on loopback (`fake_slack.target` is its URL).
  Register listeners in the test; they are looked up per request.

    async def test_x(fake_slack, slack_app):
        @slack_app.command("/mafia")
        async def mafia(ack, respond):
            await ack()
            await respond("ok")
        alice = fake_slack.add_user("alice")
        await fake_slack.slash(user=alice, text="new")
        [reply] = await fake_slack.wait_for_responses(1)

Listeners run as background tasks after `ack()`; wait on the fake (`wait_for_*`) before
asserting on their effects.  Close any Socket Mode handler before the test ends: the fake
closes its sockets on teardown and a still-running client would try to reconnect.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack import FakeSlack

SIGNING_SECRET = "fake-slack-signing-secret"


@pytest.fixture
def slack_signing_secret() -> str:
    return SIGNING_SECRET


@pytest.fixture
async def fake_slack(slack_signing_secret: str) -> AsyncIterator[FakeSlack]:
    async with FakeSlack(signing_secret=slack_signing_secret) as fake:
        yield fake


@pytest.fixture
def slack_client(fake_slack: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(
        token=fake_slack.bot_token,
        base_url=fake_slack.base_url,
        retry_handlers=[
            AsyncConnectionErrorRetryHandler(),
            AsyncRateLimitErrorRetryHandler(max_retry_count=5),
        ],
    )


@pytest.fixture
async def slack_app(
    fake_slack: FakeSlack, slack_client: AsyncWebClient, slack_signing_secret: str
) -> AsyncApp:
    app = AsyncApp(client=slack_client, signing_secret=slack_signing_secret)
    await fake_slack.serve(app)
    return app
