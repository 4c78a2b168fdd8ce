"""Night on Discord: the mafia's vote in their booths (there is no den thread), detective and
doctor acting from their booths, vote changes, and the graveyard."""

from __future__ import annotations

from pathlib import Path

from sqlmodel import Session, select

from bot.store.db import make_engine
from bot.store.models import Message
from tests.bot.discord.harness import Table, bot_stack, component, custom_ids, db_url_in
from tests.fakes.discord import FakeDiscord

# With seed 19 and detective+doctor, the agent (wherever the service seats it) is a bystander;
# the five humans are (in joining order) a bystander, the mafia, the doctor, the detective and a
# bystander.
SEED = 19


async def test_night_in_the_den_and_the_booths(fake_discord: FakeDiscord, tmp_path: Path) -> None:
    fake = fake_discord
    table = Table.build(fake)
    url = db_url_in(tmp_path)
    async with bot_stack(fake, url, speed=40.0, test_seed=SEED) as bot:
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
        mafia_booth = table.booth(mafia)
        assert mafia_booth is not None
        card = await fake.wait_for_message(mafia_booth, lambda m: "Your role" in m["content"])
        assert "your booth is also your den" in card["content"]
        # No den thread: every thread is a booth with its one person (and the bot) in it.
        threads = [c for c in fake.channels.values() if c.is_thread]
        assert len(threads) == 5
        for thread in threads:
            assert (thread.name or "").startswith("booth")
            assert len(set(thread.member_ids) - {fake.bot.id}) == 1

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

        # The lone human mafia's line is taken (stored for the den) but posted nowhere: nobody
        # else reads the den, and it is not echoed back; bystanders are refused.
        await table.say(mafia, "who do we take tonight?")
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

        assert not [e for e in fake.webhook_executions if e.content == "who do we take tonight?"]
        with Session(make_engine(url)) as session:
            stored = session.exec(
                select(Message).where(Message.text == "who do we take tonight?")
            ).one()
            assert stored.place == "den"

        # The mafia's vote, from the mafia's booth.
        kill_menu = await fake.wait_for_message(
            mafia_booth,
            lambda m: any(c.startswith("mafia:kill:") for c in custom_ids(m)),
            within=10,
        )
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
        assert kill.ephemeral and f"Your vote: {name[victim.id]}" in (kill.content or "")
        await fake.wait_for_message(  # the den's vote line, in the booth
            mafia_booth, lambda m: f"{name[mafia.id]} voted for {name[victim.id]}" in m["content"]
        )
        await bot.delivery.drain()
        assert not any(
            "only the mafia can talk" in m["content"] for m in fake.messages_in(mafia_booth)
        )

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
            # the graveyard is the dead's booths: no thread whose member list says who is a
            # person; what a dead person types reaches the other dead, never the living
            assert not any((c.name or "").startswith("graveyard") for c in fake.channels.values())
            assert len(dead) == 2  # (seeded: the day's vote and the night's kill)
            first = dead[0]
            first_booth = table.booth(first)
            assert first_booth is not None
            await fake.wait_for_message(first_booth, lambda m: "graveyard" in m["content"])
            await fake.send_message(first_booth, first, "boo from beyond")
            await bot.delivery.drain()
            graves = {b.id for p in dead[1:] if (b := table.booth(p))}
            assert len(graves) == len(dead) - 1
            await fake.wait_until(
                lambda: (
                    graves
                    <= {
                        e.thread_id
                        for e in fake.webhook_executions
                        if e.content == "boo from beyond"
                    }
                ),
                5.0,
            )
            living = {b.id for p in table.humans if p not in dead if (b := table.booth(p))}
            assert not any(
                e.content == "boo from beyond" and (e.thread_id in living or e.thread_id is None)
                for e in fake.webhook_executions
            )
