"""The export's survey table (``csv/surveys.csv``): each person's answers, and when their guess
was given relative to the game's reveal (and how many seconds before or after it).

A guess counts only if it was given before the reveal (`bot.players.survey.guess_counts`, the rule
every
figure reads); ``guess_given`` says "before reveal", "after reveal" (kept from before the survey
closed at the reveal, never counted), "not revealed", "imported" (the LLMafia release) or
"no guess". Answers of people whose data may not be used are left out, as everywhere in the
export.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.players import survey
from bot.store.models import Game, SurveyResponse

#: why a chat export leaves a game out: nothing may mark its AI before the reveal
UNREVEALED = "its AI has not been revealed yet (the survey is still open)"

HEADER = [
    "game_id",
    "player",
    "guessed",
    "identified_ai",
    "guess_given",
    "guess_counts",
    "guess_seconds_from_reveal",
    "similarity",
    "timing",
    "relevance",
]


class _Game(Protocol):
    """What `bot.protection.dataset.export` knows of a game it exports."""

    id: str
    row: Game
    allowed: dict[int, bool]

    def seat_name(self, index: int | None) -> str | None: ...

    def name(self, character: str | None) -> str | None: ...


def survey_rows(engine: Engine, g: _Game) -> list[list[Any]]:
    """The table's rows for one exported game."""
    game_id, revealed_at, allowed = g.id, g.row.revealed_at, g.allowed
    seat_name, name = g.seat_name, g.name
    with Session(engine) as s:
        rows = s.exec(
            select(SurveyResponse)
            .where(SurveyResponse.game_id == game_id)
            .order_by(col(SurveyResponse.seat_index), col(SurveyResponse.id))
        ).all()
    out: list[list[Any]] = []
    for r in rows:
        if not allowed.get(r.seat_index, False):
            continue
        out.append(
            [
                game_id,
                seat_name(r.seat_index) or "",
                name(r.guessed_name) or "",
                "" if r.identified_ai is None else r.identified_ai,
                survey.answered_when(r, revealed_at),
                survey.guess_counts(r, revealed_at),
                _from_reveal(r, revealed_at),
                "" if r.similarity is None else r.similarity,
                "" if r.timing is None else r.timing,
                "" if r.relevance is None else r.relevance,
            ]
        )
    return out


def _from_reveal(row: SurveyResponse, revealed_at: datetime | None) -> str:
    """Seconds from the reveal to the guess (negative: before it); empty when unknown."""
    given = row.guessed_at or row.t
    if given is None or revealed_at is None or row.identified_ai is None:
        return ""
    seconds = (survey.as_utc(given) - survey.as_utc(revealed_at)).total_seconds()
    return f"{seconds:.0f}"
