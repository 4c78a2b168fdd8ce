"""What an agent is given and what it gives back.

An agent acts only through a :class:`SeatPort` (the same operations a human's adapter calls)
and learns about the game only from the events its seat may see. Time is game time from a
:class:`Clock`; waiting is done with :class:`Timers`, never with polling loops, so a game at
``--speed 10`` runs agent delays ten times faster, and a maximum-speed simulation can drive the
same decision code without sleeping.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from games.events import Event


class Deferred(Exception):
    """Raised by a port's ``say`` that did not carry the line out and did not refuse it
    either: it came due while the seat's process was down (a restart), so it was never typed.
    The player plans again at its next event (which tells it the time given back), and the
    line is not counted as said or refused."""


class SeatPort(Protocol):
    """The actions of one seat. Names are character names; errors are ``games.RuleError``."""

    @property
    def seat(self) -> int: ...

    async def say(self, text: str) -> None: ...

    async def vote(self, target: str | None, *, made: datetime | None = None) -> None:
        """Vote for a player by name; None abstains. ``made``: the game time the seat chose
        it, when it acts later than that (a timer due before the deadline that ran after it,
        the process stalled): counted as made then while the phase is still open, as a
        person's click still on its way is."""
        ...

    async def night_act(self, target: str, *, made: datetime | None = None) -> None: ...


class Clock(Protocol):
    def now(self) -> datetime:
        """Current game time (timezone-aware UTC)."""
        ...

    def seconds_to_real(self, game_seconds: float) -> float:
        """How many real seconds ``game_seconds`` of game time take at this clock's speed."""
        ...


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Timers(Protocol):
    """Call back at a game time. Implemented by the bot on APScheduler (no polling)."""

    def call_at(self, when: datetime, callback: Callable[[], Awaitable[None]]) -> TimerHandle: ...


class Player(Protocol):
    """An agent seat as the service sees it: it is told events and acts through its port."""

    async def on_event(self, event: Event) -> None:
        """Called in order with every event this seat may see (and only those)."""
        ...

    async def close(self) -> None:
        """The game ended or the process is stopping: cancel timers and pending work."""
        ...


IntentKind = Literal["say", "vote", "night_act"]


@dataclass(frozen=True)
class Intent:
    """A synchronous policy's next wish: do ``kind`` at game time ``at``.

    For ``vote``, ``target`` None abstains. Policies that return intents can be driven both
    live (:mod:`agent.driver`) and in a maximum-speed simulation (:mod:`agent.fastsim`).
    """

    at: datetime
    kind: IntentKind
    text: str | None = None
    target: str | None = None


class Policy(Protocol):
    """Synchronous decision code: observes visible events, proposes the next intent."""

    def observe(self, event: Event) -> None: ...

    def plan(self, now: datetime) -> Intent | None:
        """The next thing to do (at or after ``now``), or None to do nothing for now.

        Must be stable: asking again without new events returns the same intent.
        """
        ...

    def done(self, intent: Intent, error: str | None) -> None:
        """The intent was carried out (error None) or refused with ``error``."""
        ...
