"""Slack's ``/mafia help`` lists every ``/mafia`` command the adapter answers, and nothing it
does not (the help's list is `bot.table.help.SLACK`; the adapter's are the tables of
`bot.slack.commands`), and so does the app manifest's usage hint: they cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path

from bot.slack.commands import ANYWHERE, IN_GAME
from tests.bot.help_listing import commands_listed
from tests.bot.slack.conftest import SlackHarness

MANIFEST = Path(__file__).resolve().parents[3] / "slack_manifest.yaml"


async def test_the_help_lists_every_command_slack_answers(harness: SlackHarness) -> None:
    (asker,) = harness.people(1)
    helped = await harness.slash(asker, "help")
    listed = commands_listed(helped)
    assert len(listed) == len(set(listed)), listed  # each once
    assert set(listed) == set(ANYWHERE) | set(IN_GAME)
    assert "join" in listed and "leave" in listed
    # the tables are what answers: a word in neither is unknown; a game's command, typed
    # where no game is open, is routed to it (and says so)
    assert (await harness.slash(asker, "frobnicate")).startswith("Unknown command `frobnicate`")
    for word in IN_GAME:
        reply = await harness.slash(asker, word)
        assert reply.startswith("There is no open game in this channel"), (word, reply)


def test_the_manifests_usage_hint_names_every_command() -> None:
    hint = re.search(r'usage_hint: "([^"]+)"', MANIFEST.read_text(encoding="utf-8"))
    assert hint is not None
    words = [part.split()[0] for part in hint.group(1).split(" | ")]
    assert sorted(words) == sorted(set(ANYWHERE) | set(IN_GAME))
