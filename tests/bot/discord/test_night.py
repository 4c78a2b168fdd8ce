"""Night on Discord: the den, the mafia's vote, detective and doctor acting from their booths,
vote changes, and the graveyard."""

from __future__ import annotations

from pathlib import Path

from tests.bot.discord.harness import Table, bot_stack, component, db_url_in
from tests.fakes.discord import FakeDiscord

# With seed 0 and detective+doctor, the agent sits at seat 5 and is a bystander; the five humans
# are (in joining order) a bystander, the mafia, the doctor, the detective and a bystander.
SEED = 0


async def test_night_in_the_den_and_the_booths(fake_discord: FakeDiscord, tmp_path: Path) -> None:
    fake = fake_discord
    table = Table.build(fake)
    async with bot_stack(fake, db_url_in(tmp_path), speed=40.0, test_seed=SEED):
        await table.setup()
        await table.answer(await table.slash("mafia config", table.mod, graveyard=True))
        game_id = await table.play(
            roles="detective+doctor", day_minutes=0.25, vote_minutes=3.0, night_minutes=3.0
        )
        b1, mafia, doctor, detective, b2 = table.humans
        assert [table.roles[p.id] for p in table.humans] == [
            "bystander",
            "mafia",
            "doctor",
            "detective",
            "bystander",
        ]
        name = {p.id: table.names[p.id] for p in table.humans}
        den = next(c for c in fake.channels.values() if (c.name or "").startswith("den"))
        await fake.wait_for_message(den, lambda m: "only the mafia see it" in m["content"])
        assert set(den.member_ids) == {mafia.id, fake.bot.id}

        vote = await table.wait_stage(lambda m: "Voting is open" in m["content"])
        select_id = component(vote, f"mafia:vote:{game_id}:")
        picks = [(mafia, b1), (doctor, b2), (detective, b1), (detective, b2), (b1, b2), (b2, b1)]
        for voter, target in picks:
            answer = await (
                await fake.select(vote, select_id, [name[target.id]], user=voter)
            ).response()
            assert answer.ephemeral and "You can change it" in (answer.content or "")
        await table.wait_stage(
            lambda m: f"{name[detective.id]} changed their vote to {name[b2.id]}" in m["content"]
        )
        await table.wait_stage(lambda m: "Nighttime" in m["content"], within=10)

        # Mafia talk goes to the den, under the character name; bystanders are refused.
        await table.say(mafia, "who do we take tonight?")
        said = await table.wait_post("who do we take tonight?")
        assert said.thread_id == den.id and said.username == name[mafia.id]
        await table.say(detective, "can I talk at night?")
        booth = table.booth(detective)
        assert booth is not None
        await fake.wait_for_message(booth, lambda m: "only the mafia can talk" in m["content"])

        # Detective and doctor act from their booths.
        menu = await fake.wait_for_message(booth, lambda m: bool(m["components"]))
        act = await (
            await fake.select(
                menu, component(menu, f"mafia:act:{game_id}:"), [name[mafia.id]], user=detective
            )
        ).response()
        assert act.ephemeral and "Noted" in (act.content or "")
        await fake.wait_for_message(booth, lambda m: "You chose to investigate" in m["content"])
        doc_booth = table.booth(doctor)
        assert doc_booth is not None
        doc_menu = await fake.wait_for_message(doc_booth, lambda m: bool(m["components"]))
        await (
            await fake.select(
                doc_menu,
                component(doc_menu, f"mafia:act:{game_id}:"),
                [name[detective.id]],
                user=doctor,
            )
        ).response()
        stranger = await (
            await fake.select(
                doc_menu, component(doc_menu, "mafia:act:"), [name[b1.id]], user=table.spectator
            )
        ).response()
        assert "not playing" in (stranger.content or "")

        # The mafia's vote, in the den.
        kill_menu = await fake.wait_for_message(den, lambda m: bool(m["components"]), within=10)
        stage = "\n".join(m["content"] for m in fake.messages_in(table.town))
        victim = next(p for p in (b1, b2) if f"{name[p.id]} was voted out" not in stage)
        kill = await (
            await fake.select(
                kill_menu,
                component(kill_menu, f"mafia:kill:{game_id}:"),
                [name[victim.id]],
                user=mafia,
            )
        ).response()
        assert kill.ephemeral

        # Morning: the detective learns the truth, privately.
        result = await fake.wait_for_message(
            booth, lambda m: "Your investigation" in m["content"], within=10
        )
        assert f"{name[mafia.id]} IS mafia" in result["content"]
        assert not any("Your investigation" in m["content"] for m in fake.messages_in(table.town))
        dead = [
            p
            for p in table.humans
            if any(
                f"{name[p.id]} was" in m["content"]
                and ("voted out" in m["content"] or "killed" in m["content"])
                for m in fake.messages_in(table.town)
            )
        ]
        assert dead  # the kill lands (the doctor protected someone else)
        if dead:
            grave = await fake.wait_until(
                lambda: next(
                    (c for c in fake.channels.values() if (c.name or "").startswith("graveyard")),
                    None,
                ),
                5.0,
            )
            await fake.wait_until(lambda: all(p.id in grave.member_ids for p in dead), 5.0)
            assert mafia.id not in grave.member_ids
