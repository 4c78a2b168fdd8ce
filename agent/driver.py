"""Runs a synchronous :class:`~agent.base.Policy` as a live :class:`~agent.base.Player`.

The policy says what it wants to do next and when; the driver keeps one timer armed for that
moment and acts through the seat's port when it fires. There is no polling: the timer is
re-armed only when an event changes the plan, and at most one action is in flight, so the
same policy plays the same way here and in :func:`agent.fastsim.simulate_fast`.
"""

from __future__ import annotations

import logging
from datetime import datetime
from functools import partial

from agent.base import Clock, Deferred, Intent, Policy, SeatPort, TimerHandle, Timers
from games.errors import RuleError
from games.events import Event, GameOver

__all__ = ["PolicyPlayer"]

log = logging.getLogger(__name__)


class PolicyPlayer:
    """One agent seat: events go to the policy, its intents are carried out on time."""

    def __init__(self, policy: Policy, port: SeatPort, clock: Clock, timers: Timers) -> None:
        self.policy = policy
        self.port = port
        self.clock = clock
        self.timers = timers
        self._armed: Intent | None = None
        self._handle: TimerHandle | None = None
        self._busy = False
        self._closed = False
        #: bumped on every (dis)arm: a timer whose callback started anyway finds itself stale
        self._generation = 0
        #: the port has been failing since the last action that went through (an outage of
        #: the database or the platform): said once, not for every action refused meanwhile
        self._failing = False
        #: an event came while the action in flight was (its re-plan waits for that action)
        self._heard = False

    @property
    def armed(self) -> Intent | None:
        """The intent the timer is set for, if any (for tests and status pages)."""
        return self._armed

    async def on_event(self, event: Event) -> None:
        if self._closed:
            return
        self.policy.observe(event)
        if isinstance(event, GameOver):
            await self.close()
            return
        self._replan()

    async def close(self) -> None:
        self._closed = True
        self._disarm()

    def _disarm(self) -> None:
        self._generation += 1
        if self._handle is not None:
            self._handle.cancel()
        self._handle = None
        self._armed = None

    def _replan(self, skip: Intent | None = None) -> None:
        """Ask the policy again; touch the timer only when the answer changed (``skip``: an
        answer not to arm)."""
        if self._closed or self._busy:
            self._heard = True
            return  # the action in flight re-plans when it completes
        intent = self.policy.plan(self.clock.now())
        if intent == self._armed or (skip is not None and intent == skip):
            return
        self._disarm()
        if intent is None:
            return
        now = self.clock.now()
        when = intent.at if intent.at > now else now  # a time in the past fires promptly
        self._armed = intent
        self._handle = self.timers.call_at(
            when, partial(self._fire, self._generation, intent, when)
        )

    async def _fire(self, generation: int, intent: Intent, due: datetime) -> None:
        if self._closed or self._busy or generation != self._generation:
            return  # cancelled or superseded after the timer library had already started it
        self._generation += 1
        self._handle = None
        self._armed = None
        self._busy = True
        self._heard = False
        error: str | None = None
        try:
            await self._carry_out(intent, due)
        except Deferred:  # never typed (the process was down): planned again at the next event
            self._busy = False
            if self._heard:
                # ... or now, when that event came while the line waited (the time given back
                # when the input returned): else the seat waited for someone else's line. The
                # same line again waits for an event that changes the plan: fired now, it
                # would come out the moment the input is back
                self._replan(skip=intent)
            return
        except RuleError as err:  # the port reached the game, which refused: it works again
            error = str(err)
            self._port_works()
        except Exception as err:  # the port failed (network, platform): a refusal, not a crash
            self._port_failed(intent, err)
            error = f"could not {intent.kind}: {err}"
        else:
            self._port_works()
        finally:
            self._busy = False
        if self._closed:
            return
        self.policy.done(intent, error)
        self._replan()

    def _port_works(self) -> None:
        if self._failing:
            self._failing = False
            log.info("seat %s: acting again", self.port.seat)

    def _port_failed(self, intent: Intent, err: Exception) -> None:
        """One warning (with the traceback) when the port starts failing; the actions refused
        after it, until one goes through again, only at debug level."""
        if self._failing:
            log.debug("seat %s: %s failed again: %s", self.port.seat, intent.kind, err)
            return
        self._failing = True
        log.warning(
            "seat %s: %s failed; this seat's actions are refused until it works again",
            self.port.seat,
            intent.kind,
            exc_info=err,
        )

    async def _carry_out(self, intent: Intent, due: datetime) -> None:
        """Act through the port. A vote or night action whose timer ran late (the process
        stalled: a loaded machine, a long collection) counts as made when it was due, as a
        person's click on its way does: a stall across the deadline never loses it."""
        made = due if self.clock.now() > due else None
        if intent.kind == "say":
            await self.port.say(intent.text or "")
        elif intent.kind == "vote":
            await self.port.vote(intent.target, made=made)
        else:
            await self.port.night_act(intent.target or "", made=made)
