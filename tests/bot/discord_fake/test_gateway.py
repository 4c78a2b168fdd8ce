"""discord.py's real gateway client against the fake: login, READY, events, RESUME."""

from __future__ import annotations

import asyncio

import discord
import discord.gateway
import discord.http
import pytest

from tests.fakes.discord import FakeDiscord
from tests.fakes.discord_fixtures import discord_pointed_at, running_client


def intents(*, message_content: bool = True, members: bool = True) -> discord.Intents:
    value = discord.Intents.none()
    value.guilds = True
    value.guild_messages = True
    value.dm_messages = True
    value.members = members
    value.message_content = message_content
    return value


def make_client(with_intents: discord.Intents | None = None) -> discord.Client:
    return discord.Client(intents=with_intents or intents(), guild_ready_timeout=0.05)


async def test_ready_caches_guild_channels_and_chunked_members(fake_discord: FakeDiscord) -> None:
    guild = fake_discord.add_guild("Mafia Club")
    town = fake_discord.add_channel(guild, "town-square", topic="Day chat")
    alice = fake_discord.add_member(guild, "alice", nick="Alice")
    ready = asyncio.Event()
    client = make_client()

    @client.event
    async def on_ready() -> None:
        ready.set()

    async with running_client(client, fake_discord):
        assert ready.is_set()
        cached = client.get_guild(guild.id)
        assert cached is not None and cached.name == "Mafia Club"
        assert client.user is not None and client.user.id == fake_discord.bot.id
        assert client.application_id == fake_discord.application_id
        channel = cached.get_channel(town.id)
        assert isinstance(channel, discord.TextChannel) and channel.topic == "Day chat"
        # GUILD_CREATE carries only the bot; everyone else arrives by chunking (op 8).
        member = cached.get_member(alice.id)
        assert member is not None and member.display_name == "Alice"
        assert cached.chunked
        assert any(p.get("op") == 8 for p in fake_discord.gateway_received)
        me = cached.me
        assert me.guild_permissions.manage_webhooks and not me.guild_permissions.administrator
        # The heartbeat sent right after HELLO was acknowledged.
        assert any(p.get("op") == 1 for p in fake_discord.gateway_received)
        assert client.latency < 1.0

    connect = fake_discord.gateway_log[0]
    assert connect["query"] == {"v": "10", "encoding": "json", "compress": "zlib-stream"}
    assert fake_discord.resume_count == 0


async def test_member_messages_reach_on_message_in_channels_and_threads(
    fake_discord: FakeDiscord,
) -> None:
    guild = fake_discord.add_guild()
    town = fake_discord.add_channel(guild, "town-square")
    alice = fake_discord.add_member(guild, "alice")
    thread = fake_discord.add_thread(town, "mafia-den", private=True, members=[alice])
    received: asyncio.Queue[discord.Message] = asyncio.Queue()
    client = make_client()

    @client.event
    async def on_message(message: discord.Message) -> None:
        await received.put(message)

    async with running_client(client, fake_discord):
        sent = await fake_discord.send_message(town, alice, f"I vote <@{fake_discord.bot.id}>")
        first = await asyncio.wait_for(received.get(), 5)
        assert first.id == int(sent["id"])
        assert first.content == f"I vote <@{fake_discord.bot.id}>"
        assert isinstance(first.author, discord.Member) and first.author.id == alice.id
        assert client.user in first.mentions

        await fake_discord.send_message(thread, alice, "we kill bob")
        second = await asyncio.wait_for(received.get(), 5)
        assert isinstance(second.channel, discord.Thread)
        assert second.channel.id == thread.id and second.content == "we kill bob"

        await fake_discord.send_dm(alice, "psst")
        dm = await asyncio.wait_for(received.get(), 5)
        assert isinstance(dm.channel, discord.DMChannel) and dm.content == "psst"


async def test_a_member_cannot_post_where_discord_would_not_let_them(
    fake_discord: FakeDiscord,
) -> None:
    guild = fake_discord.add_guild()
    town = fake_discord.add_channel(guild, "town-square")
    alice = fake_discord.add_member(guild, "alice")
    bob = fake_discord.add_member(guild, "bob")
    den = fake_discord.add_thread(town, "mafia-den", private=True, members=[alice])
    with pytest.raises(PermissionError):
        await fake_discord.send_message(den, bob, "let me in")
    assert fake_discord.messages_in(den) == []


async def test_without_message_content_intent_guild_text_arrives_blank(
    fake_discord: FakeDiscord,
) -> None:
    guild = fake_discord.add_guild()
    town = fake_discord.add_channel(guild, "town-square")
    alice = fake_discord.add_member(guild, "alice")
    received: asyncio.Queue[discord.Message] = asyncio.Queue()
    client = make_client(intents(message_content=False))

    @client.event
    async def on_message(message: discord.Message) -> None:
        await received.put(message)

    async with running_client(client, fake_discord):
        await fake_discord.send_message(town, alice, "secret plan")
        assert (await asyncio.wait_for(received.get(), 5)).content == ""
        mention = f"<@{fake_discord.bot.id}> hello"
        await fake_discord.send_message(town, alice, mention)
        assert (await asyncio.wait_for(received.get(), 5)).content == mention


async def test_world_changes_after_ready_reach_the_cache(fake_discord: FakeDiscord) -> None:
    guild = fake_discord.add_guild()
    town = fake_discord.add_channel(guild, "town-square")
    events: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
    client = make_client()

    @client.event
    async def on_member_join(member: discord.Member) -> None:
        await events.put(("join", member.id))

    @client.event
    async def on_thread_create(thread: discord.Thread) -> None:
        await events.put(("thread", thread.id))

    @client.event
    async def on_guild_channel_delete(channel: discord.abc.GuildChannel) -> None:
        await events.put(("delete", channel.id))

    async with running_client(client, fake_discord):
        carol = fake_discord.add_member(guild, "carol")
        assert await asyncio.wait_for(events.get(), 5) == ("join", carol.id)
        thread = fake_discord.add_thread(town, "day-1")
        assert await asyncio.wait_for(events.get(), 5) == ("thread", thread.id)
        fake_discord.delete_channel(town)
        assert await asyncio.wait_for(events.get(), 5) == ("delete", town.id)
        cached = client.get_guild(guild.id)
        assert cached is not None
        assert cached.get_channel(town.id) is None and cached.get_member(carol.id) is not None


async def test_reconnect_resumes_and_replays_missed_events(fake_discord: FakeDiscord) -> None:
    guild = fake_discord.add_guild()
    town = fake_discord.add_channel(guild, "town-square")
    alice = fake_discord.add_member(guild, "alice")
    received: asyncio.Queue[str] = asyncio.Queue()
    resumed = asyncio.Event()
    client = make_client()

    @client.event
    async def on_message(message: discord.Message) -> None:
        await received.put(message.content)

    @client.event
    async def on_resumed() -> None:
        resumed.set()

    async with running_client(client, fake_discord):
        await fake_discord.drop_connections(4000)
        # Sent while the client is disconnected: buffered, then replayed on RESUME.
        await fake_discord.send_message(town, alice, "while you were away")
        await asyncio.wait_for(resumed.wait(), 10)
        assert await asyncio.wait_for(received.get(), 5) == "while you were away"
        await fake_discord.reconnect()  # op 7
        await fake_discord.wait_until(lambda: fake_discord.resume_count == 2, 10)
        await fake_discord.send_message(town, alice, "still here")
        assert await asyncio.wait_for(received.get(), 5) == "still here"

        (session,) = fake_discord.sessions.values()
        assert [f["s"] for f in session.buffer] == list(range(1, session.seq + 1))
        assert client.ws.sequence == session.seq

    paths = [e["path"] for e in fake_discord.gateway_log if e["event"] == "connect"]
    assert paths == ["/", "/resume", "/resume"]
    assert sum(1 for p in fake_discord.gateway_received if p.get("op") == 2) == 1


async def test_plain_text_frames_without_compression() -> None:
    async with FakeDiscord(gateway_compression=False) as fake:
        with discord_pointed_at(fake):
            fake.add_guild()
            client = make_client()
            async with running_client(client, fake):
                assert not fake.connections[0].compressed
                assert len(client.guilds) == 1


async def test_wrong_token_is_a_login_failure(fake_discord: FakeDiscord) -> None:
    client = make_client()
    try:
        with pytest.raises(discord.LoginFailure):
            await client.login("not-the-token")
    finally:
        await client.close()
    assert fake_discord.requests[0].status == 401


async def test_unapproved_privileged_intents_close_with_4014() -> None:
    async with FakeDiscord(privileged_intents=0) as fake:
        with discord_pointed_at(fake):
            fake.add_guild()
            client = make_client()
            with pytest.raises(discord.PrivilegedIntentsRequired):
                async with running_client(client, fake):
                    pass
            assert client.is_closed()


async def test_auto_sharded_client_finds_the_gateway_through_gateway_bot(
    fake_discord: FakeDiscord,
) -> None:
    guild = fake_discord.add_guild()
    client = discord.AutoShardedClient(intents=intents(), guild_ready_timeout=0.05)
    async with running_client(client, fake_discord):
        assert client.shard_count == 1 and client.get_guild(guild.id) is not None
        (session,) = fake_discord.sessions.values()
        assert session.shard == (0, 1)
    assert [r.path for r in fake_discord.requests_to("GET /gateway/bot")] == ["/gateway/bot"]


def test_pointing_discord_at_the_fake_is_undone_afterwards() -> None:
    original_base = discord.http.Route.BASE
    original_gateway = discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    fake = FakeDiscord()
    fake.api_base, fake.ws_url = "http://127.0.0.1:1/api/v10", "ws://127.0.0.1:1/"
    with discord_pointed_at(fake):
        assert fake.api_base == discord.http.Route.BASE
        assert str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY) == fake.ws_url
    assert discord.http.Route.BASE == original_base == "https://discord.com/api/v10"
    assert original_gateway == discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY


async def test_invalid_session_makes_the_client_identify_again(fake_discord: FakeDiscord) -> None:
    fake_discord.add_guild()
    client = make_client()

    async def identify_at_once(shard_id: int | None, *, initial: bool = False) -> None:
        """discord.py sleeps 5 s before every re-IDENTIFY by default."""

    client.before_identify_hook = identify_at_once  # type: ignore[method-assign]
    async with running_client(client, fake_discord):
        await fake_discord.invalidate_session(resumable=False)
        await fake_discord.wait_ready(count=2)
        identifies = [p for p in fake_discord.gateway_received if p.get("op") == 2]
        assert len(identifies) == 2
        await fake_discord.wait_until(lambda: client.is_ready(), 20.0)
