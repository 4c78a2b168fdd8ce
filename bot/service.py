"""The one service port every adapter calls: create, join, start, say, vote, act at night, end.

Flow is one way: an adapter calls the service; the service applies the action to the pure
engine, persists the action and everything it caused in one transaction, then hands the
events to listeners (renderers) and to agent seats (only what each seat may see).

Crash safety: the ``actions`` table is the game's authoritative log. Nothing is shown to anyone
before it is committed, and on start-up :meth:`GameService.resume_all` replays each running
game's log through the engine (which is deterministic), re-arms the phase deadline with the
time that is left, and re-attaches the agents. Speech carries an optional ``client_id`` (the
platform's message id) so a line delivered twice is stored once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, TypeVar

import sqlalchemy as sa
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from sqlmodel import Session, col, select

from agent.base import Player
from bot.clock import GameClock
from bot.store import models as m
from bot.store.db import session_scope
from bot.timers import SchedulerTimers, TimerHandle
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
T = TypeVar("T")


class ServiceError(RuntimeError):
    """A request the service refuses (unknown game, not in the lobby, ...). Show it to the user."""


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
        await self._service.say(self._game_id, self._seat, text)

    async def vote(self, target: str | None) -> None:
        await self._service.vote(self._game_id, self._seat, target)

    async def night_act(self, target: str) -> None:
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
    #: the stamp of the last applied action (stamps never go backwards)
    last_t: datetime | None = None
    client_ids: set[str] = field(default_factory=set)
    deadline_handle: TimerHandle | None = None
    armed_phase: int | None = None
    players: dict[int, Player] = field(default_factory=dict)
    outboxes: dict[int, _Outbox] = field(default_factory=dict)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    #: after a resume: every event of the game up to the interruption, rebuilt by replaying
    #: its action log (what a renderer shows a person who comes back to the game)
    replayed: tuple[Event, ...] = ()

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


def new_game_id() -> str:
    alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
    return "g" + "".join(secrets.choice(alphabet) for _ in range(7))


class GameService:
    def __init__(
        self,
        engine: sa.Engine,
        scheduler: AsyncIOScheduler,
        agent_factory: AgentFactory | None = None,
    ) -> None:
        self.engine = engine
        self.scheduler = scheduler
        self.agent_factory = agent_factory
        self.games: dict[str, LiveGame] = {}
        self._listeners: list[_Outbox] = []
        #: where agents record their LLM decisions (set by the runtime; flushed at game end)
        self.decision_log: DecisionFlusher | None = None
        #: the LLM agent factory, when one is configured (simulate waits for its learning)
        self.llm_factory: Any = None
        # One writer thread: keeps the event loop free and SQLite single-writer, in order.
        self._db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mafiabot-db")
        #: told how long each database call took, waiting included (metrics; bot.ops)
        self.on_db_call: Callable[[float], None] | None = None
        #: set when the process is shutting down: no new games (bot.ops.shutdown)
        self.closing = False

    # --- plumbing -----------------------------------------------------------------------------

    async def _run_db(self, fn: Callable[[Session], T]) -> T:
        def work() -> T:
            with session_scope(self.engine) as session:
                return fn(session)

        asked = time.perf_counter()
        try:
            return await asyncio.get_running_loop().run_in_executor(self._db, work)
        finally:
            if self.on_db_call is not None:
                self.on_db_call(time.perf_counter() - asked)

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
        """Open a lobby. The config is checked against its own limits now (player count later)."""
        if self.closing:
            raise ServiceError("The bot is restarting; open the game again in a minute.")
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
            return server.id

        server_id = await self._run_db(create)
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
        from bot.consent import consent_check  # bot.consent imports this module

        server_id = game.server_id
        refusal = await self._run_db(lambda session: consent_check(session, server_id, user_id))
        if refusal is not None:
            raise refusal

    # --- end consent --------------------------------------------------------------------------

    async def configure(self, game_id: str, config: GameConfig) -> None:
        """Change a lobby's settings (checked against their own limits; players at start)."""
        game = self._game(game_id)
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

    async def say(self, game_id: str, seat: int, text: str, client_id: str | None = None) -> bool:
        """Speak as ``seat``. Returns False when ``client_id`` was already stored (a resend)."""
        game, _ = self._running(game_id)
        return await self._act(game, lambda t: A.Say(seat, text, t), client_id)

    async def vote(self, game_id: str, seat: int, target: str | None) -> None:
        """Vote by character name (None abstains)."""
        game, state = self._running(game_id)
        index = None
        if target is not None:
            # (outside a vote the engine refuses anyway; a bad name still lists the living)
            seats = state.vote_targets(seat) or [i for i in state.alive() if i != seat]
            choices = [state.seats[i].name for i in seats]
            index = resolve_name(target, self._others(state, seat), choices)
        await self._act(game, lambda t: A.Vote(seat, index, t), None)

    async def night_act(self, game_id: str, seat: int, target: str) -> None:
        game, state = self._running(game_id)
        index = resolve_name(target, {s.index: s.name for s in state.seats if s.alive})
        await self._act(game, lambda t: A.NightAct(seat, index, t), None)

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
        self, game: LiveGame, make: Callable[[datetime], Action], client_id: str | None
    ) -> bool:
        """Apply an action stamped with the game clock when the service *received* it.

        The stamp is read just before queueing for the game's lock (asyncio locks are
        first-come, first-served, so stamps still follow the order in which actions are
        applied): a vote sent before the deadline is not refused because the store was busy
        writing the previous action. Never earlier than the last applied action.
        """
        received = game.clock.now()
        async with game.lock:
            if client_id is not None and client_id in game.client_ids:
                return False
            last = game.last_t
            action = make(received if last is None or received >= last else last)
            state = game.state
            if state is None:
                raise ServiceError("The game hasn't started yet.")
            if state.over and not isinstance(action, A.Tick):
                raise RuleError("The game is over.")
            new, events = apply(state, action)  # RuleError: nothing stored, nothing changes
            if not events:
                return True  # a no-op (same vote twice, early tick): nothing to record
            seq = game.action_seq + 1

            def write(session: Session) -> None:
                session.add(
                    m.Action(
                        game_id=game.id,
                        seq=seq,
                        kind=action_kind(action),
                        payload=action_to_dict(action),
                        t=action.t,
                        client_id=client_id,
                    )
                )
                self._write_events(session, game, seq, events, new, client_id)
                row = session.get(m.Game, game.id)
                assert row is not None
                row.last_seq = seq

            await self._run_db(write)
            game.action_seq = seq
            game.last_t = action.t
            if client_id is not None:
                game.client_ids.add(client_id)
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
        seq = game.event_seq
        phase_seq = game.state.phase.seq if game.state is not None else 1
        for event in events:
            seq += 1
            session.add(
                m.Event(
                    game_id=game.id,
                    seq=seq,
                    kind=event.kind,
                    payload=event_to_dict(event),
                    t=event.t,
                    visible_to=None if event.visible_to is None else sorted(event.visible_to),
                )
            )
            if isinstance(event, MessageAccepted):
                session.add(
                    m.Message(
                        game_id=game.id,
                        phase_seq=event.phase_seq,
                        place=event.place,
                        seat_index=event.seat,
                        speaker=event.name,
                        text=event.text,
                        t=event.t,
                        action_seq=action_seq,
                        client_id=client_id,
                    )
                )
                continue
            if isinstance(event, VoteCast):
                session.add(
                    m.Vote(
                        game_id=game.id,
                        phase_seq=event.phase_seq,
                        kind="night" if event.night else "day",
                        voter_index=event.voter,
                        target_index=event.target,
                        t=event.t,
                        action_seq=action_seq,
                    )
                )
            elif isinstance(event, PhaseStarted):
                phase_seq = event.seq
                session.add(
                    m.Phase(
                        game_id=game.id,
                        seq=event.seq,
                        kind=event.phase,
                        number=event.number,
                        started_at=event.t,
                        deadline=event.deadline,
                    )
                )
            elif isinstance(event, PhaseEnded):
                row = session.exec(
                    select(m.Phase).where(m.Phase.game_id == game.id, m.Phase.seq == event.seq)
                ).first()
                if row is not None:
                    row.ended_at = event.t
            elif isinstance(event, PlayerEliminated):
                seat = session.exec(
                    select(m.Seat).where(m.Seat.game_id == game.id, m.Seat.index == event.seat)
                ).first()
                if seat is not None:
                    seat.alive = False
            elif isinstance(event, GameOver):
                game_row = session.get(m.Game, game.id)
                assert game_row is not None
                game_row.status = "finished" if event.winner is not None else "aborted"
                game_row.winner = event.winner
                game_row.ended_at = event.t
                game_row.end_reason = event.reason
            line = manager_line(event)
            if line is not None and event.place != "booth":
                session.add(
                    m.Message(
                        game_id=game.id,
                        phase_seq=phase_seq,
                        place=event.place,
                        seat_index=None,
                        speaker=MANAGER,
                        text=line,
                        t=event.t,
                        action_seq=action_seq,
                    )
                )

    @staticmethod
    def _advance_seqs(game: LiveGame, events: Sequence[Event]) -> None:
        game.event_seq += len(events)

    # --- time ---------------------------------------------------------------------------------

    def _arm_deadline(self, game: LiveGame) -> None:
        state = game.state
        if state is None:
            return
        if state.over or state.phase.deadline is None:
            if game.deadline_handle is not None:
                game.deadline_handle.cancel()
            game.deadline_handle = None
            return
        if game.armed_phase == state.phase.seq:
            return
        if game.deadline_handle is not None:
            game.deadline_handle.cancel()
        deadline = state.phase.deadline
        phase_seq = state.phase.seq
        game.armed_phase = phase_seq

        async def fire() -> None:
            current = game.state
            if current is None or current.phase.seq != phase_seq:
                return
            # never earlier than the deadline, whatever the clock's rounding
            await self._act(game, lambda t: A.Tick(max(t, deadline)), None)

        game.deadline_handle = game.timers.call_at(deadline, fire)

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
        await self.drain(game.id)
        for player in game.players.values():
            await player.close()
        for outbox in game.outboxes.values():
            await outbox.close()
        game.outboxes.clear()
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

    async def resume(self, game_id: str, *, paused: bool = False) -> LiveGame:
        """Load a game from the database and carry on where it stopped.

        A real-time game keeps to the wall clock: the time it was down counts, as it does for
        people waiting in a channel. ``paused``: the time away does not count and the phase
        goes on with the time it had left (a terminal game waits for its one person; an
        accelerated simulation always does this)."""
        if game_id in self.games:
            return self.games[game_id]

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
        if row.status not in ("lobby", "running"):
            raise ServiceError(f"Game {game_id} is {row.status}; there is nothing to resume.")
        # Real-time games keep the wall clock (downtime counts); accelerated simulations carry
        # on from the last recorded moment, so the remaining phase time is preserved.
        start = None if row.clock_speed == 1.0 and not paused else (last_t or row.started_at)
        clock = GameClock(row.clock_speed, start)
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
        self.games[game_id] = game
        if row.status == "lobby":
            return game
        assert row.started_at is not None
        state, events = new_game(config, [s.name for s in game.seats], game.seed, row.started_at)
        history: list[Event] = list(events)
        game.last_t = row.started_at  # nothing is stamped before the game began
        for a in action_rows:
            action = action_from_dict(dict(a.payload))
            state, more = apply(state, action)
            history.extend(more)
            game.last_t = action.t
            if a.client_id:
                game.client_ids.add(a.client_id)
        game.state = state
        game.action_seq = action_rows[-1].seq if action_rows else 0
        game.event_seq = len(history)
        game.replayed = tuple(history)
        self._attach_agents(game)
        for seat, outbox in game.outboxes.items():
            seen = [e for e in history if visible(e, seat)]
            if seen:
                outbox.put(seen)
        if state.over:  # crashed between the last action and marking the game finished
            await self._finish(game)
        else:
            self._arm_deadline(game)
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
        for game in self.games.values():
            if game.deadline_handle is not None:
                game.deadline_handle.cancel()
            for player in game.players.values():
                await player.close()
            for outbox in game.outboxes.values():
                await outbox.close()
        for outbox in self._listeners:
            await outbox.close()
        self._db.shutdown(wait=True)
