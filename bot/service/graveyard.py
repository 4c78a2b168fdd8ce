"""The graveyard's talk: a dead seat's line reaches the other dead (a person's, typed in their
booth, and a dead agent's, `agent.graveyard`), never the living and never the game.

The platform adapters own where the graveyard is (the dead people's booths, when the game has
it on) and register with `Graveyard.listen` to post its lines there; the service hands every
graveyard line to them in the same way, whoever wrote it. A dead agent hears the graveyard's
lines and answers now and then at people's pace; its lines pass the same guard as any agent
line (`agent.guard.check_line`), or are dropped.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

from agent.graveyard import GraveLine, GraveyardVoice
from agent.guard import check_line
from agent.knowledge import SeatKnowledge
from bot.errors import ServiceError
from bot.service.live import LiveGame
from games.events import Event, GameOver, PlayerEliminated
from games.state import GameState

log = logging.getLogger(__name__)

#: an adapter's poster: (game, the speaking seat, the line)
Poster = Callable[[LiveGame, int, str], Awaitable[None]]


class Graveyard:
    """The graveyard lines of every game of one service, and its dead agents' voices."""

    def __init__(self) -> None:
        self._posters: list[Poster] = []
        #: (game id, seat) -> a dead agent's voice
        self._voices: dict[tuple[str, int], GraveyardVoice] = {}

    def listen(self, poster: Poster) -> None:
        """An adapter posts each graveyard line where its game's graveyard is."""
        self._posters.append(poster)

    def forget(self, game_id: str) -> None:
        for key in [k for k in self._voices if k[0] == game_id]:
            del self._voices[key]

    async def say(self, game: LiveGame, state: GameState, seat: int, text: str) -> None:
        """A seat's line to the graveyard; a living seat's is refused."""
        if seat in state.alive():
            raise ServiceError("Only the eliminated talk in the graveyard.")
        await self.line(game, seat, text)

    def events(self, game: LiveGame, events: Sequence[Event]) -> None:
        """A batch of the game's events: an agent's death may bring a word from it."""
        for e in events:
            if isinstance(e, PlayerEliminated):
                self.died(game, e.seat, e.t)
            elif isinstance(e, GameOver):
                self.forget(game.id)

    async def line(self, game: LiveGame, seat: int, text: str) -> None:
        """``seat`` (dead) said ``text`` in the graveyard: to every poster, then to the other
        dead agents, who may answer."""
        for poster in self._posters:
            try:
                await poster(game, seat, text)
            except Exception:
                log.exception("game %s: a graveyard line could not be posted", game.id)
        now = game.clock.now()
        speaker = game.seat_names().get(seat, "")
        for other in self._dead_agents(game):
            if other != seat:
                self._schedule(game, other, self._voice(game, other).heard(now, speaker, text))

    def died(self, game: LiveGame, seat: int, t: datetime) -> None:
        """An agent seat was eliminated at ``t``."""
        info = next((s for s in game.seats if s.index == seat), None)
        if info is None or not info.is_agent:
            return
        self._schedule(game, seat, self._voice(game, seat).died(t))

    def _dead_agents(self, game: LiveGame) -> list[int]:
        state = game.state
        if state is None or state.over:
            return []
        alive = state.alive()
        return [s.index for s in game.seats if s.is_agent and s.index not in alive]

    def _voice(self, game: LiveGame, seat: int) -> GraveyardVoice:
        key = (game.id, seat)
        voice = self._voices.get(key)
        if voice is None:
            name = game.seat_names().get(seat, "")
            voice = self._voices[key] = GraveyardVoice(
                name, random.Random(f"{game.seed}:grave:{seat}")
            )
        return voice

    def _schedule(self, game: LiveGame, seat: int, line: GraveLine | None) -> None:
        if line is None:
            return

        async def fire() -> None:
            voice = self._voice(game, seat)
            if voice.planned is not line:
                return  # an answer took its place
            voice.said(line)
            if seat not in self._dead_agents(game) or game.finished.is_set():
                return
            names = game.seat_names()
            k = SeatKnowledge(seat, names.get(seat, ""))
            k.players = tuple(n for i, n in sorted(names.items()) if i != seat)
            problem = check_line(line.text, k)
            if problem is not None:
                log.info("game %s: seat %s's graveyard line held back: %s", game.id, seat, problem)
                return
            await self.line(game, seat, line.text)

        game.timers.call_at(line.at, fire)
