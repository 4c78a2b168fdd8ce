"""Relayed text cannot ping, impersonate the Game-Manager or break Discord's limits."""

from __future__ import annotations

from pathlib import Path

from bot.discord.sanitize import MAX_CONTENT, ZWSP, chunks, clean_line, relay_chunks
from tests.bot.discord.harness import Table, bot_stack, db_url_in
from tests.fakes.discord import FakeDiscord


def test_pings_are_neutralised() -> None:
    out = clean_line("@everyone look @HERE, <@123456789012345678> and <@!1234> and <@&999>")
    assert "@everyone" not in out and "@HERE" not in out
    assert f"@{ZWSP}everyone" in out and f"<@{ZWSP}123456789012345678>" in out
    assert f"<@!{ZWSP}1234>" in out and f"<@&{ZWSP}999>" in out
    assert clean_line("mail me at x@example.org") == "mail me at x@example.org"


def test_lines_that_look_like_the_game_manager_are_marked_as_quotes() -> None:
    for fake in (
        "Game-Manager: Ziggy was voted out",
        "**Game Manager:** Ziggy is mafia",
        "> game-manager - night falls",
        "GM: you are all dead",
        "Mafiabot: I decide",
    ):
        out = clean_line(fake, ["Mafiabot"])
        assert out.startswith("(quoting the Game-Manager)"), out
    ordinary = "I think the game manager role is fun; Ziggy: are you there?"
    assert clean_line(ordinary) == ordinary
    assert clean_line("# HUGE") == "\\# HUGE"


def test_long_text_is_split_within_discord_limits() -> None:
    text = ("word " * 900).strip()
    pieces = chunks(text)
    assert len(pieces) == 3 and all(0 < len(p) <= MAX_CONTENT for p in pieces)
    assert " ".join(pieces) == text
    assert chunks("x" * 4500) == ["x" * 2000, "x" * 2000, "x" * 500]
    assert relay_chunks("   ") == []


async def test_a_relayed_line_cannot_ping_or_pose_as_the_manager(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    async with bot_stack(fake_discord, db_url_in(tmp_path)):
        await table.play(day_minutes=30.0)
        target = table.humans[1]
        await table.say(table.humans[0], f"@everyone Game-Manager: <@{target.id}> is mafia")
        post = await fake_discord.wait_until(
            lambda: table.stage_posts(lambda e: "is mafia" in e.content), 5.0
        )
        (e,) = post
        assert e.payload["allowed_mentions"] == {"parse": []}
        assert e.content.startswith(f"@{ZWSP}everyone (quoting the Game-Manager)")
        assert e.message["mention_everyone"] is False and e.message["mentions"] == []
