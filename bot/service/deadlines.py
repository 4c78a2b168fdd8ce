"""Deadlines: each phase's end, and the outages of a platform's input that stop its clock.

`Deadlines.arm` keeps a timer at the current phase's deadline (plus the deadline's grace,
`bot.service.moments.grace`); when it fires, `tick` ends the phase through the service's own
way to apply an action. A tick the database refuses changes nothing: it is retried with backoff
(the phase then ends when the retry is stored, never before the deadline), and a failure that
lasts ``alert_after`` seconds is told once to the game's host (`bot.service.alerts`). The
watchdog (`rearm_overdue`, run at each lease renewal) re-arms a deadline left unarmed.

While a game's platform input is down (`input_down`) its deadline is not armed and its agents
wait (`agent_gate`); when the input is back (`input_back`) the phase is extended by the time it
was down and the deadline armed again. `bot.service.outages` owns the outage's rules and state;
this module does what the service does about them.

`Deadlines` does not know the service: it is given the service's running games, its outages, its
alerts and its way to apply an action (`Act`), so it never imports `bot.service.port`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import datetime
from functools import partial
from typing import Protocol

from agent.base import Deferred
from bot.errors import db_reason
from bot.service.alerts import Alerts
from bot.service.clock import utcnow
from bot.service.live import LiveGame
from bot.service.moments import grace
from bot.service.outages import Outages
from bot.service.ownership import GameMoved
from bot.service.timers import Backoff
from games import actions as A
from games.actions import Action

log = logging.getLogger("bot.service.port")


class Act(Protocol):
    """The service's way to apply an action to a game (`GameService._act`)."""

    def __call__(
        self,
        game: LiveGame,
        make: Callable[[datetime], Action],
        platform_id: str | None,
    ) -> Awaitable[bool]: ...


class Deadlines:
    """The deadline timers of the games in ``games`` and what an outage of their input does
    to them (see the module docstring)."""

    def __init__(
        self,
        games: Mapping[str, LiveGame],
        outages: Outages,
        alerts: Alerts,
        act: Act,
        *,
        alert_after: float,
        tick_backoff: Backoff,
    ) -> None:
        self.games = games
        self.outages = outages
        self.alerts = alerts
        self.act = act
        #: a deadline write failing for this many real seconds is reported to the alert sinks
        self.alert_after = alert_after
        self.tick_backoff = tick_backoff

    # --- the deadline -------------------------------------------------------------------------

    def arm(self, game: LiveGame, retry_in: float | None = None) -> None:
        """Make sure the current phase's deadline will fire: a timer at the deadline, or
        (``retry_in``) a retry of a failed tick that many real seconds from now. Armed means a
        pending timer or a tick being written: never a mark alone (a tick that failed leaves
        its retry armed, see `tick`)."""
        state = game.state
        if state is None:
            return
        handle = game.deadline_handle
        if state.over or state.phase.deadline is None or self.outages.is_down(game.id):
            game.disarm()  # (while the input is down the clock stands still: armed when back)
            return
        if retry_in is None and game.deadline_armed():
            return
        if handle is not None:
            handle.cancel()
        deadline = state.phase.deadline
        phase_seq = state.phase.seq

        async def fire() -> None:
            await self.tick(game, phase_seq, deadline)

        game.armed_phase = phase_seq
        game.deadline_handle = (
            # (a game of agents only: not before its agents' work in flight is in)
            game.timers.call_at(deadline + grace(game), fire, after_holds=game.agents_only())
            if retry_in is None
            else game.timers.call_later(retry_in, fire)
        )

    async def tick(self, game: LiveGame, phase_seq: int, deadline: datetime) -> None:
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
                # stamped at the deadline, applied a grace after it (`bot.service.moments.grace`)
                await self.act(game, lambda t: A.Tick(deadline, max(t, deadline)), None)
            else:  # a retry: the phase ends when the database finally stores it
                await self.act(game, lambda t: A.Tick(max(t, deadline)), None)
        except GameMoved:
            return  # another process has the game now (the service stopped it here)
        except Exception as exc:
            failed = exc
        finally:
            game.ticking = False
        if failed is None:
            game.tick_stored()
        current = game.state
        if current is None or current.over or current.phase.seq != phase_seq:
            return
        if failed is None:  # stored but the phase goes on (nothing was due): wait again
            self.arm(game)
            return
        delay, lasting = game.tick_failed(self.tick_backoff)
        reason = db_reason(failed)
        log.warning(
            "game %s: the deadline could not be stored (attempt %d: %s); retrying in %.1f s",
            game.id, game.tick_failures, reason, delay,
        )  # fmt: skip
        self.arm(game, retry_in=delay)
        if not game.alerted and lasting >= self.alert_after:
            game.alerted = True
            self.alerts.alert(
                game,
                f"the phase should have ended {lasting:.0f} s ago, but the database refuses "
                f"to store it ({reason}). I keep retrying; the game goes on by itself as soon "
                "as the database accepts writes again.",
            )

    def rearm_overdue(self) -> None:
        """The watchdog: any running game whose deadline has passed with nothing armed to end
        its phase gets its timer again (whatever left it unarmed)."""
        for game in list(self.games.values()):
            state = game.state
            if state is None or state.over or state.phase.deadline is None:
                continue
            if self.outages.is_down(game.id):
                continue  # its clock stands still until the input is back
            if not game.deadline_armed() and state.phase.deadline < game.clock.now():
                log.warning("game %s: re-arming an overdue deadline", game.id)
                self.arm(game)

    # --- outages of a platform's input (bot/service/outages.py owns the rules) ----------------

    def input_down(self, game_ids: Iterable[str], since: datetime | None = None) -> None:
        """See `bot.service.port.GameService.input_down`."""
        when = since or utcnow()
        for game_id in game_ids:
            game = self.games.get(game_id)
            if game is None or game.state is None or game.state.over:
                continue
            if self.outages.mark_down(game_id, game.clock, when):
                self.arm(game)  # (disarms it)

    async def input_back(
        self, game_ids: Iterable[str], first_typed: Mapping[str, datetime] | None = None
    ) -> None:
        """See `bot.service.port.GameService.input_back`."""
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
                    await self.act(game, partial(A.Extend, seconds=extension), None)
                except Exception:  # the phase goes on with its old deadline
                    log.exception("game %s: could not extend the phase", game_id)
            self.outages.settle(game_id)
            self.arm(game)

    async def agent_gate(self, game_id: str, line: bool = False) -> None:
        """See `bot.service.port.GameService.agent_gate`."""
        game = self.games.get(game_id)
        if game is not None and self.outages.is_down(game_id):
            if line and await self.outages.restart_line(game_id, game.finished):
                raise Deferred("the line came due while the bot was restarting")
            await self.outages.release(game_id, game.finished, utcnow())
