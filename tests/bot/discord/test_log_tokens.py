"""Webhook tokens never reach a log (issue 21): discord.py logs every webhook URL, token
included, at DEBUG; the bot scrubs them from the library's own records, so they are gone
at every level and whatever handler the process has (here: only pytest's)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.ops.logs import scrub_tokens
from tests.bot.discord.harness import Table, bot_stack, db_url_in
from tests.fakes.discord import FakeDiscord


async def test_webhook_tokens_are_not_logged_at_debug(
    fake_discord: FakeDiscord, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="discord")
    table = Table.build(fake_discord)
    async with bot_stack(fake_discord, db_url_in(tmp_path)):
        await table.play()
        await table.say(table.humans[1], "a line for the stage")
        await table.wait_post("a line for the stage")
    tokens = [wh.token for wh in fake_discord.webhooks.values()]
    assert tokens
    webhook_lines = [r.getMessage() for r in caplog.records if "/webhooks/" in r.getMessage()]
    assert webhook_lines, "discord.py logged no webhook request at DEBUG"
    text = "\n".join(r.getMessage() for r in caplog.records)
    for token in tokens:
        assert token not in text
    assert "[secret]" in "\n".join(webhook_lines)
    # an interaction's token (15 minutes of answering as the bot) is in the URL of its
    # callback, which discord.py's webhook adapter logs at DEBUG too
    answered = [i.token for i in fake_discord.interactions.values()]
    assert answered
    callback_lines = [r.getMessage() for r in caplog.records if "/interactions/" in r.getMessage()]
    assert callback_lines, "discord.py logged no interaction callback at DEBUG"
    for token in answered:
        assert token not in text


def test_token_shapes_are_scrubbed() -> None:
    line = (
        "POST https://discord.com/api/v10/webhooks/123456/AbC-def_123.xyz?wait=0 returned 204; "
        "Slack xoxb-1-2-abc xoxe.xoxb-1-MS0y xapp-1-A1-2-ff {'token': 'tok123'} "
        '{"refresh_token": "xyz789"} '
        "POST https://discord.com/api/v10/interactions/98765/aW50ZXJh_c3Rp-b246.MTI/callback"
    )
    clean = scrub_tokens(line)
    for secret in ("AbC-def_123.xyz", "xoxb-1-2-abc", "xoxe.xoxb-1-MS0y", "xapp-1-A1-2-ff"):
        assert secret not in clean
    assert "tok123" not in clean and "xyz789" not in clean
    assert "/webhooks/123456/[secret]?wait=0" in clean
    assert "aW50ZXJh_c3Rp-b246.MTI" not in clean
    assert "/interactions/98765/[secret]/callback" in clean
