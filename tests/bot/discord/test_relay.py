"""What a booth line means, without Discord: `say_call` and the notes a writer gets."""

from __future__ import annotations

from datetime import UTC, datetime

import discord

from bot.discord.relay import (
    ELIMINATED,
    FILES,
    REPLACED,
    Line,
    Say,
    away_note,
    interaction_id,
    message_id,
    moment,
    refusal,
    say_call,
)
from bot.discord.rooms import Room

WHEN = datetime(2026, 3, 1, 12, 30, 15, 123000, tzinfo=UTC)
MID = discord.utils.time_snowflake(WHEN)


def room() -> Room:
    return Room(
        game_id="g1",
        guild_id=1,
        channel_id=2,
        humans={0: 100, 1: 101},
        alive={0, 1, 2},
        started=True,
    )


def test_a_line_becomes_a_say_call_at_its_snowflake_time_with_its_id() -> None:
    call = say_call(room(), 0, 100, Line(MID, 100, "  hello there  "))
    assert call == Say("g1", 0, "hello there", WHEN, f"discord:msg:{MID}")
    assert moment(MID) == WHEN  # to the millisecond Discord took it


def test_platform_ids_name_the_kind_of_event() -> None:
    assert message_id(42) == "discord:msg:42"
    assert interaction_id(42) == "discord:ix:42"


def test_nothing_is_said_before_the_start_or_after_the_end() -> None:
    waiting = room()
    waiting.started = False
    assert say_call(waiting, 0, 100, Line(MID, 100, "hi")) is None
    over = room()
    over.ended = True
    assert say_call(over, 0, 100, Line(MID, 100, "hi")) is None


def test_a_replaced_player_is_told_and_anyone_else_is_ignored() -> None:
    r = room()
    r.humans[0] = 999  # a substitute holds the seat now
    assert say_call(r, 0, 100, Line(MID, 100, "still me")) == REPLACED
    assert say_call(r, 0, 100, Line(MID, 555, "a moderator peeking")) is None


def test_an_empty_line_with_a_file_gets_a_note_and_an_empty_one_nothing() -> None:
    assert say_call(room(), 0, 100, Line(MID, 100, "  ", has_files=True)) == FILES
    assert say_call(room(), 0, 100, Line(MID, 100, "   ")) is None


def test_refusals_and_notes_about_lines_read_back_after_a_restart() -> None:
    r = room()
    assert refusal(r, 0, ValueError("It's night.")) == "It's night."
    r.alive.discard(0)
    assert refusal(r, 0, ValueError("It's night.")) == ELIMINATED
    live = Line(MID, 100, "hello")
    assert away_note(live, "no") == "no"
    back = Line(MID, 100, "hello", recovered=True)
    assert away_note(back, "no") == (
        "While the Game-Manager was away you wrote “hello”; it could not be relayed: no"
    )


async def test_each_booth_hands_its_lines_over_in_order_on_its_own_lane() -> None:
    """A booth's lines reach the service one after another, in the order they came, while
    another booth's go on beside them (the relay's lanes, `bot.service.lanes`); ``idle`` returns
    once
    everything pushed is handed over (a graceful stop waits on it)."""
    import asyncio
    from typing import Any, cast

    from bot.discord.relay import BoothQueue, Relay
    from bot.discord.rooms import Booth

    handed: list[tuple[int, int]] = []
    release = asyncio.Event()

    class Slow(Relay):
        async def handle(self, queue: BoothQueue, line: Line) -> None:
            if queue.seat == 0 and line.id == 1:
                await release.wait()  # booth 0's first line is slow to go
            handed.append((queue.seat, line.id))

    nothing = cast(Any, None)
    relay = Slow(nothing, nothing, nothing, nothing, nothing)
    a = BoothQueue(relay, "g1", Booth(0, 100, 10))
    b = BoothQueue(relay, "g1", Booth(1, 101, 11))
    for n in (1, 2, 3):
        a.push(Line(n, 100, f"a{n}"))
        b.push(Line(n, 101, f"b{n}"))
    await b.idle()
    assert handed == [(1, 1), (1, 2), (1, 3)]  # booth 1 did not wait for booth 0
    stopped = asyncio.create_task(relay.idle())
    await asyncio.sleep(0)
    assert not stopped.done()
    release.set()
    await asyncio.wait_for(stopped, 5)
    assert [line for seat, line in handed if seat == 0] == [1, 2, 3]


def test_a_booth_message_is_taken_from_the_gateway_payload() -> None:
    """A MESSAGE_CREATE in a booth becomes its line straight from Discord's payload (no
    `discord.Message` built for it); a bot's or a webhook's is dropped there, and a message
    anywhere else is left to discord.py (`on_message`)."""
    from typing import Any, cast

    from bot.discord.relay import BoothQueue, Relay
    from bot.discord.rooms import Booth

    nothing = cast(Any, None)
    relay = Relay(nothing, nothing, nothing, nothing, nothing)
    booth = BoothQueue(relay, "g1", Booth(0, 100, 10))
    relay.queues[10] = booth
    booth.buffer = []  # (catching up: what is pushed stays here)

    def payload(mid: int, **more: Any) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": str(mid),
            "channel_id": "10",
            "guild_id": "1",
            "author": {"id": "100", "username": "p", "discriminator": "0"},
            "content": f"line {mid}",
            "attachments": [],
            "embeds": [],
            "type": 0,
        }
        data.update(more)
        return data

    assert relay.on_raw_message(payload(MID))
    assert relay.on_raw_message(payload(MID + 1, content="", attachments=[{"id": "5"}]))
    assert relay.on_raw_message(payload(MID + 2, content="", sticker_items=[{"id": "6"}]))
    assert relay.on_raw_message(payload(MID + 3, author={"id": "7", "bot": True}))
    assert relay.on_raw_message(payload(MID + 4, webhook_id="8"))
    assert not relay.on_raw_message(payload(MID + 5, channel_id="11"))  # not a booth
    assert [(x.id, x.author_id, x.text, x.has_files) for x in booth.buffer] == [
        (MID, 100, f"line {MID}", False),
        (MID + 1, 100, "", True),
        (MID + 2, 100, "", True),
    ]
    assert say_call(room(), 0, 100, booth.buffer[0]) == Say(
        "g1", 0, f"line {MID}", WHEN, f"discord:msg:{MID}"
    )
    assert say_call(room(), 0, 100, booth.buffer[1]) == FILES
