"""The terminal as a platform: each line carries the moment it was read, and the post-game
survey is the one every platform asks (`bot.players.survey`), one line per question."""

from __future__ import annotations

import io
from datetime import datetime, timedelta
from typing import Any

import pytest
from rich.console import Console
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from bot.local import terminal
from bot.local.terminal import Keyboard, Typed, ask_survey, handle_line
from bot.service.clock import utcnow
from bot.service.live import LiveGame
from bot.service.port import GameService
from bot.store import models as m
from games.config import GameConfig


class Scripted(Keyboard):
    """Typed lines from a list (None: input ends)."""

    def __init__(self, lines: list[str | None]) -> None:
        super().__init__(lambda: "")
        self.lines = lines

    async def read(self, stop: Any = None) -> Typed | None:
        if not self.lines:
            return None
        line = self.lines.pop(0)
        return None if line is None else (line, utcnow())


async def lobby(svc: GameService, humans: int) -> LiveGame:
    game_id = await svc.create_game(GameConfig(), seed=5)
    for i in range(5):
        if i < humans:
            await svc.join(game_id, f"user{i}")
        else:
            await svc.join(game_id, None, is_agent=True, agent_kind="baseline")
    return svc.games[game_id]


def rows(engine: Engine, game_id: str) -> list[m.SurveyResponse]:
    with Session(engine) as s:
        return list(
            s.exec(select(m.SurveyResponse).where(m.SurveyResponse.game_id == game_id)).all()
        )


async def test_the_survey_one_line_per_question_with_retries_and_skips(
    service: GameService, engine: Engine
) -> None:
    game = await lobby(service, humans=2)
    out = io.StringIO()
    console = Console(file=out, width=200)
    agent = next(s for s in game.seats if s.is_agent)
    keys = Scripted(["nobody", agent.name.lower(), "7", "4", "", "2", "felt rushed"])
    await ask_survey(service, game, 0, console, keys)
    text = out.getvalue()
    assert "Which player do you think was the AI?" in text
    assert "Name one of the other players" in text and "Answer with a number from 1 to 5" in text
    (row,) = rows(engine, game.id)
    assert (row.guessed_name, row.identified_ai, row.about_seat_index) == (
        agent.name,
        True,
        agent.index,
    )
    assert (row.similarity, row.timing, row.relevance, row.comments) == (
        4.0,
        None,
        2.0,
        "felt rushed",
    )
    assert row.source == terminal.SURVEY_SOURCE == "local"
    assert "answers are saved" in text


async def test_the_survey_can_be_skipped_and_stops_at_the_end_of_input(
    service: GameService, engine: Engine
) -> None:
    game = await lobby(service, humans=1)
    out = io.StringIO()
    # against agents only there is nobody to guess: the ratings come first
    await ask_survey(service, game, 0, Console(file=out), Scripted(["3", "/skip", "5"]))
    assert "Which player" not in out.getvalue() and "Survey skipped" in out.getvalue()
    assert "The other players were AI agents" in out.getvalue()
    (row,) = rows(engine, game.id)
    assert (row.similarity, row.timing) == (3.0, None)
    await ask_survey(service, game, 1, Console(file=io.StringIO()), Scripted([None]))
    assert len(rows(engine, game.id)) == 1


async def test_a_line_is_stamped_when_it_was_read_not_when_it_was_handled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("hello\n/vote Ari\n"))
    keys = Keyboard(lambda: "")
    assert not keys.interactive
    first = await keys.read()
    assert first is not None and first[0] == "hello"
    assert first[1] <= utcnow()
    second = await keys.read()
    assert second is not None and second[0] == "/vote Ari" and second[1] >= first[1]
    assert await keys.read() is None and keys.ended

    calls: list[tuple[str, dict[str, Any]]] = []

    class Spy:
        async def say(self, *args: Any, **kw: Any) -> bool:
            calls.append(("say", kw))
            return True

        async def vote(self, *args: Any, **kw: Any) -> bool:
            calls.append(("vote", kw))
            return True

        async def night_act(self, *args: Any, **kw: Any) -> bool:
            calls.append(("night_act", kw))
            return True

    moment = datetime.now().astimezone() - timedelta(seconds=1)
    game: Any = type("G", (), {"id": "g1"})()
    for line in ("hi", "/vote Ari", "/abstain", "/act Ari"):
        await handle_line(Spy(), game, 0, line, moment)  # type: ignore[arg-type]
    assert [(c, kw["at"]) for c, kw in calls] == [
        ("say", moment),
        ("vote", moment),
        ("vote", moment),
        ("night_act", moment),
    ]


async def test_help_and_the_reveal_after_the_survey(service: GameService, engine: Engine) -> None:
    from games.state import PhaseKind
    from tests.bot.waiting import until_phase

    config = GameConfig(
        day_seconds=0.01, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600,
        roles=("doctor",),
    )  # fmt: skip
    game_id = await service.create_game(config, seed=5)
    me = await service.join(game_id, "user0")
    for _ in range(4):
        await service.join(game_id, None, is_agent=True, agent_kind="baseline")
    await service.start(game_id)
    game = service.games[game_id]
    helped = await handle_line(service, game, me.index, "/help")
    assert helped is not None
    assert "- doctor:" in helped and "- detective:" not in helped and "- mafia:" in helped
    assert "This terminal is your booth" in helped and "/vote NAME" in helped
    state = await until_phase(game, PhaseKind.VOTE, tries=200)
    mafia = next(s for s in state.seats if s.is_mafia)
    other = next(s for s in state.seats if not s.is_mafia)
    for seat in state.seats:
        await service.vote(game_id, seat.index, (mafia if seat != mafia else other).name)
    await service.wait_finished(game_id)

    out = io.StringIO()
    console = Console(file=out, width=200)
    await ask_survey(service, game, me.index, console, Scripted(["/skip"]))
    await terminal.show_reveal(service, game, console, 600.0)
    agents = [s.name for s in game.seats if s.is_agent]
    words = f"The AIs were {', '.join(agents[:-1])} and {agents[-1]}."
    assert words in out.getvalue()
    await terminal.show_reveal(service, game, console, 600.0)  # said once
    assert out.getvalue().count("The AIs were") == 1
