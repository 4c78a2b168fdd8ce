"""Which Slack games this process knows, and where each one lives (`SlackGame`).

A game is known when its ``stage`` link is in `platform_links` (`bot.slack.links`); one that
is not is remembered as someone else's (a Discord or terminal game on a shared service), so
its events cost one lookup, not one per event.
"""

from __future__ import annotations

from bot.service.live import LiveGame
from bot.service.port import GameService
from bot.slack.links import Booth, LinkStore, SlackGame


class Games:
    def __init__(self, service: GameService, store: LinkStore) -> None:
        self.service = service
        self.store = store
        self.by_id: dict[str, SlackGame] = {}
        self._not_ours: set[str] = set()

    async def known(self, game_id: str) -> SlackGame | None:
        sg = self.by_id.get(game_id)
        if sg is not None or game_id in self._not_ours:
            return sg
        sg = await self.store.load(game_id)
        if sg is None:
            self._not_ours.add(game_id)
            return None
        self.by_id[game_id] = sg
        return sg

    def add(self, sg: SlackGame) -> None:
        self.by_id[sg.id] = sg
        self._not_ours.discard(sg.id)

    def get(self, game_id: str | None) -> SlackGame | None:
        return self.by_id.get(game_id) if game_id else None

    def live(self, sg: SlackGame) -> LiveGame | None:
        return self.service.games.get(sg.id)

    def running(self, sg: SlackGame) -> LiveGame | None:
        """The game in play (dealt, not over), or None."""
        game = self.live(sg)
        if sg.done or game is None or game.state is None or game.state.over:
            return None
        return game

    def in_channel(self, channel: str | None) -> SlackGame | None:
        """The open game whose stage is ``channel`` (one per channel)."""
        for sg in self.by_id.values():
            if not sg.done and sg.channel == channel:
                return sg
        return None

    def with_den(self, channel: str | None) -> SlackGame | None:
        """The open game whose den channel (made by an older version) is ``channel``."""
        for sg in self.by_id.values():
            if not sg.done and channel is not None and sg.den == channel:
                return sg
        return None

    def booths(self) -> dict[str, tuple[SlackGame, Booth]]:
        """DM channel -> (game, booth) of every running game's human booths; a person in
        several games speaks into the newest one."""
        out: dict[str, tuple[SlackGame, Booth]] = {}
        for sg in self.by_id.values():
            game = self.running(sg)
            if game is None:
                continue
            for booth in sg.booths.values():
                if game.seats[booth.seat].user_id == booth.user:
                    out[booth.channel] = (sg, booth)
        return out

    def booth_of(self, user: str, team: str | None = None) -> tuple[SlackGame, Booth] | None:
        """The running game whose booth a DM from ``user`` (of workspace ``team``) speaks
        into: the newest one."""
        found = None
        for sg, booth in self.booths().values():
            if booth.user == user and (not team or not sg.team or sg.team == team):
                found = (sg, booth)
        return found

    def of_user(self, user: str) -> list[tuple[SlackGame, LiveGame]]:
        out = []
        for sg in self.by_id.values():
            game = self.live(sg)
            if game is not None and not sg.done and game.seat_of_user(user) is not None:
                out.append((sg, game))
        return out
