"""The table's rules, shared by every platform: finished games in the order they were played,
the den's audience, phase labels, the settings words, the fast clock's setting."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.engine import Engine

from bot.discord.links import LinkStore as DiscordLinks
from bot.settings import Settings
from bot.slack.links import LinkStore as SlackLinks
from bot.store.db import session_scope
from bot.store.models import Game, Seat, Server
from bot.table.booths import den_audience, in_typed_order, late_note
from bot.table.config import SettingsTextError, config_summary, parse_settings
from bot.table.links import PlatformLinks
from bot.table.status import phase_label
from games.config import GameConfig
from games.state import PhaseKind

T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)


def _games(engine: Engine, platform: str, server: str) -> None:
    """Lobby "early" opened first but was dealt last; "late" opened after it, dealt first;
    "never" ended in its lobby; "other" is another server's."""
    with session_scope(engine) as s:
        mine = Server(platform=platform, external_id=server)
        theirs = Server(platform=platform, external_id="elsewhere")
        s.add_all([mine, theirs])
        s.flush()
        rows = [
            ("early", mine.id, T0, T0 + timedelta(hours=2), "finished"),
            ("late", mine.id, T0 + timedelta(minutes=5), T0 + timedelta(minutes=6), "aborted"),
            ("never", mine.id, T0 + timedelta(minutes=1), None, "aborted"),
            ("other", theirs.id, T0, T0 + timedelta(minutes=1), "finished"),
        ]
        for gid, server_id, created, started, status in rows:
            s.add(
                Game(
                    id=gid,
                    server_id=server_id,
                    created_at=created,
                    started_at=started,
                    status=status,
                    seed=1,
                )
            )
        s.flush()
        s.add_all(
            [
                Seat(game_id="early", index=0, character_name="Ash", user_id="U1"),
                Seat(game_id="late", index=0, character_name="Bo", user_id="U2"),
                Seat(game_id="late", index=1, character_name="Cy", is_agent=True),
                Seat(game_id="other", index=0, character_name="Di", user_id="U9"),
            ]
        )


@pytest.mark.parametrize("store", [SlackLinks, DiscordLinks])
async def test_finished_games_in_the_order_played(engine: Engine, store: type) -> None:
    links: PlatformLinks = store(engine)
    try:
        _games(engine, links.platform, "S1")
        # dealt order, not lobby order; a game never dealt has nothing to export
        assert await links.ended_games("S1") == ["late", "early"]
        assert await links.players(["early", "late"], limit=10) == ["U1", "U2"]
        assert await links.players(["early", "late"], limit=1) == ["U1"]
    finally:
        links.close()


def test_den_audience() -> None:
    holders = {0: "alice", 2: "carol", 3: "dave"}  # seat 1 is the agent's: no booth
    assert den_audience({0, 1, 2}, holders) == {0: "alice", 2: "carol"}
    assert den_audience({0, 1, 2}, holders, skip=0) == {2: "carol"}
    assert den_audience(None, holders) == {}  # unscoped: nobody, never everybody
    assert den_audience(set(), holders) == {}


def test_backlog_order_and_late_note() -> None:
    merged = in_typed_order([[(3, "c"), (9, "e")], [(1, "a"), (5, "d")]], key=lambda x: x[0])
    assert [t for _, t in merged] == ["a", "c", "d", "e"]
    note = late_note("a\nvery " + "long " * 30 + "line", "It is night.")
    assert "\n" not in note and note.endswith("It is night.") and "\u2026" in note


def test_phase_labels() -> None:
    assert phase_label(PhaseKind.VOTE, 2) == "Day 2: vote"
    assert phase_label("night", 1) == "Night 1: the mafia talk"
    assert phase_label("intermission", 3) == "Intermission 3"


def test_settings_words_and_summary() -> None:
    parsed = parse_settings("day=2m agents=2 roles=doctor")
    assert parsed.config == {"day_seconds": 120.0, "roles": ("doctor",)} and parsed.agents == 2
    for bad in ("agents=0", "agents=4"):
        with pytest.raises(SettingsTextError, match="between 1 and 3"):
            parse_settings(bad)
    summary = config_summary(GameConfig(roles=("doctor",)), 2)
    assert "Special roles: doctor" in summary and summary.endswith("AI players: 2.")
    assert "AI players" not in config_summary(GameConfig())


def test_clock_speed_setting_and_its_old_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MAFIABOT_CLOCK_SPEED", raising=False)
    monkeypatch.delenv("MAFIABOT_DISCORD_TEST_SPEED", raising=False)
    assert Settings(_env_file=None).clock_speed == 1.0
    monkeypatch.setenv("MAFIABOT_DISCORD_TEST_SPEED", "20")
    assert Settings(_env_file=None).clock_speed == 20.0
    monkeypatch.setenv("MAFIABOT_CLOCK_SPEED", "5")
    assert Settings(_env_file=None).clock_speed == 5.0
