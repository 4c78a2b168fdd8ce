"""The live game: what the service holds in memory while a game runs, and the seat port an
agent plays through.

`LiveGame` is what every listener is handed with each batch of events (the renderers read its
seats, channel and state); `SeatInfo` is one seat of it. `SeatPortImpl` is the
`agent.base.SeatPort` of one seat: an agent calls exactly what a human's adapter calls, through
the `SeatActions` it is given (the service), so nothing marks its actions apart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from agent.base import Player
from bot.errors import ServiceError
from bot.service.clock import GameClock
from bot.service.timers import Backoff, SchedulerTimers, TimerHandle
from games.config import GameConfig
from games.events import Event
from games.names import CHARACTER_NAMES, pick_names, resolve_name
from games.state import GameState

log = logging.getLogger("bot.service.port")  # (the service's log: a game's deadline)
#: `LiveGame.holding` of a game with people in it
_NOTHING: contextlib.nullcontext[None] = contextlib.nullcontext()


@dataclass
class SeatInfo:
    index: int
    name: str
    user_id: str | None
    is_agent: bool
    agent_kind: str | None = None
    persona: str | None = None


class Outbox(Protocol):
    """Ordered delivery to one subscriber (the service's outbox): a renderer, or an agent
    seat (the events it may see)."""

    def put(self, item: Any) -> None: ...

    async def drain(self) -> None: ...

    async def close(self) -> None: ...


@dataclass
class LiveGame:
    """A game held in memory while it runs. ``state`` is None in the lobby."""

    id: str
    config: GameConfig
    seed: int
    status: str
    clock: GameClock
    timers: SchedulerTimers
    seats: list[SeatInfo] = field(default_factory=list)
    state: GameState | None = None
    server_id: int | None = None
    channel_id: str | None = None
    host_user_id: str | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    action_seq: int = 0
    event_seq: int = 0
    #: the latest stamp (or applied time) so far: a vote is stamped no earlier while that is
    #: before the deadline (`bot.service.moments.after_applied`)
    last_t: datetime | None = None
    #: each seat's latest stamp per channel, (seat, "line" | "click") -> stamp: a seat's lines
    #: are never stamped before its previous line, nor its clicks before its previous click
    seat_t: dict[tuple[int, str], datetime] = field(default_factory=dict)
    #: the platform ids already applied (``platform_id``; the ``actions.client_id`` column)
    client_ids: set[str] = field(default_factory=set)
    deadline_handle: TimerHandle | None = None
    armed_phase: int | None = None
    #: a deadline tick is being written now (if it fails it arms its own retry)
    ticking: bool = False
    #: the deadline write failing now: attempts so far, since when (monotonic), reported yet
    tick_failures: int = 0
    failing_since: float | None = None
    alerted: bool = False
    players: dict[int, Player] = field(default_factory=dict)
    outboxes: dict[int, Outbox] = field(default_factory=dict)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    #: after a resume: every event of the game up to the interruption, rebuilt by replaying
    #: its action log (what a renderer shows a person who comes back to the game)
    replayed: tuple[Event, ...] = ()
    #: the last change to the lobby (monotonic): an idle lobby closes (`bot.service.lobbies`)
    active_at: float = field(default_factory=time.monotonic)

    def agents_only(self) -> bool:
        """Nobody but agents at the table (`simulate`): the game's clock waits for its agents
        (`GameClock.hold`). A game with a person in it keeps to its clock."""
        return bool(self.seats) and all(s.is_agent for s in self.seats)

    def agent_timers(self) -> SchedulerTimers:
        """The timers an agent seat acts on: in a game of agents only, an action holds the
        game's time while it is carried out."""
        return SchedulerTimers(self.timers.scheduler, self.clock, holding=self.agents_only)

    def holding(self) -> contextlib.AbstractContextManager[None]:
        """In a game of agents only, the game's time stands still meanwhile (an action being
        stored, until its events are handed to the agents). (Nothing to make for a game with
        people in it: every line of theirs comes through here.)"""
        if not self.agents_only():
            return _NOTHING
        return self._held()

    @contextlib.contextmanager
    def _held(self) -> Iterator[None]:
        release = self.clock.hold()
        try:
            yield
        finally:
            release()

    def tell(self, seat: int, events: Sequence[Event]) -> None:
        """Hand an agent seat events (its outbox delivers them to its player with `told`). In a
        game of agents only the game's time stands still until they are told."""
        release = self.clock.hold() if self.agents_only() else None
        self.outboxes[seat].put((events, release))

    def seat_names(self) -> dict[int, str]:
        return {s.index: s.name for s in self.seats}

    def seat_of_user(self, user_id: str) -> SeatInfo | None:
        return next((s for s in self.seats if s.user_id == user_id), None)

    def start_order(self) -> list[int]:
        """The table the game starts with: ``order[i]`` is the lobby seat that takes seat
        ``i``. The seed seats everyone (`seating`); a fixed deal is role by seat as joined
        (the caller fixed the table: replays keep the recorded seat order)."""
        if self.config.deal:
            return list(range(len(self.seats)))
        return seating(self.seed, len(self.seats))

    def begin(self, seated: list[SeatInfo], state: GameState, t: datetime) -> None:
        """The game started at ``t`` with the lobby's seats in the order ``seated``."""
        # Nothing is keyed by a lobby index yet (agents are attached just after; speech ids
        # are not per seat), so renumbering the same SeatInfo objects is all it takes.
        assert not self.players and not self.outboxes
        for index, info in enumerate(seated):
            info.index = index
        self.seats = seated
        self.last_t = t
        self.state = state
        self.status = "running"

    def new_seat(
        self,
        user_id: str | None,
        is_agent: bool,
        agent_kind: str | None,
        persona: str | None,
        name: str | None,
    ) -> SeatInfo:
        """The lobby's next seat (not taken yet: the caller appends it once it is stored). A
        character name is drawn from the seed, unless ``name`` fixes it."""
        if len(self.seats) >= len(CHARACTER_NAMES):
            raise ServiceError("This game is full.")
        taken = [s.name for s in self.seats]
        if name is None:
            rng = random.Random(f"{self.seed}:name:{len(self.seats)}")
            name = pick_names(1, rng, exclude=taken)[0]
        elif name.casefold() in (t.casefold() for t in taken):
            raise ServiceError(f"The name {name} is taken in this game.")
        return SeatInfo(len(self.seats), name, user_id, is_agent, agent_kind, persona)

    def remove_seat(self, user_id: str | None, seat: int | None) -> None:
        """Take a lobby seat away, by its person (``user_id``) or else its number; the seats
        after it move up (the indices stay dense)."""
        found = (
            self.seat_of_user(user_id)
            if user_id is not None
            else next((s for s in self.seats if s.index == seat), None)
        )
        if found is None:
            raise ServiceError("You are not in this game.")
        self.seats.remove(found)
        for i, s in enumerate(self.seats):  # keep indices dense
            s.index = i

    def seat_to_hand_over(self, seat: int, user_id: str | None) -> SeatInfo:
        """The running seat ``seat``, to be handed to ``user_id`` (or an agent: None)."""
        if self.state is not None and self.state.over:
            raise ServiceError("The game is over.")
        info = next((s for s in self.seats if s.index == seat), None)
        if info is None:
            raise ServiceError("There is no such seat.")
        if user_id is not None and self.seat_of_user(user_id) is not None:
            raise ServiceError("That person already has a seat in this game.")
        return info

    def deadline_armed(self) -> bool:
        """The current phase's deadline will fire: a pending timer, or a tick being written."""
        handle = self.deadline_handle
        return (
            self.state is not None
            and self.armed_phase == self.state.phase.seq
            and (self.ticking or (handle is not None and handle.pending))
        )

    def disarm(self) -> None:
        if self.deadline_handle is not None:
            self.deadline_handle.cancel()
        self.deadline_handle = None
        self.armed_phase = None

    def tick_failed(self, backoff: Backoff) -> tuple[float, float]:
        """The deadline's close could not be stored: how long to wait before the next attempt,
        and for how long (real seconds) it has been failing."""
        now = time.monotonic()
        if self.failing_since is None:
            self.failing_since = now
        delay = backoff.delay(self.tick_failures)
        self.tick_failures += 1
        return delay, now - self.failing_since

    def tick_stored(self) -> None:
        """The deadline's close was stored: a run of failures to store it is over."""
        if self.alerted:
            log.warning(
                "game %s: the database accepts writes again after %d failed attempt(s)",
                self.id, self.tick_failures,
            )  # fmt: skip
        self.tick_failures = 0
        self.failing_since = None
        self.alerted = False


class DecisionFlusher(Protocol):
    async def flush(self) -> None: ...


class GameListener(Protocol):
    """A renderer: gets every event of every game, in order, after it is committed."""

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None: ...


class SeatActions(Protocol):
    """What a seat's port calls: the service's play methods, and the gate an agent waits at
    while its game's platform input is down (`bot.service.outages`)."""

    async def agent_gate(self, game_id: str, line: bool = False) -> None: ...

    async def say(self, game_id: str, seat: int, text: str) -> bool: ...

    async def vote(
        self, game_id: str, seat: int, target: str | None, *, at: datetime | None = None
    ) -> bool: ...

    async def night_act(
        self, game_id: str, seat: int, target: str, *, at: datetime | None = None
    ) -> bool: ...


class SeatPortImpl:
    """The :class:`agent.base.SeatPort` of one seat: exactly what a human's adapter calls."""

    def __init__(self, service: SeatActions, game_id: str, seat: int, clock: GameClock) -> None:
        self._service = service
        self._game_id = game_id
        self._seat = seat
        #: the game's clock: a ``made`` moment (game time) is passed on as a wall-clock one
        self._clock = clock

    @property
    def seat(self) -> int:
        return self._seat

    async def say(self, text: str) -> None:
        await self._service.agent_gate(self._game_id, line=True)
        await self._service.say(self._game_id, self._seat, text)

    async def vote(self, target: str | None, *, made: datetime | None = None) -> None:
        await self._service.agent_gate(self._game_id)
        await self._service.vote(self._game_id, self._seat, target, at=self._wall(made))

    async def night_act(self, target: str, *, made: datetime | None = None) -> None:
        await self._service.agent_gate(self._game_id)
        await self._service.night_act(self._game_id, self._seat, target, at=self._wall(made))

    def _wall(self, made: datetime | None) -> datetime | None:
        return None if made is None else self._clock.to_wall(made)


async def told(player: Player, item: tuple[Sequence[Event], Callable[[], None] | None]) -> None:
    """Deliver to ``player`` what `LiveGame.tell` put in its outbox, then let the game's time
    go on."""
    events, release = item
    try:
        for event in events:
            await player.on_event(event)
    finally:
        if release is not None:
            release()


AgentFactory = Callable[[LiveGame, SeatInfo, SeatPortImpl, GameClock, SchedulerTimers], Player]


def target_seat(state: GameState, seat: int, name: str, offered: Callable[[int], list[int]]) -> int:
    """The seat a character name names, among those the engine offers ``seat`` (``offered``:
    `GameState.vote_targets` or `GameState.night_targets`; outside its phase, the living
    others). Every name resolves, the seat's own too, so a refusal can be clear."""
    seats = offered(seat) or [i for i in state.alive() if i != seat]
    choices = [state.seats[i].name for i in seats]
    return resolve_name(name, {s.index: s.name for s in state.seats}, choices)


def seating(seed: int, players: int) -> list[int]:
    """The table a game starts with: ``order[i]`` is the lobby seat (in joining order) that
    takes seat ``i``. Seat order is the order the start announcement, the menus and the
    transcripts list everyone in, so it must not show who joined when (adapters seat the
    humans first and the agents last, the host usually first). Drawn from the game's seed:
    the same seed always gives the same table."""
    order = list(range(players))
    random.Random(f"{seed}:seating").shuffle(order)
    return order


def new_game_id() -> str:
    alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
    return "g" + "".join(secrets.choice(alphabet) for _ in range(7))
