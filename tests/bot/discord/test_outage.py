"""Outages are symmetric on Discord (`bot.service.outages`): after ``kill -9`` in the middle of a
day
with people typing through the restart, the backlog is released at the pace it was typed with
the agents speaking inside it, and no line reaches the stage after its phase was announced
over; during a gateway gap the agents wait and the clock stands still."""

from __future__ import annotations

import asyncio
import re
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlmodel import Session, select

from bot.store.db import make_engine
from bot.store.models import Message
from tests.bot.discord.harness import Table, bot_stack, db_url_in, new_bot
from tests.bot.discord.test_restart import spawn_bot
from tests.fakes.discord import FakeDiscord
from tests.fakes.discord_fixtures import running_client

JSON = dict[str, Any]
BEGINS = re.compile(r"The game begins with \d+ players: (?P<names>[^.]+)\.")
#: the stage announcements that open a phase (day 1 opens with the start announcement)
OPENS = ("The game begins", "Now it's Daytime", "Voting is open", "Now it's Nighttime")


def everyone(table: Table) -> list[str]:
    for m in table.fake.messages_in(table.town):
        found = BEGINS.search(m["content"])
        if found:
            return [n.strip() for n in re.split(r",\s*|\s+and\s+", found["names"]) if n.strip()]
    raise AssertionError("no start announcement")


def character_posts(table: Table, names: list[str]) -> list[JSON]:
    return [
        m
        for m in table.fake.messages_in(table.town)
        if m.get("webhook_id") and m["author"]["username"] in names
    ]


def after_their_phase(table: Table, phase_of: dict[str, int | None]) -> list[str]:
    """The stage lines posted after their phase was announced over: each character line must
    come while its phase (by the stored message's phase) is the last one announced."""
    announced = 0
    wrong = []
    for m in table.fake.messages_in(table.town):
        if any(m["content"].startswith(o) for o in OPENS):
            announced += 1
            continue
        seq = phase_of.get(m["content"]) if m.get("webhook_id") else None
        if seq is not None and seq != announced:
            wrong.append(m["content"])
    return wrong


async def test_sigkill_mid_day_the_agents_speak_inside_the_released_backlog(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    """Fails on the code before `bot.service.outages`: the resumed game closes the day at once (its
    deadline passed while the bot was down), so the day's backlog is posted after "Voting is
    open", in one burst with no agent line inside it."""
    fake = fake_discord
    table = Table.build(fake)
    url = db_url_in(tmp_path)
    proc = await spawn_bot(fake, url, tmp_path / "bot1.log")
    try:
        lobby = await table.full_lobby(day_minutes=0.3)  # 18 s
        game_id = table.game_id(lobby)
        assert (await (await table.start(table.mod, lobby)).response()).type == 6
        for person in table.humans:
            await table.read_role(person)
        await table.say(table.humans[0], "before the crash")
        await table.wait_post("before the crash")
        names = everyone(table)
        agents = [n for n in names if n not in table.names.values()]
        assert agents, names
    finally:
        proc.kill()  # SIGKILL: no shutdown code runs
        await proc.wait()

    # People type through the restart, past the day's deadline, asking the agents questions.
    typed = []
    for i in range(12):
        person = table.humans[i % len(table.humans)]
        text = f"{agents[i % len(agents)]}, what do you make of it? ({i})"
        await table.say(person, text)
        typed.append(text)
        await asyncio.sleep(1.5)

    async with new_bot(url) as bot, running_client(bot, fake):
        # (the catch-up lasts as long as the backlog took to type)
        await asyncio.wait_for(bot.caught_up.wait(), 60)
        assert bot.recovered == [game_id]
        await table.wait_stage(lambda m: "Voting is open" in m["content"], within=60)
        await bot.delivery.drain()

    posts = character_posts(table, names)
    texts = [m["content"] for m in posts]
    assert [t for t in texts if t in typed] == typed  # once each, in order
    first, last = texts.index(typed[0]), texts.index(typed[-1])
    inside = [m for m in posts[first + 1 : last] if m["author"]["username"] in agents]
    assert inside, f"no agent line inside the released backlog: {texts[first : last + 1]}"
    # paced as typed (1.5 s apart), not one burst
    stamps = {m["content"]: m["timestamp"] for m in posts}
    assert stamps[typed[-1]] != stamps[typed[0]]
    with Session(make_engine(url)) as session:
        rows = session.exec(select(Message).where(Message.game_id == game_id)).all()
        phase_of = {r.text: r.phase_seq for r in rows if r.seat_index is not None}
    assert after_their_phase(table, phase_of) == []


async def test_a_gateway_gap_pauses_the_agents_and_gives_the_day_its_time_back(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    """Fails on the code before `bot.service.outages`: the agents go on talking on the stage while
    the gateway is down (only agent lines appear), and the day ends on its old deadline."""
    fake = fake_discord
    table = Table.build(fake)
    url = db_url_in(tmp_path)
    # a fixed deal: an agent speaks a third of a second into the day (with a random one a
    # baseline agent's people-calibrated timing may keep it quiet through the whole short day:
    # seed 3 does, every time)
    async with bot_stack(fake, url, speed=10.0, test_seed=4) as bot:
        lobby = await table.full_lobby(day_minutes=1.0)  # 6 real seconds
        game_id = table.game_id(lobby)
        assert (await (await table.start(table.mod, lobby)).response()).type == 6
        for person in table.humans:
            await table.read_role(person)
        names = everyone(table)
        agents = [n for n in names if n not in table.names.values()]
        game = bot.service.games[game_id]
        assert game.state is not None and game.state.phase.deadline is not None
        deadline = game.state.phase.deadline
        await fake.wait_until(
            lambda: any(m["author"]["username"] in agents for m in character_posts(table, names)),
            10,
        )
        await fake.hold_gateway()
        down = time.monotonic()
        await fake.wait_until(lambda: all(s.is_closed() for s in bot.shards.values()), 20.0)
        seen = len(fake.messages_in(table.town))
        typed = []
        for i in range(6):
            text = f"typed in the gap {i}"
            await table.say(table.humans[i % len(table.humans)], text)
            typed.append(text)
            await asyncio.sleep(0.4)
        # on to two real seconds past the day's old deadline (a wait for the game's clock)
        await asyncio.sleep(game.clock.real_delay_until(deadline + timedelta(seconds=20)))
        gap_posts = [m["content"] for m in fake.messages_in(table.town)[seen:]]
        assert gap_posts == [], f"posted while the gateway was down: {gap_posts}"
        assert game.state.phase.kind.value == "day"
        fake.release_gateway()
        await fake.wait_until(lambda: fake.resume_count >= 1, 10)
        gap = time.monotonic() - down
        for text in typed:
            await table.wait_post(text, within=10)
        await bot.service.drain(game_id)
        assert game.state.phase.kind.value == "day"  # still the day, after its old deadline
        extended = game.state.phase.deadline - deadline
        assert abs(extended.total_seconds() - gap * 10.0) < 15.0
        back = await table.wait_stage(lambda m: "gets" in m["content"] and "back" in m["content"])
        assert "stood still" in back["content"]
        await table.wait_stage(lambda m: "Voting is open" in m["content"], within=30)
        await bot.delivery.drain()
    posts = [m["content"] for m in character_posts(table, names)]
    assert [t for t in posts if t in typed] == typed
