"""Crash recovery: a SIGKILLed bot's games go on, booth lines typed meanwhile are relayed once,
in order, and menus sent by the old process still work in the new one."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from sqlmodel import Session, select

from bot.store.db import make_engine
from bot.store.models import Message, PlatformLink
from tests.bot.discord.harness import Table, bot_stack, component, db_url_in
from tests.fakes.discord import FakeDiscord

ROOT = Path(__file__).resolve().parents[3]


async def spawn_bot(fake: FakeDiscord, db_url: str, log: Path) -> asyncio.subprocess.Process:
    config = {
        "api_base": fake.api_base,
        "ws_url": fake.ws_url,
        "token": fake.token,
        "db_url": db_url,
        "speed": 1.0,
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
        await bot.outbox.drain()
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
