"""Game-Manager posts: the one way anything the bot says reaches the stage, a booth or the den.

Every part of the adapter that tells players something (the renderer, the relay's refusals,
the AFK watch, seat changes, a booth opened again after a deletion) queues it here, so a
booth's notes and its den posts keep one order, one cleaning (`clean_manager`) and one fault
path (the delivery queue's). Nothing here waits on Discord: each call only queues a job.

The den has no thread of its own (its member list would tell a human mafia whether a partner
is a person): a den post goes to the booth of each reader (`Room.den_readers`), and is dropped
if the seat changed hands before it went out (a removed player gets no more den posts).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from collections.abc import Set as AbstractSet

import discord

from bot.discord.delivery import Delivery, Job
from bot.discord.rooms import Booth, Room, Rooms
from bot.discord.sanitize import clean_manager

#: delivery group of den posts in a booth (they never merge with the booth's own notes)
DEN = "den"
#: a fresh menu for one reader's booth (a view can be sent once), or None
MenuFor = Callable[[int], discord.ui.View | None]


class Notifier:
    def __init__(self, delivery: Delivery, rooms: Rooms) -> None:
        self.delivery = delivery
        self.rooms = rooms

    def put(self, room: Room, place: str, job: Job, seat: int | None = None) -> None:
        """Queue ``job`` behind everything else for that place (and seat)."""
        job.game_id = room.game_id
        job.place = place
        job.seat = seat
        self.delivery.put(room.key(place, seat), job)

    def stage(self, room: Room, line: str | None, view: discord.ui.View | None = None) -> None:
        """A Game-Manager announcement on the stage (a menu under it: never merged)."""
        if line is None:
            return
        rooms = self.rooms

        async def send(merged: str) -> None:
            await rooms.post(room, room.channel_id, merged, thread=False, view=view)

        self.put(room, "stage", Job(send=send, text=clean_manager(line), merge=view is None))

    def den(
        self,
        room: Room,
        line: str | None,
        menu: MenuFor | None = None,
        audience: AbstractSet[int] | None = None,
    ) -> None:
        """A Game-Manager post for the den: into the booth of each of its readers (the humans
        among ``audience``, an event's ``visible_to``, when given)."""
        if line is None:
            return
        text = clean_manager(line)
        for seat, uid in sorted(room.den_readers(audience).items()):
            view = menu(seat) if menu is not None else None

            async def send(
                merged: str, seat: int = seat, uid: int = uid, view: discord.ui.View | None = view
            ) -> None:
                booth = await self.den_booth(room, seat, uid)
                if booth is not None:
                    await self.rooms.post(room, booth.thread_id, merged, view=view)

            # (merged only with den posts for the same person: a post queued for a player
            # who has since been replaced must not carry the substitute's along with it)
            job = Job(send=send, text=text, merge=view is None, group=f"{DEN}:{uid}")
            self.put(room, "booth", job, seat)

    async def den_booth(self, room: Room, seat: int, uid: int) -> Booth | None:
        """The booth a den post queued for ``uid`` goes to; None when the seat has changed
        hands since."""
        if room.humans.get(seat) != uid:
            return None
        return await self.rooms.booth(room, seat, uid)

    def booth(
        self,
        room: Room,
        seat: int,
        text: str,
        view: discord.ui.View | None = None,
        *,
        after: Callable[[], None] | None = None,
    ) -> None:
        """A Game-Manager note in a human's booth (nothing for agent seats)."""
        uid = room.humans.get(seat)
        if uid is not None:
            self.booth_to(room, seat, uid, text, view, after=after)

    def booth_to(
        self,
        room: Room,
        seat: int,
        uid: int,
        text: str,
        view: discord.ui.View | None = None,
        *,
        after: Callable[[], None] | None = None,
    ) -> None:
        """A note for ``uid``'s booth of ``seat`` (also a person who just lost the seat)."""
        rooms = self.rooms

        async def send(merged: str) -> None:
            booth = await rooms.booth(room, seat, uid)
            await rooms.post(room, booth.thread_id, merged, view=view)

        job = Job(send=send, text=clean_manager(text), merge=view is None)
        if after is not None:
            job.on_done.append(after)
        self.put(room, "booth", job, seat)

    def after(self, room: Room, place: str, send: Callable[[], Awaitable[object]]) -> None:
        """Run ``send`` once everything queued for ``place`` before it is out (closing the
        stage after the winner's announcement, archiving the graveyard)."""
        self.put(room, place, Job(send=lambda _: send()))

    def archive_booth(self, room: Room, seat: int) -> None:
        """Archive (not lock) ``seat``'s booth after the posts queued for it."""

        async def send(_: str) -> None:
            booth = room.booths.get(seat)
            if booth is not None:
                await self.rooms.archive(booth.thread_id, lock=False)

        self.put(room, "booth", Job(send=send), seat)
