"""Sharding in one process: the shard list and its refusals, which servers a process serves,
and two bots on the same shards (a rolling restart's overlap) where only the game's driver
answers, then hands the game over."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
import sqlalchemy as sa

from bot.discord.options import DiscordOptions, load_options
from bot.discord.shards import Shards, parse_shards, shard_of
from bot.settings import SettingsError
from bot.store.db import make_engine
from tests.bot.discord.harness import Table, bot_stack, db_url_in
from tests.fakes.discord import FakeDiscord

#: waits on a loaded machine (two cores, other tests running)
WITHIN_S = 20.0


@pytest.mark.parametrize(
    ("text", "count", "ids"),
    [
        ("0-3", 8, [0, 1, 2, 3]),
        ("5", 8, [5]),
        ("0,2,4-6", 8, [0, 2, 4, 5, 6]),
        ("1-1,0", 2, [0, 1]),
    ],
)
def test_shard_lists(text: str, count: int, ids: list[int]) -> None:
    assert parse_shards(text, count) == ids


@pytest.mark.parametrize(
    ("text", "count", "said"),
    [
        ("5-3", 8, "runs backwards"),
        ("8", 8, "shards are 0 to 7"),
        ("0-8", 8, "shard 8 does not exist"),
        ("0-3", None, "needs a shard count"),
        ("", 2, "not a shard id"),
        ("-1", 2, "not a shard id"),
        ("a-b", 2, "not a shard id"),
        ("0,,1", 2, "not a shard id"),
    ],
)
def test_bad_shard_lists_say_what_is_wrong(text: str, count: int | None, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        parse_shards(text, count)


def test_a_server_belongs_to_one_shard() -> None:
    half = Shards((0,), 2)
    other = Shards((1,), 2)
    for gid in (175928847299117063, 81384788765712384, 1 << 22, 3 << 22):
        assert half.has(gid) != other.has(gid)
        assert half.has(gid) == (shard_of(gid, 2) == 0)
        assert Shards().has(gid)  # one process for every shard
    assert not half.has("not-a-guild")


def test_the_environment_names_the_shards(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAFIABOT_DISCORD_SHARDS", "2-3")
    monkeypatch.setenv("MAFIABOT_DISCORD_SHARD_COUNT", "4")
    assert load_options(_env_file=None).shard_set() == Shards((2, 3), 4)
    monkeypatch.setenv("MAFIABOT_DISCORD_SHARD_COUNT", "3")
    with pytest.raises(SettingsError, match=r"MAFIABOT_DISCORD_SHARDS: .*shard 3"):
        load_options(_env_file=None)


async def test_the_bot_connects_only_its_shards(fake_discord: FakeDiscord, tmp_path: Path) -> None:
    fake = fake_discord
    fake.shards = 2
    mine, theirs = Table.build(fake, shard=(1, 2)), Table.build(fake, shard=(0, 2))
    async with bot_stack(fake, db_url_in(tmp_path), shards="1", shard_count=2) as bot:
        assert [s.shard for s in fake.sessions.values()] == [(1, 2)]  # IDENTIFY's shard
        assert bot.get_guild(mine.guild.id) is not None
        assert bot.get_guild(theirs.guild.id) is None
    assert DiscordOptions(_env_file=None).shard_set() == Shards()


async def test_two_bots_on_one_shard_only_the_driver_answers_then_it_hands_over(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    table = Table.build(fake)
    url = db_url_in(tmp_path)
    async with contextlib.AsyncExitStack() as one, contextlib.AsyncExitStack() as two:
        bots = [
            await one.enter_async_context(bot_stack(fake, url)),
            await two.enter_async_context(bot_stack(fake, url)),
        ]
        # both receive the commands and clicks of the game's opening: one bot answers each,
        # and the game belongs to the one that answered /mafia new
        game_id = await table.play(day_minutes=30.0)
        holders = [i for i, bot in enumerate(bots) if game_id in bot.service.games]
        assert len(holders) == 1
        driver, standby = holders[0], 1 - holders[0]

        # a command in the game's channel reaches both bots: only the driver answers
        status = await table.slash("mafia status", table.mod)
        assert game_id in await table.answer(status)
        await table.say(table.humans[0], "said once")
        await table.wait_post("said once")

        assert await bots[standby].handover.sweep() == []  # held: nothing to take
        # the driver's poll does not read back the games it drives itself
        assert await bots[driver].links.free_games(bots[driver].service.ownership.holder) == []
        await (one, two)[driver].aclose()  # the driver stops: its game is released
        assert await bots[standby].handover.sweep() == [game_id]
        await table.say(table.humans[1], "after the handover")
        await table.wait_post("after the handover")
        await bots[standby].delivery.drain()

    for inter in fake.interactions.values():  # each command and click answered once
        answers = [r for r in fake.requests if r.path.startswith(f"/interactions/{inter.id}/")]
        assert len([r for r in answers if r.status in (200, 204)]) == 1, inter.payload["data"]
    said = [e.content for e in table.stage_posts() if e.username in table.names.values()]
    assert said == ["said once", "after the handover"]


async def test_a_bot_that_lost_its_game_forgets_it_and_never_answers_for_it_again(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    """A process stalled past its lease (paused, cut off from the database) and another took
    the game over: once it notices, it drops the game's room, so a line typed afterwards is
    relayed once, by the new driver, and the old one posts nothing (not even a refusal)."""
    fake = fake_discord
    table = Table.build(fake)
    url = db_url_in(tmp_path)
    async with contextlib.AsyncExitStack() as one, contextlib.AsyncExitStack() as two:
        stalled = await one.enter_async_context(bot_stack(fake, url))
        game_id = await table.play(day_minutes=30.0)
        other = await two.enter_async_context(bot_stack(fake, url))
        assert game_id not in other.service.games

        engine = make_engine(url)
        with engine.begin() as conn:  # the stalled process's lease runs out
            conn.execute(sa.text("UPDATE game_leases SET expires_at = '2000-01-01'"))
        engine.dispose()
        assert await other.handover.sweep() == [game_id]
        await stalled.service.renew_leases()  # it wakes up and learns it lost the game
        assert game_id not in stalled.service.games
        assert stalled.rooms.get(game_id) is None

        await table.say(table.humans[0], "only the new driver relays this")
        await table.wait_post("only the new driver relays this")
        await other.delivery.drain()
        await stalled.delivery.drain()

    said = [e.content for e in table.stage_posts() if e.username in table.names.values()]
    assert said == ["only the new driver relays this"]
    booth = table.booth(table.humans[0])
    assert booth is not None
    notes = [m["content"] for m in fake.messages_in(booth) if m["author"].get("bot")]
    assert not any("not relayed" in n or "no game" in n.lower() for n in notes), notes


async def test_only_the_driver_ends_phases_and_the_next_one_carries_on_after_a_handover(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    """Phase deadlines are armed by the game's driver alone: with two bots on the game's shard
    each phase is announced once, and after the driver stops the other ends the next phases."""
    fake = fake_discord
    table = Table.build(fake)
    url = db_url_in(tmp_path)
    minutes = {"day_minutes": 0.25, "vote_minutes": 0.25, "night_minutes": 0.25}
    async with contextlib.AsyncExitStack() as one, contextlib.AsyncExitStack() as two:
        bots = [
            await one.enter_async_context(bot_stack(fake, url, speed=20.0)),
            await two.enter_async_context(bot_stack(fake, url, speed=20.0)),
        ]
        game_id = await table.play(**minutes)
        driver = 0 if game_id in bots[0].service.games else 1
        standby = bots[1 - driver]
        assert standby.service.games == {}  # no game, so no deadline armed there
        await table.wait_stage(lambda m: "Voting is open" in m["content"], within=WITHIN_S)
        await (one, two)[driver].aclose()
        assert await standby.handover.sweep() == [game_id]
        game = standby.service.games[game_id]
        # the new driver arms the deadline once the booths are read back and what may have been
        # typed meanwhile is released at its pace (bot.service.outages: up to the release cap, 30 s)
        await fake.wait_until(lambda: game.deadline_handle is not None, WITHIN_S + 45)
        seq = game.state.phase.seq if game.state else 0
        await fake.wait_until(
            lambda: game.state is not None and (game.state.phase.seq > seq or game.state.over),
            WITHIN_S + 45,  # the phase got the time its input was down back (bot.service.outages)
        )
        await standby.delivery.drain()

    stage = [m["content"] for m in fake.messages_in(table.town) if m["author"].get("bot")]
    announcements = [t for t in stage if "Voting is open" in t or t.startswith("Night")]
    assert len(announcements) == len(set(announcements)), announcements  # each phase once
    for person in table.humans:
        booth = table.booth(person)
        assert booth is not None
        notes = [
            m["content"].split(",")[0]
            for m in fake.messages_in(booth)
            if " ends <t:" in m["content"]
        ]
        assert len(notes) == len(set(notes)), notes  # each phase's booth note once
