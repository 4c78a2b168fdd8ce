"""On the fake Discord: ``/mafia help``, the reveal on the stage once the survey closes (and not
a moment before), ``/mafia stats``, ``/mafia leaderboard`` and ``/mafia replay``."""

from __future__ import annotations

from pathlib import Path

from bot.discord.player_commands import NOT_YOURS
from bot.protection.privacy import withdraw
from tests.bot.discord.harness import Table, answered, bot_stack, custom_ids, db_url_in
from tests.fakes.discord import FakeDiscord

REVEAL = "The AI was"


def everything_the_players_saw(fake: FakeDiscord, table: Table) -> str:
    """The stage, every booth, every webhook post and every ephemeral answer so far."""
    texts = [str(m.get("content") or "") for m in fake.messages.values()]
    texts += [str(e.content or "") for e in fake.webhook_executions]
    return "\n".join(texts)


async def vote_out_the_mafia(fake: FakeDiscord, table: Table, game_id: str) -> tuple[str, str]:
    """Day 1's vote: every person votes the mafia out (the mafia votes for the agent); the
    game is won. Returns (the agent's character, the one voted out)."""
    started = await table.wait_stage(lambda m: "The game begins" in m["content"])
    everyone = started["content"].split("players: ")[1].split(". ")[0]
    players = {n.strip() for n in everyone.replace(" and ", ", ").split(",")}
    (agent,) = players - set(table.names.values())
    vote = await table.wait_stage(
        lambda m: "Voting is open" in m["content"] and bool(m["components"])
    )
    select_id = next(c for c in custom_ids(vote) if c.startswith(f"mafia:vote:{game_id}:"))
    mafia = [table.names[p.id] for p in table.humans if table.roles[p.id] == "mafia"]
    target = mafia[0] if mafia else agent
    for person in table.humans:
        choice = target if table.names[person.id] != target else agent
        await (await fake.select(vote, select_id, [choice], user=person)).response()
    await table.wait_stage(lambda m: "win!" in m["content"])
    return agent, target


async def test_the_reveal_comes_when_the_window_closes(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    """Nobody answers the survey: the reveal still comes, MAFIABOT_REVEAL_AFTER_SECONDS after
    the end (here 2 s), once."""
    fake = fake_discord
    table = Table.build(fake)
    async with bot_stack(fake, db_url_in(tmp_path), speed=30.0, reveal_after=2.0) as bot:
        game_id = await table.play(day_minutes=3.0, vote_minutes=1.0, night_minutes=1.0)
        agent, _ = await vote_out_the_mafia(fake, table, game_id)
        await bot.delivery.drain()
        assert REVEAL not in everything_the_players_saw(fake, table)
        await table.wait_stage(
            lambda m: m["content"] == f"{REVEAL} {agent}. 0 of 5 of you named them.", within=10
        )
        # a late answer changes nothing on the stage
        mine = table.booth(table.humans[1])
        assert mine is not None
        survey = await fake.wait_for_message(mine, lambda m: bool(m["components"]))
        ids = {cid.split(":")[-1]: cid for cid in custom_ids(survey)}
        for key, value in (("ai0", agent), ("sim", "4"), ("time", "3"), ("rel", "5")):
            await (await fake.select(survey, ids[key], [value], user=table.humans[1])).response()
        await bot.delivery.drain()
        assert everything_the_players_saw(fake, table).count(REVEAL) == 1


async def test_help_reveal_stats_leaderboard_replay(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    table = Table.build(fake)
    async with bot_stack(fake, db_url_in(tmp_path), speed=30.0) as bot:
        assert "every permission" in await table.setup()
        # the server's defaults put the doctor in play: the help lists it
        assert "roles" in await table.answer(
            await table.slash("mafia config", table.mod, roles="doctor")
        )
        inter = await table.slash("mafia help", table.humans[1])
        helped = await answered(inter)
        assert helped["flags"] & 64  # private to the asker
        text = helped["content"] + "\n" + (await inter.followup(1))["content"]  # (two pieces)
        assert "**Join**: press **Join**" in text and "**Vote**" in text
        assert "**doctor**" in text and "**mafia**" in text and "detective" not in text
        assert "private thread" in text and "/mafia stats" in text

        lobby = await table.open(day_minutes=3.0, vote_minutes=1.0, night_minutes=1.0)
        for person in table.humans:
            await table.join(person, lobby)
        game_id = table.game_id(lobby)
        assert (await (await table.start(table.mod, lobby)).response()).type == 6
        for person in table.humans:
            await table.read_role(person)
        # now the help says where the asker's booth is
        booth = table.booth(table.humans[2])
        assert booth is not None
        inter = await table.slash("mafia help", table.humans[2])
        await answered(inter)
        assert f"<#{booth.id}>" in (await inter.followup(1))["content"]

        agent, target = await vote_out_the_mafia(fake, table, game_id)

        # Four of five answer the whole survey: nobody is told who the AI was.
        guesses: list[str] = []
        for n, person in enumerate(table.humans):
            mine = table.booth(person)
            assert mine is not None
            survey = await fake.wait_for_message(mine, lambda m: bool(m["components"]))
            ids = {cid.split(":")[-1]: cid for cid in custom_ids(survey)}
            guess = agent if n != 1 else target if table.names[person.id] != target else agent
            guesses.append(guess)
            for key, value in (("ai0", guess), ("sim", "4"), ("time", "3"), ("rel", "5")):
                inter = await fake.select(survey, ids[key], [value], user=person)
                said = (await inter.response()).content or ""
            assert "announced in the game channel" in said and agent not in said
            if n < len(table.humans) - 1:
                await bot.delivery.drain()
                assert REVEAL not in everything_the_players_saw(fake, table)
                stats = await answered(await table.slash("mafia stats", person))
                assert "No games counted" in stats["content"]  # not before the reveal
                if n == 0:  # the game's replay shows the AI: not before the reveal
                    early = await answered(await table.slash("mafia replay", person, game=game_id))
                    assert "survey is still open" in early["content"], early
                    assert not early.get("attachments") and agent not in early["content"]
        # (the second person names the one voted out: when the mafia voted out was the agent
        # itself, that is the agent too)
        spotted = guesses.count(agent)
        expected = f"{REVEAL} {agent}. {spotted} of 5 of you named them."
        shown = await table.wait_stage(lambda m: m["content"] == expected)
        assert shown["author"]["id"] == str(fake.bot.id) or shown.get("webhook_id")
        await bot.delivery.drain()
        assert everything_the_players_saw(fake, table).count(REVEAL) == 1  # once

        # stats and the leaderboard: people only, the agent never
        first = table.humans[0]
        stats = await answered(await table.slash("mafia stats", first))
        assert stats["flags"] & 64
        assert f"<@{first.id}>" in stats["content"] and "Games: 1" in stats["content"]
        assert "Spotted the AI: 1 of 1 (100%)" in stats["content"]
        other = await answered(await table.slash("mafia stats", first, member=table.humans[1]))
        assert f"<@{table.humans[1].id}>" in other["content"]
        inter = await table.slash("mafia leaderboard", first)
        await inter.response()
        told = await inter.followup(0)
        assert told["flags"] & 64
        board = told["content"]
        assert sorted(int(x) for x in __import__("re").findall(r"<@(\d+)>", board)) == sorted(
            p.id for p in table.humans
        )
        assert agent not in board and "Not ranked yet" in board
        assert "You: not ranked yet (1 of 3 games)." in board
        assert __import__("re").search(
            rf"The AI: 1 game, won [01] of 1 \(\d+%\); named by {spotted} of 5 guesses", board
        ), board

        # withdrawal takes a person off the board
        gone = table.humans[3]
        await bot.links.run(withdraw, bot.engine, "discord", str(table.guild.id), str(gone.id))
        inter = await table.slash("mafia leaderboard", first)
        await inter.response()
        board = (await inter.followup(0))["content"]
        assert f"<@{gone.id}>" not in board and f"<@{first.id}>" in board

        # their history: role, result, who the AI was and their own guess, with the replay
        inter = await table.slash("mafia history", first)
        await inter.response()
        told = await inter.followup(0)
        assert told["flags"] & 64
        mine_now = told["content"]
        assert f"`{game_id}`" in mine_now and f"The AI was {agent}" in mine_now
        assert f"you named {guesses[0]} (right)" in mine_now
        assert f"/mafia replay game:{game_id}" in mine_now
        assert "won 1 of 1" in mine_now or "won 0 of 1" in mine_now
        inter = await table.slash("mafia history", gone)  # withdrawn: their games are gone
        await inter.response()
        assert "No finished games" in (await inter.followup(0))["content"]

        # the replay: for those who played and moderators, as a file
        refused = await answered(await table.slash("mafia replay", table.spectator, game=game_id))
        assert refused["content"] == NOT_YOURS
        refused = await answered(await table.slash("mafia replay", gone, game=game_id))
        assert refused["content"] == NOT_YOURS
        inter = await table.slash("mafia replay", table.humans[1], game=game_id)
        await inter.response()
        sent = await inter.followup(0)
        assert sent["attachments"][0]["filename"] == f"mafia-replay-{game_id}.html"
        missing = await answered(await table.slash("mafia replay", table.mod, game="nope"))
        assert "no game 'nope'" in missing["content"]
        inter = await table.slash("mafia replay", table.mod, game=game_id)
        await inter.response()
        sent = await inter.followup(0)
        assert sent["flags"] & 64
        assert sent["attachments"][0]["filename"] == f"mafia-replay-{game_id}.html"
        page = fake.attachments[int(sent["attachments"][0]["id"])].data.decode()
        assert f"<b id='ai'>{agent}</b>" in page
        for person in table.humans:  # character names only
            assert person.user.username not in page and str(person.id) not in page
