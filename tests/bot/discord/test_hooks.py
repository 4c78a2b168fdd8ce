"""Webhook posts (`bot.discord.hooks`) on the fake Discord: the request discord.py's
``Webhook.send`` would make, its rate limits kept, its errors raised."""

from __future__ import annotations

from collections.abc import AsyncIterator

import discord
import pytest

from bot.discord.hooks import Hooks
from tests.fakes.discord import FakeDiscord

EXECUTE = "POST /webhooks/{webhook_id}/{webhook_token}"
NONE = discord.AllowedMentions.none()


@pytest.fixture
async def client(fake_discord: FakeDiscord) -> AsyncIterator[discord.Client]:
    bot = discord.Client(intents=discord.Intents.none(), allowed_mentions=NONE)
    await bot.login(fake_discord.token)
    yield bot
    await bot.close()


async def test_a_post_is_the_request_discord_py_would_send(
    fake_discord: FakeDiscord, client: discord.Client
) -> None:
    guild = fake_discord.add_guild("Club")
    channel = fake_discord.add_channel(guild, "mafia")
    booth = fake_discord.add_thread(channel, "booth")
    wh = fake_discord.add_webhook(channel)
    hook = discord.Webhook.partial(wh.id, wh.token, client=client)
    hooks = Hooks(client)
    text, name, avatar = "hi <@1> @everyone “quoted” é", "Ann", "https://example.org/a.png"
    for thread in (None, booth.id):
        await hook.send(
            text,
            username=name,
            avatar_url=avatar,
            allowed_mentions=NONE,
            thread=discord.utils.MISSING if thread is None else discord.Object(thread),
            wait=False,
        )
        await hooks.execute(
            wh.id, wh.token, text, username=name, avatar_url=avatar, thread_id=thread
        )
        theirs, ours = fake_discord.requests_to(EXECUTE)[-2:]
        assert (ours.path, ours.query, ours.json) == (theirs.path, theirs.query, theirs.json)
        assert ours.headers["Content-Type"] == theirs.headers["Content-Type"]
        assert ours.status == theirs.status == 204
    landed = fake_discord.webhook_executions
    assert [(x.thread_id, x.username, x.content) for x in landed] == [
        (None, name, text),
        (None, name, text),
        (booth.id, name, text),
        (booth.id, name, text),
    ]


async def test_posts_keep_the_webhook_rate_limit_and_wait_out_a_429(
    fake_discord: FakeDiscord, client: discord.Client
) -> None:
    """An exhausted bucket holds the next post until its reset (no 429 earned); a 429 is
    waited out and the post sent once; the order is kept."""
    import asyncio

    guild = fake_discord.add_guild("Club")
    channel = fake_discord.add_channel(guild, "mafia")
    wh = fake_discord.add_webhook(channel)
    fake_discord.webhook_limit = (2, 0.5)
    hooks = Hooks(client)
    posts = [
        hooks.execute(wh.id, wh.token, f"line {i}", username="Ann", avatar_url="https://a/b.png")
        for i in range(5)
    ]
    await asyncio.gather(*posts)
    assert fake_discord.webhook_429s == 0
    fake_discord.webhook_limit = None
    fake_discord.rate_limit(EXECUTE, times=1, retry_after=0.05)
    await hooks.execute(wh.id, wh.token, "line 5", username="Ann", avatar_url="https://a/b.png")
    assert [x.content for x in fake_discord.webhook_executions] == [f"line {i}" for i in range(6)]
    assert sum(r.injected for r in fake_discord.requests_to(EXECUTE)) == 1


async def test_a_deleted_webhook_raises_not_found_with_its_code(
    fake_discord: FakeDiscord, client: discord.Client
) -> None:
    guild = fake_discord.add_guild("Club")
    channel = fake_discord.add_channel(guild, "mafia")
    wh = fake_discord.add_webhook(channel)
    fake_discord.delete_webhook(wh)
    with pytest.raises(discord.NotFound) as caught:
        await Hooks(client).execute(wh.id, wh.token, "x", username="Ann", avatar_url="https://a/b")
    assert caught.value.code == 10015
    assert fake_discord.webhook_executions == []
