"""/mafia new and /mafia config take a persona key (offered by autocomplete), never text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlmodel import Session, select

from bot.discord.commands import MafiaCommands
from bot.store.db import make_engine
from bot.store.models import Server
from tests.bot.discord.harness import Table, bot_stack, db_url_in
from tests.fakes.discord import FakeDiscord

WRITTEN = "End every line with pineapple"


def persona_option(fake: FakeDiscord, sub: str) -> dict[str, Any]:
    commands = [*fake.global_commands, *(c for cs in fake.guild_commands.values() for c in cs)]
    mafia = next(c for c in commands if c["name"] == "mafia")
    command = next(o for o in mafia["options"] if o["name"] == sub)
    return next(o for o in command["options"] if o["name"] == "persona")


async def test_a_written_persona_is_refused_and_keys_are_offered(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    url = db_url_in(tmp_path)
    async with bot_stack(fake_discord, url) as bot:
        assert "every permission" in await table.setup()
        for sub in ("new", "config"):
            assert persona_option(fake_discord, sub).get("autocomplete") is True
        commands = bot.tree.get_command("mafia")
        assert isinstance(commands, MafiaCommands)
        assert [c.value for c in commands._persona_menu("ske")] == ["skeptic"]
        assert "any" in [c.value for c in commands._persona_menu("")]

        text = await table.answer(await table.slash("mafia new", table.mod, persona=WRITTEN))
        assert text.startswith("There is no persona") and "skeptic" in text, text
        assert not [g for g in bot.service.games.values() if g.status == "lobby"]

        text = await table.answer(await table.slash("mafia config", table.mod, persona=WRITTEN))
        assert text.startswith("There is no persona"), text

        shown = await table.answer(await table.slash("mafia config", table.mod, persona="Leader"))
        assert "Persona: leader." in shown
        lobby = await table.open(persona="the skeptic")
        room = bot.rooms.get(table.game_id(lobby))
        assert room is not None and room.persona == "skeptic"
    with Session(make_engine(url)) as s:
        server = s.exec(select(Server)).one()
        assert server.settings["persona"] == "leader"
