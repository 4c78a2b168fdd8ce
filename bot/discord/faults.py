"""What the bot does when Discord removes something under a running game.

A post that fails for good comes here from the delivery queue (`Faults.on_fault`): a deleted
booth or graveyard thread is forgotten so the next post opens a new one (the post is queued
again, into it); a missing permission is reported to the game's moderators once; a deleted
game channel ends the game, with the reason stored. Gateway deletions (`thread_gone`,
`channel_gone`) take the same paths.
"""

from __future__ import annotations

import contextlib
import logging

import discord

from bot.discord.delivery import Delivery, Job
from bot.discord.links import LinkStore
from bot.discord.notify import Notifier
from bot.discord.posts import seat_card
from bot.discord.relay import Relay
from bot.discord.rooms import Room, Rooms
from bot.service.port import GameService

log = logging.getLogger(__name__)


class Faults:
    def __init__(
        self,
        service: GameService,
        rooms: Rooms,
        links: LinkStore,
        delivery: Delivery,
        notifier: Notifier,
        relay: Relay,
    ) -> None:
        self.service = service
        self.rooms = rooms
        self.links = links
        self.delivery = delivery
        self.notify = notifier
        self.relay = relay

    async def on_fault(self, job: Job, exc: BaseException) -> None:
        room = self.rooms.get(job.game_id) if job.game_id else None
        if room is None:
            log.warning("dropped a post of %s: %s", job.game_id, exc)
            return
        if isinstance(exc, discord.NotFound) and exc.code == 10003:
            if job.place == "stage":
                await self.channel_gone(room)
                return
            thread_id = self._thread_of(room, job.place, job.seat)
            await self.thread_gone(room, job.place, job.seat, thread_id)
            if not room.ended:
                self.delivery.put(room.key(job.place, job.seat), job)  # try again, in a new one
            return
        if isinstance(exc, discord.Forbidden):
            await self.rooms.report(
                room,
                f"forbidden:{job.place}",
                f"Discord refused a post in the {job.place} ({exc.text or exc.status}): I am "
                "missing a permission there. /mafia setup lists what I need.",
            )
            return
        log.error("dropped a %s post of game %s: %r", job.place, room.game_id, exc)

    @staticmethod
    def _thread_of(room: Room, kind: str, seat: int | None) -> int | None:
        if kind == "booth" and seat is not None:
            booth = room.booths.get(seat)
            return booth.thread_id if booth else None
        if kind == "graveyard":
            return room.graveyard_id
        return None

    async def thread_gone(
        self, room: Room, kind: str, seat: int | None, thread_id: int | None
    ) -> None:
        """A booth or the graveyard was deleted: forget it so the next post makes a new one; a
        new booth gets the role card again (den posts queued for it follow into the new one)."""
        if thread_id is not None:
            self.rooms.threads.pop(thread_id, None)
            self.relay.queues.pop(thread_id, None)
        if kind == "booth" and seat is not None:
            booth = room.booths.get(seat)
            if booth is None or (thread_id is not None and booth.thread_id != thread_id):
                return
            del room.booths[seat]
            await self.links.delete(room.game_id, "booth", seat)
        elif kind == "graveyard":
            room.graveyard_id = None
            await self.links.delete(room.game_id, "graveyard")
        else:
            return
        await self.links.incident(room.game_id, thread_id or 0, what=f"{kind} thread deleted")
        if room.ended:
            return
        await self.rooms.report(
            room,
            f"deleted:{kind}:{thread_id}",
            f"a {kind} thread of the game was deleted; I opened a new one and the game goes on.",
        )
        game = self.service.games.get(room.game_id)
        if kind == "booth" and seat is not None and game is not None and game.state is not None:
            card = seat_card(game.state, seat)
            self.notify.booth(room, seat, f"Your booth was deleted, so here is a new one. {card}")

    async def channel_gone(self, room: Room) -> None:
        """The game channel itself was deleted: the game cannot go on. It is ended (the reason
        is stored with it) and the moderators are told."""
        if room.ended:
            return
        room.ended = True
        self.rooms.release_channel(room)
        await self.links.incident(room.game_id, room.channel_id, what="game channel deleted")
        game = self.service.games.get(room.game_id)
        if game is not None and game.status in ("lobby", "running"):
            with contextlib.suppress(Exception):
                await self.service.end(room.game_id, "the game channel was deleted")
        await self.rooms.report(
            room,
            "channel-deleted",
            "the game channel was deleted, so I ended the game (nothing is lost: it is stored "
            "as stopped, with this reason).",
        )
