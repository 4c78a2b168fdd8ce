"""The graveyard on Slack: when it is on (`Settings.slack_graveyard`), the dead people's
booths (their DMs with the app) are the graveyard, as on Discord: what a dead person types
there reaches the other dead people's booths under the character's name, never the living;
every death, an AI's too, is announced there in the same words; a dead agent takes part
(`bot.service.graveyard`)."""

from __future__ import annotations

from bot.service.live import LiveGame
from bot.service.port import GameService
from bot.slack.games import Games
from bot.slack.links import Booth, SlackGame
from bot.slack.notify import Notifier
from games.events import PlayerEliminated

JOINED = "{name} has joined the graveyard."
YOU_ARE_IN = (
    "You are in the graveyard now: what you type here goes to the other eliminated players, "
    "never to the living."
)


class SlackGraveyard:
    def __init__(self, service: GameService, games: Games, out: Notifier, on: bool) -> None:
        self.service = service
        self.games = games
        self.out = out
        self.on = on
        service.graveyard.listen(self.post)

    @staticmethod
    def readers(game: LiveGame, sg: SlackGame) -> dict[int, str]:
        """The dead people's booth channels, by seat (no agent: it has no booth)."""
        state = game.state
        if state is None:
            return {}
        alive = state.alive()
        return {
            seat: booth.channel
            for seat, booth in sg.booths.items()
            if 0 <= seat < len(game.seats)
            and seat not in alive
            and not game.seats[seat].is_agent
            and game.seats[seat].user_id == booth.user
        }

    async def post(self, game: LiveGame, seat: int, text: str) -> None:
        """A graveyard line (a dead person's or a dead agent's, alike)."""
        sg = self.games.by_id.get(game.id)
        if not self.on or sg is None or sg.done:
            return
        name = game.seat_names().get(seat, "?")
        for reader, channel in self.readers(game, sg).items():
            if reader != seat:
                self.out.say_as(
                    sg, channel, name, text, what="write in a player's booth", speaker=seat
                )

    def joined(self, game: LiveGame, sg: SlackGame, event: PlayerEliminated) -> None:
        """Every death joins the graveyard, an AI's too, in the same words."""
        if not self.on:
            return
        for reader in self.readers(game, sg):
            if reader != event.seat:
                self.out.booth_note(sg, reader, JOINED.format(name=event.name))

    async def line(self, sg: SlackGame, booth: Booth, text: str) -> bool:
        """A line typed in ``booth``: True when it was the graveyard's (a dead seat's)."""
        game = self.service.games.get(sg.id)
        if not self.on or game is None or game.state is None:
            return False
        if booth.seat in game.state.alive():
            return False
        await self.service.graveyard_say(sg.id, booth.seat, text)
        return True
