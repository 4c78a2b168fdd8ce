"""The reveal: once the survey closes, the stage is told who the AI was and how many spotted it.

The survey closes for a game when every person at the table has answered its required
questions (on any platform), or at the latest ``MAFIABOT_REVEAL_AFTER_SECONDS`` after the game
ended. Only then is the answer given, to everyone at once and in the same words on every
platform (:func:`reveal_text`): nobody learns it before they have answered or the window has
closed, and nobody is told privately ahead of the others.

``games.revealed_at`` records that the reveal was given; it is set by one conditional UPDATE
(:func:`claim`), so two survey answers arriving together, a timer racing the last answer, or
two processes never post it twice. :class:`Reveals` is what the adapters use: they tell it
when a game ended and when a survey was completed, and pass it a function that posts a line
on the game's stage. Once the reveal is given, the game is counted on the board
(`bot.players.stats.count_revealed`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.players import seat_story, stats, survey
from bot.store.models import Game, Seat, Server, SurveyResponse, utcnow
from games.names import display_list

log = logging.getLogger(__name__)

T = TypeVar("T")


#: what a player who answered is told about the reveal, on every platform
WHEN = (
    "Who the AI was is announced in the game channel once everyone has answered, or at the "
    "latest a few minutes after the game."
)


def reveal_text(
    agents: Sequence[str], spotted: int, asked: int, stories: Sequence[str] = ()
) -> str:
    """ "The AI was Hayden. 3 of 5 of you named them." (the count only when people were asked
    whom they suspected). ``agents`` are the seats an agent played from start to end;
    ``stories`` tell the seats both a person and an agent played (`bot.players.seat_story.story`):
    "The AI was Sage. Blake's player left on day 1; an AI played the seat from then on. 1 of 4
    of you named Sage." """
    told = " ".join(stories)
    if not agents:
        if not told:
            return ""
        return f"No player was an AI from the start. {told}"
    if len(agents) == 1:
        first = f"The AI was {agents[0]}."
        them = agents[0] if stories else "them"
    else:
        first = f"The AIs were {display_list(list(agents))}."
        them = "one of them"
    if told:
        first = f"{first} {told}"
    if asked <= 0:
        return first
    return f"{first} {spotted} of {asked} of you named {them}."


@dataclass(frozen=True)
class Tally:
    agents: list[str]
    #: people whose survey guess named an agent (a guess that counts:
    # `bot.players.survey.guess_counts`)
    spotted: int
    #: people who were asked the guess (every person at the table who has not withdrawn)
    asked: int
    #: people who answered every required question
    complete: int
    #: the stories of seats both a person and an agent played (`bot.players.seat_story.story`)
    stories: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return reveal_text(self.agents, self.spotted, self.asked, self.stories)


def tally(session: Session, game_id: str, at: datetime | None = None) -> Tally:
    """The reveal's numbers, as if the reveal were given ``at`` (default now)."""
    query = select(Seat).where(Seat.game_id == game_id).order_by(col(Seat.index))
    seats = session.exec(query).all()
    agents = [s.character_name for s in seats if seat_story.agent_throughout(s)]
    stories = tuple(told for s in seats if (told := seat_story.story(s.character_name, s)))
    game = session.get(Game, game_id)
    revealed_at = (game.revealed_at if game is not None else None) or at or utcnow()
    people = {s.index for s in seats if not s.is_agent and s.user_id and not s.withdrawn}
    others_all_agents = {
        s.index
        for s in seats
        if s.index in people and all(o.is_agent for o in seats if o.index != s.index)
    }
    rows = session.exec(select(SurveyResponse).where(SurveyResponse.game_id == game_id)).all()
    spotted: set[int] = set()
    complete: set[int] = set()
    for row in rows:
        if row.seat_index not in people:
            continue
        if survey.counted_guess(row, revealed_at):
            spotted.add(row.seat_index)
        needed = [q for q in survey.missing(row) if q.kind != "guess"]
        if row.seat_index not in others_all_agents:
            needed = survey.missing(row)
        if not needed:
            complete.add(row.seat_index)
    asked = len(people - others_all_agents)
    return Tally(agents, len(spotted), asked, len(complete & people), stories)


def survey_closed(session: Session, game: Game, window: float, now: datetime | None = None) -> bool:
    """Everyone answered, or the window after the game's end has passed."""
    if game.ended_at is not None and (now or utcnow()) >= game.ended_at + timedelta(seconds=window):
        return True
    seats = session.exec(select(Seat).where(Seat.game_id == game.id)).all()
    people = sum(1 for s in seats if not s.is_agent and s.user_id and not s.withdrawn)
    return tally(session, game.id).complete >= people


def claim(engine: Engine, game_id: str, *, window: float, closed: bool = False) -> str | None:
    """The reveal's text, if it is due now and was not given yet (and mark it given): a
    finished game whose survey has closed (``closed``: the caller knows the window passed).
    None otherwise."""
    with Session(engine) as session:
        game = session.get(Game, game_id)
        if game is None or game.status != "finished" or game.revealed_at is not None:
            return None
        if not closed and not survey_closed(session, game, window):
            return None
        now = utcnow()
        text = tally(session, game_id, now).text
        if not text:
            return None
        done = session.execute(
            sa.update(Game)
            .where(col(Game.id) == game_id, col(Game.revealed_at).is_(None))
            .values(revealed_at=now)
        )
        session.commit()
        if getattr(done, "rowcount", 0) != 1:
            return None  # someone else gave it meanwhile
    return text


def pending(engine: Engine, platform: str) -> list[tuple[str, datetime | None]]:
    """Finished games of ``platform`` whose reveal was not given yet, with their end."""
    with Session(engine) as session:
        rows = session.exec(
            select(Game.id, Game.ended_at)
            .join(Server, col(Server.id) == Game.server_id)
            .where(
                Server.platform == platform,
                Game.status == "finished",
                col(Game.revealed_at).is_(None),
            )
        ).all()
    return [(gid, ended) for gid, ended in rows]


def revealed(engine: Engine, game_id: str) -> bool:
    with Session(engine) as session:
        game = session.get(Game, game_id)
        return game is not None and game.revealed_at is not None


Post = Callable[[str, str], Awaitable[None]]
Run = Callable[[Callable[[], T]], Awaitable[T]]


class Reveals:
    """What an adapter calls: :meth:`game_over` (arms the window), :meth:`answered` (a survey
    was completed: maybe everyone has now), :meth:`recover` (after a restart). ``post(game_id,
    text)`` says the line on that game's stage; ``run`` runs a store call off the loop."""

    def __init__(self, engine: Engine, window: float, post: Post, run: Run[Any] | None = None):
        self.engine = engine
        self.window = window
        self.post = post
        self._run = run
        self._timers: dict[str, asyncio.Task[None]] = {}

    async def run(self, fn: Callable[[], T]) -> T:
        if self._run is not None:
            result: T = await self._run(fn)
            return result
        return await asyncio.to_thread(fn)

    def game_over(self, game_id: str, delay: float | None = None) -> None:
        """Arm the window's end for a game that just finished (or ``delay`` seconds)."""
        if game_id in self._timers:
            return
        wait = self.window if delay is None else max(0.0, delay)

        async def later() -> None:
            try:
                await asyncio.sleep(wait)
                await self._give(game_id, closed=True)
            finally:
                self._timers.pop(game_id, None)

        self._timers[game_id] = asyncio.create_task(later(), name=f"reveal {game_id}")

    async def answered(self, game_id: str) -> None:
        """A survey of this game was answered: reveal if now everyone has."""
        await self._give(game_id, closed=False)

    async def recover(self, platform: str) -> None:
        """Arm the window of every finished game not revealed yet (after a restart)."""
        now = utcnow()
        for game_id, ended in await self.run(lambda: pending(self.engine, platform)):
            left = self.window
            if ended is not None:
                left = min(self.window, (ended - now).total_seconds() + self.window)
            self.game_over(game_id, left)

    def close(self) -> None:
        for task in list(self._timers.values()):
            task.cancel()
        self._timers.clear()

    async def _give(self, game_id: str, *, closed: bool) -> None:
        window = self.window
        text = await self.run(lambda: claim(self.engine, game_id, window=window, closed=closed))
        if text is None:
            return
        timer = self._timers.pop(game_id, None)
        if timer is not None and timer is not asyncio.current_task():
            timer.cancel()
        try:
            await self.post(game_id, text)
        except Exception:
            log.exception("could not post the reveal of game %s", game_id)
        await self.count(game_id)

    async def count(self, game_id: str) -> None:
        """The revealed game counts on the board now (`bot.players.stats.count_revealed`), not
        inside
        someone's next query."""
        try:
            await self.run(lambda: stats.count_revealed(self.engine, game_id))
        except Exception:
            log.exception("could not count the revealed game %s on the board", game_id)
