"""The pieces without Slack traffic: text in and out, settings, survey rows,
Slack errors in words, and the manifest against what the code needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.players.survey import SurveyAnswer
from bot.players.survey import response as survey_response
from bot.service.live import SeatInfo
from bot.slack.inbound import register
from bot.slack.moments import ts_key as _ts
from bot.slack.problems import BOT_EVENTS, REQUIRED_SCOPES, explain
from bot.slack.text import from_slack, to_slack, unescape
from bot.table.config import SettingsTextError, parse_settings
from bot.table.lobby import lobby_text
from bot.table.text import WORD_JOINER, defuse_mass_mentions
from games.config import GameConfig

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("typed", "plain"),
    [
        ("hi <@U123ABC> and <@W9|bob>", "hi @someone and @someone"),
        ("<!channel> <!here> <!everyone>", "@channel @here @everyone"),
        ("see <#C042|general> or <#C043>", "see #general or #a-channel"),
        ("ask <!subteam^S1|@mods> or <!subteam^S2>", "ask @mods or @a-group"),
        ("at <!date^1700000000^{date}|Nov 14>", "at Nov 14"),
        (
            "<https://x.test/a|my notes> <https://x.test/b> <mailto:a@b.c|a@b.c>",
            "my notes (https://x.test/a) https://x.test/b a@b.c",
        ),
        ("a &lt;b&gt; &amp;lt; &amp; c", "a <b> &lt; & c"),
    ],
)
def test_slack_markup_becomes_plain_text(typed: str, plain: str) -> None:
    assert from_slack(typed) == plain


def test_outgoing_text_is_inert() -> None:
    out = to_slack("<!channel> <@U1> <https://evil|click> & @here @Everyone")
    assert "<" not in out and ">" not in out
    assert out.startswith("&lt;!channel&gt; &lt;@U1&gt;")
    assert f"@{WORD_JOINER}here" in out and f"@{WORD_JOINER}Everyone" in out
    assert defuse_mass_mentions("mail me@here.com") == "mail me@here.com"
    # What Slack shows is exactly what was typed (the word joiner is invisible).
    typed = "5 < 6 & 7 > 3, ask @here"
    assert unescape(to_slack(typed)).replace(WORD_JOINER, "") == typed


def test_settings_parse_and_refuse() -> None:
    parsed = parse_settings(
        "day=2m vote=30s night=45 night_vote=0.5m mafia=2 roles=detective,"
        "doctor tie=random agents=2"
    )
    assert parsed.config == {
        "day_seconds": 120.0,
        "vote_seconds": 30.0,
        "night_seconds": 45.0,
        "night_vote_seconds": 30.0,
        "mafia": 2,
        "roles": ("detective", "doctor"),
        "tie_rule": "random",
    }
    assert parsed.agents == 2 and parsed.hidden == {}
    assert parse_settings("speed=20 seed=7", allow_hidden=True).hidden == {"speed": 20.0, "seed": 7}
    too_short_or_long = ("day=0.0000001", "day=0s", "vote=86401", "day=2000m")
    for bad in (
        *too_short_or_long,
        "speed=20",
        "day=soon",
        "mafia=0",
        "roles=wizard",
        "tie=maybe",
        "agents=9",
        "x",
    ):
        with pytest.raises(SettingsTextError):
            parse_settings(bad)


def test_lobby_text_lists_people_not_the_agent() -> None:
    text = lobby_text(["<@U1>", "<@U2>"], 1, GameConfig(), host="<@U1>")
    assert "2 joined + 1 AI" in text and "2 more players are needed" in text
    assert "Ready" in lobby_text([f"<@U{i}>" for i in range(4)], 1, GameConfig(), host="x")


def test_survey_rows() -> None:
    seats = [
        SeatInfo(0, "Ari", "U1", False),
        SeatInfo(1, "Sam", None, True, "baseline"),
        SeatInfo(2, "Kai", "U2", False),
    ]
    right = survey_response("g1", seats, 0, SurveyAnswer("sam", 4, 3, 5, "  "), "slack")
    assert (right.identified_ai, right.about_seat_index, right.guessed_name) == (True, 1, "Sam")
    assert right.comments is None and right.source == "slack" and right.original_scale == "1-5"
    wrong = survey_response("g1", seats, 0, SurveyAnswer("Kai", 1, 1, 1), "slack")
    assert (wrong.identified_ai, wrong.about_seat_index) == (False, 1)
    with pytest.raises(ValueError):
        survey_response("g1", seats, 0, SurveyAnswer("Ari", 1, 1, 1), "slack")  # oneself
    with pytest.raises(ValueError):
        survey_response("g1", seats, 0, SurveyAnswer("Sam", 6, 1, 1), "slack")


def test_ts_compare_numerically() -> None:
    assert _ts("1700000000.000010") > _ts("1700000000.000009")
    assert _ts("1700000001.000001") > _ts("1700000000.999999")
    assert _ts("0") < _ts("1.000001")


def test_errors_in_plain_words() -> None:
    text = explain("missing_scope", what="post a line", needed="chat:write.customize")
    assert "chat:write.customize" in text and "picture" in text and "reinstall" in text
    assert "deleted" in explain("channel_not_found", what="post", channel="C1")
    assert "archived" in explain("is_archived", what="post", channel="C1")


def test_manifest_grants_what_the_code_needs() -> None:
    yaml = pytest.importorskip("yaml")
    manifest = yaml.safe_load((ROOT / "slack_manifest.yaml").read_text())
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == set(REQUIRED_SCOPES)
    assert "chat:write.customize" in REQUIRED_SCOPES
    assert "groups:write" not in REQUIRED_SCOPES  # no den channel to create any more
    assert tuple(manifest["settings"]["event_subscriptions"]["bot_events"]) == BOT_EVENTS
    assert manifest["settings"]["socket_mode_enabled"] is True
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    [command] = manifest["features"]["slash_commands"]
    assert command["command"] == "/mafia" and command["should_escape"] is True


def test_every_subscribed_event_has_a_listener() -> None:
    class Recorder:
        def __init__(self) -> None:
            self.events: list[str] = []

        def __getattr__(self, name: str) -> object:
            def decorator_factory(*args: object, **kwargs: object) -> object:
                if name == "event":
                    self.events.append(str(args[0]))
                return lambda fn: fn

            return decorator_factory

    app = Recorder()
    register(app, object())  # type: ignore[arg-type]
    kinds = {e.split(".")[0] for e in BOT_EVENTS}
    assert kinds <= set(app.events)
