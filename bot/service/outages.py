"""Outages are symmetric: a silence only people suffer is one the agents keep too.

When a game's platform input is down (a gateway gap, a restart, a Slack socket gap) people
keep typing into their booths and nothing of theirs reaches the stage, while an agent, which
acts in-process, could go on talking. Played like that, an outage shows who is a person: the
stage carries only agent lines while it lasts, and only people's lines in the burst that
follows. So, while a game's input is down:

- its agents are paused: what an agent does meanwhile is held, with the moment it did it;
- its phase clock stops: the deadline is not armed, and when the input is back the phase is
  extended by the time it was down (`games.actions.Extend`, announced to everyone);

and when the input is back, the backlog (what people typed meanwhile, handed over by the
adapter through `GameService.say` with the moments the platform stamped, and what the agents
did meanwhile) is *released*: each line at its moment's place in a replay of the outage that
starts when the input is back (at the pace it was typed, or faster when the outage was longer
than the release may last, see `ReleaseWindow`), stamped when it is released. The agents are
live again from the start of the release, so they hear the backlog as it comes and answer in
it as they would have, between people's lines. A line typed before the phase's (old) deadline
is released before the (extended) deadline, so no line reaches the stage after its phase was
announced as over; one typed after it is placed by the phase current when it is released (at
night a bystander's line gets a note to its writer, as any night line does).

This module keeps the per-game state and the waiting; `GameService` calls it (the deadline,
the agents' ports, `say`), and adapters only report `input_down` / `input_back`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bot.service.clock import GameClock, utcnow

log = logging.getLogger(__name__)

#: the longest a release of the backlog may last, in real seconds (a longer outage is replayed
#: faster, keeping its order and proportions)
RELEASE_SECONDS = 30.0
#: an outage shorter than this (real seconds) extends nothing (a gateway resume is often
#: sub-second)
MIN_EXTENSION_SECONDS = 1.0


@dataclass
class ReleaseWindow:
    """The replay of one outage: what was made from ``since`` (when the input went down, or
    the first line typed after, when the adapter says) to ``back`` (wall clock); a moment
    ``m`` of that span is released at ``start + (m - since) * factor`` (real, monotonic
    seconds), one before ``since`` at the start."""

    since: datetime
    back: datetime
    start: float
    factor: float

    def slot(self, moment: datetime) -> float:
        """When (monotonic) a line made at ``moment`` is released."""
        offset = max(0.0, (moment - self.since).total_seconds())
        return self.start + offset * self.factor

    def covers(self, moment: datetime) -> bool:
        """Whether a line made at ``moment`` belongs to this outage's backlog."""
        return moment < self.back

    @property
    def ends(self) -> float:
        return self.slot(self.back)


@dataclass
class GameOutage:
    """One game's input outage: down since ``since`` (wall clock) and ``since_game`` (its game
    clock), until ``back`` is set."""

    since: datetime
    since_game: datetime
    back: asyncio.Event = field(default_factory=asyncio.Event)
    window: ReleaseWindow | None = None
    #: the outage of a restart: the agents were not running while it lasted
    restart: bool = False
    #: set once the input is back and the phase got its time back (`settle`)
    settled: asyncio.Event = field(default_factory=asyncio.Event)


class Outages:
    """The outage state of every game of one service."""

    def __init__(self, release_seconds: float = RELEASE_SECONDS) -> None:
        self.release_seconds = release_seconds
        self._down: dict[str, GameOutage] = {}
        #: the last release of each game (kept after it ends: a late handover still paces)
        self._windows: dict[str, ReleaseWindow] = {}
        #: each game's latest outage, until it is settled
        self._last: dict[str, GameOutage] = {}

    def is_down(self, game_id: str) -> bool:
        return game_id in self._down

    def down_since(self, game_id: str) -> datetime | None:
        outage = self._down.get(game_id)
        return None if outage is None else outage.since

    def mark_down(
        self, game_id: str, clock: GameClock, since: datetime, restart: bool = False
    ) -> bool:
        """The game's input is down since ``since`` (wall clock, aware); ``restart``: because
        the process was (the agents did not run meanwhile). False when it already was (the
        earlier start stands)."""
        if since.tzinfo is None:
            raise ValueError("since must be timezone-aware")
        if game_id in self._down:
            return False
        since = min(since, utcnow())
        since_game = min(clock.now(), clock.from_wall(since))
        self._down[game_id] = GameOutage(since, since_game, restart=restart)
        self._last[game_id] = self._down[game_id]
        log.info("game %s: platform input down since %s; agents paused", game_id, since)
        return True

    def mark_back(
        self, game_id: str, clock: GameClock, first: datetime | None = None
    ) -> tuple[float, ReleaseWindow] | None:
        """The game's input is back: the game seconds its phase is to be extended by, and the
        release of its backlog (None: it was not down). ``first``: the moment of the first
        line typed meanwhile, when the adapter has read them back (the release starts with
        it, not with the silence before it, which a restart only knows roughly)."""
        outage = self._down.pop(game_id, None)
        if outage is None:
            return None
        back = utcnow()
        gap = max(0.0, (back - outage.since).total_seconds())
        anchor = outage.since if first is None else min(max(outage.since, first), back)
        typed = max(0.0, (back - anchor).total_seconds())
        span = min(typed, self.release_seconds)
        factor = 1.0 if typed <= self.release_seconds else self.release_seconds / typed
        window = ReleaseWindow(anchor, back, time.monotonic(), factor)
        outage.window = window
        self._windows[game_id] = window
        # The phase gets back what the clock ran while the input was down, and at least the
        # release's length in game time (a clock that stood still over a restart ran nothing)
        lost = (clock.now() - outage.since_game).total_seconds()
        extension = max(lost, span * clock.speed)
        if gap < MIN_EXTENSION_SECONDS:
            extension = 0.0
        outage.back.set()
        log.info(
            "game %s: platform input back after %.1f s; backlog released over %.1f s",
            game_id, gap, span,
        )  # fmt: skip
        return extension, window

    def forget(self, game_id: str) -> None:
        outage = self._down.pop(game_id, None)
        if outage is not None:
            outage.back.set()
        self._windows.pop(game_id, None)
        self.settle(game_id)

    def settle(self, game_id: str) -> None:
        """The game's input is back and its phase got its time back (or it is gone)."""
        outage = self._last.pop(game_id, None)
        if outage is not None:
            outage.settled.set()

    async def restart_line(self, game_id: str, finished: asyncio.Event) -> bool:
        """An agent's line came due while the game's input is down after a restart: wait until
        the outage is settled; True (the line is to be planned again, never typed: the agent
        was not running during most of the outage, and a line fired at the resume would come
        out at the end of the backlog, with every other agent's). False: not such an outage."""
        outage = self._down.get(game_id)
        if outage is None or not outage.restart:
            return False
        settled = asyncio.ensure_future(outage.settled.wait())
        done = asyncio.ensure_future(finished.wait())
        try:
            await asyncio.wait({settled, done}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            settled.cancel()
            done.cancel()
        return True

    async def wait_back(self, game_id: str, finished: asyncio.Event) -> ReleaseWindow | None:
        """Wait while the game's input is down (or until it finishes); the release it came back
        with (None: it was not down, or it finished)."""
        outage = self._down.get(game_id)
        if outage is None:
            return None
        back = asyncio.ensure_future(outage.back.wait())
        done = asyncio.ensure_future(finished.wait())
        try:
            await asyncio.wait({back, done}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            back.cancel()
            done.cancel()
        return outage.window

    async def release(self, game_id: str, finished: asyncio.Event, moment: datetime) -> bool:
        """Wait until a line (or an agent's action) made at ``moment`` (wall clock) is due:
        while the input is down, and then until its place in the release. True when it was
        held (it is then stamped when released, not at ``moment``)."""
        window = await self.wait_back(game_id, finished)
        if window is None:
            window = self._windows.get(game_id)
            if window is None or not window.covers(moment) or time.monotonic() >= window.ends:
                return False
        while not finished.is_set():
            delay = window.slot(moment) - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            if not self.is_down(game_id):
                return True
            # the input went down again meanwhile: wait for that outage's release too
            window = await self.wait_back(game_id, finished) or window
        return False


def down_since_restart(
    clock: GameClock,
    last_t: datetime | None,
    previous_expiry: datetime | None,
    lease_seconds: float,
    now: datetime,
) -> datetime:
    """When the input of a game resumed after a restart went down (wall clock): the last
    moment its previous process is known to have driven it. That process renewed its lease
    every third of the lease time, so the lease it left ran out at most ``lease_seconds``
    after (a lease released on a clean stop ran out at the stop); and it recorded the game's
    last action (game time, the wall clock at speed 1). The later of the two, never after
    now; nothing known: now."""
    known: list[datetime] = []
    if previous_expiry is not None:
        known.append(previous_expiry - timedelta(seconds=lease_seconds))
    if last_t is not None and clock.speed == 1.0:
        known.append(last_t)
    return min(max(known), now) if known else now
