"""On the fake Discord: the survey's guess closes at the reveal, `/mafia export` and
`/mafia spotrate` name no AI before it, and a kicked person is not announced as the AI."""

from __future__ import annotations

from pathlib import Path

from bot.players import survey
from tests.bot.discord.harness import Table, answered, bot_stack, custom_ids, db_url_in
from tests.bot.discord.test_reveal_and_stats import REVEAL, vote_out_the_mafia
from tests.fakes.discord import FakeDiscord
from tests.fakes.discord.model import JSON, Member


async def pick(fake: FakeDiscord, table: Table, person: Member, key: str, value: str) -> str:
    """Choose ``value`` in ``person``'s survey menu ``key``; the bot's answer."""
    mine = table.booth(person)
    assert mine is not None
    menus: JSON = await fake.wait_for_message(mine, lambda m: bool(m["components"]))
    ids = {cid.split(":")[-1]: cid for cid in custom_ids(menus)}
    return (
        await (await fake.select(menus, ids[key], [value], user=person)).response()
    ).content or ""


async def test_a_guess_after_the_reveal_is_refused_and_never_counted(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    table = Table.build(fake)
    async with bot_stack(fake, db_url_in(tmp_path), speed=30.0, reveal_after=2.0) as bot:
        game_id = await table.play(day_minutes=3.0, vote_minutes=1.0, night_minutes=1.0)
        agent, _ = await vote_out_the_mafia(fake, table, game_id)
        await table.wait_stage(
            lambda m: m["content"] == f"{REVEAL} {agent}. 0 of 5 of you named them.", within=10
        )
        late = table.humans[1]
        assert await pick(fake, table, late, "ai0", agent) == survey.GUESS_CLOSED
        assert await pick(fake, table, late, "sim", "4") == "Saved: 4 of 5. (2 question(s) left.)"
        await pick(fake, table, late, "time", "4")
        done = await pick(fake, table, late, "rel", "4")
        assert done == "Saved: 4 of 5. All done, thank you for playing!", done
        await bot.delivery.drain()
        stats = await answered(await table.slash("mafia stats", late))
        assert "Spotted the AI: no guesses yet." in stats["content"], stats["content"]
        rate = await table.answer(await table.slash("mafia spotrate", table.mod))
        assert "Overall: 0 of 0 answers named an AI" in rate, rate


async def test_export_and_spotrate_name_no_ai_before_the_reveal(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    table = Table.build(fake)
    async with bot_stack(fake, db_url_in(tmp_path), speed=30.0, reveal_after=600.0):
        game_id = await table.play(day_minutes=3.0, vote_minutes=1.0, night_minutes=1.0)
        agent, _ = await vote_out_the_mafia(fake, table, game_id)
        # a moderator who played names the agent, then asks for the rate and the export
        said = await pick(fake, table, table.humans[0], "ai0", agent)
        assert said.startswith(f"Your guess: {agent}.")
        rate = await table.answer(await table.slash("mafia spotrate", table.mod))
        assert rate == "No finished game with an AI player on this server yet.", rate
        export = await table.slash("mafia export", table.mod)
        await export.response()
        sent = await export.followup(0)
        assert not sent.get("attachments"), sent
        assert f"{game_id}: skipped, its AI has not been revealed yet" in sent["content"]
        assert agent not in sent["content"]


async def test_a_kicked_person_is_not_announced_as_the_ai(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    """Blake says one line and is kicked; an agent plays the seat on. The reveal names the one
    AI and tells Blake's seat's story; those who named Blake are not credited."""
    fake = fake_discord
    table = Table.build(fake)
    async with bot_stack(fake, db_url_in(tmp_path), speed=30.0, reveal_after=600.0) as bot:
        game_id = await table.play(day_minutes=3.0, vote_minutes=1.0, night_minutes=1.0)
        started = await table.wait_stage(lambda m: "The game begins" in m["content"])
        everyone = started["content"].split("players: ")[1].split(". ")[0]
        players = {n.strip() for n in everyone.replace(" and ", ", ").split(",")}
        (agent,) = players - set(table.names.values())
        gone = next(p for p in table.humans if table.roles[p.id] != "mafia")
        blake = table.names[gone.id]
        await table.say(gone, "hello from the person in this seat")
        await table.wait_post("hello from the person in this seat")
        kicked = await table.answer(await table.slash("mafia kick", table.mod, member=gone))
        assert "an agent plays the seat now" in kicked
        stayed = [p for p in table.humans if p is not gone]
        vote = await table.wait_stage(
            lambda m: "Voting is open" in m["content"] and bool(m["components"]), within=20
        )
        select_id = next(c for c in custom_ids(vote) if c.startswith(f"mafia:vote:{game_id}:"))
        mafia = [table.names[p.id] for p in stayed if table.roles[p.id] == "mafia"]
        target = mafia[0] if mafia else agent  # (the agent may be the mafia)
        for person in stayed:
            choice = target if table.names[person.id] != target else agent
            await (await fake.select(vote, select_id, [choice], user=person)).response()
        await table.wait_stage(lambda m: "win!" in m["content"], within=20)
        for n, person in enumerate(stayed):
            named = agent if n == 0 else blake
            said = await pick(fake, table, person, "ai0", named)
            assert said.startswith(f"Your guess: {named}.")
            for key in ("sim", "time", "rel"):
                await pick(fake, table, person, key, "3")
        expected = (
            f"{REVEAL} {agent}. {blake}'s player left on day 1; an AI played the seat from "
            f"then on. 1 of 4 of you named {agent}."
        )
        await table.wait_stage(lambda m: m["content"] == expected, within=10)
        await bot.delivery.drain()
        for n, person in enumerate(stayed):
            stats = await answered(await table.slash("mafia stats", person))
            spotted = "1 of 1 (100%)" if n == 0 else "0 of 1 (0%)"
            assert f"Spotted the AI: {spotted};" in stats["content"], stats["content"]
