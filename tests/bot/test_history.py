"""A person's own games (`bot.players.history`) and ``mafiabot history``, on a game played through
the
service: role, result, who the AI was (after the reveal only), their guess, and who may get a
replay (the game's players, not a withdrawn one)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import select

from bot.local.terminal import HUMAN_ID
from bot.players import reveal
from bot.players.history import history_text, may_replay, player_history
from bot.players.seat_story import handover
from bot.protection.privacy import withdraw
from bot.service.port import GameService
from bot.store import models as m
from bot.store.db import session_scope
from tests.bot.hostile.harness import run_main_io
from tests.bot.test_privacy import ALICE, BOB, CAROL, DAVE, PEOPLE, SERVER
from tests.bot.test_reveal_stats import WINDOW, answer_all, finished


async def test_history_before_and_after_the_reveal(service: GameService) -> None:
    engine = service.engine
    table = await finished(service)
    mine = player_history(engine, "discord", SERVER, ALICE)
    assert [e.game_id for e in mine] == [table.game_id]
    entry = mine[0]
    assert entry.character == table.name_of[ALICE] and entry.role is not None
    mafia_uid = next(u for u, i in table.seat_of.items() if i == table.mafia_seat)
    assert entry.result == ("lost" if mafia_uid == ALICE else "won")
    # before the reveal: neither the AI nor a guess, no replay
    text = history_text(mine, "Alice", "/mafia replay {game}")
    assert table.agent_name not in text and "not revealed yet" in text
    assert "/mafia replay" not in text
    for uid in PEOPLE:
        answer_all(engine, table, uid, table.agent_name if uid != BOB else table.name_of[ALICE])
    assert reveal.claim(engine, table.game_id, window=WINDOW) is not None

    text = history_text(player_history(engine, "discord", SERVER, ALICE), "Alice", "R {game}")
    assert f"The AI was {table.agent_name}; you named {table.agent_name} (right)." in text
    assert f"Replay: `R {table.game_id}`" in text
    bob = history_text(player_history(engine, "discord", SERVER, BOB), "Bob", "R {game}")
    assert f"you named {table.name_of[ALICE]} (wrong)" in bob
    assert "named the AI in 0 of 1 guesses" in bob
    # another server, another person: nothing
    assert player_history(engine, "discord", "G0OTHER", ALICE) == []
    assert player_history(engine, "discord", SERVER, "U0STRANGER") == []

    # the replay: the game's players only (the moderators are the adapters' to let in)
    assert may_replay(engine, "discord", SERVER, table.game_id, ALICE)
    assert not may_replay(engine, "discord", SERVER, table.game_id, "U0STRANGER")
    withdraw(engine, "discord", SERVER, CAROL)
    assert not may_replay(engine, "discord", SERVER, table.game_id, CAROL)
    assert player_history(engine, "discord", SERVER, CAROL) == []


async def test_mafiabot_history_lists_the_terminals_games(
    service: GameService, engine: Engine, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if not db_url.startswith("sqlite"):
        return  # (the CLI reads the same database; one backend is enough here)
    table = await finished(service)
    for uid in PEOPLE:
        answer_all(engine, table, uid, table.agent_name)
    reveal.claim(engine, table.game_id, window=WINDOW)
    # the same game as the terminal's: its one person is the terminal's player
    with session_scope(engine) as s:
        game = s.get(m.Game, table.game_id)
        assert game is not None
        server = s.get(m.Server, game.server_id)
        assert server is not None
        server.platform, server.external_id = "local", "terminal"
        seat = s.exec(
            select(m.Seat).where(m.Seat.game_id == table.game_id, m.Seat.user_id == ALICE)
        ).one()
        seat.user_id = HUMAN_ID
    # (the CLI's entry point in this process, `run_main_io`: no interpreter started)
    code, out, err = run_main_io(["history", "--db", db_url], capsys)
    assert code == 0, err
    assert out.startswith("Your last 1 game")
    assert table.game_id in out and f"The AI was {table.agent_name}" in out
    assert f"replay {table.game_id} --html replay-{table.game_id}.html" in out
    code, _, err = run_main_io(["history", "--count", "0", "--db", db_url], capsys)
    assert code == 2 and "--count" in err


async def test_history_tells_the_ai_and_the_guess_as_the_reveal_does(
    service: GameService,
) -> None:
    """ "The AI" is a seat an agent played throughout (a seat an agent took over from a person
    is not: `bot.players.seat_story`), and a guess counts if it was given before the reveal,
    whatever
    was changed in the survey afterwards (`bot.players.survey.guess_counts`)."""
    engine = service.engine
    table = await finished(service)
    dave = table.seat_of[DAVE]
    with session_scope(engine) as s:  # Dave left on day 1; an agent played his seat from then
        seat = s.exec(
            select(m.Seat).where(m.Seat.game_id == table.game_id, m.Seat.index == dave)
        ).one()
        seat.is_agent = True
        seat.handovers = [handover("person", "agent", "day 1", 2, m.utcnow())]
    for uid in (ALICE, BOB, CAROL):
        answer_all(engine, table, uid, table.agent_name)
    said = reveal.claim(engine, table.game_id, window=WINDOW, closed=True)
    assert said is not None and said.startswith(f"The AI was {table.agent_name}.")
    with session_scope(engine) as s:  # Alice changed a rating after the reveal
        game = s.get(m.Game, table.game_id)
        assert game is not None and game.revealed_at is not None
        row = s.exec(
            select(m.SurveyResponse).where(
                m.SurveyResponse.game_id == table.game_id,
                m.SurveyResponse.seat_index == table.seat_of[ALICE],
            )
        ).one()
        row.t = game.revealed_at + timedelta(minutes=5)
        row.timing = 5.0
    [entry] = player_history(engine, "discord", SERVER, ALICE)
    assert entry.ais == (table.agent_name,)  # not Dave's character as well
    text = history_text([entry], "Alice", "R {game}")
    assert f"The AI was {table.agent_name}; you named {table.agent_name} (right)." in text
