"""The LLM agent: a hidden player that decides when to talk, what to say, and how to vote.

It follows the "Time to Talk" design (a *scheduler* prompt answers ``<send>`` or ``<wait>``, a
*generator* prompt writes the line, typing takes about a second per word) but is event-driven
rather than polled:

* **When to consult the scheduler.** After new messages, debounced (a short random pause after
  the latest one, never longer than ``max_debounce_s`` after the first unanswered one), once
  ``consult_after`` messages by others came since the last consultation (fewer when one names
  the seat), after a quiet spell (jittered; chatter too thin to ask again leaves its timer
  running), and shortly after a phase opens, so the agent can speak first. Never
  more often than ``min_consult_gap_s``, and never when it cannot speak (out of the game, a
  bystander at night, the game over). All times are game time on the :class:`Timers` port.
* **Bursts.** A ``<send>`` while the seat is below its share of the talk commits to up to
  ``burst_lines`` lines: each next one is written, without asking again, once ``burst_after``
  messages by others came after the last was posted, while the seat is still below its share
  (a burst in course stands for the consultations, unless someone names the seat; a dropped
  line, a ``<send>`` at its share or a new phase ends it). Fewer questions for the same lines.
* **One request in flight.** At most one LLM request per agent at a time; whatever wanted a
  consultation meanwhile is remembered as a single flag and served once when it completes.
  In a phase where the seat owes a vote or night action, it decides first and talks after.
* **Typing.** After ``<send>`` the line is generated, then "typed" (``seconds_per_word`` per
  word, capped) on a timer, then posted through the seat port, unless meanwhile the phase
  ended, or the chat moved on (``discard_after_messages`` new messages by others more than the
  table's recent pace brings in the typing time, or someone named the agent): then the draft
  is discarded, or regenerated once (``discard_policy``).
* **Votes and night actions.** The model gets the exact list of legal names; its answer must
  name exactly one of them (whole name, any case); one corrective retry; then a heuristic
  target from a :class:`~agent.baseline.BaselinePolicy` fed the same events, always legal and
  logged as a fallback. A hard timer at ``fallback_at`` of the phase casts that fallback if
  the model has not answered, so the agent always votes before the deadline. A model answer
  that arrives after the fallback was cast *replaces* the vote if it is still at least
  ``deadline_margin_s`` before the deadline (a vote may be changed until then), and is only
  logged otherwise.
* **Never mute, never random.** When the model fails one decision (an error, a time-out, a
  spent budget, a refusal, an unusable answer), the seat takes *that* decision the way the
  baseline agent in its place would (a *shadow* :class:`~agent.baseline.BaselinePolicy` with
  people's timing, fed every event of the seat): the scheduler's send/wait from whether the
  shadow would speak now, a line from the shadow's lines, a vote from its scores; each is a
  decision record with ``fallback`` set. And in a day's discussion the seat is never silent
  when the shadow would have spoken: if it has said nothing by the shadow's next line
  (clamped to ``floor_at`` of the phase, seen afresh after every event), it types the
  shadow's line (or, when the line the shadow drew would come too late for the phase, one
  composed at the floor's latest moment); the shadow of an LLM seat never draws a day with
  nothing to say (``SHADOW_TIMING``), so the seat speaks on every day it is alive. The floor
  waits (to its latest moment) for a line the model is writing, and a model line finished
  after the floor spoke is dropped: one line in the seat's turn, never two.
* **Slow models.** The seat measures its model's latency as it plays. Decisions come first
  (a vote or night action, then talking); background work (reflection, suspicion) waits
  until its expected length fits before the next critical call (a consultation may wait
  ``background_wait_s``, a decision not at all), is skipped when it would run past its phase's
  end, is sent once (no retries, a deadline at the phase's end), and is cancelled when a
  decision comes due meanwhile, or a consultation has waited ``background_wait_s`` for it. A
  vote is asked early enough for two answers to come back before the fallback, and a model
  too slow for that is asked near the end of the day's discussion, its answer cast when
  people vote (`agent.llm_seat.votes`); the scheduler is never consulted more often than its
  answers come back.
* **Degradation.** When the token budget is spent, after ``max_failures`` failed calls in a
  row (a timed-out call counts half: a slow server is not a broken one), or
  ``max_invalid_streak`` unusable answers in a row, the seat hands over to the
  baseline policy (with quieter timing) for the rest of the game, and logs that it did.

Everything the model is told comes from :class:`~agent.knowledge.SeatKnowledge`, filled only
with the events this seat was given: a bystander's prompts cannot contain den lines or mafia
names because the agent never has them.

**Memory and learning** (optional: a :class:`~agent.memory.seatmind.SeatMind`). The mind sees
the same events; its retrieval memory, key moments, latest reflection, suspects in focus and
advice from past games go into the prompts (bounded, so tokens per call stay flat), its role's
strategy note into the static part. Before the first prompt the mind is loaded from disk (the
first job in the request slot). Once per phase, at its start, the seat reflects
(:mod:`agent.reflection`: three calls in the same slot, after a vote that is already due and
before talking). When the game ends it hands its experience to the pool, in a task of its own
(``debrief_task``) that outlives the seat; a seat whose reflections were skipped or cut off in
play (they give way to decisions) first reflects on its last phase then, when no critical call
is left to delay, so its experience is not lost.

**A phase given time back** (``PhaseExtended``) ends later for the seat too: talk and the floor
read the new deadline, the vote's fallback moves to the same fraction of the longer phase, and
the calls in flight are cut off that much later.

**Where it lives.** This module holds the events, the one request slot and memory; the rest is
in :mod:`agent.llm_seat`, one layer a module: ``core`` (state, the model call, the decision log,
timers, degrading), ``votes``, ``floor`` (the shadow baseline's fallbacks and the never-mute
floor) and ``talk`` (scheduler, generator, typing), with ``settings`` and ``planning``
(latencies) beside them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from datetime import datetime, timedelta
from typing import Any

from agent.decisions import flush_log
from agent.llm_seat.core import Degrade
from agent.llm_seat.planning import CRITICAL_KINDS, PAST_PHASE
from agent.llm_seat.settings import LLMPlayerSettings
from agent.llm_seat.talk import TalkingSeat
from agent.prompting import TargetKind
from games.events import (
    Event,
    GameOver,
    MessageAccepted,
    NightActionRecorded,
    PhaseExtended,
    PhaseStarted,
    PlayerEliminated,
    VoteCast,
)
from games.state import PhaseKind

__all__ = ["LLMPlayer", "LLMPlayerSettings"]

log = logging.getLogger(__name__)


class LLMPlayer(TalkingSeat):
    """An LLM-driven seat. See the module docstring for how it decides and when; its state and
    parts are in :mod:`agent.llm_seat`."""

    # --- the Player protocol ----------------------------------------------------------------------

    async def on_event(self, event: Event) -> None:
        if self._closed or not self.knowledge.observe(event):
            return
        try:
            self.record.observe(event)
            if self._degraded is None:
                self.shadow.observe(event)
                self._seen.append(event)
            else:
                self.fallback.observe(event)
        except Exception:  # the helpers must never take the LLM seat down with them
            log.exception("seat %s: the baseline's record failed to observe %s", self.seat, event)
        if self.mind is not None:
            try:
                self.mind.observe(event)
            except Exception:  # nor must its memory
                log.exception("seat %s: memory failed to observe %s", self.seat, event)
            if isinstance(event, GameOver):
                self._start_debrief()
        self._last_event = event
        if self._degraded is not None:
            await self._degraded.on_event(event)
            return
        if isinstance(event, GameOver):
            await self.close()
        elif isinstance(event, PhaseStarted):
            self._on_phase(event)
        elif isinstance(event, PhaseExtended):
            self._on_extended(event)
        elif isinstance(event, MessageAccepted):
            if event.seat == self.seat:
                self._shadow_spoke(event)
            self._on_message(event)
            self._arm_floor(event.t)  # the shadow's next line may have moved (or gone)
        elif isinstance(event, PlayerEliminated) and event.seat == self.seat:
            self._stand_down("out of the game")
        elif isinstance(event, VoteCast) and event.voter == self.seat:
            self._settled("vote", event.phase_seq, event.target_name)
        elif isinstance(event, NightActionRecorded) and event.seat == self.seat:
            self._settled("night_action", self.knowledge.phase_seq, event.target_name)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._cancel_timers()
        # Never cancel a request that is inside the seat port: the service may be finishing
        # the game in that very call (and closing us from there).
        if self._task is not None and not self._task_in_port:
            self._task.cancel()
        if self._degraded is not None:
            await self._degraded.close()
        if self.mind is not None and self.debrief_task is None:
            try:  # stopped mid-game (shutdown, seat handed over): keep memory for a resume
                await self.mind.save()
            except Exception:
                log.exception("seat %s: saving memory failed", self.seat)
        try:
            await flush_log(self.decisions)
        except Exception:
            log.exception("seat %s: flushing the decision log failed", self.seat)

    # --- memory and learning ----------------------------------------------------------------------

    def _start_debrief(self) -> None:
        if self.debrief_task is not None or self.mind is None:
            return
        self.debrief_task = asyncio.create_task(self._debrief(), name=f"debrief-{self.seat}")
        if self._learning_tasks is not None:
            tasks = self._learning_tasks
            tasks.add(self.debrief_task)
            self.debrief_task.add_done_callback(tasks.discard)

    async def _debrief(self) -> None:
        """Hand the game's experience to the pool, then drop (or keep) the memory on disk."""
        mind = self.mind
        assert mind is not None
        try:
            if self.reflector is not None:
                owed = self._reflections_missed > 0 or mind.latest_reflection is None
                await self.reflector.debrief(
                    self.knowledge,
                    self.game_id,
                    owed=owed,
                    persona=self.persona,
                    now=self.clock.now,
                )
        except Degrade as why:
            self._note(f"debrief cut short: {why}", kind="experience")
        except Exception:
            log.exception("seat %s: the end-of-game debrief failed", self.seat)
        try:
            if mind.settings.keep_after_game:
                await mind.save()
            else:
                await mind.discard()
        except Exception:
            log.exception("seat %s: tidying memory after the game failed", self.seat)
        try:
            await flush_log(self.decisions)
        except Exception:
            log.exception("seat %s: flushing the decision log failed", self.seat)

    async def _prepare(self) -> None:
        assert self.mind is not None
        await self.mind.prepare()

    async def _reflect(self, phase_seq: int) -> None:
        assert self.reflector is not None
        k = self.knowledge

        def live() -> bool:
            return (
                not self._closed
                and not self._preempted
                and self._degraded is None
                and k.phase_seq == phase_seq
            )

        started = time.monotonic()
        wrote = await self.reflector.reflect(k, self.persona, self.clock.now, live)
        if not wrote:
            self._reflections_missed += 1  # cut off (preempted, phase over) or no note
        if not self._preempted:
            # its calls and its memory work (embeddings, the pool, saving), as it ran
            self.latency.add("background", time.monotonic() - started)

    # --- events -----------------------------------------------------------------------------------

    def _on_phase(self, event: PhaseStarted) -> None:
        self._cancel_timers()
        if self._draft is not None:
            self._discard(self._draft, "the phase ended while typing")
        self._draft = self._regen = None
        self._burst_sent = self._burst = None
        self._burst_due = False
        self._consult_wanted = False
        self._pending_since = None
        self._consult_seen = None
        self._decision = None
        self._prevote_due = None
        if event.phase == PhaseKind.VOTE.value:
            self._vote_seconds = event.seconds
        k = self.knowledge
        if k.over or not k.me_alive:
            return
        if k.room() is not None:
            self._arm("consult", event.t + self._seconds(self.settings.open_delay_s), self._due)
        self._plan_prevote(event)
        if k.votes_now():
            self._new_decision("vote", event)
            if k.acts_tonight():
                self._plan_side_act(event)
        elif k.acts_tonight():
            self._new_decision("night_action", event)
        self._floor_pending = False
        self._arm_floor(event.t)
        if self.reflector is not None:
            self._reflect_for = event.seq
            self._kick()

    def _on_extended(self, event: PhaseExtended) -> None:
        """The phase got time back: everything planned against its end uses the new one
        (talk and the floor read the seat's knowledge; the vote's fallback is re-armed; the
        calls in flight are cut off that much later)."""
        k = self.knowledge
        if event.seq != k.phase_seq or k.over:
            return
        self._decision_extended(event.deadline)
        later = self.clock.seconds_to_real(event.seconds)
        for cutoff in list(self._cutoffs):
            when = cutoff.when()
            if when is not None:
                cutoff.reschedule(when + later)
        self._arm_floor(event.t)

    def _on_message(self, event: MessageAccepted) -> None:
        k = self.knowledge
        if event.seat == self.seat or k.room() is None or event.phase_seq != k.phase_seq:
            return
        s = self.settings
        if self._burst is not None:
            if self._burst_next(event):
                return
            if self._burst is not None and not k.addressed_in(k.messages[-1:]):
                return  # the burst's next line stands for the next consultation
        if self._consult_seen is not None:
            new = k.messages_by_others_since(self._consult_seen)
            fair = self.talkativeness / max(k.room_size(), 1)
            need = s.consult_after[0] if k.share() < fair else s.consult_after[1]
            if len(new) < need and not k.addressed_in(new):
                return  # too little news to ask again (a quiet spell still will)
        if self._pending_since is None:
            self._pending_since = event.t
        when = min(
            event.t + self._seconds(s.debounce_s),
            self._pending_since + timedelta(seconds=s.max_debounce_s),
        )
        if self._last_consult is not None:
            when = max(when, self._last_consult + timedelta(seconds=s.min_consult_gap_s))
        self._cancel("quiet")
        self._arm("consult", when, self._due)

    def _burst_next(self, event: MessageAccepted) -> bool:
        """The burst's next line is due with this message: start writing it (True)."""
        assert self._burst is not None
        k = self.knowledge
        phase, seen = self._burst
        fair = self.talkativeness / max(k.room_size(), 1)
        if phase != k.phase_seq or k.share() >= fair or self._burst_sent != phase:
            self._burst = self._burst_sent = None
            return False  # said its share (or a new phase): ask as usual
        if len(k.messages_by_others_since(seen)) < self.settings.burst_after:
            return False
        self._burst = None
        if self._draft is not None:
            self._burst_sent = None
            return False  # a line is being typed: ask as usual
        self._burst_left -= 1
        self._burst_due = True
        self._consult_seen = len(k.messages)  # the burst's line stands for a consultation
        self._kick()
        return True

    def _settled(self, kind: TargetKind, phase_seq: int, target: str | None) -> None:
        """This seat's own vote or night action showed up. When it did not come from the
        current decision (a resumed game replays the seat's earlier actions), there is
        nothing left to decide: don't ask the model, don't cast a fallback on top of it."""
        dec = self._decision
        if dec is None or dec.kind != kind or dec.phase_seq != phase_seq or dec.cast is not None:
            return
        dec.cast = target or ""
        dec.model_done = True
        self._cancel("decide")
        self._cancel("deadline")

    # --- the one request slot ---------------------------------------------------------------------

    def _kick(self) -> None:
        """Start the next piece of LLM work if the slot is free. Decisions come first; a
        background job in the slot is cancelled when a critical call is wanted."""
        if self._closed or self._degraded is not None:
            return
        if self._task is not None:
            if self._job == "background":
                if self._decision_due():
                    self._preempt()
                elif self._critical_wanted() and "preempt" not in self._timers:
                    # talk may wait a little (as long as a debounce may hold it), no longer
                    slack = timedelta(seconds=self.settings.background_wait_s)
                    self._arm("preempt", self.clock.now() + slack, self._preempt_due)
            return
        k = self.knowledge
        if self.mind is not None and not self.mind.prepared:
            self._start(self._prepare())  # memory loads before the first prompt
            return
        dec = self._decision
        if dec is not None and dec.ready and not dec.model_done and dec.phase_seq == k.phase_seq:
            self._start(self._decide(dec))
            return
        if self._prevote_due is not None:
            number, self._prevote_due = self._prevote_due, None
            self._start(self._ask_prevote(number))
            return
        if self._reflect_for is not None and self.reflector is not None:
            seq = self._reflect_for
            if seq != k.phase_seq or not self.reflector.due(k):
                if seq != k.phase_seq:
                    self._reflections_missed += 1  # the phase ended while it waited
                self._reflect_for = None
            else:
                # a critical call already wanted (it came due while the slot was busy) goes
                # first: no timer is left to preempt the reflection for it
                why = (
                    "it would delay a critical call"
                    if self._critical_wanted()
                    else self._background_blocked(calls=3)
                )
                if why is None:
                    self._reflect_for = None
                    self._start(self._reflect(seq), job="background")
                    return
                if why == PAST_PHASE:
                    self._reflect_for = None
                    self._reflections_missed += 1
                    self._note(f"reflection skipped: {why}", kind="reflection")
                # else it waits behind the critical work, and is tried when the slot is free
        if self._regen is not None:
            draft, self._regen = self._regen, None
            if draft.phase_seq == k.phase_seq and self._may_talk():
                self._start(self._compose(draft.phase_seq, regenerated=True))
                return
        if dec is not None and dec.phase_seq == k.phase_seq and not dec.model_done:
            return  # a vote or night action is owed: decide first, talk after
        if self._burst_due:
            self._burst_due = False
            if self._draft is None and self._may_talk():
                self._start(self._compose(k.phase_seq, regenerated=False))
                return
        if not self._consult_wanted or self._draft is not None:
            return  # a draft being typed: consult once it is posted or dropped
        self._consult_wanted = False
        if not self._may_talk() or not self._answer_fits():
            return
        if self._last_consult is not None:
            earliest = self._last_consult + timedelta(seconds=self._consult_gap())
            if self.clock.now() < earliest:
                self._arm("consult", earliest, self._due)
                return
        self._start(self._consult())

    def _decision_due(self) -> bool:
        k = self.knowledge
        dec = self._decision
        return dec is not None and dec.ready and not dec.model_done and dec.phase_seq == k.phase_seq

    def _critical_wanted(self) -> bool:
        """A decision or a consultation is waiting for the slot."""
        if self._decision_due() or self._prevote_due is not None:
            return True
        if self._regen is not None:
            return True
        return self._consult_wanted and self._draft is None and self._may_talk()

    async def _preempt_due(self) -> None:
        if self._job == "background" and self._critical_wanted():
            self._preempt()

    def _preempt(self) -> None:
        """Stop the background job: its request in flight is cancelled (only the request:
        memory work in a worker thread cannot be interrupted safely), and it sends no more."""
        if self._task is None or self._job != "background" or self._preempted:
            return
        self._preempted = True
        call = self._bg_call
        if call is not None and not call.done():
            call.cancel()

    def _next_critical(self) -> datetime | None:
        """When the next critical call is due, as late as it may be served: a vote or night
        action at its time, a consultation up to ``background_wait_s`` after it."""
        slack = timedelta(seconds=self.settings.background_wait_s)
        due = [self._due_at[n] + slack for n in ("consult", "quiet") if n in self._due_at]
        if "decide" in self._due_at:
            due.append(self._due_at["decide"])
        return min(due) if due else None

    def _background_blocked(self, calls: int) -> str | None:
        """Why background work of ``calls`` calls must not start now, or None. Without a
        measured latency it runs (and is cancelled if a critical call comes due)."""
        typical = self.latency.typical(*CRITICAL_KINDS, "reflection", "suspicion", "experience")
        whole = self.latency.typical("background")  # a whole reflection, memory work included
        if typical is None and whole is None:
            return None
        need_s = max(typical * calls if typical is not None else 0.0, whole or 0.0)
        need = timedelta(seconds=self._game_s(need_s))
        now = self.clock.now()
        k = self.knowledge
        if k.deadline is not None and now + need >= k.deadline:
            return PAST_PHASE
        nxt = self._next_critical()
        if nxt is not None and now + need > nxt:
            return "it would delay a critical call"
        return None

    def _start(self, work: Coroutine[Any, Any, None], job: str = "other") -> None:
        #: what runs in the slot: a "background" job may be preempted
        self._job = job
        self._preempted = False
        task = asyncio.create_task(self._run(work), name=f"llm-seat-{self.seat}")
        self._task = task
        task.add_done_callback(lambda done: self._ended(done, work))

    def _ended(self, task: asyncio.Task[None], work: Coroutine[Any, Any, None]) -> None:
        """The slot's task is done. Cancelled before its first step (the seat closed in the
        same moment it started), `_run` never began: its work was never awaited (closed here,
        no "never awaited" warning at collection) and its cleanup never ran (the slot is
        freed here, so `idle` returns)."""
        work.close()  # a finished coroutine: nothing happens
        if self._task is task:
            self._task = None
            self._task_in_port = False

    async def _run(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except Degrade as why:
            await self._degrade(str(why))
        except Exception:
            log.exception("seat %s: LLM work failed", self.seat)
        finally:
            if self._preempted and not self._closed:
                self._note("background work cancelled: a critical call came due", kind="reflection")
            self._task = None
            self._task_in_port = False
            self._cancel("preempt")
            self._job = ""
            self._preempted = False
            self._bg_call = None
        if not self._closed:
            self._kick()
