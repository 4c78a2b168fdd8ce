"""Faults: missing permissions, a deleted webhook, thread or channel, rate limits."""

from __future__ import annotations

from pathlib import Path

from sqlmodel import Session, select

from bot.service.timers import Backoff
from bot.store.db import make_engine
from bot.store.models import Game, PlatformLink
from tests.bot.db_faults import Faults, action
from tests.bot.discord.harness import Table, bot_stack, db_url_in
from tests.fakes.discord import FakeDiscord


async def test_setup_and_start_name_missing_permissions_in_plain_words(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    fake_discord.deny_permission(table.town, "manage_webhooks")
    fake_discord.deny_permission(table.town, "create_private_threads")
    async with bot_stack(fake_discord, db_url_in(tmp_path)):
        text = await table.setup()
        assert "missing permissions" in text
        assert "Manage Webhooks (every player speaks through one webhook)" in text
        assert "Create Private Threads (a private booth per player)" in text
        assert "Manage Permissions" not in text
        lobby = await table.open()
        for person in table.humans:
            await table.join(person, lobby)
        refused = await (await table.start(table.mod, lobby)).response()
        assert refused.ephemeral and "Manage Webhooks" in (refused.content or "")
        assert not [c for c in fake_discord.channels.values() if c.is_thread]

        fake_discord.allow_permission(table.town, "manage_webhooks")
        fake_discord.allow_permission(table.town, "create_private_threads")
        assert "every permission" in await table.setup()


async def test_a_deleted_webhook_is_made_again_and_nothing_is_lost(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    url = db_url_in(tmp_path)
    async with bot_stack(fake_discord, url) as bot:
        game_id = await table.play(day_minutes=30.0)
        alice = table.humans[0]
        await table.say(alice, "first line")
        first = await table.wait_post("first line")
        fake_discord.delete_webhook(first.webhook_id)
        await table.say(alice, "second line")
        second = await table.wait_post("second line")
        assert second.webhook_id != first.webhook_id
        assert second.username == first.username
        await bot.delivery.drain()
    with Session(make_engine(url)) as session:
        links = session.exec(select(PlatformLink).where(PlatformLink.game_id == game_id)).all()
        assert {int(x.external_id) for x in links if x.kind == "webhook"} == {second.webhook_id}
        assert any(x.kind == "incident" and x.data["what"] == "webhook recreated" for x in links)


async def test_rate_limits_delay_posts_but_never_drop_or_reorder_them(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    async with bot_stack(fake_discord, db_url_in(tmp_path)) as bot:
        bot.delivery.base_backoff = 0.02
        await table.play(day_minutes=30.0)
        rule = fake_discord.rate_limit(
            "POST /webhooks/{webhook_id}/{webhook_token}", times=12, retry_after=0.01
        )
        alice = table.humans[0]
        lines = [f"line {i}" for i in range(6)]
        for text in lines:
            await table.say(alice, text)
        await fake_discord.wait_until(
            lambda: all(any(e.content == t for e in table.stage_posts()) for t in lines), 10.0
        )
        assert rule.hits == 12 and bot.delivery.retried >= 1  # more than discord.py's 5 tries
        mine = [e.content for e in table.stage_posts() if e.content in lines]
        assert mine == lines


async def test_a_deleted_booth_is_replaced_and_the_moderator_told(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    async with bot_stack(fake_discord, db_url_in(tmp_path)):
        await table.play(day_minutes=30.0)
        bob = table.humans[1]
        old = table.booth(bob)
        assert old is not None
        fake_discord.delete_channel(old)
        await fake_discord.flush()
        new = await fake_discord.wait_until(
            lambda: (b := table.booth(bob)) is not None and b.id != old.id and b, 5.0
        )
        card = await fake_discord.wait_for_message(new, lambda m: "Your role" in m["content"])
        assert "new one" in card["content"] and table.names[bob.id] in card["content"]
        await table.say(bob, "still here")
        await table.wait_post("still here")
        dms = await table.dms_to(table.mod)
        assert any("booth thread of the game was deleted" in d for d in dms)


async def test_a_deleted_game_channel_ends_the_game_with_a_record(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    url = db_url_in(tmp_path)
    async with bot_stack(fake_discord, url) as bot:
        game_id = await table.play(day_minutes=30.0)
        fake_discord.delete_channel(table.town)
        await fake_discord.flush()
        await fake_discord.wait_until(
            lambda: any("channel was deleted" in d for d in table_dms(table, fake_discord)), 5.0
        )
        await bot.service.wait_finished(game_id)
    with Session(make_engine(url)) as session:
        game = session.get(Game, game_id)
        assert game is not None and game.status == "aborted"
        assert game.end_reason == "the game channel was deleted"


async def test_a_missing_permission_at_run_time_is_reported_not_crashed_on(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    async with bot_stack(fake_discord, db_url_in(tmp_path)) as bot:
        game_id = await table.play(day_minutes=30.0)
        carol = table.humans[2]
        booth = table.booth(carol)
        assert booth is not None
        fake_discord.deny_permission(booth, "send_messages_in_threads")
        room = bot.rooms.get(game_id)
        assert room is not None
        seat = room.seat_of(carol.id)
        assert seat is not None
        bot.notify.booth(room, seat, "a note the bot may not post any more")
        await fake_discord.wait_until(
            lambda: any("refused a post in the booth" in d for d in table_dms(table, fake_discord)),
            5.0,
        )
        assert bot.delivery.failed == 1
        await table.say(carol, "a line")
        await table.wait_post("a line")  # the game goes on


def table_dms(table: Table, fake: FakeDiscord) -> list[str]:
    for ch in fake.channels.values():
        if ch.type == 1 and ch.recipient_ids == [table.mod.id]:
            return [m["content"] for m in fake.messages_in(ch)]
    return []


async def test_a_lasting_database_failure_at_a_deadline_reaches_the_host_once(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    async with bot_stack(fake_discord, db_url_in(tmp_path), speed=600.0) as bot:
        bot.service.alert_after = 0.2
        bot.service.tick_backoff = Backoff(first=0.02, cap=0.1)
        faults = Faults(bot.service.engine)
        faults.refuse("actions", action("tick"), times=float("inf"))
        game_id = await table.play(day_minutes=1.0)

        def told() -> list[str]:
            return [d for d in table_dms(table, fake_discord) if "database refuses" in d]

        [note] = await fake_discord.wait_until(told, 10.0)
        assert game_id in note and "keep retrying" in note
        faults.lift()
        await table.wait_stage(lambda m: "Voting is open" in m["content"])
        await bot.delivery.drain()
        assert len(told()) == 1
