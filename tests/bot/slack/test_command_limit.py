"""Each person's commands are rate-limited by the service's `CommandLimiter` (issue 21): on
Slack, ``/mafia`` subcommands and lobby buttons over the limit change nothing and get one
ephemeral line saying when to try again; other people are not held up."""

from __future__ import annotations

import re

from bot.limits import COMMAND_BURST, CommandLimiter
from tests.bot.slack.conftest import SlackHarness

#: a refill slower than any test run: what is refused stays refused
SLOW = 600.0


def _wait(text: str) -> int:
    found = re.search(r"Please wait (\d+) s before you use a command again", text)
    assert found is not None, text
    return int(found.group(1))


async def test_a_flood_of_commands_is_refused_quietly(harness: SlackHarness) -> None:
    users = harness.people(3)
    harness.consent_all(users)
    assert harness.service is not None and harness.channel is not None
    harness.service.commands = CommandLimiter(burst=COMMAND_BURST, every=SLOW)
    flooder, other = users[1], users[2]
    for _ in range(COMMAND_BURST):
        assert "Please wait" not in await harness.slash(flooder, "status")
    assert "Please wait" not in await harness.slash(flooder, "help")  # (help costs nothing)
    before = len(harness.fake.messages_in(harness.channel))
    refused = await harness.slash(flooder, "new")
    assert 0 < _wait(refused) <= SLOW
    assert harness.fake.responses[-1].ephemeral
    # nothing was opened, nothing posted in the channel
    assert not harness.service.games
    assert len(harness.fake.messages_in(harness.channel)) == before
    # their consent is never held back (nor help)
    assert "Please wait" not in await harness.slash(flooder, "consent")
    assert "Please wait" not in await harness.slash(flooder, "help")
    # someone else is not held up
    assert "is open" in await harness.slash(other, "new")
    assert harness.service.commands.refused == 1


async def test_a_flood_of_lobby_clicks_is_refused_quietly(harness: SlackHarness) -> None:
    users = harness.people(3)
    harness.consent_all(users)
    game_id = await harness.new_game(users[0], "")
    assert harness.service is not None
    harness.service.commands = CommandLimiter(burst=COMMAND_BURST, every=SLOW)
    clicker = users[1]
    game = harness.service.games[game_id]
    fake = harness.fake

    async def click(action: str) -> str:
        before = len(fake.responses)
        await fake.click(user=clicker, action_id=f"mafia_{action}", channel=harness.channel)
        await fake.wait_for_responses(before + 1)
        return fake.responses[before].text

    for action in ("join", "leave", "join", "leave", "join"):
        assert "Please wait" not in await click(action)
    assert game.seat_of_user(clicker.id) is not None
    refused = await click("leave")
    assert 0 < _wait(refused) <= SLOW
    assert fake.responses[-1].ephemeral
    assert game.seat_of_user(clicker.id) is not None  # the leave was not carried out
    assert harness.service.commands.refused == 1
