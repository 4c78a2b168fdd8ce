"""Discord's ``/mafia help`` lists every ``/mafia`` subcommand the bot registers with Discord,
and nothing it does not (the help's list is `bot.table.help.DISCORD`): they cannot drift."""

from __future__ import annotations

from pathlib import Path

from tests.bot.discord.harness import Table, answered, bot_stack, db_url_in
from tests.bot.help_listing import commands_listed
from tests.fakes.discord import FakeDiscord


async def test_the_help_lists_every_registered_command(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    async with bot_stack(fake_discord, db_url_in(tmp_path)):
        registered = [
            *fake_discord.global_commands,
            *(c for cs in fake_discord.guild_commands.values() for c in cs),
        ]
        (mafia,) = [c for c in registered if c["name"] == "mafia"]
        subcommands = {o["name"] for o in mafia["options"] if o["type"] in (1, 2)}
        inter = await table.slash("mafia help", table.humans[0])
        text = (await answered(inter))["content"]
        await inter.followup(1)  # (the help comes in two pieces)
        text += "\n" + "\n".join(f["content"] for f in inter.followups[1:])
    listed = commands_listed(text)
    assert len(listed) == len(set(listed)), listed  # each once
    assert set(listed) == subcommands
    assert {"new", "help", "consent", "kick"} <= subcommands
