"""Booth -> service: what a human types in their booth becomes the seat's line.

Each booth has a queue handled by one worker at a time, so a person's lines reach the service
in the order they typed them. A line goes to `GameService.say` with
``platform_id="discord:<message id>"``: the service applies each platform id once, which makes any
re-delivery harmless.

Recovery. Discord does not replay messages to a fresh gateway session, so after a restart (or
a new session after an outage) every booth is read back from its history after the newest
message already handled (its *watermark*), and those lines are relayed once, in the order
they were typed across all booths. The watermark is the newest line the service stored for
that seat, or the newest refused line (saved with the booth's link); live messages that arrive
while a booth catches up wait behind the history, and anything seen twice is skipped by id.

Lines typed straight into the stage during a game are removed (they carry the account name)
and the person is pointed to their booth. (There is no den thread: a mafia's night lines are
relayed from their booth into their partners' booths.)
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import discord

from bot.discord.rooms import Booth, Room
from bot.discord.sanitize import plain
from bot.service import ServiceError
from games.errors import RuleError

if TYPE_CHECKING:
    from bot.discord.app import MafiaBot

log = logging.getLogger(__name__)


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


class RelayMetrics:
    """Booth message received -> its stage post about to be sent, for benchmarks."""

    def __init__(self) -> None:
        self._pending: dict[tuple[str, int, str], deque[float]] = defaultdict(deque)
        self.latencies: list[float] = []

    def received(self, game_id: str, seat: int, text: str, t: float) -> None:
        self._pending[(game_id, seat, text)].append(t)

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
        self.lines: deque[Line] = deque()
        self.buffer: list[Line] | None = None  # not None while catching up
        self.task: asyncio.Task[None] | None = None

    def push(self, line: Line) -> None:
        if self.buffer is not None:
            self.buffer.append(line)
            return
        self.lines.append(line)
        if self.task is None:
            self.task = asyncio.create_task(self._run(), name=f"booth:{self.thread_id}")

    async def _run(self) -> None:
        try:
            while self.lines:
                await self.relay_now(self.lines.popleft())
        finally:
            self.task = None

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
            room = self.relay.bot.rooms.get(self.game_id)
            channel = self.relay.bot.get_partial_messageable(
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
        while self.task is not None:
            await asyncio.shield(self.task)


class Relay:
    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot
        self.queues: dict[int, BoothQueue] = {}

    def booth_opened(self, room: Room, booth: Booth) -> None:
        old = [
            tid
            for tid, q in self.queues.items()
            if q.game_id == room.game_id and q.seat == booth.seat and tid != booth.thread_id
        ]
        for tid in old:
            del self.queues[tid]
        self.queues[booth.thread_id] = BoothQueue(self, room.game_id, booth)

    def forget(self, game_id: str) -> None:
        for tid in [t for t, q in self.queues.items() if q.game_id == game_id]:
            del self.queues[tid]

    async def catch_up_all(self) -> int:
        """Relay whatever was typed in the booths of running games while nobody listened."""
        queues = [
            q
            for q in self.queues.values()
            if (room := self.bot.rooms.get(q.game_id)) is not None
            and room.started
            and not room.ended
        ]
        # Every booth is read back first (live lines wait in each booth's buffer meanwhile),
        # then the missed lines are handed over one at a time, oldest first across booths
        # (message ids grow with time), so what different people typed while nobody listened
        # reaches the service in the order it was typed; then the live lines that waited.
        reads = await asyncio.gather(*(q.read_back() for q in queues), return_exceptions=True)
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
            missed = sorted(
                ((line, queue) for queue, read in taken for line in read), key=lambda p: p[0].id
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

    async def on_message(self, message: discord.Message) -> None:
        if message.author.bot or message.webhook_id is not None:
            return
        cid = message.channel.id
        queue = self.queues.get(cid)
        if queue is not None:
            queue.push(Line.of(message))
            return
        if cid in self.bot.rooms.threads:
            return  # an old booth, or the graveyard (the dead may talk there)
        room = self.bot.rooms.for_channel(cid)
        if room is not None and room.started and not room.ended:
            await self.stray(room, message, "stage")

    async def stray(self, room: Room, message: discord.Message, where: str) -> None:
        seat = room.seat_of(message.author.id)
        if seat is None:
            return  # a moderator or a spectator: not ours to police
        try:
            await message.delete()
        except discord.HTTPException as exc:
            await self.bot.rooms.report(
                room,
                f"delete:{type(exc).__name__}",
                "a player typed straight into the game channel and I could not remove it "
                "(I need Manage Messages there).",
            )
        self.bot.renderer.booth(
            room,
            seat,
            f"Lines typed in the {where} are not relayed, and they show your account name, so "
            "the Game-Manager removed it. Type here, in your booth.",
        )

    # --- one line ------------------------------------------------------------------------------

    async def handle(self, queue: BoothQueue, line: Line) -> None:
        room = self.bot.rooms.get(queue.game_id)
        if room is None:
            return
        booth = room.booths.get(queue.seat)
        if booth is None or booth.thread_id != queue.thread_id:
            return  # an old booth of a seat that changed hands
        if room.ended or not room.started:
            return
        if room.humans.get(queue.seat) != line.author_id:
            if line.author_id == queue.user_id:
                self.bot.renderer.booth(
                    room, queue.seat, "An agent plays your seat now; your lines are not relayed."
                )
            return
        text = line.text.strip()
        if not text:
            if line.has_files:
                self.note(room, queue, line, "Only text is relayed; files and stickers are not.")
            return
        metrics = self.bot.metrics
        if metrics is not None:
            metrics.received(queue.game_id, queue.seat, text, line.received)
        self.bot.afk.touch(queue.game_id, queue.seat)
        try:
            await self.bot.service.say(
                queue.game_id, queue.seat, text, platform_id=f"discord:{line.id}"
            )
        except (RuleError, ServiceError) as exc:
            if metrics is not None:
                metrics.sending(queue.game_id, queue.seat, text)  # not relayed: forget it
            self.note(room, queue, line, self.refusal(room, queue.seat, exc))
            await self.bot.links.update_data(
                queue.game_id, "booth", queue.seat, {"seen": str(line.id)}
            )

    @staticmethod
    def refusal(room: Room, seat: int, exc: Exception) -> str:
        if room.started and seat not in room.alive:
            return (
                "You have been eliminated, so your lines are no longer relayed. You can keep "
                "watching the stage."
            )
        return str(exc)

    def note(self, room: Room, queue: BoothQueue, line: Line, text: str) -> None:
        if line.recovered:
            text = (
                f"While the Game-Manager was away you wrote “{plain(line.text, 80)}”; it could "
                f"not be relayed: {text}"
            )
        self.bot.renderer.booth(room, queue.seat, text)
