"""Who may do what: every refusal is a clear ephemeral answer, and changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import Session, select

from bot.discord.actions import NOT_A_PLAYER
from bot.discord.commands import MODS_ONLY, NOT_BOUND
from bot.store.db import make_engine
from bot.store.models import Consent
from tests.bot.discord.harness import Table, bot_stack, component, db_url_in
from tests.fakes.discord import FakeDiscord


async def test_moderator_commands_refuse_everyone_else(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    player = table.humans[1]
    async with bot_stack(fake_discord, db_url_in(tmp_path)):
        for command, options in (
            ("mafia setup", {}),
            ("mafia config", {"day_minutes": 5.0}),
            ("mafia status", {}),
            ("mafia end", {}),
            ("mafia export", {}),
            ("mafia kick", {"member": table.mod}),
        ):
            inter = await table.slash(command, player, **options)
            answer = await inter.response()
            assert answer.ephemeral, command
            if command == "mafia end":
                assert answer.content == "There is no open game in this channel."
            else:
                assert answer.content == MODS_ONLY, command
        new = await (await table.slash("mafia new", player)).response()
        assert new.ephemeral and new.content == NOT_BOUND
        assert fake_discord.messages_in(table.town) == []


async def test_lobby_refusals_and_a_declined_consent(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    url = db_url_in(tmp_path)
    host, other, shy = table.humans[1], table.humans[2], table.humans[3]
    async with bot_stack(fake_discord, url):
        await table.setup()
        lobby = await table.open(host)
        gid = table.game_id(lobby)
        await table.join(host, lobby)
        declined = await table.join(shy, lobby, agree=False)
        assert declined.type == 7 and "not joined" in (declined.data.get("content") or "")
        again = await (
            await fake_discord.click(lobby, f"mafia:lobby:{gid}:join", user=table.humans[1])
        ).response()
        assert again.ephemeral and again.content == "You are already in this game."
        too_few = await (await table.start(host, lobby)).response()
        assert too_few.ephemeral and "at least 5 players" in (too_few.content or "")
        await table.join(other, lobby)
        not_host = await (await table.start(other, lobby)).response()
        assert not_host.content == "Only the host or a moderator can start the game."
        second = await (await table.slash("mafia new", other)).response()
        assert second.ephemeral and f"Game {gid} is still open" in (second.content or "")
    with Session(make_engine(url)) as session:
        answers = {c.user_id: c.agreed for c in session.exec(select(Consent)).all()}
    assert answers == {str(host.id): True, str(other.id): True, str(shy.id): False}


@pytest.mark.parametrize("speed", [40.0])
async def test_spectators_dead_players_and_stray_lines(
    fake_discord: FakeDiscord, tmp_path: Path, speed: float
) -> None:
    table = Table.build(fake_discord)
    async with bot_stack(fake_discord, db_url_in(tmp_path), speed=speed):
        game_id = await table.play(day_minutes=0.5, vote_minutes=2.0, night_minutes=10.0)
        # A player typing straight into the stage: removed, and told where to type.
        stray = await fake_discord.send_message(table.town, table.humans[0], "oops", force=True)
        booth0 = table.booth(table.humans[0])
        assert booth0 is not None
        await fake_discord.wait_for_message(booth0, lambda m: "not relayed" in m["content"])
        assert int(stray["id"]) not in fake_discord.messages

        vote = await table.wait_stage(lambda m: "Voting is open" in m["content"])
        select_id = component(vote, f"mafia:vote:{game_id}:")
        bystanders = [p for p in table.humans if table.roles[p.id] == "bystander"]
        victim = bystanders[0]
        name = table.names[victim.id]
        watcher = await (
            await fake_discord.select(vote, select_id, [name], user=table.spectator)
        ).response()
        assert watcher.ephemeral and watcher.content == NOT_A_PLAYER
        for person in table.humans:
            choice = name if person is not victim else table.names[bystanders[1].id]
            await (await fake_discord.select(vote, select_id, [choice], user=person)).response()
        await table.wait_stage(lambda m: f"{name} was voted out" in m["content"])
        booth = table.booth(victim)
        assert booth is not None
        await fake_discord.wait_for_message(booth, lambda m: "eliminated" in m["content"])
        await table.say(victim, "but I was innocent!")
        note = await fake_discord.wait_for_message(
            booth, lambda m: "no longer relayed" in m["content"]
        )
        assert "keep watching" in note["content"]
        assert not table.stage_posts(lambda e: e.content == "but I was innocent!")
        late = await (
            await fake_discord.select(vote, select_id, [name], user=table.humans[4])
        ).response()
        assert late.ephemeral and late.content in (
            "That menu belongs to a phase that is over.",
            "You have been eliminated, so you can no longer vote or act. You can keep watching.",
        )


async def test_while_the_bot_restarts_new_games_joins_and_starts_are_refused_clearly(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    """SIGTERM's drain (`bot.ops.serve`) sets ``service.closing``, a moment before the gateway
    closes: what arrives in that moment gets one line and changes nothing."""
    table = Table.build(fake_discord, humans=6)
    host, late = table.humans[1], table.humans[2]
    async with bot_stack(fake_discord, db_url_in(tmp_path)) as bot:
        await table.setup()
        lobby = await table.open(host)
        for person in table.humans[1:]:
            if person is not late:
                await table.join(person, lobby)
        game = bot.service.games[table.game_id(lobby)]
        seats = len(game.seats)
        bot.service.closing = True
        refused = await table.join(late, lobby)
        assert refused.ephemeral and refused.content == (
            "The bot is restarting; join again in a minute."
        )
        start = await table.start(host, lobby)
        await start.response()  # deferred, then the answer follows
        said = await start.followup(0)
        assert said["content"] == "Can't start: The bot is restarting; start it again in a minute."
        elsewhere = fake_discord.add_channel(table.guild, "back-room")
        await table.answer(await table.slash("mafia setup", table.mod, elsewhere))
        new = await table.answer(await table.slash("mafia new", host, elsewhere))
        assert new == "The bot is restarting; open the game again in a minute."
        assert game.status == "lobby" and len(game.seats) == seats
