"""Moderator commands, consent withdrawal and AFK handling."""

from __future__ import annotations

import asyncio
import io
import re
import zipfile
from pathlib import Path

from sqlmodel import Session, select

from bot.store.db import make_engine
from bot.store.models import Consent, Game, Server, WithdrawalJob
from tests.bot.discord.harness import Table, answered, bot_stack, component, db_url_in
from tests.fakes.discord import FakeDiscord, Member


async def test_config_status_end_and_export(fake_discord: FakeDiscord, tmp_path: Path) -> None:
    table = Table.build(fake_discord)
    url = db_url_in(tmp_path)
    async with bot_stack(fake_discord, url) as bot:
        shown = await table.answer(
            await table.slash(
                "mafia config", table.mod, day_minutes=7.0, roles="detective", graveyard=True
            )
        )
        assert "Day 7 minutes" in shown and "Special roles: detective" in shown
        assert "Graveyard (the dead talk in their booths): on" in shown
        game_id = await table.play()
        assert (
            "Day 7 minutes" in fake_discord.messages_in(table.town)[0]["embeds"][0]["description"]
        )
        status = await table.answer(await table.slash("mafia status", table.mod))
        assert game_id in status and "Day 1: discussion" in status and "5 human(s)" in status

        ended = await table.answer(await table.slash("mafia end", table.mod, reason="time's up"))
        assert ended == f"Game {game_id} is stopped."
        await table.wait_stage(lambda m: "The game was stopped (time's up)" in m["content"])
        await bot.delivery.drain()
        await fake_discord.wait_until(lambda: table.town.overwrites == {})
        threads = [c for c in fake_discord.channels.values() if c.is_thread]
        assert threads and all(c.archived for c in threads)

        export = await table.slash("mafia export", table.mod)
        await export.response()
        sent = await export.followup(0)
        filename = sent["attachments"][0]["filename"]
        assert re.fullmatch(r"mafiabot-export-\d{8}-\d{6}\.zip", filename)  # no guild id
        upload = fake_discord.attachments[int(sent["attachments"][0]["id"])]
        with zipfile.ZipFile(io.BytesIO(upload.data)) as bundle:
            names = bundle.namelist()
            assert "manifest.json" in names
            text = "\n".join(bundle.read(n).decode() for n in names)
        for person in table.humans:  # anonymised: no account names or ids
            assert person.user.username not in text and str(person.id) not in text
    with Session(make_engine(url)) as session:
        game = session.get(Game, game_id)
        assert game is not None and game.status == "aborted" and game.end_reason == "time's up"
        server = session.exec(select(Server)).one()
        assert server.settings["day_minutes"] == 7.0


async def test_kick_hands_the_seat_to_an_agent_or_a_substitute(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    sub = fake_discord.add_member(table.guild, "substitute")
    async with bot_stack(fake_discord, db_url_in(tmp_path)) as bot:
        game_id = await table.play(day_minutes=30.0)
        game = bot.service.games[game_id]
        gone, replaced = table.humans[3], table.humans[4]
        before = len(fake_discord.messages_in(table.town))

        text = await table.answer(await table.slash("mafia kick", table.mod, member=gone))
        assert "an agent plays the seat now" in text and "Nobody else is told" in text
        seat = next(s for s in game.seats if s.name == table.names[gone.id])
        assert seat.is_agent and seat.user_id is None
        assert table.booth(gone) is None  # out of the booth (and the den)

        refused = await table.answer(
            await table.slash("mafia kick", table.mod, member=replaced, substitute=sub)
        )
        assert "hasn't agreed" in refused
        consent = await table.slash("mafia consent", sub)
        notice = await answered(consent)
        assert notice["flags"] & 64 and "One of the players at this table is an AI" in str(notice)
        assert consent.original is not None
        agree = await fake_discord.click(
            consent.original, component(consent.original, "mafia:consent:-:yes"), user=sub
        )
        assert "saved" in ((await agree.response()).data.get("content") or "")
        text = await table.answer(
            await table.slash("mafia kick", table.mod, member=replaced, substitute=sub)
        )
        assert "substitute plays the seat now" in text
        booth = await table.wait_booth(sub)
        card = await fake_discord.wait_for_message(booth, lambda m: "taking over" in m["content"])
        assert table.names[replaced.id] in card["content"]
        assert table.booth(replaced) is None
        await fake_discord.send_message(booth, sub, "hi, I'm back")
        post = await table.wait_post("hi, I'm back")
        assert post.username == table.names[replaced.id]
        # Nothing about any of this on the stage.
        new = fake_discord.messages_in(table.town)[before:]
        assert all("kick" not in m["content"] and "substitute" not in m["content"] for m in new)


async def test_withdrawing_consent_takes_you_out_of_lobbies(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    url = db_url_in(tmp_path)
    person = table.humans[2]
    async with bot_stack(fake_discord, url) as bot:
        await table.setup()
        lobby = await table.open()
        await table.join(person, lobby)
        game_id = table.game_id(lobby)
        assert len(bot.service.games[game_id].seats) == 1
        withdrawal = await table.slash("mafia consent", person, action="withdraw")
        text = await table.answer(withdrawal)
        assert text.startswith("Withdrawn")
        assert len(bot.service.games[game_id].seats) == 0
        # the ended games are cleaned in the background; the person is told when it is done
        done = await withdrawal.followup(1, within=60.0)
        assert done.get("content", "").startswith("Your withdrawal is done")
        assert done.get("flags", 0) & 64  # (only they see it)
        shown = await table.slash("mafia consent", person)
        answer = await answered(shown)
        assert "withdrawn" in answer["content"] and shown.original is not None
        assert shown.original["components"]  # asked again
        rejoin = await (
            await fake_discord.click(lobby, f"mafia:lobby:{game_id}:join", user=person)
        ).response()
        assert rejoin.ephemeral and rejoin.data["embeds"][0]["title"] == "Before you play"
    with Session(make_engine(url)) as session:
        rows = session.exec(select(Consent).where(Consent.user_id == str(person.id))).all()
        assert rows and all(r.withdrawn_at is not None for r in rows)


async def test_silent_players_get_a_reminder_then_an_agent(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    async with bot_stack(fake_discord, db_url_in(tmp_path), speed=60.0) as bot:
        await table.setup()
        shown = await table.answer(
            await table.slash(
                "mafia config", table.mod, afk_reminder_minutes=1.0, afk_takeover_minutes=3.0
            )
        )
        assert "AFK reminder after 1.0 min; takeover after 3.0 min" in shown
        game_id = await table.play(day_minutes=30.0)
        talker, quiet = table.humans[0], table.humans[1]
        booth = table.booth(quiet)
        assert booth is not None

        async def keep_talking() -> None:
            for i in range(100):
                await table.say(talker, f"still talking {i}")
                await asyncio.sleep(0.3)

        chatter = asyncio.create_task(keep_talking())
        try:
            await fake_discord.wait_for_message(
                booth, lambda m: "Still there?" in m["content"], within=5
            )
            await fake_discord.wait_for_message(
                booth, lambda m: "an agent plays your seat" in m["content"], within=8
            )
        finally:
            chatter.cancel()
        seats = {s.name: s for s in bot.service.games[game_id].seats}
        assert seats[table.names[quiet.id]].is_agent
        assert not seats[table.names[talker.id]].is_agent
        talker_booth = table.booth(talker)
        assert talker_booth is not None
        assert not any(
            "Still there?" in m["content"] for m in fake_discord.messages_in(talker_booth)
        )


async def test_a_withdrawal_cut_short_by_a_restart_is_finished_and_told(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    """A withdrawal under way when the bot stopped (its job still recorded) is taken up at
    the next start, and the person gets the note that it is done, in a direct message (the
    command's own interaction is gone with the old process)."""
    table = Table.build(fake_discord)
    url = db_url_in(tmp_path)
    person = table.humans[2]
    async with bot_stack(fake_discord, url):
        await table.setup()
        await table.answer(await table.slash("mafia consent", person, action="withdraw"))
    with Session(make_engine(url)) as session:  # as if the bot stopped half-way
        session.merge(
            WithdrawalJob(
                platform="discord", server_external_id=str(table.guild.id), user_id=str(person.id)
            )
        )
        session.commit()
    async with bot_stack(fake_discord, url):
        texts = await fake_discord.wait_until(
            lambda: [t for t in _dm_texts(fake_discord, person) if "withdrawal is done" in t],
            60.0,
        )
        assert texts
    with Session(make_engine(url)) as session:
        assert not session.exec(select(WithdrawalJob)).all()


def _dm_texts(fake: FakeDiscord, user: Member) -> list[str]:
    for ch in fake.channels.values():
        if ch.type == 1 and ch.recipient_ids == [user.id]:
            return [m["content"] for m in fake.messages_in(ch)]
    return []
