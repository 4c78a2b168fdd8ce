"""The den without a den thread: the mafia's night talk is relayed between their booths.

A shared den thread would list its members, so a human mafia whose partner is the agent would
see only one person in it and know the partner is the AI. These tests prove there is no such
thread, that a partner's night line reaches the other human mafia's booth through the stage
webhook whether a person or the agent said it (same payload), that nobody's line is echoed
back to them, that the night vote works from a booth, and that a substitute takes over the
den with the seat.
"""

from __future__ import annotations

from pathlib import Path

from sqlmodel import Session, select

from bot.discord.app import MafiaBot
from bot.store.db import make_engine
from bot.store.models import Message
from tests.bot.discord.harness import (
    JSON,
    Table,
    answered,
    bot_stack,
    component,
    custom_ids,
    db_url_in,
    kill_vote,
)
from tests.fakes.discord import Channel, FakeDiscord, Member, WebhookExecution

# 7 players (6 people and 1 agent), 2 mafia: with seed 2 they are the agent and one person.
LONE_SEED = 2
# 11 players (10 people and 1 agent), 3 mafia: with seed 0, the agent and two people.
PAIR_SEED = 0


def only_booths(fake: FakeDiscord) -> list[Channel]:
    """Every thread the bot made; fails unless each is a booth with one person in it."""
    threads = [c for c in fake.channels.values() if c.is_thread]
    for thread in threads:
        assert (thread.name or "").startswith("booth"), thread.name
        assert len(set(thread.member_ids) - {fake.bot.id}) <= 1, thread.member_ids
    return threads


def posts_of(fake: FakeDiscord, text: str) -> list[WebhookExecution]:
    return [e for e in fake.webhook_executions if e.content == text]


async def posted_in(fake: FakeDiscord, text: str, where: Channel) -> WebhookExecution:
    hit: WebhookExecution = await fake.wait_until(
        lambda: next((e for e in posts_of(fake, text) if e.thread_id == where.id), None), 5.0
    )
    return hit


def has_kill_menu(message: JSON) -> bool:
    return any(c.startswith("mafia:kill:") for c in custom_ids(message))


async def vote_out(table: Table, voters: list[Member], out: Member) -> None:
    """Day 1: ``voters`` vote ``out`` out (more votes than the agent's single one)."""
    vote = await table.wait_stage(lambda m: "Voting is open" in m["content"])
    select_id = component(vote, "mafia:vote:")
    for voter in voters:
        answer = await (
            await table.fake.select(vote, select_id, [table.names[out.id]], user=voter)
        ).response()
        assert answer.ephemeral and "Your vote" in (answer.content or "")
    await table.wait_stage(lambda m: "Nighttime" in m["content"])


def agent_mafia(bot: MafiaBot, game_id: str) -> tuple[int, str]:
    game = bot.service.games[game_id]
    assert game.state is not None
    agents = [s for s in game.seats if s.is_agent]
    assert len(agents) == 1
    seat = agents[0].index
    assert game.state.seats[seat].role == "mafia", "the seed no longer makes the agent mafia"
    return seat, agents[0].name


async def test_a_lone_human_mafia_cannot_tell_that_the_partner_is_the_agent(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    table = Table.build(fake, humans=6)
    url = db_url_in(tmp_path)
    async with bot_stack(fake, url, speed=40.0, test_seed=LONE_SEED) as bot:
        await table.setup()
        await table.answer(await table.slash("mafia config", table.mod, night_vote_minutes=30.0))
        game_id = await table.play(day_minutes=1.0, vote_minutes=1.0, night_minutes=2.0)
        mafia = [p for p in table.humans if table.roles[p.id] == "mafia"]
        assert len(mafia) == 1, "the seed no longer gives one human mafia"
        (me,) = mafia
        agent_seat, agent_name = agent_mafia(bot, game_id)
        booth = table.booth(me)
        assert booth is not None
        card = await fake.wait_for_message(booth, lambda m: "Your role" in m["content"])
        assert agent_name in card["content"]  # the partner, by character name only

        # A day line of the mafia person, for the payload a person's line has.
        await table.say(me, "good morning")
        human_post = await table.wait_post("good morning")
        assert human_post.channel_id == table.town.id

        others = [p for p in table.humans if p is not me]
        await vote_out(table, [me, *others[:2]], others[-1])
        await fake.wait_for_message(booth, lambda m: "Den, night 1" in m["content"])

        # Nothing but booths, each with one person: the member lists are all alike.
        threads = only_booths(fake)
        assert len(threads) == 6
        assert set(booth.member_ids) == {me.id, fake.bot.id}

        # The agent's den line reaches the booth as a webhook post, shaped like a person's.
        assert await bot.service.say(game_id, agent_seat, "shall we take the quiet one?")
        said = await posted_in(fake, "shall we take the quiet one?", booth)
        assert said.username == agent_name
        assert said.avatar_url == bot.rooms.avatar(agent_name)
        assert said.webhook_id == human_post.webhook_id
        assert set(said.payload) == set(human_post.payload)
        assert said.payload["allowed_mentions"] == human_post.payload["allowed_mentions"]
        assert len(posts_of(fake, "shall we take the quiet one?")) == 1  # not on the stage

        # The person's own night line is taken for the den and posted nowhere (no echo).
        await table.say(me, "yes, the quiet one")
        engine = make_engine(url)

        def stored() -> Message | None:
            with Session(engine) as session:
                return session.exec(
                    select(Message).where(Message.text == "yes, the quiet one")
                ).first()

        row = await fake.wait_until(stored, 20.0)
        room = bot.rooms.get(game_id)
        assert room is not None
        assert row.place == "den" and row.seat_index == room.seat_of(me.id)
        await bot.delivery.drain()
        assert posts_of(fake, "yes, the quiet one") == []

        # The night vote, from the booth.
        menu = await fake.wait_for_message(booth, has_kill_menu, within=10)
        victim = next(
            table.names[p.id] for p in others[:-1] if table.names[p.id] in str(menu["components"])
        )
        await kill_vote(fake, menu, game_id, victim, me)
        await fake.wait_for_message(
            booth, lambda m: f"{table.names[me.id]} voted for {victim}" in m["content"]
        )
        # Someone else's click on the same menu counts for nobody.
        stranger = await (
            await fake.select(menu, component(menu, "mafia:kill:"), [victim], user=table.spectator)
        ).response()
        assert "not playing" in (stranger.content or "")
        assert len(only_booths(fake)) == 6


async def test_two_human_mafia_hear_each_other_in_their_booths_and_a_substitute_takes_over(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    table = Table.build(fake, humans=10)
    sub = fake.add_member(table.guild, "substitute")
    async with bot_stack(fake, db_url_in(tmp_path), speed=40.0, test_seed=PAIR_SEED) as bot:
        await table.setup()
        await table.answer(await table.slash("mafia config", table.mod, night_vote_minutes=30.0))
        game_id = await table.play(day_minutes=0.25, vote_minutes=1.0, night_minutes=3.0)
        mafia = [p for p in table.humans if table.roles[p.id] == "mafia"]
        assert len(mafia) == 2, "the seed no longer gives two human mafia"
        a, b = mafia
        agent_seat, agent_name = agent_mafia(bot, game_id)
        town = [p for p in table.humans if p not in mafia]
        booth_a, booth_b = table.booth(a), table.booth(b)
        assert booth_a is not None and booth_b is not None

        await vote_out(table, [a, b, *town[:2]], town[-1])
        for booth in (booth_a, booth_b):
            await fake.wait_for_message(booth, lambda m: "Den, night 1" in m["content"])

        # Each sees the other's line in their own booth, and never their own echoed.
        await table.say(a, "a: the doctor worries me")
        from_a = await posted_in(fake, "a: the doctor worries me", booth_b)
        assert from_a.username == table.names[a.id]
        await table.say(b, "b: agreed")
        from_b = await posted_in(fake, "b: agreed", booth_a)
        assert from_b.username == table.names[b.id]
        # The agent partner's line reaches both, shaped exactly like a person's.
        assert await bot.service.say(game_id, agent_seat, "agent: then the doctor")
        agent_in_a = await posted_in(fake, "agent: then the doctor", booth_a)
        await posted_in(fake, "agent: then the doctor", booth_b)
        await bot.delivery.drain()
        assert [e.thread_id for e in posts_of(fake, "a: the doctor worries me")] == [booth_b.id]
        assert [e.thread_id for e in posts_of(fake, "b: agreed")] == [booth_a.id]
        assert sorted(e.thread_id or 0 for e in posts_of(fake, "agent: then the doctor")) == sorted(
            [booth_a.id, booth_b.id]
        )
        assert agent_in_a.username == agent_name
        assert set(agent_in_a.payload) == set(from_b.payload)
        assert agent_in_a.webhook_id == from_b.webhook_id and agent_in_a.wait == from_b.wait
        for key in ("allowed_mentions", "tts", "flags"):
            assert agent_in_a.payload.get(key) == from_b.payload.get(key)
        assert agent_in_a.avatar_url == bot.rooms.avatar(agent_name)
        assert from_b.avatar_url == bot.rooms.avatar(table.names[b.id])
        assert not [
            e
            for e in fake.webhook_executions
            if e.channel_id == table.town.id
            and (e.content in ("a: the doctor worries me", "b: agreed", "agent: then the doctor"))
        ]
        only_booths(fake)

        # B is replaced by a substitute: the den follows the seat to the new booth.
        consent = await table.slash("mafia consent", sub)
        notice = await answered(consent)
        assert notice is not None
        agree = await fake.click(notice, component(notice, "mafia:consent:-:yes"), user=sub)
        await agree.response()
        text = await table.answer(
            await table.slash("mafia kick", table.mod, member=b, substitute=sub)
        )
        assert "substitute plays the seat now" in text
        booth_s = await table.wait_booth(sub)
        card = await fake.wait_for_message(booth_s, lambda m: "taking over" in m["content"])
        assert "your booth is also your den" in card["content"]
        await table.say(a, "a: welcome back")
        await posted_in(fake, "a: welcome back", booth_s)
        await fake.send_message(booth_s, sub, "s: thanks")
        from_s = await posted_in(fake, "s: thanks", booth_a)
        assert from_s.username == table.names[b.id]
        assert await bot.service.say(game_id, agent_seat, "agent: good")
        await posted_in(fake, "agent: good", booth_s)
        await bot.delivery.drain()
        for text in ("a: welcome back", "agent: good"):
            assert booth_b.id not in {e.thread_id for e in posts_of(fake, text)}
        assert b.id not in booth_b.member_ids and booth_b.archived

        # The night vote: a menu in each mafia person's booth, usable from there.
        menu_a = await fake.wait_for_message(booth_a, has_kill_menu, within=10)
        await fake.wait_for_message(booth_s, has_kill_menu, within=20.0)
        assert not any(has_kill_menu(m) for m in fake.messages_in(booth_b))
        victim = table.names[town[0].id]
        await kill_vote(fake, menu_a, game_id, victim, a)
        line = f"{table.names[a.id]} voted for {victim}"
        for booth in (booth_a, booth_s):
            await fake.wait_for_message(booth, lambda m: line in m["content"])
        assert not any(line in m["content"] for m in fake.messages_in(table.town))
        only_booths(fake)

        # A substitute arriving during the mafia vote gets the vote menu in the new booth.
        sub2 = fake.add_member(table.guild, "second substitute")
        consent = await table.slash("mafia consent", sub2)
        notice = await answered(consent)
        assert notice is not None
        await (
            await fake.click(notice, component(notice, "mafia:consent:-:yes"), user=sub2)
        ).response()
        text = await table.answer(
            await table.slash("mafia kick", table.mod, member=sub, substitute=sub2)
        )
        assert "substitute plays the seat now" in text
        booth_s2 = await table.wait_booth(sub2)
        menu_s2 = await fake.wait_for_message(booth_s2, has_kill_menu, within=10)
        await kill_vote(fake, menu_s2, game_id, victim, sub2)
