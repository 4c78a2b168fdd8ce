"""The old import path of what the chat adapters share.

The survey is `bot.survey`; everything else the platforms share (settings syntax, lobby
rules, status, booth rules, link stores, relayed-text safety, avatars) lives in `bot.table`.
The names are re-exported here so older imports keep working; new code imports from there.
"""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot import survey
from bot.live import SeatInfo
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
    "COMMENTS_QUESTION",
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

# --- the post-game survey: bot.survey (these names stay for the adapters that use them) ---------

SURVEY_INTRO = survey.INTRO
SURVEY_GUESS_QUESTION = survey.GUESS.text
COMMENTS_QUESTION = survey.COMMENTS.text
#: (SurveyResponse field, question), all answered on 1-5
RATING_QUESTIONS: tuple[tuple[str, str], ...] = tuple((q.key, q.text) for q in survey.RATINGS)
RATING_LABELS = survey.RATING_LABELS
SurveyAnswer = survey.SurveyAnswer
survey_choices = survey.choices
survey_response = survey.response
survey_answered = survey.answered
save_survey = survey.save


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
