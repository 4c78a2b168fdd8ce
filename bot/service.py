"""The one service port every adapter calls: create, join, start, say, vote, act at night, end.

Flow is one way: an adapter calls the service; the service applies the action to the pure
engine, persists the action and everything it caused in one transaction, then hands the
events to listeners (renderers) and to agent seats (only what each seat may see).

Crash safety: the ``actions`` table is the game's authoritative log. Nothing is shown to anyone
before it is committed, and on start-up :meth:`GameService.resume_all` replays each running
game's log through the engine (which is deterministic), re-arms the phase deadline with the
time that is left, and re-attaches the agents. Every player action may carry the platform's
moment (``at``: it is judged against the phase current then) and id (``platform_id``: applied
once, also across restarts).

Faults: a write the database refuses changes nothing in memory either (the state is replaced
only after its transaction committed) and reaches the caller as `StoreUnavailable`, one line
to show the player. A deadline tick that fails is retried with backoff until it is stored; a
game is never left waiting on a timer that is not armed, and a failure that lasts is reported
once to the alert sinks (the host's DM on Discord and Slack, stderr in the terminal).

Ownership: one process drives a game at a time (`bot.lease`): the service takes a game's lease
when it creates or resumes it, renews it while it holds it, and every transaction that writes
a held game's rows is fenced with the lease's epoch, so a process that lost a game cannot
write to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any, Protocol, TypeVar

import sqlalchemy as sa
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from sqlmodel import Session, col, select

from agent.base import Player
from bot import lease
from bot.clock import GameClock, utcnow
from bot.consent import consent_check
from bot.errors import ServiceError as ServiceError  # (re-exported for older imports)
from bot.limits import CommandLimiter, Cooldowns, LineLimited, LineLimiter
from bot.outages import RELEASE_SECONDS, Outages, down_since_restart
from bot.store import models as m
from bot.store import rows
from bot.store.writer import GroupWriter
from bot.timers import Backoff, SchedulerTimers, TimerHandle
from games import actions as A
from games.actions import Action, action_from_dict, action_kind, action_to_dict
from games.config import GameConfig
from games.engine import apply, new_game
from games.errors import ConfigError, RuleError
from games.events import (
    Event,
    GameOver,
    MessageAccepted,
    PhaseEnded,
    PhaseStarted,
    PlayerEliminated,
    VoteCast,
    event_from_dict,
    event_to_dict,
    visible,
)
from games.names import CHARACTER_NAMES, pick_names, resolve_name
from games.narration import MANAGER, manager_line
from games.state import GameState

log = logging.getLogger(__name__)
#: problems someone must act on, one line each (the CLI prints this logger on stderr)
alert_log = logging.getLogger("bot.service.alerts")
T = TypeVar("T")


class StoreUnavailable(ServiceError):
    """The database refused a read or a write; nothing was changed (in memory either)."""

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"The game could not be saved just now ({reason}); nothing changed. "
            "Try again in a moment."
        )
        self.reason = reason


class GameHeld(ServiceError):
    """Another live process drives this game (see `bot.lease`)."""

    def __init__(self, held: lease.HeldBy) -> None:
        super().__init__(
            f"Game {held.game_id} is being run by another mafiabot process "
            f"({held.describe()}); stop that one first."
        )
        self.held = held


class GameMoved(ServiceError):
    """This process lost the game's lease to another one: it may no longer write to it."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"Game {game_id} is now run by another mafiabot process.")
        self.game_id = game_id


def db_reason(exc: BaseException) -> str:
    """The database's own words for a failure, one short line (no statement, no parameters)."""
    if isinstance(exc, StoreUnavailable):
        return exc.reason
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip().splitlines()
    return (text[0] if text else type(orig).__name__)[:160]


_FENCE, _FENCED = "mafiabot.service", "mafiabot.fenced"
_GAMES, _SEATS, _PHASES = m.Game.__table__, m.Seat.__table__, m.Phase.__table__  # type: ignore[attr-defined]
_ACTIONS, _EVENTS = m.Action.__table__, m.Event.__table__  # type: ignore[attr-defined]
_MESSAGES, _VOTES = m.Message.__table__, m.Vote.__table__  # type: ignore[attr-defined]


@sa.event.listens_for(Session, "before_flush")
def _fence_flush(session: Session, _context: Any, _instances: Any) -> None:
    """Every flush of a service transaction checks the leases of the games it writes."""
    service = session.info.get(_FENCE)
    if service is not None:
        service._fence(session)


@dataclass
class SeatInfo:
    index: int
    name: str
    user_id: str | None
    is_agent: bool
    agent_kind: str | None = None
    persona: str | None = None


class DecisionFlusher(Protocol):
    async def flush(self) -> None: ...


class GameListener(Protocol):
    """A renderer: gets every event of every game, in order, after it is committed."""

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None: ...


class AlertSink(Protocol):
    """Where a problem a person must act on goes (the game's host): called once per problem,
    with one line of text (without the game's id: ``game`` says which)."""

    async def on_alert(self, game: LiveGame, message: str) -> None: ...


class SeatPortImpl:
    """The :class:`agent.base.SeatPort` of one seat: exactly what a human's adapter calls."""

    def __init__(self, service: GameService, game_id: str, seat: int) -> None:
        self._service = service
        self._game_id = game_id
        self._seat = seat

    @property
    def seat(self) -> int:
        return self._seat

    async def say(self, text: str) -> None:
        await self._service.agent_gate(self._game_id)
        await self._service.say(self._game_id, self._seat, text)

    async def vote(self, target: str | None) -> None:
        await self._service.agent_gate(self._game_id)
        await self._service.vote(self._game_id, self._seat, target)

    async def night_act(self, target: str) -> None:
        await self._service.agent_gate(self._game_id)
        await self._service.night_act(self._game_id, self._seat, target)


AgentFactory = Callable[["LiveGame", SeatInfo, SeatPortImpl, GameClock, SchedulerTimers], Player]


class _Outbox:
    """Ordered, asynchronous delivery to one subscriber, so a slow or re-entrant subscriber
    (an agent that speaks while being told something) never reorders or blocks the game."""

    def __init__(self, deliver: Callable[[Any], Awaitable[None]], name: str) -> None:
        self._deliver = deliver
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._task = asyncio.create_task(self._run(), name=f"outbox:{name}")

    def put(self, item: Any) -> None:
        self._queue.put_nowait(item)

    async def _run(self) -> None:
        while True:
            batch = await self._queue.get()
            try:
                if batch is None:
                    return
                await self._deliver(batch)
            except Exception:
                log.exception("event delivery failed")
            finally:
                self._queue.task_done()

    async def drain(self) -> None:
        await self._queue.join()

    async def close(self) -> None:
        self._queue.put_nowait(None)
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


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
    #: before the deadline (`_after_applied`)
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
    outboxes: dict[int, _Outbox] = field(default_factory=dict)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    #: after a resume: every event of the game up to the interruption, rebuilt by replaying
    #: its action log (what a renderer shows a person who comes back to the game)
    replayed: tuple[Event, ...] = ()
    #: the last change to the lobby (monotonic): an idle lobby closes (`bot.lobbies`)
    active_at: float = field(default_factory=time.monotonic)

    def seat_names(self) -> dict[int, str]:
        return {s.index: s.name for s in self.seats}

    def seat_of_user(self, user_id: str) -> SeatInfo | None:
        return next((s for s in self.seats if s.user_id == user_id), None)


def seating(seed: int, players: int) -> list[int]:
    """The table a game starts with: ``order[i]`` is the lobby seat (in joining order) that
    takes seat ``i``. Seat order is the order the start announcement, the menus and the
    transcripts list everyone in, so it must not show who joined when (adapters seat the
    humans first and the agents last, the host usually first). Drawn from the game's seed:
    the same seed always gives the same table."""
    order = list(range(players))
    random.Random(f"{seed}:seating").shuffle(order)
    return order


#: How long a phase stays open after its deadline, in real seconds: votes made before the
#: deadline that are still on their way (a Discord interaction, a Slack request, a line read
#: from the terminal) are applied first, and the close is stamped at the deadline. Also how
#: long before the current phase was applied a platform's moment is still believed.
DEADLINE_GRACE_SECONDS = 1.5
#: ... at most this share of the game's shortest phase (accelerated clocks, short phases)
DEADLINE_GRACE_SHARE = 0.1


def grace(game: LiveGame) -> timedelta:
    """The grace of :data:`DEADLINE_GRACE_SECONDS` in game time. None in a game of agents
    only: they act in-process, nothing of theirs is ever on its way."""
    if all(s.is_agent for s in game.seats):
        return timedelta(0)
    c = game.config
    shortest = min(c.day_seconds, c.vote_seconds, c.night_seconds, c.night_vote_seconds)
    seconds = min(DEADLINE_GRACE_SECONDS * game.clock.speed, shortest * DEADLINE_GRACE_SHARE)
    return timedelta(seconds=seconds)


#: the smallest step between two stamps
_INSTANT = timedelta(microseconds=1)


def action_moment(
    game: LiveGame,
    state: GameState,
    received: datetime,
    at: datetime | None,
    source: tuple[int, str] | None,
    seen: int | None = None,
) -> datetime:
    """The game-time stamp of an action the service received at ``received`` (game time,
    read before waiting for the game's lock, when the phase numbered ``seen`` was current).

    The moment is ``at`` (the platform's wall-clock moment, in game time), or ``received``
    without one (an agent, in-process: the moment it called), trusted within bounds: never in
    the future, never more than :func:`grace` before the current phase was applied (one made
    before the phase before began is left to the engine, which refuses it), never before the
    same seat's previous action on the same channel (``source``: (seat, "line") or (seat,
    "click")) unless that would carry it over a phase change. A platform delivers a
    person's lines in the order they were typed, and their clicks in the order they were
    made, but a click can overtake a line typed just before it: that line keeps its earlier
    moment. The engine then judges the action against the phase current at that moment: an
    agent's action made while the phase change was being stored (it still saw the phase
    before) is stamped just before that change, and so belongs to the phase before."""
    if at is not None and at.tzinfo is None:
        raise ValueError("at must be timezone-aware")
    made = received if at is None else min(received, game.clock.from_wall(at))
    prior = state.prior
    if at is None and prior is not None:  # an agent acted in the phase it saw
        if seen == prior.phase.seq and made >= prior.until:
            made = prior.until - _INSTANT
        elif seen == state.phase.seq and made < prior.until:
            made = prior.until
    if prior is None:
        made = max(made, state.phase.started_at)
    elif made >= prior.phase.started_at:
        made = max(made, state.opened_at() - grace(game))
        if at is not None and made == prior.until and prior.phase.kind.is_night:
            # a platform's moment (to the millisecond) in the very instant of the dawn: which
            # came first is unknowable, and a night line must never reach the stage
            made -= _INSTANT
    # else: made before the phase before began: which phase that was is not known any more,
    # and the engine refuses it (a line, with a note to its writer) rather than misplace it
    previous = game.seat_t.get(source) if source is not None else None
    if previous is None or made >= previous:
        return made
    if prior is not None and made <= prior.until < previous:
        return made  # never lifted across a phase change: a night line stays a night line
    return previous


def _after_applied(action: A.Vote | A.NightAct, state: GameState, last: datetime | None) -> Action:
    """A vote made in the current phase is stamped no earlier than what is already applied,
    while that stays before the deadline: a phase its vote completes then never starts before
    a line already placed in it (the shift is the time the vote was on its way)."""
    deadline = state.phase.deadline
    t = action.t
    if last is None or t >= last or t <= state.opened_at():  # (the engine judges those)
        return action
    if deadline is not None and last >= deadline:
        return action
    return dataclasses.replace(action, t=last)


def _applied_now(action: A.Vote | A.NightAct | A.Tick, now: datetime) -> Action:
    """Note on an action that can end the phase when it is applied, if later than its stamp.
    A phase is current, for what people type, until its end has been applied: a line typed
    while the last vote was on its way (or the deadline's close was pending) was typed in
    that phase, and is placed there (`games.state.PriorPhase.until`)."""
    applied = max(now, action.t, action.applied or action.t)
    return action if applied == action.t else dataclasses.replace(action, applied=applied)


def _latest_moment(last_event: datetime | None, actions: Sequence[m.Action]) -> datetime | None:
    """The last recorded moment of a game: its last event, or later when the last close or
    vote was applied after its stamp (a resumed clock must not start before that, or the
    first vote after the restart would be judged to precede the phase it is in)."""
    latest = last_event
    for row in actions[-3:]:  # (the last few: only a phase change carries 'applied')
        raw = row.payload.get("applied")
        if raw:
            applied = datetime.fromisoformat(raw)
            latest = applied if latest is None or applied > latest else latest
    return latest


def _note_applied(game: LiveGame, action: Action, platform_id: str | None) -> None:
    """Remember what bounds the next stamps, and the platform id (see :func:`action_moment`)."""
    t = action.t
    applied = action.applied if isinstance(action, A.Vote | A.NightAct | A.Tick) else None
    latest = t if applied is None or applied < t else applied
    if game.last_t is None or latest > game.last_t:
        game.last_t = latest
    seat = getattr(action, "seat", None)
    if seat is not None:
        source = (seat, "line" if isinstance(action, A.Say) else "click")
        previous = game.seat_t.get(source)
        if previous is None or t > previous:
            game.seat_t[source] = t
    if platform_id:
        game.client_ids.add(platform_id)


def new_game_id() -> str:
    alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
    return "g" + "".join(secrets.choice(alphabet) for _ in range(7))


class GameService:
    def __init__(
        self,
        engine: sa.Engine,
        scheduler: AsyncIOScheduler,
        agent_factory: AgentFactory | None = None,
        *,
        lease_seconds: float = lease.LEASE_SECONDS,
        alert_after: float = 10.0,
        tick_backoff: Backoff | None = None,
        outage_release_seconds: float = RELEASE_SECONDS,
    ) -> None:
        self.engine = engine
        #: games whose platform input is down, and the release of their backlog (bot.outages)
        self.outages = Outages(outage_release_seconds)
        #: game id -> when its previous holder's lease ran out, as taken (bot.outages)
        self._previous_expiry: dict[str, datetime] = {}
        #: this service as a lease holder, and the games it holds (id -> fencing epoch)
        self.holder = lease.Holder.this_process()
        self.lease_seconds = lease_seconds
        self._leases: dict[str, int] = {}
        #: told the id of each game another process took over from this one
        self.on_moved: list[Callable[[str], None]] = []
        self._keeper: asyncio.Task[None] | None = None
        #: a deadline write failing for this many real seconds is reported to the alert sinks
        self.alert_after = alert_after
        self.tick_backoff = tick_backoff or Backoff()
        self._alert_sinks: list[AlertSink] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self.scheduler = scheduler
        self.agent_factory = agent_factory
        self.games: dict[str, LiveGame] = {}
        self._listeners: list[_Outbox] = []
        #: where agents record their LLM decisions (set by the runtime; flushed at game end)
        self.decision_log: DecisionFlusher | None = None
        #: the LLM agent factory, when one is configured (simulate waits for its learning)
        self.llm_factory: Any = None
        # One writer thread, group commit: keeps the event loop free and SQLite single-writer,
        # calls in order; the calls that arrive together share one transaction.
        self._db = GroupWriter(engine)
        #: told how long each database call took, waiting included (metrics; bot.ops)
        self.on_db_call: Callable[[float], None] | None = None
        #: set when the process is shutting down: no new games (bot.ops.serve)
        self.closing = False
        #: every seat's lines, human or agent, pass this rate limit (`bot.limits`)
        self.lines = LineLimiter()
        #: a host's pause between two lobbies (0 here; the runtime sets `bot.limits`' figure)
        self.lobby_cooldown = Cooldowns(0.0)
        #: each person's commands, on every platform (none here; the runtime sets the figures)
        self.commands = CommandLimiter(burst=0)

    # --- plumbing -----------------------------------------------------------------------------

    def _refuse_while_closing(self, then: str) -> None:
        """While the process shuts down (`bot.ops.serve`) no game opens, fills or starts: the
        games already running carry on at the next start, and a lobby is there again then."""
        if self.closing:
            raise ServiceError(f"The bot is restarting; {then} in a minute.")

    async def _run_db(self, fn: Callable[[Session], T]) -> T:
        """Run ``fn`` in a transaction on the database thread, shared with the calls that
        arrive at the same moment (group commit, `bot.store.writer`); return once it committed.
        Writes to the games this service holds are fenced (`_fence`). A dropped connection is
        retried once; what the database refuses becomes `StoreUnavailable` (nothing of this
        call was committed)."""

        def call(session: Session) -> T:
            session.info[_FENCE] = self
            session.info[rows.WRITING] = self._fence_games
            return fn(session)

        asked = time.perf_counter()
        try:
            # (a dropped connection is retried by the writer)
            return await self._db.run(call)
        except sa.exc.DBAPIError as exc:
            if isinstance(exc, sa.exc.IntegrityError):
                raise
            raise StoreUnavailable(db_reason(exc)) from exc
        except GameMoved as moved:
            self._moved(moved.game_id)
            raise
        finally:
            if self.on_db_call is not None:
                self.on_db_call(time.perf_counter() - asked)

    async def write(self, fn: Callable[[Session], T]) -> T:
        """``fn(session)`` through the service's one writer, queued with the games' own writes
        (background jobs: `bot.withdrawals`). ``fn`` must touch nothing but the session."""
        return await self._run_db(fn)

    def _fence(self, session: Session) -> None:
        """Inside a transaction about to flush ORM objects: fence the games they belong to."""
        touched = set()
        for obj in (*session.new, *session.dirty, *session.deleted):
            gid = obj.id if isinstance(obj, m.Game) else getattr(obj, "game_id", None)
            if isinstance(gid, str):
                touched.add(gid)
        self._fence_games(session, touched)

    def _fence_games(self, session: Session, game_ids: Iterable[str]) -> None:
        """Inside a transaction about to write rows of ``game_ids``: check the lease of each
        held one, once per transaction (a group commit: once per game, in one statement).
        See `bot.lease.fence`."""
        checked: set[str] = session.info.setdefault(_FENCED, set())
        held = {
            gid: epoch
            for gid in game_ids
            if gid not in checked and (epoch := self._leases.get(gid)) is not None
        }  # (a game this process does not drive is not fenced: an import, a tool)
        if not held:
            return
        lost = lease.fence_all(session.connection(), self.holder, held)
        if lost:
            raise GameMoved(min(lost))
        checked.update(held)

    def add_alert_sink(self, sink: AlertSink) -> None:
        """Add where alerts go (each problem once, one line); they are also logged."""
        self._alert_sinks.append(sink)

    def _alert(self, game: LiveGame, message: str) -> None:
        alert_log.error("Game %s: %s", game.id, message)
        for sink in self._alert_sinks:
            self._background(sink.on_alert(game, message), "alert")

    def _background(self, work: Awaitable[None], what: str) -> None:
        async def run() -> None:
            try:
                await work
            except Exception:
                log.exception("%s failed", what)

        task = asyncio.create_task(run(), name=f"mafiabot:{what}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def subscribe(self, listener: GameListener) -> None:
        """Add a renderer. It gets each committed batch of events for every game."""

        async def deliver(item: tuple[LiveGame, Sequence[Event]]) -> None:
            await listener.on_events(*item)

        self._listeners.append(_Outbox(deliver, type(listener).__name__))

    def _game(self, game_id: str) -> LiveGame:
        game = self.games.get(game_id)
        if game is None:
            raise ServiceError(f"There is no game {game_id!r} running here.")
        return game

    def _running(self, game_id: str) -> tuple[LiveGame, GameState]:
        game = self._game(game_id)
        if game.state is None:
            raise ServiceError("The game hasn't started yet.")
        return game, game.state

    # --- lobby --------------------------------------------------------------------------------

    async def create_game(
        self,
        config: GameConfig,
        *,
        platform: str = "local",
        server_external_id: str = "local",
        server_name: str | None = None,
        channel_id: str | None = None,
        host_user_id: str | None = None,
        seed: int | None = None,
        speed: float = 1.0,
    ) -> str:
        """Open a lobby. The config is checked against its own limits now (player count later).
        A host opens one lobby per `lobby_cooldown` seconds on a server (`CoolingDown`)."""
        self._refuse_while_closing("open the game again")
        if host_user_id is not None:
            self.lobby_cooldown.check(
                (platform, server_external_id, host_user_id), time.monotonic(), "open a new game"
            )
        if speed <= 0:
            raise ConfigError("speed must be positive.")
        GameConfig.from_dict(config.to_dict())  # round-trips: refuse unknown settings early
        game_id = new_game_id()
        seed = seed if seed is not None else secrets.randbits(48)

        def create(session: Session) -> int:
            server = session.exec(
                select(m.Server).where(
                    m.Server.platform == platform, m.Server.external_id == server_external_id
                )
            ).first()
            if server is None:
                server = m.Server(platform=platform, external_id=server_external_id)
                server.name = server_name
                session.add(server)
                session.flush()
            assert server.id is not None
            session.add(
                m.Game(
                    id=game_id,
                    server_id=server.id,
                    channel_id=channel_id,
                    status="lobby",
                    config=config.to_dict(),
                    seed=seed,
                    host_user_id=host_user_id,
                    clock_speed=speed,
                )
            )
            session.flush()
            lease.create(session.connection(), game_id, self.holder, utcnow(), self.lease_seconds)
            return server.id

        server_id = await self._run_db(create)
        self._hold(game_id, 1)
        clock = GameClock(speed)
        self.games[game_id] = LiveGame(
            id=game_id,
            config=config,
            seed=seed,
            status="lobby",
            clock=clock,
            timers=SchedulerTimers(self.scheduler, clock),
            server_id=server_id,
            channel_id=channel_id,
            host_user_id=host_user_id,
        )
        return game_id

    async def join(
        self,
        game_id: str,
        user_id: str | None,
        *,
        is_agent: bool = False,
        agent_kind: str | None = None,
        persona: str | None = None,
        name: str | None = None,
    ) -> SeatInfo:
        """Take a seat in the lobby. A character name is drawn now and shown at the start
        (``name`` fixes it instead: replays of recorded games)."""
        game = self._game(game_id)
        game.active_at = time.monotonic()
        # the AI seats are taken as the host starts the game
        self._refuse_while_closing("start it again" if is_agent else "join again")
        async with game.lock:
            if game.status != "lobby":
                raise ServiceError("This game has already started; you can't join now.")
            if user_id is not None and game.seat_of_user(user_id) is not None:
                raise ServiceError("You are already in this game.")
            if user_id is not None and not is_agent:
                await self._check_consent(game, user_id)  # consent block below
            if len(game.seats) >= len(CHARACTER_NAMES):
                raise ServiceError("This game is full.")
            taken = [s.name for s in game.seats]
            if name is None:
                rng = random.Random(f"{game.seed}:name:{len(game.seats)}")
                name = pick_names(1, rng, exclude=taken)[0]
            elif name.casefold() in (t.casefold() for t in taken):
                raise ServiceError(f"The name {name} is taken in this game.")
            info = SeatInfo(len(game.seats), name, user_id, is_agent, agent_kind, persona)

            def add(session: Session) -> None:
                session.add(
                    m.Seat(
                        game_id=game_id,
                        index=info.index,
                        character_name=name,
                        user_id=user_id,
                        is_agent=is_agent,
                        agent_kind=agent_kind,
                        persona=persona,
                    )
                )

            await self._run_db(add)
            game.seats.append(info)
            return info

    # --- consent (bot/consent.py owns the rules) ---------------------------------------------

    async def _check_consent(self, game: LiveGame, user_id: str) -> None:
        """Refuse a human on Discord/Slack who has not agreed to the current consent notice;
        raises `bot.consent.ConsentRequired` (a ServiceError) carrying the notice to show."""
        server_id = game.server_id
        refusal = await self._run_db(lambda session: consent_check(session, server_id, user_id))
        if refusal is not None:
            raise refusal

    # --- end consent --------------------------------------------------------------------------

    async def configure(self, game_id: str, config: GameConfig) -> None:
        """Change a lobby's settings (checked against their own limits; players at start)."""
        game = self._game(game_id)
        game.active_at = time.monotonic()
        GameConfig.from_dict(config.to_dict())
        async with game.lock:
            if game.status != "lobby":
                raise ServiceError("The game has started; its settings can't change now.")

            def update(session: Session) -> None:
                row = session.get(m.Game, game_id)
                assert row is not None
                row.config = config.to_dict()

            await self._run_db(update)
            game.config = config

    async def leave(self, game_id: str, user_id: str | None, *, seat: int | None = None) -> None:
        """Leave the lobby (by user id), or remove a lobby seat by number (agents)."""
        game = self._game(game_id)
        game.active_at = time.monotonic()
        async with game.lock:
            if game.status != "lobby":
                raise ServiceError("The game has started; ask a moderator to replace you.")
            found = (
                game.seat_of_user(user_id)
                if user_id is not None
                else next((s for s in game.seats if s.index == seat), None)
            )
            if found is None:
                raise ServiceError("You are not in this game.")
            game.seats.remove(found)
            for i, s in enumerate(game.seats):  # keep indices dense
                s.index = i

            def remove(session: Session) -> None:
                rows = session.exec(
                    select(m.Seat).where(m.Seat.game_id == game_id).order_by(col(m.Seat.index))
                ).all()
                for row in rows:
                    session.delete(row)
                session.flush()
                for s in game.seats:
                    session.add(
                        m.Seat(
                            game_id=game_id,
                            index=s.index,
                            character_name=s.name,
                            user_id=s.user_id,
                            is_agent=s.is_agent,
                            agent_kind=s.agent_kind,
                            persona=s.persona,
                        )
                    )

            await self._run_db(remove)

    async def start(self, game_id: str) -> None:
        """Seat everyone (see `seating`), deal roles and open day 1. Fails, changing nothing,
        when the setup is impossible.

        The seat rows get their final indices in the same transaction that marks the game
        running, so a resumed game rebuilds the same table. Names, people, agent flags and
        personas stay with their seat (the very same `SeatInfo` objects, renumbered): only the
        indices change, so an adapter re-reads seat numbers from ``game.seats`` after this."""
        game = self._game(game_id)
        self._refuse_while_closing("start it again")
        async with game.lock:
            if game.status != "lobby":
                raise ServiceError("This game has already started.")
            t = game.clock.now()
            # a fixed deal is role by seat as joined: the caller fixed the table (replays keep
            # the recorded seat order); otherwise the seed seats everyone
            order = (
                list(range(len(game.seats)))
                if game.config.deal
                else seating(game.seed, len(game.seats))
            )
            seated = [game.seats[i] for i in order]
            state, events = new_game(game.config, [s.name for s in seated], game.seed, t)

            def begin(session: Session) -> None:
                row = session.get(m.Game, game_id)
                assert row is not None
                row.status = "running"
                row.started_at = t
                rows = {
                    r.index: r
                    for r in session.exec(select(m.Seat).where(m.Seat.game_id == game_id)).all()
                }
                if sorted(rows) != list(range(len(order))):
                    raise ServiceError("The seats changed while the game was starting; try again.")
                # (game_id, index) is unique and checked row by row (SQLite and PostgreSQL
                # alike): park every seat on a negative index first, then give the final ones
                for lobby, r in rows.items():
                    r.index = -1 - lobby
                session.flush()
                for index, lobby in enumerate(order):
                    rows[lobby].index = index
                    rows[lobby].role = state.seats[index].role
                session.flush()
                self._write_events(session, game, None, events, state)

            await self._run_db(begin)
            # Nothing is keyed by a lobby index yet (agents are attached just below; speech ids
            # are not per seat), so renumbering the same SeatInfo objects is all it takes.
            assert not game.players and not game.outboxes
            for index, info in enumerate(seated):
                info.index = index
            game.seats = seated
            game.last_t = t
            game.state = state
            game.status = "running"
            self._attach_agents(game)
            self._advance_seqs(game, events)
            self._arm_deadline(game)
        self._dispatch(game, events)

    # --- play ---------------------------------------------------------------------------------

    async def say(
        self,
        game_id: str,
        seat: int,
        text: str,
        *,
        at: datetime | None = None,
        platform_id: str | None = None,
    ) -> bool:
        """Speak as ``seat``. ``at``: when the platform says the line was typed (aware UTC;
        None: now); the line is placed by the phase current then. ``platform_id``: the
        platform's id of the message; False (nothing done) when it was already applied.

        A line typed while the game's platform input was down (``at`` in the outage) waits
        for its place in the release of the backlog, and is stamped then (`bot.outages`)."""
        game, _ = self._running(game_id)
        if at is not None and await self.outages.release(game.id, game.finished, at):
            at = utcnow()
        if at is not None and at.tzinfo is None:
            raise ValueError("at must be timezone-aware")
        if platform_id is None or platform_id not in game.client_ids:
            # (in game time, as the agents' timing: a sped-up simulation is not throttled)
            now = game.clock.now()
            when = now if at is None else min(game.clock.from_wall(at), now)
            allowed = self.lines.check(game_id, seat, when.timestamp())
            if allowed is False:
                raise LineLimited(self.lines.wait(game_id, seat))
            if allowed is None:
                return False  # the seat was told at the first line of this run
        return await self._act(
            game, lambda t: A.Say(seat, text, t), platform_id, at=at, source=(seat, "line")
        )

    async def vote(
        self,
        game_id: str,
        seat: int,
        target: str | None,
        *,
        at: datetime | None = None,
        platform_id: str | None = None,
    ) -> bool:
        """Vote by character name (None abstains). A vote made (``at``) before the deadline
        counts even when it arrives a little after it; see :meth:`say` for ``platform_id``."""
        game, state = self._running(game_id)
        index = None
        if target is not None:
            # (outside a vote the engine refuses anyway; a bad name still lists the living)
            seats = state.vote_targets(seat) or [i for i in state.alive() if i != seat]
            choices = [state.seats[i].name for i in seats]
            index = resolve_name(target, self._others(state, seat), choices)
        return await self._act(
            game, lambda t: A.Vote(seat, index, t), platform_id, at=at, source=(seat, "click")
        )

    async def night_act(
        self,
        game_id: str,
        seat: int,
        target: str,
        *,
        at: datetime | None = None,
        platform_id: str | None = None,
    ) -> bool:
        """The seat's role's night action on a character name; as :meth:`vote`."""
        game, state = self._running(game_id)
        seats = state.night_targets(seat) or [i for i in state.alive() if i != seat]
        choices = [state.seats[i].name for i in seats]
        index = resolve_name(target, self._others(state, seat), choices)
        return await self._act(
            game, lambda t: A.NightAct(seat, index, t), platform_id, at=at, source=(seat, "click")
        )

    async def end(self, game_id: str, reason: str = "ended by a moderator") -> None:
        game = self._game(game_id)
        if game.state is None:
            async with game.lock:
                game.status = "aborted"

                def abort(session: Session) -> None:
                    row = session.get(m.Game, game_id)
                    assert row is not None
                    row.status = "aborted"
                    row.end_reason = reason

                await self._run_db(abort)
            game.finished.set()
            return
        await self._act(game, lambda t: A.Abort(t, reason), None)

    @staticmethod
    def _others(state: GameState, seat: int) -> dict[int, str]:
        """Names a seat may vote for; its own name resolves too, for a clear refusal."""
        return {s.index: s.name for s in state.seats}

    async def _act(
        self,
        game: LiveGame,
        make: Callable[[datetime], Action],
        platform_id: str | None,
        *,
        at: datetime | None = None,
        source: tuple[int, str] | None = None,
    ) -> bool:
        """Apply an action made at ``at`` (platform wall-clock time; None: when the service
        *received* it), stamped in game time within bounds (see :func:`action_moment`).

        ``received`` is read just before queueing for the game's lock (asyncio locks are
        first-come, first-served): a vote sent before the deadline is not refused because the
        store was busy writing the previous action. ``platform_id``: an id already applied,
        also before a restart, is ignored (False). It is stored even when the action changes
        nothing (the same vote twice), so replaying an old click can never undo a later one.
        """
        received = game.clock.now()
        seen = None if game.state is None else game.state.phase.seq
        async with game.lock:
            if platform_id is not None and platform_id in game.client_ids:
                return False
            state = game.state
            if state is None:
                raise ServiceError("The game hasn't started yet.")
            t = action_moment(game, state, received, at, source, seen)
            action = make(t)
            if isinstance(action, A.Vote | A.NightAct):
                action = _after_applied(action, state, game.last_t)
            if isinstance(action, A.Vote | A.NightAct | A.Tick):
                action = _applied_now(action, game.clock.now())
            if state.over and not isinstance(action, A.Tick):
                raise RuleError("The game is over.")
            new, events = apply(state, action)  # RuleError: nothing stored, nothing changes
            if not events and platform_id is None:
                return True  # a no-op (same vote twice, early tick): nothing to record
            seq = game.action_seq + 1

            def write(session: Session) -> None:
                # (plain rows, written with every other call's of the group: `bot.store.rows`)
                rows.insert(
                    session,
                    _ACTIONS,
                    {
                        "game_id": game.id,
                        "seq": seq,
                        "kind": action_kind(action),
                        "payload": action_to_dict(action),
                        "t": action.t,
                        "client_id": platform_id,
                    },
                )
                self._write_events(session, game, seq, events, new, platform_id)
                rows.update(session, _GAMES, {"id": game.id}, {"last_seq": seq})

            await self._run_db(write)
            game.action_seq = seq
            _note_applied(game, action, platform_id)
            game.state = new
            self._advance_seqs(game, events)
            self._arm_deadline(game)
        self._dispatch(game, events)
        if new.over:
            await self._finish(game)
        return True

    # --- persistence --------------------------------------------------------------------------

    def _write_events(
        self,
        session: Session,
        game: LiveGame,
        action_seq: int | None,
        events: Sequence[Event],
        state: GameState,
        client_id: str | None = None,
    ) -> None:
        """The rows of ``events``: the event log, and the messages, votes, phases, deaths and
        outcome read by exports and reports. Plain rows (`bot.store.rows`): they go out with
        the rest of the group commit, one statement a table."""
        seq = game.event_seq
        phase_seq = game.state.phase.seq if game.state is not None else 1
        for event in events:
            seq += 1
            rows.insert(
                session,
                _EVENTS,
                {
                    "game_id": game.id,
                    "seq": seq,
                    "kind": event.kind,
                    "payload": event_to_dict(event),
                    "t": event.t,
                    "visible_to": None if event.visible_to is None else sorted(event.visible_to),
                },
            )
            if isinstance(event, MessageAccepted):
                self._message(
                    session, game, event.phase_seq, event.place, event.seat, event.name,
                    event.text, event.t, action_seq, client_id,
                )  # fmt: skip
                continue
            if isinstance(event, VoteCast):
                rows.insert(
                    session,
                    _VOTES,
                    {
                        "game_id": game.id,
                        "phase_seq": event.phase_seq,
                        "kind": "night" if event.night else "day",
                        "voter_index": event.voter,
                        "target_index": event.target,
                        "t": event.t,
                        "action_seq": action_seq,
                    },
                )
            elif isinstance(event, PhaseStarted):
                phase_seq = event.seq
                rows.insert(
                    session,
                    _PHASES,
                    {
                        "game_id": game.id,
                        "seq": event.seq,
                        "kind": event.phase,
                        "number": event.number,
                        "started_at": event.t,
                        "deadline": event.deadline,
                        "ended_at": None,
                    },
                )
            elif isinstance(event, PhaseEnded):
                key = {"game_id": game.id, "seq": event.seq}
                rows.update(session, _PHASES, key, {"ended_at": event.t})
            elif isinstance(event, PlayerEliminated):
                key = {"game_id": game.id, "index": event.seat}
                rows.update(session, _SEATS, key, {"alive": False})
            elif isinstance(event, GameOver):
                outcome = {
                    "status": "finished" if event.winner is not None else "aborted",
                    "winner": event.winner,
                    "ended_at": event.t,
                    "end_reason": event.reason,
                }
                rows.update(session, _GAMES, {"id": game.id}, outcome)
            line = manager_line(event)
            if line is not None and event.place != "booth":
                self._message(
                    session, game, phase_seq, event.place, None, MANAGER, line, event.t,
                    action_seq, None,
                )  # fmt: skip

    @staticmethod
    def _message(
        session: Session,
        game: LiveGame,
        phase_seq: int | None,
        place: str,
        seat: int | None,
        speaker: str,
        text: str,
        t: datetime,
        action_seq: int | None,
        client_id: str | None,
    ) -> None:
        rows.insert(
            session,
            _MESSAGES,
            {
                "game_id": game.id,
                "phase_seq": phase_seq,
                "place": place,
                "seat_index": seat,
                "speaker": speaker,
                "text": text,
                "t": t,
                "action_seq": action_seq,
                "client_id": client_id,
            },
        )

    @staticmethod
    def _advance_seqs(game: LiveGame, events: Sequence[Event]) -> None:
        game.event_seq += len(events)

    # --- time ---------------------------------------------------------------------------------

    def _arm_deadline(self, game: LiveGame, retry_in: float | None = None) -> None:
        """Make sure the current phase's deadline will fire: a timer at the deadline, or
        (``retry_in``) a retry of a failed tick that many real seconds from now. Armed means a
        pending timer or a tick being written: never a mark alone (a tick that failed leaves
        its retry armed, see `_tick`)."""
        state = game.state
        if state is None:
            return
        handle = game.deadline_handle
        if state.over or state.phase.deadline is None or self.outages.is_down(game.id):
            # (while the input is down the clock stands still: armed again when it is back)
            if handle is not None:
                handle.cancel()
            game.deadline_handle = None
            game.armed_phase = None
            return
        if (
            retry_in is None
            and game.armed_phase == state.phase.seq
            and (game.ticking or (handle is not None and handle.pending))
        ):
            return
        if handle is not None:
            handle.cancel()
        deadline = state.phase.deadline
        phase_seq = state.phase.seq

        async def fire() -> None:
            await self._tick(game, phase_seq, deadline)

        game.armed_phase = phase_seq
        game.deadline_handle = (
            game.timers.call_at(deadline + grace(game), fire)
            if retry_in is None
            else game.timers.call_later(retry_in, fire)
        )

    async def _tick(self, game: LiveGame, phase_seq: int, deadline: datetime) -> None:
        """End the phase at its deadline. If the write fails, nothing changed: retry with
        backoff (the phase then ends at the moment the retry is stored, never earlier than
        the deadline) and report a failure lasting ``alert_after`` seconds once."""
        state = game.state
        if (
            state is None
            or state.over
            or state.phase.seq != phase_seq
            or self.games.get(game.id) is not game
            or self.outages.is_down(game.id)
        ):
            return
        game.ticking = True
        failed: Exception | None = None
        try:
            if game.tick_failures == 0:
                # stamped at the deadline, applied a grace after it (DEADLINE_GRACE_SECONDS)
                await self._act(game, lambda t: A.Tick(deadline, max(t, deadline)), None)
            else:  # a retry: the phase ends when the database finally stores it
                await self._act(game, lambda t: A.Tick(max(t, deadline)), None)
        except GameMoved:
            return  # another process has the game now (`_moved` stopped it here)
        except Exception as exc:
            failed = exc
        finally:
            game.ticking = False
        if failed is None:
            self._tick_stored(game)
        current = game.state
        if current is None or current.over or current.phase.seq != phase_seq:
            return
        if failed is None:  # stored but the phase goes on (nothing was due): wait again
            self._arm_deadline(game)
            return
        now = time.monotonic()
        if game.failing_since is None:
            game.failing_since = now
        delay = self.tick_backoff.delay(game.tick_failures)
        game.tick_failures += 1
        reason = db_reason(failed)
        log.warning(
            "game %s: the deadline could not be stored (attempt %d: %s); retrying in %.1f s",
            game.id, game.tick_failures, reason, delay,
        )  # fmt: skip
        self._arm_deadline(game, retry_in=delay)
        lasting = now - game.failing_since
        if not game.alerted and lasting >= self.alert_after:
            game.alerted = True
            self._alert(
                game,
                f"the phase should have ended {lasting:.0f} s ago, but the database refuses "
                f"to store it ({reason}). I keep retrying; the game goes on by itself as soon "
                "as the database accepts writes again.",
            )

    # --- outages of a platform's input (bot/outages.py owns the rules) ---------------------

    def input_down(self, game_ids: Iterable[str], since: datetime | None = None) -> None:
        """The platform's input of these games is down since ``since`` (wall clock; None:
        now): their agents are paused and their phase clocks stand still until `input_back`.
        Games not running here are skipped."""
        when = since or utcnow()
        for game_id in game_ids:
            game = self.games.get(game_id)
            if game is None or game.state is None or game.state.over:
                continue
            if self.outages.mark_down(game_id, game.clock, when):
                self._arm_deadline(game)  # (disarms it)

    async def input_back(
        self, game_ids: Iterable[str], first_typed: Mapping[str, datetime] | None = None
    ) -> None:
        """The platform's input of these games is back: each phase is extended by the time
        its input was down, its deadline armed again, and its backlog released (lines typed
        meanwhile, handed over through `say` with their moments, wait for their place).
        ``first_typed``: game id -> the moment of the first line typed meanwhile, when the
        adapter has read them back."""
        for game_id in game_ids:
            game = self.games.get(game_id)
            if game is None:
                self.outages.forget(game_id)
                continue
            first = None if first_typed is None else first_typed.get(game_id)
            back = self.outages.mark_back(game_id, game.clock, first)
            if back is None:
                continue
            extension, _ = back
            state = game.state
            if extension > 0 and state is not None and not state.over:
                try:
                    await self._act(game, partial(A.Extend, seconds=extension), None)
                except Exception:  # the phase goes on with its old deadline
                    log.exception("game %s: could not extend the phase", game_id)
            self._arm_deadline(game)

    async def agent_gate(self, game_id: str) -> None:
        """Before an agent acts: while its game's input is down the action waits, and goes
        out at the moment's place in the release of the backlog."""
        game = self.games.get(game_id)
        if game is not None and self.outages.is_down(game_id):
            await self.outages.release(game_id, game.finished, utcnow())

    def _down_since(self, game: LiveGame, previous_expiry: datetime | None) -> datetime:
        """When a resumed game's input went down: when the process that drove it was last
        known alive (its lease renewed, its last action)."""
        return down_since_restart(
            game.clock, game.last_t, previous_expiry, self.lease_seconds, utcnow()
        )

    @staticmethod
    def _tick_stored(game: LiveGame) -> None:
        if game.alerted:
            log.warning(
                "game %s: the database accepts writes again after %d failed attempt(s)",
                game.id, game.tick_failures,
            )  # fmt: skip
        game.tick_failures = 0
        game.failing_since = None
        game.alerted = False

    def _rearm_overdue(self) -> None:
        """The watchdog: any running game whose deadline has passed with nothing armed to end
        its phase gets its timer again (whatever left it unarmed)."""
        for game in list(self.games.values()):
            state = game.state
            if state is None or state.over or state.phase.deadline is None:
                continue
            if self.outages.is_down(game.id):
                continue  # its clock stands still until the input is back
            armed = game.armed_phase == state.phase.seq and (
                game.ticking or (game.deadline_handle is not None and game.deadline_handle.pending)
            )
            if not armed and state.phase.deadline < game.clock.now():
                log.warning("game %s: re-arming an overdue deadline", game.id)
                self._arm_deadline(game)

    # --- ownership (bot/lease.py) -------------------------------------------------------------

    def _hold(self, game_id: str, epoch: int) -> None:
        self._leases[game_id] = epoch
        if self._keeper is None or self._keeper.done():
            self._keeper = asyncio.create_task(self._keep(), name="mafiabot:leases")

    async def _keep(self) -> None:
        """Renew our leases every third of their length; stop driving games taken over by
        another process; re-arm overdue deadlines."""
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            await self.renew_leases()
            self._rearm_overdue()

    async def renew_leases(self) -> None:
        held = dict(self._leases)
        if not held:
            return
        try:
            lost = await self._run_db(
                lambda s: lease.renew(
                    s.connection(), self.holder, held, utcnow(), self.lease_seconds
                )
            )
        except Exception as exc:  # an outage: the fence keeps us safe, try again next round
            log.warning("could not renew %d game lease(s): %s", len(held), db_reason(exc))
            return
        for game_id in lost:
            if self._leases.get(game_id) == held[game_id]:
                self._moved(game_id)

    def _moved(self, game_id: str) -> None:
        """Another process took the game over: stop driving it here, at once."""
        if self._leases.pop(game_id, None) is None:
            return
        game = self.games.pop(game_id, None)
        if game is None:
            return
        log.warning("game %s: taken over by another process; no longer driving it", game_id)
        self.outages.forget(game_id)
        if game.deadline_handle is not None:
            game.deadline_handle.cancel()
        game.status = "moved"
        players, outboxes = list(game.players.values()), list(game.outboxes.values())
        game.players.clear()
        game.outboxes.clear()

        async def stop() -> None:
            for player in players:
                await player.close()
            for outbox in outboxes:
                await outbox.close()

        self._background(stop(), f"stop {game_id}")
        game.finished.set()
        for told in self.on_moved:
            told(game_id)

    async def _take(self, game_id: str) -> int:
        """Take the game's lease for this service, or raise `GameHeld` / a `ServiceError`
        naming why there is nothing to take."""

        def take(session: Session) -> lease.Lease | lease.HeldBy:
            conn = session.connection()
            lease.touch(conn, game_id)  # SQLite: the write lock first, then read
            row = session.get(m.Game, game_id)
            if row is None:
                raise ServiceError(f"There is no game {game_id!r} in the database.")
            if row.status not in ("lobby", "running"):
                raise ServiceError(f"Game {game_id} is {row.status}; there is nothing to resume.")
            return lease.acquire(conn, game_id, self.holder, utcnow(), self.lease_seconds)

        for attempt in (1, 2, 3):
            try:
                got = await self._run_db(take)
            except sa.exc.IntegrityError:  # another process created the lease just now
                if attempt == 3:
                    raise
                continue
            if isinstance(got, lease.HeldBy):
                raise GameHeld(got)
            if got.previous_expiry is not None:
                self._previous_expiry[game_id] = got.previous_expiry
            self._hold(game_id, got.epoch)
            return got.epoch
        raise AssertionError("unreachable")

    async def _release(self, game_ids: list[str]) -> None:
        if not game_ids:
            return
        try:
            await self._run_db(
                lambda s: lease.release(s.connection(), self.holder, game_ids, utcnow())
            )
        except Exception as exc:  # it expires by itself
            log.warning("could not release game lease(s) %s: %s", game_ids, db_reason(exc))

    # --- delivery -----------------------------------------------------------------------------

    def _dispatch(self, game: LiveGame, events: Sequence[Event]) -> None:
        batch = list(events)
        for outbox in self._listeners:
            outbox.put((game, batch))
        for seat, outbox in game.outboxes.items():
            seen = [e for e in batch if visible(e, seat)]
            if seen:
                outbox.put(seen)

    def _attach_agents(self, game: LiveGame) -> None:
        if self.agent_factory is None:
            return
        for info in game.seats:
            if not info.is_agent or info.index in game.players:
                continue
            port = SeatPortImpl(self, game.id, info.index)
            player = self.agent_factory(game, info, port, game.clock, game.timers)
            game.players[info.index] = player

            async def deliver(events: Sequence[Event], player: Player = player) -> None:
                for event in events:
                    await player.on_event(event)

            game.outboxes[info.index] = _Outbox(deliver, f"{game.id}:{info.index}")

    async def replace_seat(
        self,
        game_id: str,
        seat: int,
        *,
        user_id: str | None = None,
        agent_kind: str | None = None,
    ) -> SeatInfo:
        """Hand a running seat to an agent (``agent_kind``) or to a substitute human
        (``user_id``). The character name, role and history stay; no event is emitted, so
        nobody else learns that anything changed."""
        if (user_id is None) == (agent_kind is None):
            raise ValueError("give exactly one of user_id or agent_kind")
        game, state = self._running(game_id)
        if state.over:
            raise ServiceError("The game is over.")
        info = next((s for s in game.seats if s.index == seat), None)
        if info is None:
            raise ServiceError("There is no such seat.")
        if user_id is not None and game.seat_of_user(user_id) is not None:
            raise ServiceError("That person already has a seat in this game.")
        if user_id is not None:
            await self._check_consent(game, user_id)
        async with game.lock:
            info.user_id = user_id
            info.is_agent = agent_kind is not None
            info.agent_kind = agent_kind

            def update(session: Session) -> None:
                row = session.exec(
                    select(m.Seat).where(m.Seat.game_id == game_id, m.Seat.index == seat)
                ).one()
                row.user_id = user_id
                row.is_agent = info.is_agent
                row.agent_kind = agent_kind

            await self._run_db(update)
            old = game.players.pop(seat, None)
            if old is not None:
                await old.close()
            box = game.outboxes.pop(seat, None)
            if box is not None:
                await box.close()
            if agent_kind is not None:
                history = [event_from_dict(d) for d in await self.history(game_id)]
                self._attach_agents(game)
                seen = [e for e in history if visible(e, seat)]
                if seen and seat in game.outboxes:
                    game.outboxes[seat].put(seen)
        return info

    async def _finish(self, game: LiveGame) -> None:
        game.status = "finished" if game.state and game.state.winner else "aborted"
        self.outages.forget(game.id)
        self.lines.forget(game.id)
        await self.drain(game.id)
        for player in game.players.values():
            await player.close()
        for outbox in game.outboxes.values():
            await outbox.close()
        game.outboxes.clear()
        if self._leases.pop(game.id, None) is not None:
            await self._release([game.id])
        game.finished.set()

    async def drain(self, game_id: str | None = None) -> None:
        """Wait until every listener and agent has been handed everything so far."""
        game = self.games.get(game_id) if game_id else None
        for outbox in self._listeners:
            await outbox.drain()
        if game is not None:
            for outbox in list(game.outboxes.values()):
                await outbox.drain()

    async def wait_finished(self, game_id: str) -> None:
        await self._game(game_id).finished.wait()

    # --- recovery -----------------------------------------------------------------------------

    async def resume(
        self, game_id: str, *, paused: bool = False, input_down: bool = False
    ) -> LiveGame:
        """Load a game from the database and carry on where it stopped.

        A real-time game keeps to the wall clock: the time it was down counts, as it does for
        people waiting in a channel. ``paused``: the time away does not count and the phase
        goes on with the time it had left (a terminal game waits for its one person; an
        accelerated simulation always does this).

        ``input_down``: the platform's input is down until the adapter says it is back
        (`input_back`, once it has read what people typed meanwhile): the game's agents and
        its clock wait, and the phase gets the time the game was down back (`bot.outages`)."""
        if game_id in self.games:
            return self.games[game_id]
        await self._take(game_id)
        try:
            return await self._load(game_id, paused, input_down)
        except BaseException:
            if self._leases.pop(game_id, None) is not None:
                await self._release([game_id])
            raise

    async def replay(self, game_id: str) -> LiveGame:
        """The game rebuilt from its action log, read only: nothing is taken over, armed or
        attached (any process may do this, whoever drives the game)."""
        return await self._read(game_id, paused=True)

    async def _load(self, game_id: str, paused: bool, input_down: bool = False) -> LiveGame:
        game = await self._read(game_id, paused)
        if game.status not in ("lobby", "running"):  # ended between taking the lease and now
            raise ServiceError(f"Game {game_id} is {game.status}; there is nothing to resume.")
        self.games[game_id] = game
        previous = self._previous_expiry.pop(game_id, None)
        if game.state is None:
            return game
        if input_down and not game.state.over:
            self.outages.mark_down(game.id, game.clock, self._down_since(game, previous))
        history = game.replayed
        self._attach_agents(game)
        for seat, outbox in game.outboxes.items():
            seen = [e for e in history if visible(e, seat)]
            if seen:
                outbox.put(seen)
        if game.state.over:  # crashed between the last action and marking the game finished
            await self._finish(game)
        else:
            self._arm_deadline(game)
        return game

    async def _read(self, game_id: str, paused: bool) -> LiveGame:
        def load(session: Session) -> tuple[m.Game, list[m.Seat], list[m.Action], datetime | None]:
            row = session.get(m.Game, game_id)
            if row is None:
                raise ServiceError(f"There is no game {game_id!r} in the database.")
            seats = list(
                session.exec(
                    select(m.Seat).where(m.Seat.game_id == game_id).order_by(col(m.Seat.index))
                ).all()
            )
            actions = list(
                session.exec(
                    select(m.Action).where(m.Action.game_id == game_id).order_by(col(m.Action.seq))
                ).all()
            )
            last_t = session.exec(
                select(sa.func.max(m.Event.t)).where(m.Event.game_id == game_id)
            ).first()
            return row, seats, actions, last_t

        row, seat_rows, action_rows, last_t = await self._run_db(load)
        config = GameConfig.from_dict(dict(row.config))
        # Real-time games keep the wall clock (downtime counts); accelerated simulations carry
        # on from the last recorded moment, so the remaining phase time is preserved.
        last_t = _latest_moment(last_t, action_rows)
        start = None if row.clock_speed == 1.0 and not paused else (last_t or row.started_at)
        clock = GameClock(row.clock_speed, start, resumed=True)
        game = LiveGame(
            id=game_id,
            config=config,
            seed=int(row.seed),
            status=row.status,
            clock=clock,
            timers=SchedulerTimers(self.scheduler, clock),
            seats=[
                SeatInfo(s.index, s.character_name, s.user_id, s.is_agent, s.agent_kind, s.persona)
                for s in seat_rows
            ],
            server_id=row.server_id,
            channel_id=row.channel_id,
            host_user_id=row.host_user_id,
        )
        if row.started_at is None:
            return game
        assert row.started_at is not None
        state, events = new_game(config, [s.name for s in game.seats], game.seed, row.started_at)
        history: list[Event] = list(events)
        game.last_t = row.started_at  # nothing is stamped before the game began
        for a in action_rows:
            action = action_from_dict(dict(a.payload))
            state, more = apply(state, action)
            history.extend(more)
            _note_applied(game, action, a.client_id)
        game.state = state
        game.action_seq = action_rows[-1].seq if action_rows else 0
        game.event_seq = len(history)
        game.replayed = tuple(history)
        return game

    async def unfinished_games(
        self, platforms: Sequence[str] | None = None, servers: Sequence[str] | None = None
    ) -> list[str]:
        """Running games, newest first (only those on ``platforms``, and of the servers with
        the external ids ``servers``, when given)."""

        def query(session: Session) -> list[str]:
            stmt = select(m.Game.id).where(col(m.Game.status).in_(["running"]))
            if platforms is not None or servers is not None:
                stmt = stmt.join(m.Server, col(m.Game.server_id) == col(m.Server.id))
            if platforms is not None:
                stmt = stmt.where(col(m.Server.platform).in_(list(platforms)))
            if servers is not None:
                stmt = stmt.where(col(m.Server.external_id).in_(list(servers)))
            return list(session.exec(stmt.order_by(col(m.Game.created_at).desc())).all())

        return await self._run_db(query)

    async def resume_all(self, platforms: Sequence[str] | None = None) -> list[str]:
        """Resume every running game (on ``platforms`` only, e.g. ["discord"], when given:
        a chat adapter must not wake a terminal game its player paused)."""
        resumed = []
        for game_id in await self.unfinished_games(platforms):
            try:
                await self.resume(game_id)
                resumed.append(game_id)
            except GameHeld as held:  # another process runs it: not ours to resume
                log.info("%s", held)
            except Exception:
                log.exception("could not resume game %s", game_id)
        return resumed

    async def history(self, game_id: str) -> list[dict[str, Any]]:
        """Every stored event of a game, as dicts, in order (for transcripts and exports)."""

        def query(session: Session) -> list[dict[str, Any]]:
            rows = session.exec(
                select(m.Event).where(m.Event.game_id == game_id).order_by(col(m.Event.seq))
            ).all()
            return [dict(r.payload) for r in rows]

        return await self._run_db(query)

    async def close(self) -> None:
        """Stop everything; the games this service held are released for the next process."""
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeper
        for game in self.games.values():
            if game.deadline_handle is not None:
                game.deadline_handle.cancel()
            for player in game.players.values():
                await player.close()
            for outbox in game.outboxes.values():
                await outbox.close()
        for outbox in self._listeners:
            await outbox.close()
        for task in list(self._tasks):
            task.cancel()
        held, self._leases = list(self._leases), {}
        await self._release(held)
        await asyncio.to_thread(self._db.close)
