"""The post-game survey: the LLMafia study's questions, written once for every platform.

The LLMafia games (``<Name>_survey.txt``, see `bot.protection.dataset.llmafia_survey`) asked whether
the
player identified the AI, then rated its "similarity to human behavior", "timing of messaging"
and "relevance of messages" (1-5 in the later games), then asked for comments. Discord, Slack
and the terminal render :data:`QUESTIONS` in their own way (menus, a modal, one line per
question) and store the answers through this module, so the answers of all platforms can be
pooled with the imported LLMafia ones (``survey_responses``; one row per seat and game).

Which AI the ratings are about (``about_seat_index``): the one guessed when the guess names an
agent, else the only agent (None with several). ``identified_ai`` says whether the guess named
an agent. "An agent" is a seat an agent played from start to end (`bot.players.seat_story`): a seat
a
person played until a kick or an AFK takeover is not "the AI", and naming it is scored as not
naming the AI (docs/spot-the-ai.md); the store's seats decide it when the answer is saved.

The guess closes at the reveal (`bot.players.reveal`): a guess given after it is refused and never
stored (the other questions may still be answered), and :func:`guess_counts` is the one rule
every figure reads (the reveal's tally, stats, the leaderboard, the spot rate, the report and
the export): a guess counts only if it was given before the game's reveal. Before the reveal a
guess may be changed (the latest counts): nobody knows the answer yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from bot.players import seat_story
from bot.service.live import SeatInfo
from bot.store.db import session_scope
from bot.store.models import Game, Seat, SurveyResponse, utcnow


@dataclass(frozen=True)
class Question:
    #: the ``survey_responses`` column the answer goes to (and the form field's key)
    key: str
    #: the question as asked
    text: str
    #: "guess": one of the other players; "rating": 1-5; "comment": free text, optional
    kind: Literal["guess", "rating", "comment"]
    #: the metric's name in the LLMafia survey files
    llmafia: str


GUESS = Question("guessed_name", "Which player do you think was the AI?", "guess",
                 "Was the LLM identified")  # fmt: skip
SIMILARITY = Question("similarity", "How human-like were the AI's messages?", "rating",
                      "similarity to human behavior")  # fmt: skip
TIMING = Question("timing", "How natural was the timing of its messages?", "rating",
                  "timing of messaging")  # fmt: skip
RELEVANCE = Question("relevance", "How relevant were its messages to the game?", "rating",
                     "relevance of messages")  # fmt: skip
COMMENTS = Question("comments", "Anything else you noticed? (optional)", "comment", "Comments")

#: every question, in the order they are asked
QUESTIONS: tuple[Question, ...] = (GUESS, SIMILARITY, TIMING, RELEVANCE, COMMENTS)
RATINGS: tuple[Question, ...] = (SIMILARITY, TIMING, RELEVANCE)
#: what the answers needed for a complete survey are (comments are optional)
REQUIRED: tuple[Question, ...] = (GUESS, *RATINGS)

INTRO = (
    "Thanks for playing! One of the players was an AI agent. A few quick questions help the "
    "research (answers are stored under your character name only)."
)
RATING_LABELS: dict[int, str] = {
    1: "1 - not at all",
    2: "2 - a little",
    3: "3 - somewhat",
    4: "4 - mostly",
    5: "5 - completely",
}


#: the scale in one line, beside a rating question where the labels are not shown one by one
SCALE_HINT = "(1 = not at all, 5 = completely)"


class SurveyError(ValueError):
    """An answer that can't be stored; ``str(err)`` is written for the respondent."""


#: what a respondent is told when their guess comes after the reveal (one line, every platform)
GUESS_CLOSED = (
    "The guess closed when the AI was revealed, so it is not taken now; "
    "the other questions can still be answered."
)


class GuessClosed(SurveyError):
    """A guess given after the game's reveal."""

    def __init__(self) -> None:
        super().__init__(GUESS_CLOSED)


#: where imported answers come from: the LLMafia release's survey closed before it was published
IMPORTED_SOURCE = "llmafia"


def guess_counts(row: SurveyResponse, revealed_at: datetime | None) -> bool:
    """Does this row's guess count (in any figure)? Only a guess given before the game's reveal
    (``revealed_at``; None: not revealed yet, so nothing counts yet) does; an imported LLMafia
    answer always does (that survey closed before its games were published). A row from before
    ``guessed_at`` was kept is judged by its last change (``t``)."""
    if row.identified_ai is None:
        return False
    if row.source == IMPORTED_SOURCE:
        return True
    if revealed_at is None:
        return False
    given = row.guessed_at or row.t
    return given is not None and _naive(given) <= _naive(revealed_at)


def counted_guess(row: SurveyResponse, revealed_at: datetime | None) -> bool | None:
    """The row's ``identified_ai`` if its guess counts (:func:`guess_counts`), else None."""
    return row.identified_ai if guess_counts(row, revealed_at) else None


def _naive(t: datetime) -> datetime:
    return t.replace(tzinfo=None) if t.tzinfo is None else t.astimezone(UTC).replace(tzinfo=None)


def as_utc(t: datetime) -> datetime:
    """``t`` as an aware UTC time (a naive one is taken as UTC, as the store keeps them)."""
    return _naive(t).replace(tzinfo=UTC)


def answered_when(row: SurveyResponse, revealed_at: datetime | None) -> str:
    """When the row's guess was given relative to the reveal (for the export): "before reveal",
    "after reveal", "not revealed" (the game's AI was never revealed), "imported" or
    "no guess"."""
    if row.identified_ai is None and row.guessed_name is None:
        return "no guess"
    if row.source == IMPORTED_SOURCE:
        return "imported"
    if revealed_at is None:
        return "not revealed"
    return "before reveal" if guess_counts(row, revealed_at) else "after reveal"


def questions_for(seats: Sequence[SeatInfo], seat: int) -> tuple[Question, ...]:
    """The questions this respondent is asked: all of them, but the guess only when one of
    the others was a person (in the terminal everyone else is an agent: nothing to guess)."""
    if all(s.is_agent for s in seats if s.index != seat):
        return tuple(q for q in QUESTIONS if q.kind != "guess")
    return QUESTIONS


def intro_for(seats: Sequence[SeatInfo], seat: int) -> str:
    """:data:`INTRO`, or its counterpart when everyone else at the table was an agent."""
    if GUESS in questions_for(seats, seat):
        return INTRO
    return (
        "Thanks for playing! The other players were AI agents. A few quick questions about "
        "their messages help the research (answers are stored under your character name only)."
    )


def choices(seats: Sequence[SeatInfo], seat: int) -> list[str]:
    """Whom the respondent may name as the AI: every character at the table but their own
    (the dead included), in seat order."""
    return [s.name for s in seats if s.index != seat]


def parse_rating(raw: str) -> int:
    """A 1-5 answer as typed or chosen ("4", " 4 ", "4 - mostly")."""
    head = raw.strip().split(" ", 1)[0]
    if not head.isdigit() or int(head) not in RATING_LABELS:
        raise SurveyError("Answer with a number from 1 to 5.")
    return int(head)


def answer(seats: Sequence[SeatInfo], seat: int, question: Question, raw: str) -> dict[str, Any]:
    """The ``survey_responses`` columns one answer sets (a question answered on its own, as
    Discord's menus and the terminal ask them). Raises :class:`SurveyError`."""
    agents = [s.index for s in seats if s.is_agent]
    if question.kind == "rating":
        return {question.key: float(parse_rating(raw)), **_about(agents, None)}
    if question.kind == "comment":
        return {question.key: raw.strip() or None}
    wanted = raw.strip().casefold()
    guessed = next((s for s in seats if s.name.casefold() == wanted and s.index != seat), None)
    if guessed is None:
        raise SurveyError(f"Name one of the other players: {', '.join(choices(seats, seat))}.")
    return {
        "guessed_name": guessed.name,
        "identified_ai": guessed.is_agent,
        **_about(agents, guessed),
    }


def _about(agents: Sequence[int], guessed: SeatInfo | None) -> dict[str, Any]:
    if guessed is not None and guessed.is_agent:
        return {"about_seat_index": guessed.index}
    return {"about_seat_index": agents[0] if len(agents) == 1 else None}


def missing(row: SurveyResponse | None) -> list[Question]:
    """The required questions a stored row has no answer to yet."""
    return [q for q in REQUIRED if row is None or getattr(row, q.key) is None]


def still_open(row: SurveyResponse | None, revealed: bool) -> list[Question]:
    """The required questions the respondent can still answer: after the reveal, not the
    guess."""
    return [q for q in missing(row) if not (revealed and q.kind == "guess")]


@dataclass(frozen=True)
class SurveyAnswer:
    """A whole form answered at once (Slack's modal)."""

    guess: str
    similarity: int
    timing: int
    relevance: int
    comments: str | None = None


def response(
    game_id: str,
    seats: Sequence[SeatInfo],
    seat: int,
    form: SurveyAnswer,
    source: str,
    t: datetime | None = None,
) -> SurveyResponse:
    """The row for a whole form (an empty guess: none asked, the guess had closed). Raises
    :class:`SurveyError` (a ValueError)."""
    columns: dict[str, Any] = answer(seats, seat, GUESS, form.guess) if form.guess else {}
    for question, value in zip(
        RATINGS, (form.similarity, form.timing, form.relevance), strict=True
    ):
        columns[question.key] = float(parse_rating(str(value)))
    columns.update(answer(seats, seat, COMMENTS, form.comments or ""))
    return SurveyResponse(
        game_id=game_id,
        seat_index=seat,
        original_scale="1-5",
        t=t or utcnow(),
        source=source,
        **columns,
    )


def answered(engine: Engine, game_id: str, seat: int) -> bool:
    """Has this seat stored a survey for this game (on any platform)?"""
    with Session(engine) as session:
        row = session.exec(
            select(SurveyResponse).where(
                SurveyResponse.game_id == game_id, SurveyResponse.seat_index == seat
            )
        ).first()
    return row is not None


FormResult = Literal["saved", "answered", "saved without the guess"]


def save(engine: Engine, row: SurveyResponse) -> bool:
    """Store a whole form; False (nothing stored) when this seat already answered."""
    return store_form(engine, row) != "answered"


def store_form(engine: Engine, row: SurveyResponse) -> FormResult:
    """Store a whole form (Slack's modal): "answered" (nothing stored) when this seat already
    answered; "saved without the guess" when the game's AI was revealed meanwhile (the guess is
    closed, the ratings and comment are kept)."""
    with session_scope(engine) as session:
        exists = session.exec(
            select(SurveyResponse).where(
                SurveyResponse.game_id == row.game_id,
                SurveyResponse.seat_index == row.seat_index,
            )
        ).first()
        if exists is not None:
            return "answered"
        late = _revealed(session, row.game_id)
        if late:
            row.guessed_name = None
            row.identified_ai = None
            row.guessed_at = None
        elif row.guessed_name is not None:
            row.guessed_at = row.t or utcnow()
        _score(session, row.game_id, row, guess=not late)
        session.add(row)
    return "saved without the guess" if late else "saved"


def _revealed(session: Session, game_id: str) -> bool:
    game = session.get(Game, game_id)
    return game is not None and game.revealed_at is not None


def _score(session: Session, game_id: str, row: SurveyResponse, *, guess: bool) -> None:
    """Score the row by the store's seat stories (`bot.players.seat_story`): a guess names the AI
    only
    when an agent played that seat from start to end; the ratings are about the AI guessed,
    else the game's only AI."""
    seats = session.exec(select(Seat).where(Seat.game_id == game_id)).all()
    if not seats:
        return  # (a game the store does not hold: the caller's scoring stands)
    ais = [s.index for s in seats if seat_story.agent_throughout(s)]
    named = next((s for s in seats if s.character_name == row.guessed_name), None)
    if guess and named is not None:
        row.identified_ai = seat_story.agent_throughout(named)
    if row.identified_ai and named is not None:
        row.about_seat_index = named.index
    elif row.similarity is not None or row.identified_ai is not None:
        row.about_seat_index = ais[0] if len(ais) == 1 else None


def save_answer(
    engine: Engine, game_id: str, seat: int, source: str, columns: dict[str, Any]
) -> SurveyResponse:
    """Add one answer (the columns from :func:`answer`) to this seat's row, creating it: each
    answer is kept the moment it is given, so a half-finished survey still counts; answering
    again changes the answer. A guess after the game's reveal raises :class:`GuessClosed`
    (nothing is stored); the other questions stay open."""
    with session_scope(engine) as session:
        guessing = "guessed_name" in columns
        if guessing and _revealed(session, game_id):
            raise GuessClosed()
        row = session.exec(
            select(SurveyResponse).where(
                SurveyResponse.game_id == game_id,
                SurveyResponse.seat_index == seat,
                SurveyResponse.source == source,
            )
        ).first()
        if row is None:
            row = SurveyResponse(
                game_id=game_id, seat_index=seat, source=source, original_scale="1-5"
            )
            session.add(row)
        guessed_about = row.identified_ai and row.about_seat_index is not None
        for key, value in columns.items():
            if key == "about_seat_index" and guessed_about and not guessing:
                continue  # a rating keeps the AI a right guess named
            setattr(row, key, value)
        row.t = utcnow()
        if guessing:
            row.guessed_at = row.t
        _score(session, game_id, row, guess=guessing)
        session.flush()
        session.expunge(row)
        return row
