"""What a real ``mafiabot`` process prints and does on hostile input: the exit code, the one
line and no traceback as Python itself would print it, and no hang (issue 12, items 7-9, 12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot.hostile.harness import (
    assert_one_line_refusal,
    migrated_database,
    run_process,
    snapshot,
)


@pytest.mark.parametrize(
    ("argv", "env", "says"),
    [
        (["db", "upgrade", "--db", "sqlite:///DIR/notes.db"], {}, "is not a SQLite database"),
        (["export", "--all", "--out", "DIR/b", "--db", "postgresql://u:pw@127.0.0.1:1/x"], {},
         "can't connect"),
        (["run", "--discord", "--db", "sqlite:///DIR/m.db"],
         {"MAFIABOT_DISCORD_TOKEN": "x", "MAFIABOT_DISCORD_GUILD_IDS": "abc"},
         "MAFIABOT_DISCORD_GUILD_IDS"),
        (["simulate", "--day-seconds", "1e-300", "--db", "sqlite:///DIR/m.db"], {},
         "--day-seconds"),
    ],
    ids=["not-sqlite", "unreachable-postgres", "guild-ids", "tiny-phase"],
)  # fmt: skip
async def test_the_process_prints_one_line_and_exits_2(
    tmp_path: Path, argv: list[str], env: dict[str, str], says: str
) -> None:
    (tmp_path / "notes.db").write_text("my notes\n" * 100)
    migrated_database(tmp_path / "m.db")
    before = snapshot(tmp_path)
    code, out, err = await run_process(*[a.replace("DIR", str(tmp_path)) for a in argv], env=env)
    assert_one_line_refusal(code, err, says)
    assert out == ""
    assert snapshot(tmp_path) == before


async def _lobby(url: str, server: str, humans: list[str]) -> str:
    """A game that was created and joined but never started (its process died in between)."""
    from bot.service.port import GameService
    from bot.service.timers import make_scheduler
    from bot.store.db import make_engine
    from games.config import GameConfig

    engine = make_engine(url)
    scheduler = make_scheduler()
    scheduler.start()
    service = GameService(engine, scheduler)
    try:
        game = await service.create_game(GameConfig(), seed=1, server_external_id=server)
        for user in humans:
            await service.join(game, user)
        for _ in range(5 - len(humans)):
            await service.join(game, None, is_agent=True, agent_kind="baseline")
        return game
    finally:
        await service.close()
        scheduler.shutdown(wait=False)
        engine.dispose()


@pytest.mark.parametrize(
    ("command", "server", "humans"),
    [("simulate", "simulate", []), ("play", "terminal", ["local:you"])],
)
async def test_resuming_a_game_still_in_its_lobby_says_so_and_exits(
    tmp_path: Path, command: str, server: str, humans: list[str]
) -> None:
    """It used to print "Resumed game ... in its lobby." and wait forever (item 9)."""
    url = migrated_database(tmp_path / "m.db")
    game = await _lobby(url, server, humans)
    before = snapshot(tmp_path)
    code, _, err = await run_process(command, "--resume", game, "--db", url, within=60)
    assert_one_line_refusal(code, err, f"game {game} never started", f"mafiabot {command}")
    assert "Resumed" not in err
    assert snapshot(tmp_path) == before
