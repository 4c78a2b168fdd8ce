"""The one service port every adapter calls: create, join, start, say, vote, act at night, end.

Flow is one way: an adapter calls the service; the service stamps the action
(`bot.service.moments`), applies it to the pure engine, writes the action and everything it
caused in one transaction (`bot.service.journal`), then hands the events to listeners
(renderers) and to agent seats (only what each seat may see). Nothing is shown before it is
committed; a write the database refuses changes nothing in memory either and reaches the caller
as `bot.errors.StoreUnavailable`. A deadline tick that fails is retried with backoff until it is
stored, and a failure that lasts is reported once (`bot.service.deadlines`,
`bot.service.alerts`). One process drives a game at a time (`bot.service.ownership`), and a
game is carried on after a restart by replaying its action log (`bot.service.recovery`).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

import sqlalchemy as sa
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from sqlmodel import Session

from bot.errors import ServiceError as ServiceError  # (re-exported for older imports)
from bot.limits import (
    ChangeLimited,
    ChangeLimiter,
    CommandLimiter,
    Cooldowns,
    LineLimited,
    LineLimiter,
)
from bot.players import seat_story
from bot.protection.consent import consent_check
from bot.service import journal, lease, live, recovery
from bot.service.alerts import Alerts, AlertSink
from bot.service.clock import GameClock, utcnow
from bot.service.deadlines import Deadlines
from bot.service.graveyard import Graveyard
from bot.service.lanes import Line
from bot.service.live import (
    AgentFactory,
    GameListener,
    LiveGame,
    SeatInfo,
    SeatPortImpl,
    target_seat,
)
from bot.service.moments import note_applied, stamp
from bot.service.outages import RELEASE_SECONDS, Outages
from bot.service.ownership import GameMoved, Ownership
from bot.service.timers import Backoff, SchedulerTimers
from bot.store.writer import GroupWriter
from games import actions as A
from games.actions import Action
from games.config import GameConfig
from games.engine import apply, new_game
from games.errors import ConfigError, RuleError
from games.events import Event, event_from_dict, is_draw, visible
from games.state import GameState

log = logging.getLogger(__name__)
T = TypeVar("T")


class GameService:
    """The port: the lobby (create, join, configure, leave, start), play (say, vote, night act,
    end; each applied by `_act` under the game's lock), the deadlines (`deadlines`,
    `bot.service.deadlines`) and the delivery of what was committed to listeners and agent
    seats."""

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
        commit_spacing: float = 0.0,
    ) -> None:
        self.engine = engine
        #: games whose platform input is down, and the release of their backlog
        # (bot.service.outages)
        self.outages = Outages(outage_release_seconds)
        #: the games this service holds, their leases kept renewed (bot.service.ownership)
        self.ownership = Ownership(
            lambda fn: self._run_db(fn),
            lease_seconds,
            on_lost=self._moved,
            each_round=lambda: self.deadlines.rearm_overdue(),
        )
        #: told the id of each game another process took over from this one
        self.on_moved: list[Callable[[str], None]] = []
        #: the hosts told of a problem that lasts, and work nobody waits for (`bot.service.alerts`)
        self.alerts = Alerts()
        self.scheduler = scheduler
        self.agent_factory = agent_factory
        self.games: dict[str, LiveGame] = {}
        #: each phase's deadline timer, its retries, and what an outage does to it
        self.deadlines = Deadlines(
            self.games,
            self.outages,
            self.alerts,
            self._act,
            alert_after=alert_after,
            tick_backoff=tick_backoff or Backoff(),
        )
        self._listeners: list[live.Outbox] = []
        self.graveyard = Graveyard()  #: the dead's talk: adapters post it, dead agents join in
        #: where agents record their LLM decisions (set by the runtime; flushed at game end)
        self.decision_log: live.DecisionFlusher | None = None
        #: the LLM agent factory, when one is configured (simulate waits for its learning)
        self.llm_factory: Any = None
        # One writer thread, group commit: keeps the event loop free and SQLite single-writer,
        # calls in order; the calls that arrive together share one transaction.
        self._db = GroupWriter(engine, spacing=commit_spacing)  # (a running bot's: BUSY_SPACING)
        #: told how long each database call took, waiting included (metrics; bot.ops)
        self.on_db_call: Callable[[float], None] | None = None
        #: set when the process is shutting down: no new games (bot.ops.serve)
        self.closing = False
        #: every seat's lines, human or agent, pass this rate limit (`bot.limits`)
        self.lines = LineLimiter()
        #: and every seat's changes of a vote already cast
        self.vote_changes = ChangeLimiter()
        #: a host's pause between two lobbies (0 here; the runtime sets `bot.limits`' figure)
        self.lobby_cooldown = Cooldowns(0.0)
        #: each person's commands, on every platform (none here; the runtime sets the figures)
        self.commands = CommandLimiter(burst=0)

    @property
    def alert_after(self) -> float:
        """A deadline write failing for this many real seconds is reported to the alert
        sinks."""
        return self.deadlines.alert_after

    @alert_after.setter
    def alert_after(self, seconds: float) -> None:
        self.deadlines.alert_after = seconds

    @property
    def tick_backoff(self) -> Backoff:
        """How a deadline write the database refused is retried."""
        return self.deadlines.tick_backoff

    @tick_backoff.setter
    def tick_backoff(self, backoff: Backoff) -> None:
        self.deadlines.tick_backoff = backoff

    # --- plumbing -----------------------------------------------------------------------------

    def _refuse_while_closing(self, then: str) -> None:
        """While the process shuts down (`bot.ops.serve`) no game opens, fills or starts: the
        games already running carry on at the next start, and a lobby is there again then."""
        if self.closing:
            raise ServiceError(f"The bot is restarting; {then} in a minute.")

    async def _run_db(self, fn: Callable[[Session], T]) -> T:
        """Run ``fn`` in a fenced transaction, group-committed (`bot.service.journal.run`); a game
        another process took over stops here (`GameMoved`, raised on)."""
        try:
            return await journal.run(self._db, self.ownership, fn, self.on_db_call)
        except GameMoved as moved:
            self._moved(moved.game_id)
            raise

    async def write(self, fn: Callable[[Session], T]) -> T:
        """``fn(session)`` through the service's one writer, queued with the games' own writes
        (background jobs: `bot.protection.withdrawals`). ``fn`` must touch nothing but the
        session."""
        return await self._run_db(fn)

    def add_alert_sink(self, sink: AlertSink) -> None:
        """Add where alerts go (each problem once, one line); they are also logged."""
        self.alerts.add(sink)

    def subscribe(self, listener: GameListener) -> None:
        """Add a renderer. It gets each committed batch of events for every game."""

        async def deliver(item: tuple[LiveGame, Sequence[Event]]) -> None:
            await listener.on_events(*item)

        self._listeners.append(Line(deliver, type(listener).__name__))

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
        game_id = live.new_game_id()
        seed = seed if seed is not None else secrets.randbits(48)

        def create(session: Session) -> int:
            server_id = journal.open_game(
                session, game_id, config, seed, platform=platform,
                server_external_id=server_external_id, server_name=server_name,
                channel_id=channel_id, host_user_id=host_user_id, speed=speed,
            )  # fmt: skip
            self.ownership.create(session, game_id)
            return server_id

        server_id = await self._run_db(create)
        self.ownership.hold(game_id, 1)
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
        # the AI seats are taken as the host starts the game
        self._refuse_while_closing("start it again" if is_agent else "join again")
        async with game.lock:
            if game.status != "lobby":
                raise ServiceError("This game has already started; you can't join now.")
            if user_id is not None and game.seat_of_user(user_id) is not None:
                raise ServiceError("You are already in this game.")
            if user_id is not None and not is_agent:
                await self._check_consent(game, user_id)  # consent block below
            info = game.new_seat(user_id, is_agent, agent_kind, persona, name)
            await self._run_db(lambda session: journal.add_seat(session, game_id, info))
            game.seats.append(info)
            game.active_at = time.monotonic()  # (a refused join does not keep a lobby open)
            return info

    # --- consent (bot/protection/consent.py owns the rules)
    # ---------------------------------------------

    async def _check_consent(self, game: LiveGame, user_id: str) -> None:
        """Refuse a human on Discord/Slack who has not agreed to the current consent notice;
        raises `bot.protection.consent.ConsentRequired` (a ServiceError) carrying the notice to
        show."""
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
            await self._run_db(lambda session: journal.set_config(session, game_id, config))
            game.config = config
            game.active_at = time.monotonic()

    async def leave(self, game_id: str, user_id: str | None, *, seat: int | None = None) -> None:
        """Leave the lobby (by user id), or remove a lobby seat by number (agents)."""
        game = self._game(game_id)
        async with game.lock:
            if game.status != "lobby":
                raise ServiceError("The game has started; ask a moderator to replace you.")
            game.remove_seat(user_id, seat)

            seats = list(game.seats)
            await self._run_db(lambda session: journal.replace_seats(session, game_id, seats))
            game.active_at = time.monotonic()

    async def start(self, game_id: str) -> None:
        """Seat everyone (see `seating`), deal roles and open day 1. Fails, changing nothing,
        when the setup is impossible.

        The seat rows get their final indices in the same transaction that marks the game
        running, so a resumed game rebuilds the same table. Names, people, agent flags and
        personas stay with their seat (the very same `SeatInfo` objects, renumbered): only the
        indices change, so an adapter re-reads seat numbers from ``game.seats`` after this."""
        game = self._game(game_id)
        self._refuse_while_closing("start it again")
        with game.holding():  # (the agents see the game start when it starts)
            async with game.lock:
                if game.status != "lobby":
                    raise ServiceError("This game has already started.")
                t = game.clock.now()
                order = game.start_order()
                seated = [game.seats[i] for i in order]
                state, events = new_game(game.config, [s.name for s in seated], game.seed, t)

                def begin(session: Session) -> None:
                    journal.begin(session, game, order, state, events, t)

                await self._run_db(begin)
                game.begin(seated, state, t)
                self._attach_agents(game)
                self._advance_seqs(game, events)
                self.deadlines.arm(game)
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
        for its place in the release of the backlog, and is stamped then (`bot.service.outages`)."""
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
        # (outside a vote the engine refuses anyway; a bad name still lists the living)
        index = None if target is None else target_seat(state, seat, target, state.vote_targets)
        changed = seat in state.votes and state.votes[seat] != index
        if changed and (platform_id is None or platform_id not in game.client_ids):
            # (game time, as lines: a sped-up simulation is not throttled)
            wait = self.vote_changes.check(game_id, seat, game.clock.now().timestamp())
            if wait > 0:
                raise ChangeLimited(game.clock.seconds_to_real(wait))
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
        index = target_seat(state, seat, target, state.night_targets)
        return await self._act(
            game, lambda t: A.NightAct(seat, index, t), platform_id, at=at, source=(seat, "click")
        )

    async def end(self, game_id: str, reason: str = "ended by a moderator") -> None:
        game = self._game(game_id)
        if game.state is None:
            async with game.lock:
                game.status = "aborted"
                await self._run_db(lambda session: journal.abort_lobby(session, game_id, reason))
            game.finished.set()
            return
        await self._act(game, lambda t: A.Abort(t, reason), None)

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
        with game.holding():  # (a game of agents only: its time waits for this action)
            received = game.clock.now()
            seen = None if game.state is None else game.state.phase.seq
            async with game.lock:
                if platform_id is not None and platform_id in game.client_ids:
                    return False
                state = game.state
                if state is None:
                    raise ServiceError("The game hasn't started yet.")
                action = stamp(game, state, make, received, at, source, seen)
                if state.over and not isinstance(action, A.Tick):
                    raise RuleError("The game is over.")
                new, events = apply(state, action)  # RuleError: nothing stored, nothing changes
                if not events and platform_id is None:
                    return True  # a no-op (same vote twice, early tick): nothing to record
                seq = game.action_seq + 1

                def write(session: Session) -> None:
                    journal.write_action(session, game, seq, action, events, platform_id)

                await self._run_db(write)
                game.action_seq = seq
                note_applied(game, action, platform_id)
                game.state = new
                self._advance_seqs(game, events)
                self.deadlines.arm(game)
            self._dispatch(game, events)
            if new.over:
                await self._finish(game)
            return True

    @staticmethod
    def _advance_seqs(game: LiveGame, events: Sequence[Event]) -> None:
        game.event_seq += len(events)

    # --- outages of a platform's input (the deadlines and outages: bot/service/deadlines.py) -----

    def input_down(self, game_ids: Iterable[str], since: datetime | None = None) -> None:
        """The platform's input of these games is down since ``since`` (wall clock; None:
        now): their agents are paused and their phase clocks stand still until `input_back`.
        Games not running here are skipped."""
        self.deadlines.input_down(game_ids, since)

    async def input_back(
        self, game_ids: Iterable[str], first_typed: Mapping[str, datetime] | None = None
    ) -> None:
        """The platform's input of these games is back: each phase is extended by the time
        its input was down, its deadline armed again, and its backlog released (lines typed
        meanwhile, handed over through `say` with their moments, wait for their place).
        ``first_typed``: game id -> the moment of the first line typed meanwhile, when the
        adapter has read them back."""
        await self.deadlines.input_back(game_ids, first_typed)

    async def agent_gate(self, game_id: str, line: bool = False) -> None:
        """While the game's input is down an agent's action waits for its place in the backlog's
        release; a ``line`` due in a restart's outage is `Deferred` (planned again later)."""
        await self.deadlines.agent_gate(game_id, line)

    # --- ownership (bot/service/ownership.py)
    # ---------------------------------------------------------

    async def renew_leases(self) -> None:
        """Renew the leases of the games held here now (the keeper does it every third of a
        lease); a game another process took over stops here (`_moved`)."""
        await self.ownership.renew()

    def _moved(self, game_id: str) -> None:
        """Another process took the game over: stop driving it here, at once."""
        if not self.ownership.drop(game_id):
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

        self.alerts.background(stop(), f"stop {game_id}")
        game.finished.set()
        for told in self.on_moved:
            told(game_id)

    # --- delivery -----------------------------------------------------------------------------

    def _dispatch(self, game: LiveGame, events: Sequence[Event]) -> None:
        batch = list(events)
        self.graveyard.events(game, batch)
        for outbox in self._listeners:
            outbox.put((game, batch))
        for seat in game.outboxes:
            seen = [e for e in batch if visible(e, seat)]
            if seen:
                game.tell(seat, seen)

    def _attach_agents(self, game: LiveGame) -> None:
        if self.agent_factory is None:
            return
        for info in game.seats:
            if not info.is_agent or info.index in game.players:
                continue
            port = SeatPortImpl(self, game.id, info.index, game.clock)
            player = self.agent_factory(game, info, port, game.clock, game.agent_timers())
            game.players[info.index] = player
            deliver = partial(live.told, player)
            game.outboxes[info.index] = Line(deliver, f"{game.id}:{info.index}")

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
        game, _ = self._running(game_id)
        info = game.seat_to_hand_over(seat, user_id)
        if user_id is not None:
            await self._check_consent(game, user_id)
        async with game.lock:
            story = seat_story.handover(
                seat_story.kind(info.is_agent),
                seat_story.kind(agent_kind is not None),
                seat_story.phase_words(game.state),
                game.action_seq,
                game.clock.now(),
            )
            info.user_id = user_id
            info.is_agent = agent_kind is not None
            info.agent_kind = agent_kind

            await self._run_db(
                lambda session: journal.hand_over_seat(session, game_id, info, story)
            )
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
                    game.tell(seat, seen)
        return info

    async def _finish(self, game: LiveGame) -> None:
        state = game.state
        ended = state is not None and (state.winner or is_draw(state.winner, state.end_reason))
        game.status = "finished" if ended else "aborted"
        self.outages.forget(game.id)
        self.lines.forget(game.id)
        self.vote_changes.forget(game.id)
        await self.drain(game.id)
        for player in list(game.players.values()):
            await player.close()
        for outbox in list(game.outboxes.values()):
            await outbox.close()
        game.outboxes.clear()
        await self.ownership.let_go(game.id)
        game.finished.set()

    async def drain(self, game_id: str | None = None) -> None:
        """Wait until every listener and agent has been handed everything so far."""
        game = self.games.get(game_id) if game_id else None
        for outbox in self._listeners:
            await outbox.drain()
        if game is not None:
            for outbox in list(game.outboxes.values()):
                await outbox.drain()

    async def graveyard_say(self, game_id: str, seat: int, text: str) -> None:
        """A dead seat's line to the other dead (`bot.service.graveyard`); a living seat's is
        refused."""
        await self.graveyard.say(*self._running(game_id), seat, text)

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
        its clock wait, and the phase gets the time the game was down back
        (`bot.service.outages`)."""
        if game_id in self.games:
            return self.games[game_id]
        async with self.ownership.taken(game_id) as previous:  # (let go again if this fails)
            game = await recovery.read(self._run_db, self.scheduler, game_id, paused, resume=True)
            self.games[game_id] = game
            if game.state is None:
                return game
            if input_down and not game.state.over:
                since = recovery.down_since(game, previous, self.ownership.lease_seconds)
                self.outages.mark_down(game.id, game.clock, since, restart=True)
            history = game.replayed
            self._attach_agents(game)
            for seat in game.outboxes:
                seen = [e for e in history if visible(e, seat)]
                if seen:
                    game.tell(seat, seen)
            if game.state.over:  # crashed between the last action and marking the game finished
                await self._finish(game)
            else:
                self.deadlines.arm(game)
            return game

    async def replay(self, game_id: str) -> LiveGame:
        """The game rebuilt from its action log, read only: nothing is taken over, armed or
        attached (any process may do this, whoever drives the game)."""
        return await recovery.read(self._run_db, self.scheduler, game_id, paused=True)

    async def unfinished_games(
        self, platforms: Sequence[str] | None = None, servers: Sequence[str] | None = None
    ) -> list[str]:
        """Running games, newest first (only those on ``platforms``, and of the servers with
        the external ids ``servers``, when given)."""
        return await self._run_db(lambda s: recovery.unfinished(s, platforms, servers))

    async def history(self, game_id: str) -> list[dict[str, Any]]:
        """Every stored event of a game, as dicts, in order (for transcripts and exports)."""
        return await self._run_db(lambda session: journal.history(session, game_id))

    async def close(self) -> None:
        """Stop everything; the games this service held are released for the next process."""
        await self.ownership.stop_keeping()
        # (copies: a game may finish, or a seat be handed over, while one of these awaits)
        for game in list(self.games.values()):
            if game.deadline_handle is not None:
                game.deadline_handle.cancel()
            for player in list(game.players.values()):
                await player.close()
            for outbox in list(game.outboxes.values()):
                await outbox.close()
        for outbox in list(self._listeners):
            await outbox.close()
        self.alerts.cancel()
        await self.ownership.release_all()
        await asyncio.to_thread(self._db.close)
