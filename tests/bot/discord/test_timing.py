"""What a player did is judged at the moment Discord says they did it, and only once.

A booth line is stamped with its message's snowflake time and a menu click with its
interaction's, and each carries its Discord id: a line the gateway delivers after a click
that ended the night, or after the night's deadline, is still a night line (a den line, or a
bystander's refused one), never a line on the stage; an interaction delivered twice counts
once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlmodel import Session, select

from bot.discord.app import MafiaBot
from bot.service.clock import utcnow
from bot.store.db import make_engine
from bot.store.models import Message
from tests.bot.discord.harness import JSON, Table, bot_stack, component, custom_ids, db_url_in
from tests.fakes.discord import FakeDiscord, Interaction, Member
from tests.fakes.discord.model import snowflake_time

# Seed 19 with detective+doctor: the humans (in joining order) are a bystander, the mafia (the
# only one), the doctor, the detective and a bystander; the agent is a bystander.
SEED = 19


def stored(url: str, text: str) -> Callable[[], Message | None]:
    engine = make_engine(url)

    def find() -> Message | None:
        with Session(engine) as session:
            return session.exec(select(Message).where(Message.text == text)).first()

    return find


async def first_night(table: Table, game_id: str, **options: float) -> JSON:
    """Play day 1 (four people vote the last one out); returns the mafia's kill menu."""
    b1, mafia, doctor, detective, b2 = table.humans
    assert table.roles[mafia.id] == "mafia"
    vote = await table.wait_stage(lambda m: "Voting is open" in m["content"])
    for voter in (b1, mafia, doctor, detective):
        answer = await (
            await table.fake.select(
                vote, component(vote, f"mafia:vote:{game_id}:"), [table.names[b2.id]], user=voter
            )
        ).response()
        assert "Your vote" in (answer.content or ""), answer.content
    booth = table.booth(mafia)
    assert booth is not None
    return await table.fake.wait_for_message(
        booth, lambda m: any(c.startswith("mafia:kill:") for c in custom_ids(m)), within=10
    )


@asynccontextmanager
async def first_night_of(
    fake: FakeDiscord, url: str, night_vote_minutes: float
) -> AsyncIterator[tuple[MafiaBot, Table, str, JSON]]:
    """A bot, its table and a game at its first night (b2 voted out); the mafia's kill menu."""
    table = Table.build(fake)
    async with bot_stack(fake, url, speed=40.0, test_seed=SEED) as bot:
        await table.setup()
        minutes: dict[str, Any] = {"night_vote_minutes": night_vote_minutes}
        await table.answer(await table.slash("mafia config", table.mod, **minutes))
        game_id = await table.play(
            roles="detective+doctor", day_minutes=0.25, vote_minutes=1.0, night_minutes=0.25
        )
        yield bot, table, game_id, await first_night(table, game_id)


async def test_a_den_line_and_the_night_ending_click_in_one_millisecond(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    url = db_url_in(tmp_path)
    async with first_night_of(fake, url, 30.0) as (bot, table, game_id, menu):
        b1, mafia, doctor, detective, _ = table.humans
        booth = table.booth(mafia)
        assert booth is not None
        text = "the detective is onto us"
        # the detective and the doctor act first, so that the mafia's pick ends the night
        room = bot.rooms.get(game_id)
        assert room is not None
        for person, target in ((doctor, detective), (detective, b1)):
            seat = room.seat_of(person.id)
            assert seat is not None
            await bot.service.night_act(game_id, seat, table.names[target.id])

        # The line is typed, then the pick that ends the night, in the same millisecond;
        # Discord delivers the click first.
        fake.snowflakes.pin(utcnow())
        try:
            line = fake.create_message(booth, fake.user(mafia), content=text, dispatch=False)
            click = await fake.select(
                menu, component(menu, f"mafia:kill:{game_id}:"), [table.names[b1.id]], user=mafia
            )
        finally:
            fake.snowflakes.pin(None)
        assert snowflake_time(int(line["id"])) == snowflake_time(click.id)
        assert "Your vote" in ((await click.response()).content or "")
        await table.wait_stage(lambda m: "Daytime 2" in m["content"])

        await fake.deliver(line)
        row = await fake.wait_until(stored(url, text), 20.0)
        await bot.delivery.drain()
        assert row.place == "den"  # the lone human mafia's den: posted nowhere
        assert not [e for e in fake.webhook_executions if e.content == text]


async def test_lines_typed_at_the_last_instant_of_the_night(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    url = db_url_in(tmp_path)
    async with first_night_of(fake, url, 0.5) as (bot, table, game_id, _):
        b1, mafia = table.humans[0], table.humans[1]
        game = bot.service.games[game_id]
        assert game.state is not None and game.state.phase.deadline is not None
        deadline = game.state.phase.deadline
        # the wall-clock moment of the deadline, less a millisecond
        last = (
            utcnow() + (deadline - game.clock.now()) / game.clock.speed - timedelta(milliseconds=1)
        )
        await table.wait_stage(lambda m: "Daytime 2" in m["content"], within=10)

        # Discord took both lines in the night's last millisecond and delivers them now.
        mafia_booth, b1_booth = table.booth(mafia), table.booth(b1)
        assert mafia_booth is not None and b1_booth is not None
        fake.snowflakes.pin(last)
        try:
            den = fake.create_message(
                mafia_booth, fake.user(mafia), content="too late?", dispatch=False
            )
            town = fake.create_message(b1_booth, fake.user(b1), content="me too?", dispatch=False)
        finally:
            fake.snowflakes.pin(None)
        await fake.deliver(den)
        await fake.deliver(town)
        row = await fake.wait_until(stored(url, "too late?"), 20.0)
        assert row.place == "den"
        await fake.wait_for_message(
            b1_booth, lambda m: "only the mafia can talk" in m["content"], after=town
        )
        await bot.delivery.drain()
        assert stored(url, "me too?")() is None
        assert not [e for e in fake.webhook_executions if e.content in ("too late?", "me too?")]


async def test_the_same_vote_click_delivered_twice_counts_once(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    table = Table.build(fake)
    async with bot_stack(fake, db_url_in(tmp_path), speed=40.0, test_seed=SEED) as bot:
        game_id = await table.play(day_minutes=0.25, vote_minutes=3.0)
        voter, first, second = table.humans[0], table.humans[1], table.humans[2]
        vote = await table.wait_stage(lambda m: "Voting is open" in m["content"])
        select_id = component(vote, f"mafia:vote:{game_id}:")

        async def pick(who: Member) -> Interaction:
            inter = await fake.select(vote, select_id, [table.names[who.id]], user=voter)
            assert "Your vote" in ((await inter.response()).content or "")
            return inter

        click = await pick(first)
        await pick(second)
        # The first click arrives again (a gateway replay): it must not undo the change.
        await fake.dispatch("INTERACTION_CREATE", click.payload, guild_id=table.guild.id)
        await fake.wait_until(lambda: click.rejected_callbacks, 20.0)
        await bot.service.drain(game_id)
        state = bot.service.games[game_id].state
        assert state is not None
        seat = _seat(bot, game_id, table.names[voter.id])
        assert state.votes[seat] == _seat(bot, game_id, table.names[second.id])


def _seat(bot: MafiaBot, game_id: str, name: str) -> int:
    return next(s.index for s in bot.service.games[game_id].seats if s.name == name)
