"""discord.py's real HTTP client against the fake REST API: state, errors, rate limits."""

from __future__ import annotations

import asyncio
import gc
import io
import logging
import warnings
from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp
import discord
import pytest

from tests.fakes.discord import PRIVATE_THREAD, Channel, FakeDiscord, Guild, Member
from tests.fakes.discord_fixtures import running_client


@dataclass
class World:
    fake: FakeDiscord
    guild: Guild
    town: Channel
    alice: Member
    bob: Member
    client: discord.Client

    def channel(self, channel: Channel | None = None) -> discord.TextChannel:
        found = self.client.get_channel((channel or self.town).id)
        assert isinstance(found, discord.TextChannel)
        return found


@pytest.fixture
async def world(fake_discord: FakeDiscord) -> AsyncIterator[World]:
    guild = fake_discord.add_guild("Mafia Club")
    town = fake_discord.add_channel(guild, "town-square")
    alice = fake_discord.add_member(guild, "alice")
    bob = fake_discord.add_member(guild, "bob")
    intents = discord.Intents.none()
    intents.guilds = intents.guild_messages = intents.members = intents.message_content = True
    intents.webhooks = True
    client = discord.Client(intents=intents, guild_ready_timeout=0.05)
    async with running_client(client, fake_discord):
        yield World(fake_discord, guild, town, alice, bob, client)


async def test_json_responses_have_the_exact_content_type(world: World) -> None:
    async with aiohttp.ClientSession() as session:
        headers = {"Authorization": f"Bot {world.fake.token}"}
        async with session.get(f"{world.fake.api_base}/users/@me", headers=headers) as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"] == "application/json"
            assert resp.headers["X-RateLimit-Bucket"]
            assert (await resp.json())["id"] == str(world.fake.bot.id)
        async with session.get(f"{world.fake.api_base}/no/such/route", headers=headers) as resp:
            assert resp.status == 404
            assert await resp.json() == {"message": "404: Not Found", "code": 0}
    assert [r.path for r in world.fake.unhandled] == ["/no/such/route"]


async def test_messages_persist_edit_delete_and_page(world: World) -> None:
    channel = world.channel()
    first = await channel.send("Night falls", embed=discord.Embed(title="Night 1"))
    second = await channel.send("Day breaks", file=discord.File(io.BytesIO(b"rules"), "r.txt"))
    await first.edit(content="Night falls again")
    history = [m.content async for m in channel.history(limit=10, oldest_first=True)]
    assert history == ["Night falls again", "Day breaks"]
    fetched = await channel.fetch_message(second.id)
    assert fetched.attachments[0].filename == "r.txt"
    upload = world.fake.requests_to("POST /channels/*/messages")[1]
    assert [(f.filename, f.data) for f in upload.files] == [("r.txt", b"rules")]
    assert world.fake.messages[first.id]["embeds"][0]["title"] == "Night 1"
    await second.delete()
    with pytest.raises(discord.NotFound) as missing:
        await channel.fetch_message(second.id)
    assert missing.value.code == 10008
    with pytest.raises(discord.HTTPException) as too_long:
        await channel.send("x" * 2001)
    assert too_long.value.status == 400 and too_long.value.code == 50035
    assert world.fake.contents_in(world.town) == ["Night falls again"]


async def test_webhook_messages_carry_the_character_name_and_avatar(world: World) -> None:
    channel = world.channel()
    hook = await channel.create_webhook(name="Mafia Stage", reason="game 42 stage")
    assert world.fake.requests_to("POST /channels/*/webhooks")[0].reason == "game 42 stage"
    sent = await hook.send(
        "I am just a baker.",
        username="Baker Bruno",
        avatar_url="https://example.invalid/bruno.png",
        wait=True,
    )
    assert sent.author.name == "Baker Bruno" and sent.webhook_id == hook.id
    (execution,) = world.fake.webhook_executions
    assert execution.username == "Baker Bruno"
    assert execution.avatar_url == "https://example.invalid/bruno.png"
    assert execution.content == "I am just a baker." and execution.thread_id is None
    stored = world.fake.messages_in(world.town)[-1]
    assert stored["author"]["username"] == "Baker Bruno" and "member" not in stored
    with pytest.raises(discord.HTTPException) as bad_name:
        await hook.send("hi", username="Discord Police", wait=True)
    assert bad_name.value.code == 50035
    assert [w.id for w in await channel.webhooks()] == [hook.id]


async def test_deleted_webhook_is_not_found(world: World) -> None:
    hook = await world.channel().create_webhook(name="Mafia Stage")
    world.fake.delete_webhook(hook.id)
    with pytest.raises(discord.NotFound) as gone:
        await hook.send("hello?", username="Baker Bruno", wait=True)
    assert gone.value.code == 10015
    assert world.fake.webhook_executions == []


async def test_private_thread_with_members_and_webhook_posts_into_it(world: World) -> None:
    channel = world.channel()
    joined: asyncio.Queue[int] = asyncio.Queue()

    @world.client.event
    async def on_thread_member_join(member: discord.ThreadMember) -> None:
        await joined.put(member.id)

    thread = await channel.create_thread(
        name="mafia-den",
        type=discord.ChannelType.private_thread,
        invitable=False,
        reason="night chat",
    )
    state = world.fake.channels[thread.id]
    assert state.type == PRIVATE_THREAD and not state.invitable
    await thread.add_user(discord.Object(world.alice.id))
    assert await asyncio.wait_for(joined.get(), 5) == world.alice.id
    assert set(state.member_ids) == {world.fake.bot.id, world.alice.id}

    hook = await channel.create_webhook(name="Mafia Stage")
    await hook.send("The mafia wakes.", username="Narrator", thread=thread, wait=True)
    assert world.fake.webhook_executions[0].thread_id == thread.id
    assert world.fake.contents_in(state) == ["The mafia wakes."]

    await thread.edit(archived=True, locked=True)
    assert state.archived and state.locked
    with pytest.raises(discord.HTTPException) as archived:
        await hook.send("too late", username="Narrator", thread=thread, wait=True)
    assert archived.value.code == 50083


async def test_rate_limited_send_is_retried_once_and_in_order(
    world: World,
    caplog: pytest.LogCaptureFixture,
) -> None:
    channel = world.channel()
    rule = world.fake.rate_limit("POST /channels/*/messages", times=1, skip=1, retry_after=0.05)
    for text in ("one", "two", "three"):
        await channel.send(text)
    assert rule.hits == 1
    posts = world.fake.requests_to("POST /channels/{channel_id}/messages")
    assert [(r.json["content"], r.status) for r in posts] == [
        ("one", 200),
        ("two", 429),
        ("two", 200),
        ("three", 200),
    ]
    assert world.fake.contents_in(world.town) == ["one", "two", "three"]
    assert any("rate limited" in r.getMessage() for r in caplog.records)

    hook = await channel.create_webhook(name="Mafia Stage")
    world.fake.rate_limit("POST /webhooks/{webhook_id}/{webhook_token}", retry_after=0.05)
    await hook.send("four", username="Narrator", wait=True)
    assert world.fake.contents_in(world.town)[-1] == "four"
    assert len(world.fake.webhook_executions) == 1


async def test_missing_permission_is_forbidden_and_visible_to_the_client(world: World) -> None:
    channel = world.channel()
    updated = asyncio.Event()

    @world.client.event
    async def on_guild_channel_update(
        before: discord.abc.GuildChannel, after: discord.abc.GuildChannel
    ) -> None:
        updated.set()

    world.fake.deny_permission(world.town, "send_messages")
    await asyncio.wait_for(updated.wait(), 5)
    assert not channel.permissions_for(channel.guild.me).send_messages
    with pytest.raises(discord.Forbidden) as denied:
        await channel.send("the town is silenced")
    assert denied.value.code == 50013
    world.fake.allow_permission(world.town, "send_messages")
    await channel.send("back")
    assert world.fake.contents_in(world.town) == ["back"]


async def test_overwrites_and_dms(world: World) -> None:
    channel = world.channel()
    alice = channel.guild.get_member(world.alice.id)
    assert alice is not None
    await channel.set_permissions(alice, send_messages=False, reason="alice died")
    overwrite = world.fake.channels[world.town.id].overwrites[alice.id]
    assert overwrite.deny == discord.Permissions(send_messages=True).value
    assert world.fake.requests_to("PUT /channels/*/permissions/*")[0].reason == "alice died"
    with pytest.raises(PermissionError):
        await world.fake.send_message(world.town, world.alice, "I am not dead!")

    dm = await alice.create_dm()
    await dm.send("You are the Detective.")
    assert world.fake.contents_in(dm.id) == ["You are the Detective."]
    world.fake.block_dms(world.bob)
    bob = channel.guild.get_member(world.bob.id)
    assert bob is not None
    with pytest.raises(discord.Forbidden) as closed:
        await bob.send("You are the Doctor.")
    assert closed.value.code == 50007


async def test_deleted_channel_is_unknown(world: World) -> None:
    channel = world.channel()
    world.fake.delete_channel(world.town)
    with pytest.raises(discord.NotFound) as gone:
        await channel.send("anyone?")
    assert gone.value.code == 10003


async def test_close_is_clean(fake_discord: FakeDiscord, caplog: pytest.LogCaptureFixture) -> None:
    fake_discord.add_guild()
    caplog.set_level(logging.DEBUG)
    intents = discord.Intents.none()
    intents.guilds = True
    client = discord.Client(intents=intents, guild_ready_timeout=0.05)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with running_client(client, fake_discord):
            pass
        assert client.is_closed()
        await fake_discord.wait_until(lambda: not fake_discord.connections, 20.0)
        del client
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
    assert not [r for r in caplog.records if "Unclosed" in r.getMessage()]
    assert not fake_discord.connections
    # discord.py's close(code=1000) first breaks its own receive loop, which closes the socket
    # with 4000; Discord (and the fake) therefore keep that session resumable.
    assert fake_discord.gateway_log[-1] == {"event": "disconnect", "code": 4000, "by_server": False}


async def test_guild_routes_roles_channels_and_threads_from_messages(world: World) -> None:
    client, fake = world.client, world.fake
    guild = client.get_guild(world.guild.id)
    assert guild is not None
    fetched = await client.fetch_guild(world.guild.id)
    assert fetched.name == "Mafia Club"
    alice = await guild.fetch_member(world.alice.id)
    assert alice.name == "alice"
    with pytest.raises(discord.NotFound) as unknown_member:
        await guild.fetch_member(fake.snowflakes.next())
    assert unknown_member.value.code == 10007

    dead = await guild.create_role(name="Dead", reason="night 1")
    await alice.add_roles(dead, reason="killed")
    assert dead.id in fake.guilds[guild.id].members[alice.id].roles
    cached_alice = guild.get_member(world.alice.id)
    assert cached_alice is not None
    await fake.wait_until(lambda: dead in cached_alice.roles, 20.0)
    bot_role = next(r for r in await guild.fetch_roles() if r.managed)
    with pytest.raises(discord.Forbidden):  # a role above the bot's own cannot be assigned
        await alice.add_roles(bot_role)

    day2 = await guild.create_text_channel(
        "day-2",
        overwrites={
            guild.default_role: discord.PermissionOverwrite(view_channel=False),
            alice: discord.PermissionOverwrite(view_channel=True),
        },
    )
    assert {c.id for c in await guild.fetch_channels()} == {world.town.id, day2.id}
    assert fake.permissions_for(fake.channels[day2.id], world.bob) == 0
    with pytest.raises(PermissionError):
        await fake.send_message(day2.id, world.bob, "can I see this?")

    channel = world.channel()
    starter = await channel.send("Trial of alice")
    thread = await starter.create_thread(name="trial")
    assert thread.id == starter.id and thread.type is discord.ChannelType.public_thread
    await starter.pin()
    assert fake.messages[starter.id]["pinned"]
    active = await guild.active_threads()
    assert [t.id for t in active] == [thread.id]
    with pytest.raises(discord.HTTPException) as again:
        await starter.create_thread(name="trial again")
    assert again.value.code == 160004


async def test_injected_server_faults_surface_as_discord_errors(world: World) -> None:
    channel = world.channel()
    world.fake.fail("POST /channels/*/messages", 403, 50013, "Missing Permissions")
    with pytest.raises(discord.Forbidden) as denied:
        await channel.send("blocked once")
    assert denied.value.code == 50013
    await channel.send("then fine")
    assert world.fake.contents_in(world.town) == ["then fine"]
