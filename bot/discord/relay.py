"""Booth -> service: what a human types in their booth becomes the seat's line.

Each booth has its lane of `bot.service.lanes` (one worker at a time), so a person's lines reach the
service in the order they typed them. A line goes to `GameService.say` with the moment Discord took
it (its snowflake time) and its id (``platform_id="discord:msg:<message id>"``): the engine
judges the line against the phase of that moment (a den line typed an instant before the night
ended stays in the den), and the service applies each id once, which makes any re-delivery
harmless. What a line means (`say_call`: a line to say, a note to its writer, or nothing) is a
pure function of the room and the message.

Recovery. Discord does not replay messages to a fresh gateway session, so after a restart (or
a new session after an outage) every booth is read back from its history after the newest
message already handled (its *watermark*), and those lines are relayed once, in the order
they were typed across all booths. Once read, the service is told the games' input is back
(`GameService.input_back`): it releases the backlog at the pace it was typed, so handing a
line over waits for its place (`bot.service.outages`). The watermark is the newest line the service
stored for that seat, or the newest refused line (saved with the booth's link); live messages
that arrive while a booth catches up wait behind the history, and anything seen twice is
skipped by id.

Lines typed straight into the stage during a game are removed (they carry the account name)
and the person is pointed to their booth. (There is no den thread: a mafia's night lines are
relayed from their booth into their partners' booths.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import discord

from bot.discord.delivery import Job
from bot.discord.posts import graveyard_readers
from bot.discord.rooms import Booth, Room, Rooms
from bot.discord.sanitize import plain
from bot.errors import ServiceError
from bot.service.lanes import Lanes
from bot.service.live import LiveGame
from bot.service.port import GameService
from bot.table.booths import in_typed_order
from games.errors import RuleError

if TYPE_CHECKING:
    from bot.discord.links import LinkStore
    from bot.discord.notify import Notifier

log = logging.getLogger(__name__)

REPLACED = "An agent plays your seat now; your lines are not relayed."
FILES = "Only text is relayed; files and stickers are not."
ELIMINATED = (
    "You have been eliminated, so your lines are no longer relayed. You can keep watching the "
    "stage."
)
STRAY = (
    "Lines typed in the {where} are not relayed, and they show your account name, so the "
    "Game-Manager removed it. Type here, in your booth."
)


def message_id(mid: int) -> str:
    """The platform id of a Discord message, as the service stores it."""
    return f"discord:msg:{mid}"


def interaction_id(iid: int) -> str:
    """The platform id of a Discord interaction (a click, a menu choice)."""
    return f"discord:ix:{iid}"


def moment(snowflake: int) -> datetime:
    """When Discord took a message or an interaction: the time in its id (UTC, to the ms)."""
    return discord.utils.snowflake_time(snowflake)


@dataclass
class Line:
    id: int
    author_id: int
    text: str
    has_files: bool = False
    received: float = field(default_factory=time.perf_counter)
    recovered: bool = False

    @classmethod
    def of(cls, message: discord.Message, recovered: bool = False) -> Line:
        return cls(
            message.id,
            message.author.id,
            message.content or "",
            bool(message.attachments or message.stickers),
            recovered=recovered,
        )


@dataclass(frozen=True)
class Say:
    """A booth line for `GameService.say`."""

    game_id: str
    seat: int
    text: str
    at: datetime
    platform_id: str


def say_call(room: Room, seat: int, booth_user: int, line: Line) -> Say | str | None:
    """What a line typed in ``seat``'s booth (opened for ``booth_user``) means: a line for the
    service, a note for its writer, or nothing."""
    if room.ended or not room.started:
        return None
    if room.humans.get(seat) != line.author_id:
        return REPLACED if line.author_id == booth_user else None
    text = line.text.strip()
    if not text:
        return FILES if line.has_files else None
    return Say(room.game_id, seat, text, moment(line.id), message_id(line.id))


def refusal(room: Room, seat: int, exc: Exception) -> str:
    """The note for a line the service refused."""
    if room.started and seat not in room.alive:
        return ELIMINATED
    return str(exc)


def away_note(line: Line, text: str) -> str:
    """A note about ``line``; one read back after a restart says which line it is about."""
    if not line.recovered:
        return text
    return (
        f"While the Game-Manager was away you wrote “{plain(line.text, 80)}”; it could not be "
        f"relayed: {text}"
    )


class RelayMetrics:
    """Booth message received -> its stage post about to be sent, for benchmarks.

    ``committed`` is called for every stage line, a person's or an agent's, when the renderer takes
    it; a subclass that measures from there (`bot.ops.discord_relay.RelayTimer`) times every
    line alike, so its figures do not tell people's lines from the agent's."""

    def __init__(self) -> None:
        self._pending: dict[tuple[str, int, str], deque[float]] = defaultdict(deque)
        self.latencies: list[float] = []

    def received(self, game_id: str, seat: int, text: str, t: float) -> None:
        self._pending[(game_id, seat, text)].append(t)

    def committed(self, game_id: str, seat: int, text: str) -> None:
        """A line (anyone's) was committed and is about to be queued for posting."""

    def sending(self, game_id: str, seat: int, text: str) -> None:
        waiting = self._pending.get((game_id, seat, text))
        if waiting:
            self.latencies.append(time.perf_counter() - waiting.popleft())
            if not waiting:
                del self._pending[(game_id, seat, text)]


class BoothQueue:
    def __init__(self, relay: Relay, game_id: str, booth: Booth) -> None:
        self.relay = relay
        self.game_id = game_id
        self.seat = booth.seat
        self.thread_id = booth.thread_id
        self.user_id = booth.user_id
        self.seen = booth.seen
        self.buffer: list[Line] | None = None  # not None while catching up

    def push(self, line: Line) -> None:
        """Hand ``line`` over after the booth's earlier lines (its lane of `Relay.inbound`),
        or keep it in the buffer while the booth catches up."""
        if self.buffer is not None:
            self.buffer.append(line)
            return
        self.relay.inbound.put(self.thread_id, (self, line))

    async def relay_now(self, line: Line) -> None:
        """Hand one line over, unless a line at least as new was handled (each line once)."""
        if line.id <= self.seen:
            return
        self.seen = line.id
        try:
            await self.relay.handle(self, line)
        except Exception:
            log.exception("could not relay a line of game %s", self.game_id)

    async def read_back(self) -> list[Line] | None:
        """The booth's history after the watermark (None: already catching up). Live lines
        wait in the buffer until `release`."""
        if self.buffer is not None:
            return None
        self.buffer = []
        found: list[Line] = []
        try:
            room = self.relay.rooms.get(self.game_id)
            channel = self.relay.client.get_partial_messageable(
                self.thread_id,
                guild_id=room.guild_id if room is not None else None,
                type=discord.ChannelType.private_thread,
            )
            async for message in channel.history(
                limit=None, after=discord.Object(self.seen), oldest_first=True
            ):
                if message.author.bot or message.webhook_id is not None:
                    continue
                found.append(Line.of(message, recovered=True))
        except discord.NotFound:
            log.info("booth %s of game %s is gone", self.thread_id, self.game_id)
        except discord.HTTPException as exc:
            log.warning("could not read booth %s back: %s", self.thread_id, exc)
        except Exception as exc:  # a dropped connection, a timeout: relay what was read
            log.warning("could not read booth %s back: %r", self.thread_id, exc)
        except BaseException:  # cancelled: the live lines that waited still go through
            for line in self.release(found):
                self.push(line)
            raise
        return found

    def release(self, found: list[Line]) -> list[Line]:
        """Stop buffering: the missed lines and those that arrived meanwhile, each once, oldest
        first, for the caller to push (before it awaits anything, or live lines overtake)."""
        live, self.buffer = self.buffer or [], None
        merged = {line.id: line for line in found}
        for line in live:
            merged.setdefault(line.id, line)
        return sorted(merged.values(), key=lambda x: x.id)

    async def idle(self) -> None:
        """Return once the lines pushed so far are handed over."""
        await self.relay.inbound.drain(self.thread_id)


class Relay:
    def __init__(
        self,
        client: discord.Client,
        rooms: Rooms,
        service: GameService,
        links: LinkStore,
        notifier: Notifier,
        metrics: RelayMetrics | None = None,
    ) -> None:
        self.client = client
        self.rooms = rooms
        self.service = service
        self.links = links
        self.notify = notifier
        self.metrics = metrics
        self.queues: dict[int, BoothQueue] = {}
        #: each booth's lines, one after another in the order they came (a lane per thread)
        self.inbound: Lanes[int, tuple[BoothQueue, Line]] = Lanes(_hand_over, name="booth")

    def booth_opened(self, room: Room, booth: Booth) -> None:
        old = [
            tid
            for tid, q in self.queues.items()
            if q.game_id == room.game_id and q.seat == booth.seat and tid != booth.thread_id
        ]
        for tid in old:
            del self.queues[tid]
        self.queues[booth.thread_id] = BoothQueue(self, room.game_id, booth)

    async def idle(self) -> None:
        """Return once every line pushed so far (and meanwhile) is handed over."""
        await self.inbound.drain()

    def forget(self, game_id: str) -> None:
        for tid in [t for t, q in self.queues.items() if q.game_id == game_id]:
            del self.queues[tid]

    async def catch_up_all(self, game_id: str | None = None) -> int:
        """Relay whatever was typed in the booths of running games (of ``game_id`` only, when
        given: a game taken over from another process) while nobody listened."""
        queues = [
            q
            for q in self.queues.values()
            if (room := self.rooms.get(q.game_id)) is not None
            and room.started
            and not room.ended
            and game_id in (None, q.game_id)
        ]
        # Every booth is read back first (live lines wait in each booth's buffer meanwhile),
        # then the missed lines are handed over one at a time, oldest first across booths
        # (message ids grow with time), so what different people typed while nobody listened
        # reaches the service in the order it was typed; then the live lines that waited.
        reads = await asyncio.gather(*(q.read_back() for q in queues), return_exceptions=True)
        # the input of these games is back: the service releases what was typed meanwhile
        # at the pace it was typed, the agents answering inside it (bot.service.outages)
        first: dict[str, datetime] = {}
        for queue, read in zip(queues, reads, strict=True):
            if isinstance(read, list) and read:
                at = moment(read[0].id)
                first[queue.game_id] = min(at, first.get(queue.game_id, at))
        await self.service.input_back(
            [
                gid
                for gid, room in list(self.rooms.rooms.items())
                if room.started and not room.ended and game_id in (None, gid)
            ],
            first,
        )
        taken: list[tuple[BoothQueue, list[Line]]] = []
        for queue, read in zip(queues, reads, strict=True):
            if read is None:
                continue  # that booth was already catching up
            if isinstance(read, BaseException):
                log.error("could not read booth %s back", queue.thread_id, exc_info=read)
                read = []
            taken.append((queue, read))
        try:
            for queue, _ in taken:
                await queue.idle()  # lines on their way before the read began go first
            missed = in_typed_order(
                ([(line, queue) for line in read] for queue, read in taken),
                key=lambda p: p[0].id,
            )
            for line, queue in missed:
                await queue.relay_now(line)
        finally:
            # the live lines that waited (and, if this was interrupted, the missed lines not
            # handed over yet: those already handled are skipped by id)
            for queue, read in taken:
                for line in queue.release(read):
                    queue.push(line)
        return sum(len(read) for _, read in taken)

    # --- gateway -------------------------------------------------------------------------------

    def on_raw_message(self, data: Mapping[str, Any]) -> bool:
        """A gateway MESSAGE_CREATE straight from its payload: a line typed in a booth goes to
        its booth's lane here, and True says so (nothing else reads a booth's messages, so
        discord.py need not build a `discord.Message`, its author and an event task for it:
        at 1,000 games that was a fair share of the event loop's time). False: anything else,
        for `on_message`."""
        queue = self.queues.get(int(data["channel_id"]))
        if queue is None:
            return False
        author = data.get("author") or {}
        if author.get("bot") or data.get("webhook_id") is not None:
            return True  # (as `on_message`: never relayed)
        files = bool(data.get("attachments") or data.get("sticker_items"))
        queue.push(Line(int(data["id"]), int(author["id"]), data.get("content") or "", files))
        return True

    async def on_message(self, message: discord.Message) -> None:
        if message.author.bot or message.webhook_id is not None:
            return
        cid = message.channel.id
        queue = self.queues.get(cid)
        if queue is not None:
            queue.push(Line.of(message))
            return
        if cid in self.rooms.threads:
            return  # an old booth, or the graveyard (the dead may talk there)
        room = self.rooms.for_channel(cid)
        if room is not None and room.started and not room.ended:
            await self.stray(room, message, "stage")

    async def stray(self, room: Room, message: discord.Message, where: str) -> None:
        seat = room.seat_of(message.author.id)
        if seat is None:
            return  # a moderator or a spectator: not ours to police
        try:
            await message.delete()
        except discord.HTTPException as exc:
            await self.rooms.report(
                room,
                f"delete:{type(exc).__name__}",
                "a player typed straight into the game channel and I could not remove it "
                "(I need Manage Messages there).",
            )
        self.notify.booth(room, seat, STRAY.format(where=where))

    # --- one line ------------------------------------------------------------------------------

    async def handle(self, queue: BoothQueue, line: Line) -> None:
        room = self.rooms.get(queue.game_id)
        if room is None:
            return
        booth = room.booths.get(queue.seat)
        if booth is None or booth.thread_id != queue.thread_id:
            return  # an old booth of a seat that changed hands
        call = say_call(room, queue.seat, queue.user_id, line)
        if call is None:
            return
        if isinstance(call, str):
            self.notify.booth(room, queue.seat, away_note(line, call))
            return
        if room.graveyard and queue.seat not in room.alive:
            with contextlib.suppress(RuleError, ServiceError):  # (the game has just ended)
                await self.service.graveyard_say(call.game_id, queue.seat, call.text)
            return
        metrics = self.metrics
        if metrics is not None:
            metrics.received(call.game_id, call.seat, call.text, line.received)
        try:
            await self.service.say(
                call.game_id, call.seat, call.text, at=call.at, platform_id=call.platform_id
            )
        except (RuleError, ServiceError) as exc:
            if metrics is not None:
                metrics.sending(call.game_id, call.seat, call.text)  # not relayed: forget it
            self.notify.booth(room, queue.seat, away_note(line, refusal(room, queue.seat, exc)))
            await self.links.update_data(queue.game_id, "booth", queue.seat, {"seen": str(line.id)})

    async def graveyard_line(self, game: LiveGame, seat: int, text: str) -> None:
        """A graveyard line (`bot.service.graveyard`: a dead person's or a dead agent's, alike) when
        the game has its graveyard on."""
        room = self.rooms.get(game.id)
        if room is not None and room.graveyard and not room.ended:
            self.graveyard(room, seat, text)

    def graveyard(self, room: Room, seat: int, text: str) -> None:
        """A dead seat's line: to the other dead people's booths, under the character's name,
        through the same webhook as every line (never to the living)."""
        name = room.names.get(seat, "?")
        for reader in graveyard_readers(room):
            if reader == seat:
                continue

            async def send(_: str, reader: int = reader) -> None:
                uid = room.humans.get(reader)
                booth = await self.notify.den_booth(room, reader, uid) if uid else None
                if booth is not None:
                    await self.rooms.speak(room, name, plain(text, 1900), thread_id=booth.thread_id)

            self.notify.put(room, "booth", Job(send=send, lane=seat), reader)


async def _hand_over(item: tuple[BoothQueue, Line]) -> None:
    queue, line = item
    await queue.relay_now(line)
