"""Executing a webhook: the one request every relayed line costs (`Rooms.speak`).

discord.py's ``Webhook.send`` builds everything again for each post: the message parameters
and their mentions, a route, the query string merged into the URL, the JSON body as text. At
1,000 games that was a quarter of the event loop's time. Here a post is a prepared request:
the URL (with its query) made once per webhook and thread, one header set, the body encoded
once as bytes; sent on the client's own HTTP session.

The wire and the rate limits stay discord.py's (``AsyncWebhookAdapter.request``): posts
through one webhook go one at a time; when Discord answers that the webhook's bucket is
exhausted (``X-RateLimit-Remaining: 0``) the next post waits for its reset; a 429 from
Discord is waited out (``retry_after``) and the post tried again, while a 429 without
Discord's ``Via`` header (Cloudflare's) raises; a 5xx is tried again after 1, 3, 5, 7 s; after
five attempts, or on a 403 or 404 (a deleted webhook: `discord.NotFound`, code 10015), the
post raises the exception discord.py would. Whatever still fails is the delivery's to retry
(`bot.discord.delivery`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any
from urllib.parse import quote

import aiohttp
import discord
import yarl
from discord.http import Route, json_or_text
from discord.utils import _parse_ratelimit_header

log = logging.getLogger(__name__)

#: the headers of every post (aiohttp adds the length)
_JSON = {"Content-Type": "application/json"}
#: no mention in a relayed line ever pings anyone (`discord.AllowedMentions.none`)
_NO_MENTIONS: dict[str, list[str]] = {"parse": []}
#: URLs kept at most (webhook, token, thread); beyond, the map starts again
_MAX_URLS = 20_000


class Hooks:
    """Posts through webhooks, by id and token (see the module docstring)."""

    def __init__(self, client: discord.Client) -> None:
        self.client = client
        #: one lock per webhook, kept (a lock made again for every post, as a weak map of
        #: them did, cost more than the post's own work around it); beyond `_MAX_URLS`, the
        #: idle ones are dropped
        self._locks: dict[int, asyncio.Lock] = {}
        self._urls: dict[tuple[str, int, str, int | None], yarl.URL] = {}

    def url(self, webhook_id: int, token: str, thread_id: int | None = None) -> yarl.URL:
        key = (Route.BASE, webhook_id, token, thread_id)
        url = self._urls.get(key)
        if url is None:
            if len(self._urls) >= _MAX_URLS:
                self._urls.clear()
            query = {"wait": "0", "with_components": "0"}
            if thread_id:
                query["thread_id"] = str(thread_id)
            path = f"/webhooks/{webhook_id}/{quote(token, safe='')}"
            url = self._urls[key] = yarl.URL(Route.BASE + path, encoded=True).with_query(query)
        return url

    async def execute(
        self,
        webhook_id: int,
        token: str,
        content: str,
        *,
        username: str,
        avatar_url: str,
        thread_id: int | None = None,
    ) -> None:
        """Post ``content`` under ``username`` (without waiting for the message back)."""
        payload = {
            "content": content,
            "tts": False,
            "avatar_url": avatar_url,
            "username": username,
            "allowed_mentions": _NO_MENTIONS,
        }
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=True).encode()
        await self._request(webhook_id, self.url(webhook_id, token, thread_id), body)

    async def _request(self, webhook_id: int, url: yarl.URL, body: bytes) -> None:
        lock = self._locks.get(webhook_id)
        if lock is None:
            if len(self._locks) >= _MAX_URLS:
                self._locks = {k: v for k, v in self._locks.items() if v.locked()}
            lock = self._locks[webhook_id] = asyncio.Lock()
        http: Any = self.client.http
        session: aiohttp.ClientSession = http._HTTPClient__session
        async with lock:
            delay = 0.0
            try:
                response: aiohttp.ClientResponse | None = None
                data: Any = None
                for attempt in range(5):
                    try:
                        async with session.post(
                            url,
                            data=body,
                            headers=_JSON,
                            proxy=http.proxy,
                            proxy_auth=http.proxy_auth,
                        ) as response:
                            data = await json_or_text(response)
                            if response.headers.get("X-Ratelimit-Remaining") == "0":
                                delay = delay if response.status == 429 else _reset(response)
                            wait = _again_in(response, data, attempt)
                    except OSError as exc:
                        if attempt < 4 and exc.errno in (54, 10054):
                            await asyncio.sleep(1 + attempt * 2)
                            continue
                        raise
                    if wait is None:
                        return
                    if response.status == 429:  # (discord.py's line: the metrics count it)
                        log.warning(
                            "Webhook ID %s is rate limited. Retrying in %.2f seconds.",
                            webhook_id,
                            wait,
                        )
                    await asyncio.sleep(wait)
                if response is not None and response.status >= 500:
                    raise discord.DiscordServerError(response, data)
                raise discord.HTTPException(response, data)
            finally:
                if delay > 0:  # (the bucket is empty: the next post waits for its reset)
                    await asyncio.sleep(delay)


def _reset(response: aiohttp.ClientResponse) -> float:
    return float(_parse_ratelimit_header(response))


def _again_in(response: aiohttp.ClientResponse, data: Any, attempt: int) -> float | None:
    """None: the post went out; else the seconds to wait before trying it again. Raises what
    discord.py raises for a post that cannot go."""
    status = response.status
    if 200 <= status < 300:
        return None
    if status == 429:
        if not response.headers.get("Via"):  # (Cloudflare's, not Discord's)
            raise discord.HTTPException(response, data)
        return float(data["retry_after"])
    if status >= 500:
        return float(1 + attempt * 2)
    if status == 403:
        raise discord.Forbidden(response, data)
    if status == 404:
        raise discord.NotFound(response, data)
    raise discord.HTTPException(response, data)
