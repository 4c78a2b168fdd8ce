"""`/mafia spotrate` on Discord: moderators see this server's spot-the-AI rate."""

from __future__ import annotations

from pathlib import Path

from bot.discord.commands import MODS_ONLY
from bot.store.db import make_engine, session_scope
from bot.store.migrate import upgrade
from bot.store.models import Server
from tests.bot.discord.harness import Table, bot_stack, db_url_in
from tests.bot.test_spotrate import LLM, add_game
from tests.fakes.discord import FakeDiscord


async def test_spotrate_is_for_moderators_and_shows_this_server(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    url = db_url_in(tmp_path)
    upgrade(url)
    engine = make_engine(url)
    with session_scope(engine) as s:
        here = Server(platform="discord", external_id=str(table.guild.id), name="Mafia Club")
        other = Server(platform="discord", external_id="999")
        s.add(here)
        s.add(other)
        s.flush()
        ids = (here.id, other.id)
    assert ids[0] is not None and ids[1] is not None
    add_game(engine, ids[0], "h1", players=6, agents={0: LLM}, guesses={1: True, 2: True, 3: False})
    add_game(engine, ids[1], "o1", players=5, agents={4: LLM}, guesses={0: False, 1: False}, k=1)
    engine.dispose()
    async with bot_stack(fake_discord, url):
        refused = await table.answer(await table.slash("mafia spotrate", table.humans[1]))
        assert refused == MODS_ONLY
        shown = await table.answer(await table.slash("mafia spotrate", table.mod))
        assert "Overall: 2 of 3 answers named an AI: 67% (95% CI 21%–94%)" in shown, shown
        assert "chance 20%; 1 game" in shown
        assert "llm / model-x / wry" in shown
