"""The help answers the first questions (join, start, vote, act at night, the survey) on each
surface, in that surface's own terms (`bot.table.help`)."""

from __future__ import annotations

from bot.local.terminal import terminal_help
from bot.table.help import DISCORD, SLACK, Command, Markup, help_text


def test_discord_and_slack_help_say_how_to_join_start_vote_act_and_what_the_survey_is() -> None:
    surfaces: list[tuple[tuple[Command, ...], Markup, str]] = [
        (DISCORD, "discord", "**"),
        (SLACK, "slack", "*"),
    ]
    for commands, markup, bold in surfaces:
        text = help_text(commands=commands, roles=["mafia", "bystander"], booth="B", markup=markup)
        for step in ("Join", "Start", "Talk", "Vote", "At night", "The survey"):
            assert f"- {bold}{step}{bold}:" in text, (markup, step)
        assert "which player you think was the AI" in text
        assert "nobody is told which" in text
        assert "/mafia history" in text
    discord = help_text(commands=DISCORD, roles=[], booth="B", markup="discord")
    assert 'under the "Voting is open" announcement on the stage' in discord
    slack = help_text(commands=SLACK, roles=[], booth="B", markup="slack")
    assert "a menu comes to our direct messages" in slack and "`/mafia join`" in slack


def test_the_terminal_help_is_true_to_the_terminal() -> None:
    text = terminal_help(["doctor"])
    # everyone else is an AI there: no "nobody is told which", no guess, no game channel
    assert "everyone else at this table is an AI agent" in text
    assert "nobody is told which" not in text
    assert "which player you think was the AI" not in text
    assert "channel" not in text and "survey asks who" not in text
    assert "/vote NAME" in text and "/act NAME" in text and "1-5 questions" in text
