"""Where each game lives on Discord: its channel (the stage), webhook, booths (the dead's booths
are also the graveyard: `bot.discord.posts.graveyard_readers`; an older version's graveyard
thread is only ever archived).

A :class:`Room` is the adapter's in-memory picture of one game's Discord resources, rebuilt
from ``platform_links`` after a restart. :class:`Rooms` creates the resources lazily and
idempotently (``webhook``, ``booth``...): a resource that was deleted behind the bot's back is
simply created again the next time it is needed, and the incident is recorded and reported to
the game's moderators.

There is no shared mafia thread (*den*): its member list would show which partners are
people, so a human mafia whose partner is the agent would find the agent. The den is relayed
into the booth of each human mafia instead (see `Renderer.speech` and `Notifier.den`).
A den thread stored by an older version is archived when its game is recovered
(`Rooms.retire_den`).

Threads are made with raw REST calls by id, not through discord.py's cache, so everything here
works the same before the gateway is ready (recovery) and for threads the cache never saw.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import discord

from bot.discord.hooks import Hooks
from bot.discord.links import GameRow, Link, LinkStore
from bot.discord.sanitize import chunks
from bot.service.live import LiveGame
from bot.table.booths import den_audience
from bot.table.text import avatar_url
from games.events import ChoicesOffered
from games.roles import get_role

if TYPE_CHECKING:
    from bot.discord.options import DiscordOptions

log = logging.getLogger(__name__)

PRIVATE_THREAD: Literal[12] = 12  # discord.ChannelType.private_thread
ARCHIVE_AFTER: Literal[10080] = 10080  # minutes: a week, the longest Discord allows
NONE = discord.AllowedMentions.none()
# What the bot allows itself on the stage while @everyone may not send there.
BOT_ALLOW = discord.Permissions(
    view_channel=True,
    send_messages=True,
    embed_links=True,
    read_message_history=True,
    send_messages_in_threads=True,
).value
SEND = discord.Permissions(send_messages=True).value


@dataclass
class Booth:
    seat: int
    user_id: int
    thread_id: int
    #: newest booth message already handled (relayed or refused); ids grow with time
    seen: int = 0


@dataclass
class Room:
    game_id: str
    guild_id: int
    channel_id: int
    host_id: int | None = None
    lobby_message_id: int | None = None
    webhook: tuple[int, str] | None = None
    webhook_id_hint: int | None = None
    #: a shared den thread made by an older version (only ever archived now)
    old_den: int | None = None
    graveyard_id: int | None = None
    booths: dict[int, Booth] = field(default_factory=dict)
    #: people told about faults: the host and whoever bound the channel
    contacts: set[int] = field(default_factory=set)
    #: seat -> Discord user id of the human playing it now
    humans: dict[int, int] = field(default_factory=dict)
    alive: set[int] = field(default_factory=set)
    roles: dict[int, str] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    #: (seat, verb) -> the newest choices the engine offered that seat (every menu is built
    #: from these; a night action's stays valid until dawn)
    offers: dict[tuple[int, str], ChoicesOffered] = field(default_factory=dict)
    afk: dict[str, float] = field(default_factory=dict)
    graveyard: bool = False
    #: AI players to seat at the start, and their persona
    agents: int = 0
    persona: str | None = None
    synced: bool = False
    started: bool = False
    ended: bool = False
    reported: set[str] = field(default_factory=set)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def key(self, place: str, seat: int | None = None) -> str:
        return f"{self.game_id}:{place}" if seat is None else f"{self.game_id}:{place}:{seat}"

    def den_readers(self, audience: AbstractSet[int] | None = None) -> dict[int, int]:
        """Seat -> user id of the people who read the den: the humans among ``audience`` (the
        seats the engine let see a den event), or else the living human mafia (a dead or
        replaced player stops reading it; a substitute starts)."""
        if audience is None:
            audience = {
                s for s in self.alive if get_role(self.roles.get(s, "bystander")).team == "mafia"
            }
        return den_audience(audience, self.humans)

    def seat_of(self, user_id: int) -> int | None:
        return next((s for s, u in self.humans.items() if u == user_id), None)


def real_deadline(game: LiveGame, deadline: Any) -> int:
    """Unix time (for Discord's <t:...> stamps) at which a game-time deadline falls."""
    return int(time.time() + game.clock.real_delay_until(deadline))


class Rooms:
    def __init__(self, client: discord.Client, links: LinkStore, options: DiscordOptions) -> None:
        self.client = client
        self.links = links
        self.options = options
        #: every player's line goes out through these (`bot.discord.hooks`)
        self.hooks = Hooks(client)
        #: called with every booth opened (the relay starts reading it)
        self.on_booth: list[Callable[[Room, Booth], None]] = []
        self.rooms: dict[str, Room] = {}
        self.by_channel: dict[int, str] = {}
        #: thread id -> (game id, kind, seat)
        self.threads: dict[int, tuple[str, str, int | None]] = {}

    # --- registry -------------------------------------------------------------------------

    def get(self, game_id: str) -> Room | None:
        return self.rooms.get(game_id)

    def for_channel(self, channel_id: int) -> Room | None:
        game_id = self.by_channel.get(channel_id)
        return self.rooms.get(game_id) if game_id else None

    def register(self, room: Room) -> Room:
        self.rooms[room.game_id] = room
        if not room.ended:
            self.by_channel[room.channel_id] = room.game_id
        for booth in room.booths.values():
            self.threads[booth.thread_id] = (room.game_id, "booth", booth.seat)
        if room.graveyard_id:
            self.threads[room.graveyard_id] = (room.game_id, "graveyard", None)
        return room

    def release_channel(self, room: Room) -> None:
        """The game is over: the channel may host the next one."""
        if self.by_channel.get(room.channel_id) == room.game_id:
            del self.by_channel[room.channel_id]

    def forget(self, room: Room) -> None:
        self.release_channel(room)
        self.rooms.pop(room.game_id, None)
        for tid in [t for t, (g, _, _) in self.threads.items() if g == room.game_id]:
            del self.threads[tid]

    def sync(self, room: Room, game: LiveGame) -> None:
        """Fill in who plays which seat (and, once started, names, roles, who is alive and,
        after a resume, the choices offered so far)."""
        room.humans = {
            s.index: int(s.user_id)
            for s in game.seats
            if not s.is_agent and s.user_id is not None and s.user_id.isdigit()
        }
        room.names = {s.index: s.name for s in game.seats}
        for event in game.replayed:  # after a resume: the choices offered before it
            if isinstance(event, ChoicesOffered):
                room.offers[(event.seat, event.verb)] = event
        if game.state is not None:
            room.started = True
            room.alive = {s.index for s in game.state.seats if s.alive}
            room.roles = {s.index: s.role for s in game.state.seats}
            room.ended = room.ended or game.state.over
        if room.host_id is None and game.host_user_id and game.host_user_id.isdigit():
            room.host_id = int(game.host_user_id)
        if room.host_id is not None:
            room.contacts.add(room.host_id)
        room.synced = True

    def from_links(self, row: GameRow, links: list[Link]) -> Room:
        room = Room(
            game_id=row.id,
            guild_id=int(row.guild_id or 0),
            channel_id=int(row.channel_id or 0),
            host_id=int(row.host_user_id)
            if row.host_user_id and row.host_user_id.isdigit()
            else None,
        )
        for link in links:
            if link.kind == "lobby":
                room.lobby_message_id = int(link.external_id)
            elif link.kind == "webhook":
                room.webhook_id_hint = int(link.external_id)
            elif link.kind == "booth" and link.seat is not None:
                tid = int(link.external_id)
                room.booths[link.seat] = Booth(
                    link.seat,
                    int(link.data.get("user_id", 0)),
                    tid,
                    max(tid, int(link.data.get("seen", 0))),
                )
            elif link.kind == "den":
                room.old_den = int(link.external_id)
            elif link.kind == "graveyard":
                room.graveyard_id = int(link.external_id)
            elif link.kind == "room":
                room.contacts |= {int(u) for u in link.data.get("contacts", [])}
                room.afk = dict(link.data.get("afk", {}))
                room.graveyard = bool(link.data.get("graveyard", False))
                room.agents = int(link.data.get("agents", 0))
                room.persona = link.data.get("persona")
        return room

    # --- the stage webhook ----------------------------------------------------------------

    async def webhook(self, room: Room) -> tuple[int, str]:
        """The stage webhook's (id, token): the known one, one of ours found in the channel, or
        a new one."""
        if room.webhook is not None:
            return room.webhook
        async with room.lock:
            if room.webhook is not None:
                return room.webhook
            http = self.client.http
            app_id = str(self.client.application_id)
            found = None
            for data in await http.channel_webhooks(room.channel_id):
                if data.get("application_id") != app_id or not data.get("token"):
                    continue
                if found is None or int(data["id"]) == room.webhook_id_hint:
                    found = data
            if found is None:
                found = await http.create_webhook(
                    room.channel_id,
                    name=self.options.webhook_name,
                    reason=f"mafiabot: stage of game {room.game_id}",
                )
            token = found.get("token")
            if not token:
                raise RuntimeError("Discord returned a webhook without a token")
            room.webhook = (int(found["id"]), str(token))
            if room.webhook_id_hint not in (None, room.webhook[0]):
                await self.links.incident(
                    room.game_id,
                    room.webhook[0],
                    what="webhook recreated",
                    old=str(room.webhook_id_hint),
                )
            room.webhook_id_hint = room.webhook[0]
            await self.links.put(room.game_id, "webhook", room.webhook[0])
            return room.webhook

    def avatar(self, name: str) -> str:
        return avatar_url(name, self.options.avatar_template)

    async def speak(
        self, room: Room, name: str, text: str, *, thread_id: int | None = None
    ) -> None:
        """Post ``text`` under a character's name: the one path for every player's line, on
        the stage or (``thread_id``: a booth, for den talk) in a thread of the game channel."""
        for attempt in range(2):
            hook_id, token = await self.webhook(room)
            try:
                await self.hooks.execute(
                    hook_id,
                    token,
                    text,
                    username=name,
                    avatar_url=self.avatar(name),
                    thread_id=thread_id,
                )
                return
            except discord.NotFound as exc:
                if exc.code != 10015 or attempt:
                    raise
                log.warning("stage webhook of game %s was deleted; making a new one", room.game_id)
                if room.webhook is not None and room.webhook[0] == hook_id:
                    room.webhook = None

    # --- plain bot posts ----------------------------------------------------------------------

    def messageable(self, room: Room, channel_id: int, thread: bool) -> discord.PartialMessageable:
        kind = discord.ChannelType.private_thread if thread else discord.ChannelType.text
        return self.client.get_partial_messageable(channel_id, guild_id=room.guild_id, type=kind)

    async def post(
        self,
        room: Room,
        channel_id: int,
        text: str = "",
        *,
        thread: bool = True,
        view: discord.ui.View | None = None,
        embed: discord.Embed | None = None,
    ) -> discord.Message | None:
        target = self.messageable(room, channel_id, thread)
        pieces = chunks(text) if text else [""]
        message = None
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            kwargs: dict[str, Any] = {"allowed_mentions": NONE}
            if last and view is not None:
                kwargs["view"] = view
            if last and embed is not None:
                kwargs["embed"] = embed
            message = await target.send(piece or None, **kwargs)
        return message

    # --- threads ------------------------------------------------------------------------------

    async def _thread(self, room: Room, name: str, members: set[int]) -> int:
        data = await self.client.http.start_thread_without_message(
            room.channel_id,
            name=name,
            auto_archive_duration=ARCHIVE_AFTER,
            type=PRIVATE_THREAD,
            invitable=False,
            reason=f"mafiabot game {room.game_id}",
        )
        tid = int(data["id"])
        for uid in sorted(members):
            await self.client.http.add_user_to_thread(tid, uid)
        return tid

    async def booth(self, room: Room, seat: int, user_id: int) -> Booth:
        """The private thread of the human playing ``seat`` (made when missing)."""
        booth = room.booths.get(seat)
        if booth is not None and booth.user_id == user_id:
            return booth
        async with room.lock:
            booth = room.booths.get(seat)
            if booth is not None and booth.user_id == user_id:
                return booth
            tid = await self._thread(room, f"booth · {room.game_id}", {user_id})
            booth = Booth(seat, user_id, tid, tid)
            room.booths[seat] = booth
            self.threads[tid] = (room.game_id, "booth", seat)
            await self.links.put(room.game_id, "booth", tid, seat, {"user_id": str(user_id)})
            for hook in self.on_booth:
                hook(room, booth)
            return booth

    async def retire_den(self, room: Room) -> None:
        """Close the shared den thread an older version made for this game: say where the den
        is now, archive and lock it, forget it. Never fails the recovery it runs in."""
        if room.old_den is None:
            return
        tid, room.old_den = room.old_den, None
        try:
            await self.post(
                room,
                tid,
                "The den has moved: at night, your partners' lines now appear in your booth.",
            )
            await self.archive(tid)
        except discord.HTTPException as exc:
            log.info("could not close the old den of game %s: %s", room.game_id, exc)
        await self.links.delete(room.game_id, "den")

    async def archive(self, thread_id: int, *, lock: bool = True) -> None:
        with contextlib.suppress(discord.NotFound):
            await self.client.http.edit_channel(thread_id, archived=True, locked=lock)

    # --- the stage's permissions --------------------------------------------------------------

    async def lock_stage(self, room: Room) -> None:
        """Let only the bot post on the stage: save both overwrites, then change them."""
        http = self.client.http
        assert self.client.user is not None
        me = self.client.user.id
        raw: dict[str, Any] = dict(await http.get_channel(room.channel_id))
        current = {int(o["id"]): o for o in raw.get("permission_overwrites", [])}
        everyone, mine = current.get(room.guild_id), current.get(me)
        links = await self.links.links(room.game_id)
        if not any(link.kind == "perms" for link in links):  # never overwrite a saved original
            await self.links.put(
                room.game_id, "perms", room.channel_id, data={"everyone": everyone, "bot": mine}
            )
        allow = int(mine["allow"]) if mine else 0
        deny = int(mine["deny"]) if mine else 0
        await http.edit_channel_permissions(
            room.channel_id,
            me,
            str(allow | BOT_ALLOW),
            str(deny & ~BOT_ALLOW),
            1,
            reason="mafiabot: game running (only the bot posts on the stage)",
        )
        e_allow = int(everyone["allow"]) if everyone else 0
        e_deny = int(everyone["deny"]) if everyone else 0
        await http.edit_channel_permissions(
            room.channel_id,
            room.guild_id,
            str(e_allow & ~SEND),
            str(e_deny | SEND),
            0,
            reason="mafiabot: game running (players talk through their booths)",
        )

    async def unlock_stage(self, room: Room) -> None:
        """Put the saved overwrites back exactly as they were."""
        links = await self.links.links(room.game_id)
        saved = next((link for link in links if link.kind == "perms"), None)
        if saved is None:
            return
        http = self.client.http
        assert self.client.user is not None
        for target, kind, key in ((room.guild_id, 0, "everyone"), (self.client.user.id, 1, "bot")):
            original = saved.data.get(key)
            reason = "mafiabot: game over, permissions restored"
            if original:
                await http.edit_channel_permissions(
                    room.channel_id,
                    target,
                    str(original["allow"]),
                    str(original["deny"]),
                    kind,  # type: ignore[arg-type]
                    reason=reason,
                )
            else:
                await http.delete_channel_permissions(room.channel_id, target, reason=reason)
        await self.links.delete(room.game_id, "perms")

    # --- reports ------------------------------------------------------------------------------

    async def report(self, room: Room, key: str, text: str) -> None:
        """Tell the game's moderators (by DM) about a problem, once per kind of problem."""
        if key in room.reported:
            return
        room.reported.add(key)
        log.warning("game %s: %s", room.game_id, text)
        for uid in sorted(room.contacts):
            try:
                dm = await self.client.create_dm(discord.Object(uid))
                await dm.send(f"Mafia game {room.game_id}: {text}", allowed_mentions=NONE)
            except discord.HTTPException as exc:
                log.info("could not DM %s about game %s: %s", uid, room.game_id, exc)
