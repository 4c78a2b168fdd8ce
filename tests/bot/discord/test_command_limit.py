"""Each person's commands are rate-limited by the service's `CommandLimiter` (issue 21): on
Discord, slash commands and lobby buttons over the limit change nothing and get one ephemeral
line saying when to try again; other people are not held up."""

from __future__ import annotations

import re
from pathlib import Path

from bot.limits import COMMAND_BURST, CommandLimiter
from tests.bot.discord.harness import Table, answered, bot_stack, db_url_in
from tests.fakes.discord import FakeDiscord

#: a refill slower than any test run: what is refused stays refused
SLOW = 600.0


def _wait(text: str) -> int:
    found = re.search(r"Please wait (\d+) s before you use a command again", text)
    assert found is not None, text
    return int(found.group(1))


async def test_a_flood_of_slash_commands_is_refused_quietly(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    async with bot_stack(fake_discord, db_url_in(tmp_path)) as bot:
        bot.service.commands = CommandLimiter(burst=COMMAND_BURST, every=SLOW)
        await table.setup()  # (the moderator's first command)
        flooder, other = table.humans[1], table.humans[2]
        for _ in range(COMMAND_BURST):
            text = await table.answer(await table.slash("mafia status", flooder))
            assert "Please wait" not in text, text
        before = fake_discord.messages_in(table.town)
        inter = await table.slash("mafia new", flooder)
        refused = await answered(inter)
        assert 0 < _wait(str(refused["content"])) <= SLOW
        assert inter.ephemeral
        # nothing was opened, nothing posted in the channel
        assert not bot.service.games
        assert fake_discord.messages_in(table.town) == before
        # their consent is never held back, nor help
        for never in ("mafia consent", "mafia help"):
            assert "Please wait" not in await table.answer(await table.slash(never, flooder))
        # someone else is not held up
        assert "is open" in await table.answer(await table.slash("mafia new", other))
        assert bot.service.commands.refused == 1


async def test_a_flood_of_lobby_clicks_is_refused_quietly(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    async with bot_stack(fake_discord, db_url_in(tmp_path)) as bot:
        await table.setup()
        lobby = await table.open()
        game_id = table.game_id(lobby)
        bot.service.commands = CommandLimiter(burst=COMMAND_BURST, every=SLOW)
        clicker = table.humans[1]
        game = bot.service.games[game_id]

        async def click(action: str) -> None:
            inter = await fake_discord.click(lobby, f"mafia:lobby:{game_id}:{action}", user=clicker)
            await inter.response()

        await table.join(clicker, lobby)  # (with its consent click, which is no command)
        for action in ("leave", "join", "leave", "join"):
            await click(action)
        assert game.seat_of_user(str(clicker.id)) is not None
        inter = await fake_discord.click(lobby, f"mafia:lobby:{game_id}:leave", user=clicker)
        refused = await answered(inter)
        assert 0 < _wait(str(refused["content"])) <= SLOW
        assert inter.ephemeral
        # the leave was not carried out
        assert game.seat_of_user(str(clicker.id)) is not None
        assert bot.service.commands.refused == 1
