"""The post-game survey shared by the chat adapters, and the old import path of `bot.table`.

Everything else the platforms share (settings syntax, lobby rules, status, booth rules, link
stores, relayed-text safety, avatars) lives in `bot.table`; the names are re-exported here so
older imports keep working.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.service import SeatInfo
from bot.store.db import session_scope
from bot.store.models import SurveyResponse, utcnow
from bot.table.config import (
    MAX_AGENTS,
    SETTINGS_HELP,
    LobbySettings,
    SettingsTextError,
    apply_settings,
    config_summary,
    parse_settings,
)
from bot.table.lobby import lobby_text
from bot.table.status import PHASE_NAMES, seconds_left, status_text
from bot.table.text import (
    AVATAR_URL_TEMPLATE,
    MASS_MENTIONS,
    WORD_JOINER,
    avatar_url,
    defuse_mass_mentions,
)

__all__ = [
    "AVATAR_URL_TEMPLATE",
    "MASS_MENTIONS",
    "MAX_AGENTS",
    "PHASE_NAMES",
    "RATING_LABELS",
    "RATING_QUESTIONS",
    "SETTINGS_HELP",
    "SURVEY_GUESS_QUESTION",
    "SURVEY_INTRO",
    "WORD_JOINER",
    "LobbySettings",
    "SettingsTextError",
    "SurveyAnswer",
    "apply_settings",
    "avatar_url",
    "config_summary",
    "defuse_mass_mentions",
    "lobby_text",
    "parse_settings",
    "save_survey",
    "seat_infos",
    "seconds_left",
    "status_text",
    "survey_answered",
    "survey_choices",
    "survey_response",
]

# --- the post-game survey -----------------------------------------------------------------------

SURVEY_INTRO = (
    "Thanks for playing! One of the players was an AI agent. Three quick questions help the "
    "research (answers are stored under your character name only)."
)
SURVEY_GUESS_QUESTION = "Which player do you think was the AI?"
#: (SurveyResponse field, question), all answered on 1-5
RATING_QUESTIONS: tuple[tuple[str, str], ...] = (
    ("similarity", "How human-like did the AI player seem?"),
    ("timing", "How natural was the timing of its messages?"),
    ("relevance", "How relevant were its messages to the game?"),
)
RATING_LABELS: dict[int, str] = {
    1: "1 - not at all",
    2: "2 - a little",
    3: "3 - somewhat",
    4: "4 - mostly",
    5: "5 - completely",
}


@dataclass(frozen=True)
class SurveyAnswer:
    guess: str
    similarity: int
    timing: int
    relevance: int
    comments: str | None = None


def survey_choices(seats: Sequence[SeatInfo], seat: int) -> list[str]:
    """Every character at the table but the respondent's own (the dead included)."""
    return [s.name for s in seats if s.index != seat]


def survey_response(
    game_id: str,
    seats: Sequence[SeatInfo],
    seat: int,
    answer: SurveyAnswer,
    source: str,
    t: datetime | None = None,
) -> SurveyResponse:
    """The row for one answer. ``about_seat_index`` is the AI the ratings describe: the one
    guessed when the guess was right, else the only agent (None with several)."""
    for rating in (answer.similarity, answer.timing, answer.relevance):
        if rating not in RATING_LABELS:
            raise ValueError(f"ratings are 1-5, got {rating}")
    by_name = {s.name.casefold(): s for s in seats}
    guessed = by_name.get(answer.guess.casefold())
    if guessed is None or guessed.index == seat:
        raise ValueError(f"{answer.guess!r} is not another player of this game")
    agents = [s.index for s in seats if s.is_agent]
    identified = guessed.is_agent
    about = guessed.index if identified else (agents[0] if len(agents) == 1 else None)
    comments = (answer.comments or "").strip() or None
    return SurveyResponse(
        game_id=game_id,
        seat_index=seat,
        about_seat_index=about,
        identified_ai=identified,
        guessed_name=guessed.name,
        similarity=float(answer.similarity),
        timing=float(answer.timing),
        relevance=float(answer.relevance),
        original_scale="1-5",
        comments=comments,
        t=t or utcnow(),
        source=source,
    )


def survey_answered(engine: Engine, game_id: str, seat: int) -> bool:
    with Session(engine) as session:
        row = session.exec(
            select(SurveyResponse).where(
                SurveyResponse.game_id == game_id, SurveyResponse.seat_index == seat
            )
        ).first()
    return row is not None


def save_survey(engine: Engine, row: SurveyResponse) -> bool:
    """Store one answer; False (nothing stored) when this seat already answered."""
    with session_scope(engine) as session:
        exists = session.exec(
            select(SurveyResponse).where(
                SurveyResponse.game_id == row.game_id,
                SurveyResponse.seat_index == row.seat_index,
            )
        ).first()
        if exists is not None:
            return False
        session.add(row)
    return True


def seat_infos(engine: Engine, game_id: str) -> list[SeatInfo]:
    """A game's seats from the store, for a game no longer held in memory (the survey after a
    restart, for instance)."""
    from bot.store.models import Seat

    with Session(engine) as session:
        rows = session.exec(
            select(Seat).where(Seat.game_id == game_id).order_by(col(Seat.index))
        ).all()
    return [
        SeatInfo(r.index, r.character_name, r.user_id, r.is_agent, r.agent_kind, r.persona)
        for r in rows
    ]
