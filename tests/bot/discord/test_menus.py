"""Menus offer what the engine allows: the doctor's night menu, end to end on the fake.

The engine lets the doctor protect themself and refuses last night's patient; the menu in the
doctor's booth must offer exactly that (it is built from the engine's choices, not by the
adapter).
"""

from __future__ import annotations

from pathlib import Path

from tests.bot.discord.harness import JSON, Table, bot_stack, component, db_url_in
from tests.fakes.discord import Channel, FakeDiscord, Member
from tests.fakes.discord.model import iter_components

# Seed 19 with detective+doctor: the humans (in joining order) are a bystander, the mafia, the
# doctor, the detective and a bystander; the agent is a bystander (see test_night).
SEED = 19


def options(menu: JSON, prefix: str) -> list[str]:
    return [
        o["value"]
        for c in iter_components(menu.get("components") or [])
        if str(c.get("custom_id", "")).startswith(prefix)
        for o in c.get("options", [])
    ]


async def night_menu(fake: FakeDiscord, booth: Channel, game_id: str, after: JSON | None) -> JSON:
    return await fake.wait_for_message(
        booth,
        lambda m: bool(options(m, f"mafia:act:{game_id}:")),
        after=after,
        within=10,
    )


async def votes_out(
    table: Table, game_id: str, voters: list[Member], target: str, after: JSON | None
) -> JSON:
    vote = await table.fake.wait_for_message(
        table.town, lambda m: "Voting is open" in m["content"], after=after, within=10
    )
    for voter in voters:
        answer = await (
            await table.fake.select(
                vote, component(vote, f"mafia:vote:{game_id}:"), [target], user=voter
            )
        ).response()
        assert answer.ephemeral and "Your vote" in (answer.content or ""), answer.content
    return vote


async def test_the_doctors_menu_offers_themself_and_not_last_nights_patient(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    table = Table.build(fake)
    async with bot_stack(fake, db_url_in(tmp_path), speed=40.0, test_seed=SEED) as bot:
        await table.setup()
        await table.answer(await table.slash("mafia config", table.mod, night_vote_minutes=0.5))
        game_id = await table.play(
            roles="detective+doctor", day_minutes=0.25, vote_minutes=1.0, night_minutes=2.0
        )
        b1, mafia, doctor, detective, b2 = table.humans
        assert table.roles[doctor.id] == "doctor"
        name = {p.id: table.names[p.id] for p in table.humans}
        agent = next(s.name for s in bot.service.games[game_id].seats if s.is_agent)
        booth = table.booth(doctor)
        assert booth is not None

        # Day 1: four people outvote the agent: b2 is out.
        vote1 = await votes_out(table, game_id, [b1, mafia, doctor, detective], name[b2.id], None)
        menu1 = await night_menu(fake, booth, game_id, None)
        offered = options(menu1, f"mafia:act:{game_id}:")
        assert name[doctor.id] in offered  # self-protection is allowed
        assert name[b2.id] not in offered
        act = await (
            await fake.select(
                menu1, component(menu1, f"mafia:act:{game_id}:"), [name[b1.id]], user=doctor
            )
        ).response()
        assert act.ephemeral and "Noted" in (act.content or ""), act.content

        # The mafia person does not vote: nobody dies. Day 2: the agent is voted out.
        await votes_out(table, game_id, [b1, mafia, doctor, detective], agent, vote1)
        menu2 = await night_menu(fake, booth, game_id, menu1)
        offered = options(menu2, f"mafia:act:{game_id}:")
        assert name[b1.id] not in offered  # protected last night: the engine refuses them
        assert name[doctor.id] in offered
        assert set(offered) <= {table.names[p.id] for p in table.humans}
