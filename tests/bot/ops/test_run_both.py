"""`mafiabot run --discord --slack`: one process, a game on each platform. SIGTERM stops both
adapters within 10 s with exit 0; the next start resumes every game, and what was typed in
the booths on both platforms while no bot ran is relayed once."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.protection.consent import record_consent
from bot.store.db import make_engine
from tests.bot.discord.harness import Table, db_url_in
from tests.bot.ops.process import bot_process, stop
from tests.bot.ops.scrape import metrics, value
from tests.bot.ops.slack_people import People
from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import FakeSlack

pytestmark = pytest.mark.slow


async def test_both_platforms_stop_together_and_every_game_resumes(
    fake_discord: FakeDiscord, fake_slack: FakeSlack, tmp_path: Path
) -> None:
    table = Table.build(fake_discord)
    people = People(fake_slack)
    url = db_url_in(tmp_path)
    env = {
        "FAKE_DISCORD_API": fake_discord.api_base,
        "FAKE_DISCORD_WS": fake_discord.ws_url,
        "MAFIABOT_DATABASE_URL": url,
        "MAFIABOT_DISCORD_TOKEN": fake_discord.token,
        "MAFIABOT_DISCORD_AFK_REMINDER_MINUTES": "0",
        "MAFIABOT_SLACK_BOT_TOKEN": fake_slack.bot_token,
        "MAFIABOT_SLACK_APP_TOKEN": fake_slack.app_token,
        "MAFIABOT_SLACK_API_URL": fake_slack.base_url,
    }
    both = ["--discord", "--slack"]

    async with bot_process(both, env, tmp_path, "first") as first:
        engine = make_engine(url)
        for u in people.users:
            record_consent(engine, "slack", fake_slack.team_id, u.id, True)
        engine.dispose()
        await table.play(day_minutes=30.0)
        await people.play()
        running = await metrics(first.base)
        assert value(running, "mafiabot_games", status="running") == 2
        assert value(running, "mafiabot_players", kind="human") == 10
        took = await stop(first)
    assert first.proc.returncode == 0, first.log.read_text()
    assert took < 10.0
    await fake_discord.wait_until(lambda: not fake_discord.connections, 20.0)
    assert not fake_slack.hub.connected

    # typed while no bot runs: in the booths' histories only
    await table.say(table.humans[0], "typed on Discord while the bot was down")
    people.typed_offline(people.users[0], "typed on Slack while the bot was down")

    async with bot_process(both, env, tmp_path, "second") as second:
        assert value(await metrics(second.base), "mafiabot_games", status="running") == 2
        await table.wait_post("typed on Discord while the bot was down", within=15)
        await people.wait_line("typed on Slack while the bot was down")
        took = await stop(second)
    assert second.proc.returncode == 0, second.log.read_text()
    assert took < 10.0
    discord_lines = [e.content for e in table.stage_posts()]
    assert discord_lines.count("typed on Discord while the bot was down") == 1
    assert people.stage_lines().count("typed on Slack while the bot was down") == 1
