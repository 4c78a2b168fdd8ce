"""/mafia new takes a setup (offered by autocomplete) or one role a seat; a whole Discord game
with a custom six-role setup (5 people and the agent) plays to the town's win."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest

from bot.table.balance_estimate import ESTIMATING
from bot.table.config import setup_names
from tests.bot.balance_helpers import SHOWN, heartbeat, install, release_after_beats
from tests.bot.discord.harness import JSON, Table, bot_stack, component, db_url_in
from tests.fakes.discord import FakeDiscord

ROLES = ("godfather", "detective", "doctor", "jester", "tracker", "bystander")


def test_the_setup_box_offers_setups_or_the_typed_list() -> None:
    assert setup_names("sal") == ["salem"]
    assert "llmafia" in setup_names("")
    assert setup_names("godfather, doctor") == ["godfather, doctor"]


async def test_a_custom_setup_is_dealt_and_a_bad_one_refused(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    async with bot_stack(fake_discord, db_url_in(tmp_path), speed=40.0) as bot:
        assert "every permission" in await table.setup()
        commands = [*fake_discord.global_commands]
        commands += [c for cs in fake_discord.guild_commands.values() for c in cs]
        mafia = next(c for c in commands if c["name"] == "mafia")
        new = next(o for o in mafia["options"] if o["name"] == "new")
        assert next(o for o in new["options"] if o["name"] == "setup")["autocomplete"] is True
        text = await table.answer(await table.slash("mafia new", table.mod, setup="mafia,wizard"))
        assert text.startswith("Can't set up this game: Unknown role 'wizard'"), text
        assert not [g for g in bot.service.games.values() if g.status == "lobby"]

        game_id = await table.play(
            setup=",".join(ROLES), day_minutes=0.25, vote_minutes=3.0, night_minutes=3.0
        )
        game = bot.service.games[game_id]
        assert game.state is not None
        assert Counter(s.role for s in game.state.seats) == Counter(ROLES)
        for person in table.humans:  # each card is the registry's, in the person's booth
            assert table.roles[person.id] in ROLES
        # the five people vote the godfather out (a person or the agent): the town wins
        godfather = next(s.name for s in game.state.seats if s.role == "godfather")
        vote = await table.wait_stage(lambda m: "Voting is open" in m["content"], within=10)
        select_id = component(vote, f"mafia:vote:{game_id}:")
        voters = [p for p in table.humans if table.names[p.id] != godfather]
        for voter in voters:
            await (await fake_discord.select(vote, select_id, [godfather], user=voter)).response()
        done = await table.wait_stage(lambda m: "Bystanders win!" in m["content"], within=15)
        assert f"{godfather} (godfather)" in done["content"]


async def test_a_custom_setups_balance_estimate_reaches_the_lobby(
    fake_discord: FakeDiscord, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Measured in an executor while the loop keeps beating, drawn into the lobby when it
    comes in; a second lobby with the same setup shows it at once, from the cache."""
    slow, estimates = install(monkeypatch)
    table = Table.build(fake_discord)
    other = Table.build(fake_discord)
    async with bot_stack(fake_discord, db_url_in(tmp_path), speed=40.0):
        await table.setup()
        await other.setup()
        async with heartbeat(slow.beats):
            lobby = await table.open(setup=",".join(ROLES))
            assert ESTIMATING in lobby["embeds"][0]["description"]
            await release_after_beats(slow)
            shown = await fake_discord.wait_until(lambda: SHOWN in _lobby_text(fake_discord, lobby))
        assert shown
        assert slow.beats_during[0] >= 10  # the loop kept running while it was measured
        assert slow.threads[0] != threading.get_ident()
        assert [players for _, players in slow.calls] == [6]

        second = await other.open(setup=",".join(ROLES))
        assert SHOWN in second["embeds"][0]["description"]
        assert len(slow.calls) == 1 and estimates.measured == 1  # the cache's figure


def _lobby_text(fake: FakeDiscord, lobby: JSON) -> str:
    message = fake.messages.get(int(lobby["id"])) or lobby
    return str(message["embeds"][0]["description"])
