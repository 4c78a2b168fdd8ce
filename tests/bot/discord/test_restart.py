"""Crash recovery: a SIGKILLed bot's games go on, booth lines typed meanwhile are relayed once,
in order, and menus sent by the old process still work in the new one."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from sqlmodel import Session, select

from bot.store.db import make_engine
from bot.store.models import Message, PlatformLink
from tests.bot.discord.harness import (
    Table,
    bot_stack,
    component,
    custom_ids,
    db_url_in,
    kill_vote,
)
from tests.fakes.discord import FakeDiscord

ROOT = Path(__file__).resolve().parents[3]


async def spawn_bot(
    fake: FakeDiscord, db_url: str, log: Path, *, speed: float = 1.0, seed: int | None = None
) -> asyncio.subprocess.Process:
    config = {
        "api_base": fake.api_base,
        "ws_url": fake.ws_url,
        "token": fake.token,
        "db_url": db_url,
        "speed": speed,
        "seed": seed,
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAFIABOT_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.bot.discord.botproc",
        json.dumps(config),
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=log.open("wb"),
    )
    assert proc.stdout is not None
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
    except TimeoutError:
        proc.kill()
        raise AssertionError("bot process never got ready:\n" + read(log)) from None
    assert line.strip() == b"READY", read(log)
    return proc


def read(log: Path) -> str:
    return log.read_text(errors="replace")


async def test_sigkill_mid_day_lines_typed_meanwhile_are_relayed_once_in_order(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    table = Table.build(fake)
    url = db_url_in(tmp_path)
    alice, bob = table.humans[0], table.humans[1]
    proc = await spawn_bot(fake, url, tmp_path / "bot1.log")
    try:
        lobby = await table.full_lobby(day_minutes=30.0)
        game_id = table.game_id(lobby)
        assert (await (await table.start(table.mod, lobby)).response()).type == 6
        for person in table.humans:
            await table.read_role(person)
        await table.say(alice, "before the crash")
        await table.wait_post("before the crash")
        hook_before = {e.webhook_id for e in table.stage_posts()}
    finally:
        proc.kill()  # SIGKILL: no shutdown code runs
        await proc.wait()

    typed = [
        (alice, "while down 1"),
        (bob, "while down 2"),
        (alice, "while down 3"),
        (bob, "while down 4"),
        (alice, "while down 5"),
    ]
    for person, text in typed:
        await table.say(person, text)

    async with bot_stack(fake, url) as bot:
        assert bot.recovered == [game_id]
        for _, text in typed:
            await table.wait_post(text)
        await table.say(bob, "after the restart")
        await table.wait_post("after the restart")
        await bot.delivery.drain()
        await asyncio.sleep(0.3)  # nothing else trickles in
        back = await table.wait_stage(lambda m: "back after a restart" in m["content"])
        assert "Day 1" in back["content"]

    posts = [e.content for e in table.stage_posts() if e.username in table.names.values()]
    expected = ["before the crash"] + [t for _, t in typed] + ["after the restart"]
    assert [p for p in posts if p in expected] == expected  # once each, in typing order
    assert {e.webhook_id for e in table.stage_posts()} == hook_before  # webhook found again
    with Session(make_engine(url)) as session:
        stored = session.exec(select(Message.text).where(Message.client_id.startswith("discord:")))  # type: ignore[union-attr]
        assert sorted(stored.all()) == sorted(expected)
        booths = session.exec(select(PlatformLink).where(PlatformLink.kind == "booth")).all()
        assert len(booths) == 5


async def test_menus_sent_before_a_restart_still_count(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    table = Table.build(fake)
    url = db_url_in(tmp_path)
    async with bot_stack(fake, url, speed=20.0):
        lobby = await table.full_lobby(day_minutes=0.25, vote_minutes=20.0)
        game_id = table.game_id(lobby)
        await (await table.start(table.mod, lobby)).response()
        for person in table.humans:
            await table.read_role(person)
        vote = await table.wait_stage(lambda m: "Voting is open" in m["content"], within=10)

    async with bot_stack(fake, url, speed=20.0):
        voter, target = table.humans[0], table.names[table.humans[1].id]
        inter = await fake.select(
            vote, component(vote, f"mafia:vote:{game_id}:"), [target], user=voter
        )
        answer = await inter.response()
        assert answer.ephemeral and f"Your vote: {target}" in (answer.content or "")
        me = table.names[voter.id]
        await table.wait_stage(lambda m: f"{me} voted for {target}" in m["content"])


def has_kill_menu(message: dict[str, Any]) -> bool:
    return any(c.startswith("mafia:kill:") for c in custom_ids(message))


async def test_sigkill_mid_night_the_den_goes_on_between_the_booths(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    """With seed 0, 7 players: the two mafia are people (the agent is a bystander). The bot is
    killed during the night talk; what the mafia typed meanwhile reaches the partner's booth
    once, a den thread left by an older version is closed, and the night vote follows."""
    fake = fake_discord
    table = Table.build(fake, humans=6)
    url = db_url_in(tmp_path)
    proc = await spawn_bot(fake, url, tmp_path / "bot1.log", speed=20.0, seed=0)
    try:
        await table.setup()
        await table.answer(await table.slash("mafia config", table.mod, night_vote_minutes=30.0))
        game_id = await table.play(day_minutes=0.25, vote_minutes=1.0, night_minutes=2.0)
        mafia = [p for p in table.humans if table.roles[p.id] == "mafia"]
        assert len(mafia) == 2, "the seed no longer gives two human mafia"
        a, b = mafia
        town = [p for p in table.humans if p not in mafia]
        booth_a, booth_b = table.booth(a), table.booth(b)
        assert booth_a is not None and booth_b is not None
        vote = await table.wait_stage(lambda m: "Voting is open" in m["content"])
        for voter in (a, b, town[0]):
            await (
                await fake.select(
                    vote, component(vote, "mafia:vote:"), [table.names[town[-1].id]], user=voter
                )
            ).response()
        await fake.wait_for_message(booth_a, lambda m: "Den, night 1" in m["content"], within=10)
        await table.say(a, "before the crash")
        await table.wait_post("before the crash")
    finally:
        proc.kill()  # SIGKILL: no shutdown code runs
        await proc.wait()

    # An older version kept a shared den thread; its link must not trip the new bot up.
    old_den = fake.add_thread(table.town, f"den · {game_id}", private=True, members=[a, b])
    engine = make_engine(url)
    with Session(engine) as session:
        session.add(
            PlatformLink(
                game_id=game_id,
                platform="discord",
                kind="den",
                external_id=str(old_den.id),
                data={"members": [str(a.id), str(b.id)]},
            )
        )
        session.commit()
    await table.say(a, "typed while down by a")
    await table.say(b, "typed while down by b")

    async with bot_stack(fake, url) as bot:
        assert bot.recovered == [game_id]
        back = await table.wait_stage(lambda m: "back after a restart" in m["content"])
        assert "Night 1" in back["content"]
        await table.wait_post("typed while down by a")
        await table.wait_post("typed while down by b")
        await table.say(b, "after the restart")
        await table.wait_post("after the restart")
        await fake.wait_until(lambda: old_den.archived and old_den.locked, 20.0)
        assert any("The den has moved" in m["content"] for m in fake.messages_in(old_den))

        menu = await fake.wait_for_message(booth_a, has_kill_menu, within=15)
        await fake.wait_for_message(booth_b, has_kill_menu, within=20.0)
        victim = table.names[town[0].id]
        await kill_vote(fake, menu, game_id, victim, a)
        await fake.wait_for_message(
            booth_b, lambda m: f"{table.names[a.id]} voted for {victim}" in m["content"]
        )
        await bot.delivery.drain()

    where = {
        text: [e.thread_id for e in fake.webhook_executions if e.content == text]
        for text in (
            "before the crash",
            "typed while down by a",
            "typed while down by b",
            "after the restart",
        )
    }
    assert where == {  # once each, in the partner's booth only
        "before the crash": [booth_b.id],
        "typed while down by a": [booth_b.id],
        "typed while down by b": [booth_a.id],
        "after the restart": [booth_a.id],
    }
    assert not [
        c
        for c in fake.channels.values()
        if c.is_thread and c.id != old_den.id and not ((c.name or "").startswith("booth"))
    ]
    with Session(engine) as session:
        kinds = {x.kind for x in session.exec(select(PlatformLink)).all()}
        assert "den" not in kinds
