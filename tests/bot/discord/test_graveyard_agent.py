"""The graveyard on Discord with a dead agent in it: the agent voted out on day 1, a person
killed that night; the person greets the graveyard from their booth and the dead agent answers
there, under its character's name, within a person's latency; nothing it says reaches the
living (their booths or the stage)."""

from __future__ import annotations

import time
from pathlib import Path

from agent.graveyard import GREETING
from tests.bot.discord.harness import Table, bot_stack, component, db_url_in, kill_vote
from tests.fakes.discord import FakeDiscord
from tests.fakes.discord.model import iter_components

SEED = 19  # (test_night.py: the humans are a bystander, the mafia, doctor, detective, bystander)
SPEED = 40.0


async def test_a_dead_agent_answers_a_greeting_in_the_graveyard(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    table = Table.build(fake)
    async with bot_stack(fake, db_url_in(tmp_path), speed=SPEED, test_seed=SEED):
        await table.setup()
        await table.answer(await table.slash("mafia config", table.mod, graveyard=True))
        game_id = await table.play(
            roles="detective+doctor", day_minutes=0.25, vote_minutes=3.0, night_minutes=3.0
        )
        b1, mafia, _doctor, _detective, b2 = table.humans
        name = {p.id: table.names[p.id] for p in table.humans}
        vote = await table.wait_stage(lambda m: "Voting is open" in m["content"])
        options = [
            o["value"]
            for c in iter_components(vote.get("components") or [])
            for o in c.get("options") or []
        ]
        agent = next(n for n in options if n not in name.values())
        select_id = component(vote, f"mafia:vote:{game_id}:")
        for voter in table.humans:
            await (await fake.select(vote, select_id, [agent], user=voter)).response()
        await table.wait_stage(lambda m: f"{agent} was voted out" in m["content"], within=20)

        mafia_booth = table.booth(mafia)
        assert mafia_booth is not None
        menu = await fake.wait_for_message(
            mafia_booth, lambda m: any(c.startswith("mafia:kill:") for c in _ids(m)), within=10
        )
        await kill_vote(fake, menu, game_id, name[b1.id], mafia)
        grave = table.booth(b1)
        assert grave is not None
        await fake.wait_for_message(grave, lambda m: "graveyard now" in m["content"], within=20)

        def answers() -> list[str]:
            return [
                e.content
                for e in fake.webhook_executions
                if e.username == agent and e.thread_id == grave.id
            ]

        answered = False
        for greeting in ("hey anyone here?", "hello??", f"{agent} you here?", "hi"):
            assert GREETING.search(greeting) or agent in greeting
            await fake.send_message(grave, b1, greeting)
            sent = time.monotonic()
            try:
                await fake.wait_until(lambda: bool(answers()), 90.0 / SPEED + 3.0)
            except TimeoutError:
                continue
            # an answer's latency: a second and a half to a minute or so of game time
            assert time.monotonic() - sent >= 1.0 / SPEED
            answered = True
            break
        assert answered, "the dead agent never answered a greeting in the graveyard"

        # never to the living: no line of the agent's in a living person's booth or the stage
        # since its death
        living = {b.id for p in (mafia, b2, _doctor, _detective) if (b := table.booth(p))}
        said = set(answers())
        assert not any(
            e.content in said
            and e.username == agent
            and (e.thread_id in living or e.thread_id is None or e.channel_id == table.town.id)
            for e in fake.webhook_executions
        )


def _ids(message: dict[str, object]) -> list[str]:
    from tests.bot.discord.harness import custom_ids

    return custom_ids(message)
