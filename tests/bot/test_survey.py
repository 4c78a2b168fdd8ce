"""One survey for every platform: the LLMafia questions, and how answers are checked and kept."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from bot.players import survey
from bot.protection.dataset.llmafia_survey import METRICS
from bot.service.live import SeatInfo
from bot.store import models as m
from bot.store.db import session_scope

SEATS = [
    SeatInfo(0, "Ari", "u0", False),
    SeatInfo(1, "Blake", None, True, "llm"),
    SeatInfo(2, "Casey", "u2", False),
]


def test_the_questions_are_the_llmafia_ones_in_their_order() -> None:
    assert tuple(q.llmafia for q in survey.QUESTIONS) == (*METRICS, "Comments")
    assert [q.kind for q in survey.QUESTIONS] == ["guess", "rating", "rating", "rating", "comment"]
    # every answer has a column to go to
    assert all(hasattr(m.SurveyResponse, q.key) for q in survey.QUESTIONS)


def test_a_guess_names_another_player_and_says_whether_it_was_the_ai() -> None:
    right = survey.answer(SEATS, 0, survey.GUESS, "  blake ")
    assert right == {"guessed_name": "Blake", "identified_ai": True, "about_seat_index": 1}
    wrong = survey.answer(SEATS, 0, survey.GUESS, "Casey")
    # the ratings are then about the only agent
    assert wrong == {"guessed_name": "Casey", "identified_ai": False, "about_seat_index": 1}
    with pytest.raises(survey.SurveyError, match="Name one of the other players: Blake, Casey"):
        survey.answer(SEATS, 0, survey.GUESS, "Ari")  # oneself
    with pytest.raises(survey.SurveyError):
        survey.answer(SEATS, 0, survey.GUESS, "nobody")


@pytest.mark.parametrize("raw", ["4", " 4 ", "4 - mostly"])
def test_a_rating_is_1_to_5(raw: str) -> None:
    assert survey.answer(SEATS, 0, survey.TIMING, raw)["timing"] == 4.0


@pytest.mark.parametrize("raw", ["", "0", "6", "four", "-1", "4.5"])
def test_anything_else_is_not_a_rating(raw: str) -> None:
    with pytest.raises(survey.SurveyError, match="1 to 5"):
        survey.parse_rating(raw)


def _game(engine: Engine, game_id: str = "gsurvey1") -> str:
    with session_scope(engine) as s:
        server = m.Server(platform="local", external_id="terminal")
        s.add(server)
        s.flush()
        s.add(m.Game(id=game_id, server_id=server.id, status="finished", seed=1))
    return game_id


def test_answers_are_kept_one_by_one_and_can_be_changed(engine: Engine) -> None:
    game_id = _game(engine)
    cols = survey.answer(SEATS, 2, survey.GUESS, "Blake")
    row = survey.save_answer(engine, game_id, 2, "local", cols)
    assert [q.key for q in survey.missing(row)] == ["similarity", "timing", "relevance"]
    row = survey.save_answer(
        engine, game_id, 2, "local", survey.answer(SEATS, 2, survey.SIMILARITY, "2")
    )
    assert row.about_seat_index == 1 and row.identified_ai  # a rating keeps the right guess
    row = survey.save_answer(
        engine, game_id, 2, "local", survey.answer(SEATS, 2, survey.SIMILARITY, "5")
    )
    assert row.similarity == 5.0
    with Session(engine) as s:
        rows = s.exec(select(m.SurveyResponse).where(m.SurveyResponse.game_id == game_id)).all()
    assert len(rows) == 1 and rows[0].source == "local" and rows[0].original_scale == "1-5"
    assert survey.answered(engine, game_id, 2) and not survey.answered(engine, game_id, 0)


def test_a_whole_form_is_stored_once(engine: Engine) -> None:
    game_id = _game(engine, "gsurvey2")
    form = survey.SurveyAnswer("casey", 3, 4, 5, "  ")
    row = survey.response(game_id, SEATS, 0, form, "slack")
    assert (row.guessed_name, row.identified_ai, row.about_seat_index) == ("Casey", False, 1)
    assert (row.similarity, row.timing, row.relevance, row.comments) == (3.0, 4.0, 5.0, None)
    assert survey.save(engine, row)
    assert not survey.save(engine, survey.response(game_id, SEATS, 0, form, "slack"))
    with pytest.raises(ValueError):
        survey.response(game_id, SEATS, 0, survey.SurveyAnswer("Casey", 6, 1, 1), "slack")


def test_nothing_to_guess_when_everyone_else_was_an_agent() -> None:
    assert survey.questions_for(SEATS, 0) == survey.QUESTIONS
    alone = [SEATS[0], SEATS[1], SeatInfo(2, "Casey", None, True, "baseline")]
    assert [q.key for q in survey.questions_for(alone, 0)] == [
        "similarity",
        "timing",
        "relevance",
        "comments",
    ]
