"""Slash commands, persistent components and modals through discord.py's real dispatch."""

from __future__ import annotations

import asyncio
from typing import Any

import discord
import pytest
from discord import app_commands
from discord.ext import commands

from tests.fakes.discord import FakeDiscord, Guild
from tests.fakes.discord_fixtures import running_client


def intents() -> discord.Intents:
    value = discord.Intents.none()
    value.guilds = True
    value.guild_messages = True
    value.members = True
    value.message_content = True
    return value


class GameBot(commands.Bot):
    """A minimal bot shaped like the adapter will be: a synced guild tree and views."""

    def __init__(self, guild: Guild, views: tuple[discord.ui.View, ...] = ()) -> None:
        super().__init__(
            command_prefix=commands.when_mentioned, intents=intents(), guild_ready_timeout=0.05
        )
        self.home = discord.Object(guild.id)
        self.views_to_restore = views
        self.errors: list[BaseException] = []

        async def on_error(interaction: discord.Interaction, error: Exception) -> None:
            self.errors.append(error)

        self.tree.on_error = on_error  # type: ignore[method-assign]

    async def setup_hook(self) -> None:
        for view in self.views_to_restore:
            self.add_view(view)  # no message id: matched by custom_id after a restart
        await self.tree.sync(guild=self.home)


def mafia_group(calls: list[dict[str, Any]]) -> app_commands.Group:
    mafia = app_commands.Group(name="mafia", description="Play Mafia")

    @mafia.command(name="new", description="Open a game lobby")
    async def new(
        interaction: discord.Interaction,
        players: app_commands.Range[int, 5, 12],
        anonymous: bool = False,
        host: discord.Member | None = None,
    ) -> None:
        calls.append(
            {
                "players": players,
                "anonymous": anonymous,
                "host": host,
                "user": interaction.user,
                "channel": interaction.channel,
            }
        )
        await interaction.response.send_message(f"Lobby for {players} players", ephemeral=True)

    return mafia


async def test_slash_subcommand_with_options_answers_ephemerally(fake_discord: FakeDiscord) -> None:
    guild = fake_discord.add_guild()
    town = fake_discord.add_channel(guild, "town-square")
    alice = fake_discord.add_member(guild, "alice")
    bob = fake_discord.add_member(guild, "bob")
    calls: list[dict[str, Any]] = []
    bot = GameBot(guild)
    bot.tree.add_command(mafia_group(calls), guild=bot.home)

    async with running_client(bot, fake_discord):
        (registered,) = fake_discord.guild_commands[guild.id]
        assert registered["name"] == "mafia"
        assert [o["name"] for o in registered["options"]] == ["new"]

        inter = await fake_discord.slash(
            "mafia new", {"players": 7, "host": bob}, user=alice, channel=town
        )
        callback = await inter.response()
        assert callback.type == 4 and callback.ephemeral and callback.flags == 64
        assert callback.content == "Lobby for 7 players"
        (call,) = calls
        assert call["players"] == 7 and call["anonymous"] is False
        assert isinstance(call["host"], discord.Member) and call["host"].id == bob.id
        assert call["user"].id == alice.id and call["channel"].id == town.id
        assert inter.ephemeral and inter.original is not None
        assert fake_discord.messages_in(town) == []  # ephemeral: not in channel history
        posted = fake_discord.requests_to("POST /interactions/*/*/callback")[0]
        assert posted.json["data"]["flags"] == 64

        # Discord's client would not send these: the fake refuses them too.
        with pytest.raises(LookupError):
            await fake_discord.slash("mafia lynch", user=alice, channel=town)
        with pytest.raises(ValueError, match="players"):
            await fake_discord.slash("mafia new", {}, user=alice, channel=town)
    assert bot.errors == []


class VoteView(discord.ui.View):
    """Persistent: custom_ids carry the game id, so a restarted bot can route clicks."""

    def __init__(
        self, game: str, candidates: list[tuple[str, int]], log: list[tuple[str, Any]] | None = None
    ) -> None:
        super().__init__(timeout=None)
        self.log = log if log is not None else []
        button: discord.ui.Button[VoteView] = discord.ui.Button(
            label="Abstain", custom_id=f"mafia:vote:{game}", style=discord.ButtonStyle.secondary
        )
        button.callback = self.abstain  # type: ignore[method-assign]
        select: discord.ui.Select[VoteView] = discord.ui.Select(
            custom_id=f"mafia:target:{game}",
            placeholder="Vote to eliminate",
            options=[discord.SelectOption(label=name, value=str(uid)) for name, uid in candidates],
        )
        select.callback = self.vote  # type: ignore[method-assign]
        self.select = select
        self.add_item(button)
        self.add_item(select)

    async def abstain(self, interaction: discord.Interaction) -> None:
        self.log.append(("abstain", interaction.user.id))
        await interaction.response.edit_message(content=f"{interaction.user.name} abstains")

    async def vote(self, interaction: discord.Interaction) -> None:
        self.log.append(("vote", list(self.select.values)))
        await interaction.response.send_message(
            f"Vote for <@{self.select.values[0]}> counted", ephemeral=True
        )


async def test_persistent_view_routes_clicks_after_a_restart(fake_discord: FakeDiscord) -> None:
    guild = fake_discord.add_guild()
    town = fake_discord.add_channel(guild, "town-square")
    alice = fake_discord.add_member(guild, "alice")
    bob = fake_discord.add_member(guild, "bob")
    candidates = [("alice", alice.id), ("bob", bob.id)]

    first = GameBot(guild)
    async with running_client(first, fake_discord):
        channel = first.get_channel(town.id)
        assert isinstance(channel, discord.TextChannel)
        sent = await channel.send("Day 1: vote", view=VoteView("g42", candidates))
    posted = fake_discord.messages_in(town)[0]
    assert posted["id"] == str(sent.id)

    # A new process: the view is registered before it knows of any message.
    log: list[tuple[str, Any]] = []
    second = GameBot(guild, views=(VoteView("g42", candidates, log),))
    async with running_client(second, fake_discord):
        requests_before = len(fake_discord.requests)
        click = await fake_discord.click(posted, "mafia:vote:g42", user=bob)
        callback = await click.response()
        assert callback.type == 7  # UPDATE_MESSAGE edits the message the button is on
        assert fake_discord.messages[sent.id]["content"] == "bob abstains"

        pick = await fake_discord.select(posted, "mafia:target:g42", [str(alice.id)], user=bob)
        answer = await pick.response()
        assert answer.type == 4 and answer.ephemeral
        assert answer.content == f"Vote for <@{alice.id}> counted"
        assert log == [("abstain", bob.id), ("vote", [str(alice.id)])]
        # Routed from the interaction alone: the bot never fetched the message.
        assert not any(r.method == "GET" for r in fake_discord.requests[requests_before:])

        with pytest.raises(ValueError):
            await fake_discord.select(posted, "mafia:target:g42", ["nobody"], user=bob)
        with pytest.raises(LookupError):
            await fake_discord.click(posted, "mafia:vote:other-game", user=bob)
    assert second.errors == []


class NameModal(discord.ui.Modal, title="Your character"):
    name: discord.ui.TextInput[NameModal] = discord.ui.TextInput(
        label="Name", custom_id="mafia:name", max_length=32
    )

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(f"Welcome, {self.name.value}")


async def test_modal_opened_by_a_command_is_submitted(fake_discord: FakeDiscord) -> None:
    guild = fake_discord.add_guild()
    town = fake_discord.add_channel(guild, "town-square")
    alice = fake_discord.add_member(guild, "alice")
    bot = GameBot(guild)

    @bot.tree.command(name="join", description="Join the lobby", guild=bot.home)
    async def join(interaction: discord.Interaction) -> None:
        await interaction.response.send_modal(NameModal())

    async with running_client(bot, fake_discord):
        opened = await fake_discord.slash("join", user=alice, channel=town)
        assert (await opened.response()).type == 9
        assert opened.modal is not None and opened.modal["title"] == "Your character"
        submitted = await fake_discord.submit_modal(opened, {"mafia:name": "Vito"})
        answer = await submitted.response()
        assert answer.type == 4 and not answer.ephemeral
        assert fake_discord.contents_in(town) == ["Welcome, Vito"]
        with pytest.raises(ValueError, match="required"):
            await fake_discord.submit_modal(opened, {})
    assert bot.errors == []


async def test_first_followup_after_thinking_defer_replaces_the_placeholder(
    fake_discord: FakeDiscord,
) -> None:
    guild = fake_discord.add_guild()
    town = fake_discord.add_channel(guild, "town-square")
    alice = fake_discord.add_member(guild, "alice")
    bot = GameBot(guild)
    done = asyncio.Event()

    @bot.tree.command(name="role", description="Whisper your role", guild=bot.home)
    async def role(interaction: discord.Interaction) -> None:
        await interaction.response.defer(thinking=True, ephemeral=True)
        await interaction.followup.send("You are the Doctor")
        await interaction.followup.send("Protect someone tonight", ephemeral=True)
        await interaction.edit_original_response(content="You are the Doctor (edited)")
        done.set()

    async with running_client(bot, fake_discord):
        inter = await fake_discord.slash("role", user=alice, channel=town)
        deferred = await inter.response()
        assert deferred.type == 5 and deferred.ephemeral
        first = await inter.followup(0)
        second = await inter.followup(1)
        await asyncio.wait_for(done.wait(), 5)
        assert first["id"] == str(inter.original_id)  # the placeholder became the answer
        assert second["id"] != first["id"]
        original = inter.original
        assert original is not None
        assert original["content"] == "You are the Doctor (edited)"
        assert original["flags"] & 64 and not original["flags"] & 128  # ephemeral, done
        assert fake_discord.messages_in(town) == []
    assert bot.errors == []


async def test_deferred_update_then_edit_changes_the_clicked_message(
    fake_discord: FakeDiscord,
) -> None:
    guild = fake_discord.add_guild()
    town = fake_discord.add_channel(guild, "town-square")
    alice = fake_discord.add_member(guild, "alice")

    class StartView(discord.ui.View):
        def __init__(self) -> None:
            super().__init__(timeout=None)

        @discord.ui.button(label="Start", custom_id="mafia:start:g1")
        async def start(
            self, interaction: discord.Interaction, button: discord.ui.Button[StartView]
        ) -> None:
            await interaction.response.defer()
            button.disabled = True
            await interaction.edit_original_response(content="Game started", view=self)

    bot = GameBot(guild, views=(StartView(),))
    async with running_client(bot, fake_discord):
        channel = bot.get_channel(town.id)
        assert isinstance(channel, discord.TextChannel)
        msg = await channel.send("Lobby open", view=StartView())
        inter = await fake_discord.click(msg.id, "mafia:start:g1", user=alice)
        assert (await inter.response()).type == 6
        edited = await inter.edited()
        assert edited["id"] == str(msg.id) and edited["content"] == "Game started"
        with pytest.raises(PermissionError, match="disabled"):
            await fake_discord.click(msg.id, "mafia:start:g1", user=alice)
    assert bot.errors == []


async def test_a_late_callback_gets_unknown_interaction(fake_discord: FakeDiscord) -> None:
    guild = fake_discord.add_guild()
    town = fake_discord.add_channel(guild, "town-square")
    alice = fake_discord.add_member(guild, "alice")
    fake_discord.interaction_timeout = 0.0
    bot = GameBot(guild)

    @bot.tree.command(name="ping", description="Slow reply", guild=bot.home)
    async def ping(interaction: discord.Interaction) -> None:
        await asyncio.sleep(0.01)
        await interaction.response.send_message("pong")

    async with running_client(bot, fake_discord):
        inter = await fake_discord.slash("ping", user=alice, channel=town)
        await fake_discord.wait_until(lambda: bot.errors, 20.0)
        (error,) = bot.errors
        assert isinstance(error, app_commands.CommandInvokeError)
        assert isinstance(error.original, discord.NotFound) and error.original.code == 10062
        assert inter.callback is None and len(inter.rejected_callbacks) == 1


async def test_user_select_resolves_members(fake_discord: FakeDiscord) -> None:
    guild = fake_discord.add_guild()
    town = fake_discord.add_channel(guild, "town-square")
    alice = fake_discord.add_member(guild, "alice")
    bob = fake_discord.add_member(guild, "bob")
    chosen: list[discord.Member | discord.User] = []

    class TargetView(discord.ui.View):
        def __init__(self) -> None:
            super().__init__(timeout=None)

        @discord.ui.select(cls=discord.ui.UserSelect, custom_id="mafia:kill:g1")
        async def target(
            self, interaction: discord.Interaction, select: discord.ui.UserSelect[TargetView]
        ) -> None:
            chosen.extend(select.values)
            await interaction.response.send_message("Noted.", ephemeral=True)

    bot = GameBot(guild, views=(TargetView(),))
    async with running_client(bot, fake_discord):
        channel = bot.get_channel(town.id)
        assert isinstance(channel, discord.TextChannel)
        msg = await channel.send("Night: choose", view=TargetView())
        pick = await fake_discord.select(msg.id, "mafia:kill:g1", [bob], user=alice)
        assert (await pick.response()).ephemeral
        (target,) = chosen
        assert isinstance(target, discord.Member) and target.id == bob.id
    assert bot.errors == []
