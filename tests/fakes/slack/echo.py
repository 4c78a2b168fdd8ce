"""Two things Slack does in HTTP mode that the fake's senders don't by themselves: it echoes
each message the app posts in a conversation it listens to back to the app as a ``message``
event (with the app's ``bot_id``), and, when the app's endpoint can't be reached, the events
don't arrive (Slack tries them again later, with ``X-Slack-Retry-Num``).

    echo = SlackEcho(fake, url)           # echoes every successful chat.postMessage to url
    echo.start()
    echo.unreachable = True               # nothing reaches the endpoint (echoes are lost)
    ...
    echo.unreachable = False
    await echo.retry(user, text)          # Slack's retry of a line typed meanwhile
    await echo.stop()
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import aiohttp

from tests.fakes.slack.model import FakeUser
from tests.fakes.slack.server import FakeSlack


class SlackEcho:
    def __init__(self, fake: FakeSlack, url: str, *, poll_s: float = 0.05) -> None:
        self.fake = fake
        self.url = url
        self.poll_s = poll_s
        self.unreachable = False
        #: events that could not be handed over (Slack would retry them later)
        self.lost = 0
        self.echoed = 0
        self._seen = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._seen = len(self.fake.api_calls)
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            calls = self.fake.api_calls[self._seen :]
            self._seen += len(calls)
            for call in calls:
                if call.method != "chat.postMessage" or not call.response.get("ok"):
                    continue
                if self.unreachable:
                    self.lost += 1
                    continue
                await self._echo(call.response)
            await asyncio.sleep(self.poll_s)

    async def _echo(self, response: dict[str, Any]) -> None:
        message = response.get("message") or {}
        channel = str(response.get("channel") or "")
        event = {
            "type": "message",
            "text": message.get("text", ""),
            "user": self.fake.bot.id,
            "bot_id": message.get("bot_id") or "B0FAKEBOT",
            "ts": response.get("ts"),
            "channel": channel,
            "channel_type": self.fake.channel(channel).channel_type,
            "event_ts": response.get("ts"),
        }
        with contextlib.suppress(aiohttp.ClientError, TimeoutError):
            await self.fake.event(self.url, event)
            self.echoed += 1

    async def retry(self, user: FakeUser, text: str) -> int:
        """Slack's first retry of ``text``, typed by ``user`` in their booth while the endpoint
        was unreachable (it is in the booth's history already): the answer's status."""
        dm = self.fake.dm(user)
        found = next(m for m in reversed(dm.messages) if m.text == text and m.user == user.id)
        event = {
            "type": "message",
            "text": text,
            "user": user.id,
            "ts": found.ts,
            "team": self.fake.team_id,
            "channel": dm.id,
            "channel_type": "im",
            "event_ts": found.ts,
        }
        result = await self.fake.event(self.url, event, retry_num=1, retry_reason="http_error")
        return result.status
