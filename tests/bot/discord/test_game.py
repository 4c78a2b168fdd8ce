"""A whole game on the fake Discord: 5 people and the baseline agent, lobby to survey."""

from __future__ import annotations

import re
from pathlib import Path

from sqlmodel import Session, select

from bot.players import survey as questions
from bot.protection.consent import CONSENT_VERSION
from bot.store.models import Consent, Game, SurveyResponse
from tests.bot.discord.harness import Table, bot_stack, component, custom_ids, db_url_in
from tests.fakes.discord import FakeDiscord

AVATAR = "https://avatars.example/{seed}.png"
#: a game whose AI speaks early on the first day. Unseeded, the AI (the baseline agent, whose
#: talk is drawn from people's) now and then says nothing all day, as people sometimes do, or
#: speaks late; the game ends on the first vote, and the checks on its stage posts had nothing
#: to check (a CI run failed waiting for its first post).
SEED = 6


async def test_a_full_game_from_lobby_to_survey(fake_discord: FakeDiscord, tmp_path: Path) -> None:
    fake = fake_discord
    table = Table.build(fake)
    original_overwrites = dict(table.town.overwrites)
    async with bot_stack(
        fake, db_url_in(tmp_path), speed=30.0, avatar_template=AVATAR, test_seed=SEED
    ) as bot:
        lobby = await table.full_lobby(day_minutes=3.0, vote_minutes=1.0, night_minutes=1.0)
        game_id = table.game_id(lobby)
        assert "+ 1 AI player" in fake.messages[int(lobby["id"])]["embeds"][0]["fields"][0]["value"]

        start = await table.start(table.mod, lobby)
        assert (await start.response()).type == 6
        for person in table.humans:
            await table.read_role(person)
        human_names = set(table.names.values())
        started = await table.wait_stage(lambda m: "The game begins" in m["content"])
        everyone = started["content"].split("players: ")[1].split(". ")[0]
        players = {n.strip() for n in everyone.replace(" and ", ", ").split(",")}
        assert len(players) == 6 and human_names < players
        (agent_name,) = players - human_names
        # The lobby, refreshed at the start, no longer lists accounts in seat order (which is
        # the announcement's order: lining the two up would pair accounts with characters).
        await fake.wait_until(
            lambda: "The game is on" in str(fake.messages[int(lobby["id"])]["embeds"]), 5.0
        )
        roster = fake.messages[int(lobby["id"])]["embeds"][0]["fields"][0]["value"]
        listed = [int(x) for x in re.findall(r"<@(\d+)>", roster)]
        assert sorted(listed) == sorted(p.id for p in table.humans)
        assert listed == sorted(listed, key=str)
        # Booths are private threads of one person (and the bot); account names never show.
        for person in table.humans:
            booth = table.booth(person)
            assert booth is not None and booth.type == 12
            assert set(booth.member_ids) == {person.id, fake.bot.id}
        assert table.town.overwrites[table.guild.id].deny & (1 << 11)  # stage locked

        for i, person in enumerate(table.humans):
            await table.say(person, f"hello from seat {i}, I think it's the quiet one")
        for i in range(len(table.humans)):
            await table.wait_post(f"hello from seat {i}, I think it's the quiet one")
        await fake.wait_until(lambda: table.stage_posts(lambda e: e.username == agent_name), 8.0)

        posts = table.stage_posts()
        shapes = {frozenset(e.payload) for e in posts}
        assert len(shapes) == 1, shapes  # the agent's payload looks like everyone else's
        for e in posts:
            assert e.username in players
            assert e.avatar_url == AVATAR.format(seed=e.username)
            assert e.payload["allowed_mentions"] == {"parse": []}
        by_name = {e.username: e for e in posts}
        assert set(by_name) == players or set(by_name) >= human_names | {agent_name}
        for person in table.humans:  # nobody's account name is anywhere on the stage
            assert all(
                person.user.username not in m["content"]
                for m in fake.messages_in(table.town)
                if m.get("webhook_id")
            )
        assert all(
            m["author"]["id"] == str(fake.bot.id) or m.get("webhook_id")
            for m in fake.messages_in(table.town)
        )

        vote = await table.wait_stage(
            lambda m: "Voting is open" in m["content"] and bool(m["components"])
        )
        select_id = component(vote, f"mafia:vote:{game_id}:")
        mafia = [table.names[p.id] for p in table.humans if table.roles[p.id] == "mafia"]
        target = mafia[0] if mafia else agent_name
        for person in table.humans:
            mine = table.names[person.id]
            choice = target if mine != target else agent_name
            inter = await fake.select(vote, select_id, [choice], user=person)
            answer = await inter.response()
            assert answer.ephemeral and choice in (answer.content or "")

        await table.wait_stage(
            lambda m: f"{target} was voted out. Their role was mafia" in m["content"]
        )
        await table.wait_stage(lambda m: "Bystanders win!" in m["content"])
        # Everyone answers the survey in their booth.
        for person in table.humans:
            booth = table.booth(person)
            assert booth is not None
            survey = await fake.wait_for_message(booth, lambda m: bool(m["components"]))
            # the questions are bot/players/survey.py's, the same on every platform
            assert all(q.text in survey["content"] for q in questions.REQUIRED)
            ids = {cid.split(":")[-1]: cid for cid in custom_ids(survey)}
            guess = agent_name if table.names[person.id] != agent_name else target
            for question, value in (("ai0", guess), ("sim", "4"), ("time", "3"), ("rel", "5")):
                inter = await fake.select(survey, ids[question], [value], user=person)
                assert (await inter.response()).ephemeral
        # The optional comment: a button in the next post opens a form.
        first = table.humans[0]
        booth = table.booth(first)
        assert booth is not None
        ask = await fake.wait_for_message(
            booth, lambda m: questions.COMMENTS.text in m["content"] and bool(m["components"])
        )
        opened = await fake.click(ask, component(ask, f"mafia:survey:{game_id}:"), user=first)
        assert (await opened.response()).type == 9 and opened.modal is not None
        sent = await fake.submit_modal(opened, {"comments": "it typed too fast"})
        assert "comment is saved" in ((await sent.response()).content or "")
        await bot.delivery.drain()
        await fake.wait_until(lambda: table.town.overwrites == original_overwrites)

    with Session(_engine(tmp_path)) as session:
        game = session.get(Game, game_id)
        assert game is not None and game.status == "finished" and game.winner == "bystanders"
        consents = session.exec(select(Consent)).all()
        assert sorted(c.user_id for c in consents) == sorted(str(p.id) for p in table.humans)
        assert all(c.agreed and c.version == CONSENT_VERSION for c in consents)
        answers = session.exec(
            select(SurveyResponse).where(SurveyResponse.game_id == game_id)
        ).all()
        assert len(answers) == 5 and all(a.source == "discord" for a in answers)
        assert all(
            a.identified_ai and a.similarity == 4.0 and a.timing == 3.0 and a.relevance == 5.0
            for a in answers
        )
        assert [a.comments for a in answers if a.comments] == ["it typed too fast"]


def _engine(tmp_path: Path):  # type: ignore[no-untyped-def]
    from bot.store.db import make_engine

    return make_engine(db_url_in(tmp_path))
