"""Pytest fixtures that run discord.py's real client against the loopback fake Discord.

Register them from a conftest.py (importing into a test module makes ruff flag the fixture
parameters as redefinitions)::

    from tests.fakes.discord_fixtures import fake_discord  # noqa: F401

`fake_discord` starts a `FakeDiscord` on 127.0.0.1 (ephemeral port) and points discord.py at
it for the duration of the test by patching two globals, restored afterwards:
`discord.http.Route.BASE` (REST, also used by webhooks and interaction followups) and
`discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY` (a plain `Client` never asks
`/gateway/bot`; `AutoShardedClient` does, and gets the fake's URL).  Nothing leaves the host.

    async def test_x(fake_discord):
        guild = fake_discord.add_guild("Mafia Club")
        town = fake_discord.add_channel(guild, "town-square")
        alice = fake_discord.add_member(guild, "alice")
        intents = discord.Intents.default()
        intents.members = intents.message_content = True
        client = discord.Client(intents=intents, guild_ready_timeout=0.05)
        async with running_client(client, fake_discord):
            await fake_discord.send_message(town, alice, "hello")
            inter = await fake_discord.slash("mafia new", {"players": 7}, user=alice,
                                             channel=town)
            assert (await inter.response()).ephemeral

Things discord.py 2.7 does that tests must allow for:

* Log in with `fake.token` (any other token gets 401 -> LoginFailure, or gateway close 4004).
* Pass `guild_ready_timeout=0.05` to the client: discord.py waits that long after the last
  GUILD_CREATE before on_ready (default 2 s).  With the members intent it also chunks every
  guild (op 8) before on_ready; the fake answers at once.
* A re-IDENTIFY (after op 9 / a lost session) is delayed 5 s by `Client.before_identify_hook`;
  override it on the client to test that quickly.
* `client.close()` ends up closing the socket with 4000, not 1000 (its own receive loop
  closes first), so the session stays resumable on the fake, as on Discord.
* Close clients before the fixture ends (`running_client` does); otherwise they see the
  server go away and keep trying to reconnect.

Driving API (see `tests/fakes/discord/server.py`): build the world with `add_guild`,
`add_channel`, `add_thread`, `add_member`, `add_role`; act as humans with `send_message`,
`send_dm`, `slash`, `click`, `select`, `submit_modal`; break things with `rate_limit`,
`fail`, `deny_permission`, `delete_webhook`, `delete_channel`, `block_dms`,
`drop_connections`, `reconnect`, `invalidate_session`; inspect `requests`, `messages_in`,
`webhook_executions`, `interactions`, `channels`, `guild_commands`; wait with `wait_until`,
`wait_for_message`, `wait_for_request`, `Interaction.response()` / `.followup(n)`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import TypeVar

import discord
import discord.gateway
import discord.http
import pytest
import yarl

from tests.fakes.discord import FakeDiscord

ClientT = TypeVar("ClientT", bound=discord.Client)


@contextlib.contextmanager
def discord_pointed_at(fake: FakeDiscord) -> Iterator[None]:
    """Point discord.py's REST base URL and default gateway at `fake`; restore on exit."""
    route = discord.http.Route
    ws = discord.gateway.DiscordWebSocket
    old_base, old_gateway = route.BASE, ws.DEFAULT_GATEWAY
    route.BASE = fake.api_base
    ws.DEFAULT_GATEWAY = yarl.URL(fake.ws_url)
    try:
        yield
    finally:
        route.BASE = old_base
        ws.DEFAULT_GATEWAY = old_gateway


@contextlib.asynccontextmanager
async def running_client(
    client: ClientT, fake: FakeDiscord, *, within: float = 10.0
) -> AsyncIterator[ClientT]:
    """Run `client.start(fake.token)` in a task until on_ready; close it cleanly on exit.

    A startup failure (bad token, disallowed intents, an exception in setup_hook) is raised
    here instead of surfacing as a timeout.
    """
    before = fake.ready_count

    async def ready() -> None:
        await fake.wait_until(lambda: fake.ready_count > before, within)
        await client.wait_until_ready()

    task = asyncio.create_task(client.start(fake.token))
    waiter = asyncio.create_task(ready())
    startup_failed = False
    try:
        done, _ = await asyncio.wait(
            {task, waiter}, timeout=within, return_when=asyncio.FIRST_COMPLETED
        )
        if task in done:
            startup_failed = True
            task.result()  # raises the startup error
            raise RuntimeError("discord client stopped before it was ready")
        if waiter not in done:
            raise TimeoutError(f"discord client not ready within {within}s")
        waiter.result()
        yield client
    finally:
        waiter.cancel()
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await waiter
        if not client.is_closed():
            await client.close()
        if not task.done():
            await asyncio.wait_for(task, within)
        elif not task.cancelled():
            crashed = task.exception()  # retrieve it either way: no "never retrieved" noise
            if crashed is not None and not startup_failed:
                raise crashed


@pytest.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    """A started fake Discord with discord.py pointed at it; fresh per test."""
    async with FakeDiscord() as fake:
        with discord_pointed_at(fake):
            yield fake
