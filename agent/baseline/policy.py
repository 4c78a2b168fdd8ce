"""The baseline player: templates for words, a suspicion score for votes, random human delays.

It is the offline default when no LLM is configured and the yardstick every evaluation
compares against, so it has to play a believable, not a clever, game. It learns only from
the events its seat may see (it drops any other event it is handed) and never needs the
game state.

Timing follows the LLMafia finding that people speak in bursts and fall silent once they
have said their share: while this seat's share of the phase's messages is below 1/N it
answers within seconds, above it waits longer and may stay quiet. Every planned action is
kept until something relevant changes, so ``plan`` is stable and a busy chat never
postpones a line forever. All delays are game seconds.

This module is the flow: :class:`BaselinePolicy` takes in an event (a handler of
:mod:`~agent.baseline.hearing`), plans the earliest of its night action
(:mod:`~agent.baseline.acting`), vote (:mod:`~agent.baseline.voting`) and line
(:mod:`~agent.baseline.talk`), and records how each came out. What the seat knows, and its
reads of the table, are its :class:`~agent.baseline.seat.SeatState`.
"""

from __future__ import annotations

import random
from datetime import datetime

from agent.base import Intent
from agent.baseline.acting import done_act, plan_act
from agent.baseline.common import _NEVER
from agent.baseline.hearing import HANDLERS, on_stage_line
from agent.baseline.ledger import TableLedger
from agent.baseline.seat import SeatState
from agent.baseline.talk import done_say, plan_speak
from agent.baseline.voting import done_vote, plan_vote, vote_time
from games.events import Event, GameOver, MessageAccepted, PlayerEliminated
from games.state import PhaseKind

__all__ = ["BASELINE_NAME", "BaselinePolicy", "BaselineTable"]

#: how evaluations and logs name this policy
BASELINE_NAME = "baseline"


class BaselinePolicy(SeatState):
    """Template talk, heuristic votes, human-like timing. See the module docstring.

    ``ledger``: leave it out (the policy then keeps its own), unless every seat of a game runs
    in one process and whoever passes the shared ledger also feeds it every event of the game,
    in order, before any seat observes it (see :class:`TableLedger`, :class:`BaselineTable`).
    """

    __slots__ = ()

    name = BASELINE_NAME

    # ==== observing ============================================================================

    def observe(self, event: Event) -> None:
        """Take in one event. Events this seat may not see are ignored, never learned from."""
        seen = event.visible_to
        if seen is not None and self.seat not in seen:  # games.events.visible, inlined
            return
        cls = type(event)
        if self._gone and cls is not GameOver:
            return  # eliminated: nothing left to decide, so nothing left to learn
        if self._own_ledger:
            self._ledger.take(event)
        handler = HANDLERS.get(cls)
        if handler is not None:
            handler(self, event)

    # ==== who is who ===========================================================================

    @property
    def role(self) -> str | None:
        return self._role

    @property
    def is_mafia(self) -> bool:
        return self._mafia

    def suspicion(self) -> dict[int, float]:
        """Town's view: how likely each living other player is mafia (higher = more)."""
        return dict(self._scores("suspicion"))

    def danger(self) -> dict[int, float]:
        """Mafia's view: how much each living bystander threatens the mafia."""
        return dict(self._scores("danger"))

    def share(self) -> float:
        """This seat's share of the current phase's player messages."""
        chat = self._chat
        if chat.total == 0:
            return 0.0
        return chat.msgs.get(self.seat, 0) / chat.total

    def means_to_talk_today(self) -> bool:
        """In a day's discussion: this seat drew a day with something to say (its count of
        lines is not nil), whether or not a line of it still fits in the time left."""
        return self._kind is PhaseKind.DAY and self._place == "stage" and self._budget > 0

    # ==== planning =============================================================================

    def plan(self, now: datetime) -> Intent | None:
        """The next action; the same one until an observed event or ``done`` changes it."""
        if not self._dirty:
            return self._retargeted(now) if self._retarget else self._best
        self._dirty = self._retarget = False
        return self._issue(self._refresh(now))

    def _retargeted(self, now: datetime) -> Intent | None:
        """The plan once votes moved the tally and nothing else changed: the same, with its
        vote's target worked out again when the vote comes first. (What ``_refresh`` would
        give: the moments of the act, the vote and the line are drawn already and none of
        them, nor the line, drafted or given up once planned, depends on the tally.)"""
        self._retarget = False
        best = self._best
        if best is None or best.kind != "vote":
            return best
        return self._issue(plan_vote(self, now))

    def _issue(self, best: Intent | None) -> Intent | None:
        """``best`` becomes the plan, and an intent handed out this phase."""
        self._best = best
        if best is not None and id(best) not in self._issued_ids:
            self._issued.append(best)
            self._issued_ids.add(id(best))
        return best

    def _refresh(self, now: datetime) -> Intent | None:
        if self._over or self._kind is None or self._role is None or self.seat not in self._alive:
            return None
        best = plan_act(self, now) if self._night else None
        # the vote is settled by its time first: whom it is for (the costly part, and free
        # of chance) is worked out only if it comes first
        vote_at = vote_time(self) if self._voting else None
        if vote_at is not None and (best is None or vote_at < best.at):
            best = None
        else:
            vote_at = None
        if self._place is not None:
            speak = plan_speak(self, now)
            if speak is not None:
                if vote_at is not None:
                    if speak.at < vote_at:
                        return speak  # on a tie the vote or act goes first
                elif best is None or speak.at < best.at:
                    return speak
        if vote_at is not None:
            return plan_vote(self, now)
        return best

    # ==== feedback =============================================================================

    def done(self, intent: Intent, error: str | None) -> None:
        """Record the outcome; on a refusal try something else, never the same thing again."""
        self._dirty = True
        heard_back = False  # the line came back as an event first, and was counted then
        if intent.kind == "say" and intent.text:
            folded = intent.text.casefold()
            heard_back = folded in self._said
            self._said.add(folded)
        if id(intent) not in self._issued_ids and intent not in self._issued:
            return  # planned in an earlier phase: its phase is gone, and so is its meaning
        if intent.kind == "say":
            done_say(self, intent, error, heard_back)
            return
        target = self._seat_of(intent.target)
        if intent.kind == "vote":
            done_vote(self, intent, target, error)
        else:
            done_act(self, intent, target, error)

    def _seat_of(self, name: str | None) -> int | None:
        if name is None:
            return None
        # (the table's names, case-folded, as the ledger keeps them from the same event)
        return self._ledger.seat_of.get(name.casefold())


class BaselineTable:
    """Every seat of one game played by a :class:`BaselinePolicy`, all in one process.

    For simulations (:func:`agent.fastsim.simulate_fast`): the seats share one
    :class:`TableLedger`, :meth:`deliver` records each event once and hands it to every seat
    that may see it (what each seat's ``observe`` would do, minus the per-seat checks and
    dispatch), and :meth:`next_intent` asks only the seats whose plan may have changed. Each seat
    decides exactly as it would alone.
    """

    def __init__(self) -> None:
        self.ledger = TableLedger()
        self.policies: list[BaselinePolicy] = []
        #: by seat, when its plan (``_best``) is due, or never: what :meth:`next_intent`
        #: compares (kept as each plan is made; the seats are planned by it alone)
        self._due: list[datetime] = []
        #: the seats still playing (not eliminated), in seat order, with their index: the
        #: only ones an event can change before the game's end, or that may plan again
        self._live: list[tuple[int, BaselinePolicy]] = []

    def seat(self, seat: int, name: str, rng: random.Random) -> BaselinePolicy:
        """Add a seat (in seat order)."""
        policy = BaselinePolicy(seat, name, rng, ledger=self.ledger)
        self._live.append((len(self.policies), policy))
        self.policies.append(policy)
        self._due.append(_NEVER)
        return policy

    def _drop_gone(self) -> None:
        """Seats just eliminated leave the live list. Their plan is nothing from now on
        (what ``_refresh`` gives an eliminated seat, planned here once and for all: an
        eliminated seat takes in no event but the game's end, after which nobody plans)."""
        live = []
        for i, policy in self._live:
            if policy._gone:
                policy._dirty = policy._retarget = False
                policy._best = None
                self._due[i] = _NEVER
            else:
                live.append((i, policy))
        self._live = live

    def deliver(self, event: Event) -> None:
        ledger = self.ledger
        ledger.take(event)
        cls = type(event)
        if isinstance(event, MessageAccepted) and event.place == "stage":
            # every line reaches every seat, but most seats have nothing to do about it
            if ledger.reading is None:
                return
            s, t, target, claimed = event.seat, event.t, ledger.target, ledger.claimed
            addressee = ledger.addressee
            folded = ledger.reading.folded
            if target is None and addressee is None:  # (the usual line: the tests below,
                for _, policy in self._live:  # less those about whom it names)
                    if (policy._hears or policy._speak_folded == folded) and (
                        policy.seat != s and (policy._hears or policy._speak is not None)
                    ):
                        on_stage_line(policy, s, t)
                return
            for _, policy in self._live:
                # does the line concern this seat (see hearing.on_stage_line)? cheapest test first
                if policy._hears and policy.seat != s:
                    on_stage_line(policy, s, t)
                    continue
                if (target is not None or addressee is not None) and (
                    claimed
                    or target == policy.seat
                    or target in policy._partners
                    or addressee == policy.seat
                ):
                    on_stage_line(policy, s, t)
                    continue
                if (  # it is my planned line, word for word
                    policy._speak_folded == folded
                    and policy._speak is not None
                    and policy.seat != s
                ):
                    on_stage_line(policy, s, t)
            return
        handler = HANDLERS.get(cls)
        if handler is None:
            return
        seen = event.visible_to
        if cls is GameOver:  # (the one event an eliminated seat still takes in)
            for policy in self.policies:
                if seen is None or policy.seat in seen:
                    handler(policy, event)
            return
        for _, policy in self._live:
            if seen is None or policy.seat in seen:
                handler(policy, event)
        if cls is PlayerEliminated:
            self._drop_gone()

    def next_intent(self, now: datetime) -> tuple[Intent | None, int]:
        """The earliest planned intent and its seat (on a tie the lowest seat), after asking
        again only the seats told something new since they last planned."""
        due = self._due
        for i, policy in self._live:  # (an eliminated seat's plan is nothing: _drop_gone)
            if policy._dirty:  # (policy.plan(now), inlined: once per seat and step)
                policy._dirty = policy._retarget = False
                intent = policy._best = policy._refresh(now)
                if intent is None:
                    due[i] = _NEVER
                    continue
                due[i] = intent.at
                if id(intent) not in policy._issued_ids:
                    policy._issued.append(intent)
                    policy._issued_ids.add(id(intent))
        if not due:
            return None, -1
        # (the earliest moment, and the first seat due then: on a tie the lowest seat)
        who = due.index(min(due))
        policy = self.policies[who]
        best = policy._best
        if best is None:
            return None, -1
        # a vote's target is worked out only for the intent taken (its moment stays)
        if policy._retarget:
            best = policy._retargeted(now)
        return best, who
