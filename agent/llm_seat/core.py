"""The state of an LLM seat and the plumbing every part of it uses: the model call (cut off at
the phase's end, counted towards degrading), the decision log, the seat's timers, handing over
to the baseline, and the game-clock arithmetic.

The seat is built in layers, each a module: this core; :mod:`~agent.llm_seat.votes` (votes and
night actions); :mod:`~agent.llm_seat.floor` (the shadow baseline: the fallbacks and the
never-mute floor); :mod:`~agent.llm_seat.talk` (consulting the scheduler, writing and typing
lines); and :class:`agent.llm_player.LLMPlayer` on top (events, the one request slot, memory).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from agent.base import Clock, Intent, Policy, SeatPort, TimerHandle, Timers
from agent.baseline import BaselinePolicy, SeatRecord
from agent.decisions import UNREACHED, DecisionKind, DecisionLog, DecisionRecord
from agent.driver import PolicyPlayer
from agent.knowledge import SeatKnowledge
from agent.llm.base import (
    CALL_PROGRESS,
    CallProgress,
    LLMBudgetExceeded,
    LLMClient,
    LLMError,
    LLMRequest,
    LLMResponse,
    LLMTimeout,
)
from agent.llm_seat.planning import CRITICAL_KINDS, Latencies
from agent.llm_seat.settings import QUIET_BASELINE, SHADOW_TIMING, LLMPlayerSettings
from agent.memory.seatmind import SeatMind
from agent.prompting import PromptBook, TargetKind, load_prompts, render_request
from agent.reflection import Reflector
from agent.shape import Endings
from games.events import Event

__all__ = ["Decision", "Degrade", "Draft", "SeatCore"]

log = logging.getLogger("agent.llm_player")


class Degrade(Exception):
    """Raised inside a request to hand the seat over to the baseline."""


@dataclass
class Draft:
    text: str
    phase_seq: int
    #: how many player messages the generator had seen
    seen: int
    regenerated: bool
    #: the shadow baseline's line (its intent), typed in place of the model's
    baseline: Intent | None = None
    #: the never-mute floor's line: only the phase's end may drop it
    floor: bool = False
    #: messages by others the table's pace brings while it is typed: the chat has moved on
    #: only when more than these came (besides ``discard_after_messages``)
    expected: int = 0


@dataclass
class Decision:
    """A vote or night action owed in the current phase."""

    kind: TargetKind
    phase_seq: int
    deadline: datetime
    margin: timedelta
    ready: bool = False
    model_done: bool = False
    cast: str | None = None
    by_fallback: bool = False
    #: the phase's start, and the fraction of it at which the fallback is cast
    start: datetime | None = None
    fall: float = 0.8
    #: when this seat heard the phase begin (its start was applied then, or before): a
    #: stalled process can apply a phase's start well after the moment it is stamped with
    heard: datetime | None = None


class _Observed:
    """The fallback policy minus ``observe``: the LLM player feeds it every event itself from
    the start of the game, so the driver it is handed to on degradation must not do it again."""

    def __init__(self, policy: Policy) -> None:
        self._policy = policy

    def observe(self, event: Event) -> None:
        return None

    def plan(self, now: datetime) -> Intent | None:
        return self._policy.plan(now)

    def done(self, intent: Intent, error: str | None) -> None:
        self._policy.done(intent, error)


class SeatCore:
    """An LLM seat's state and plumbing; :class:`agent.llm_player.LLMPlayer` is the whole seat."""

    def __init__(
        self,
        *,
        seat: int,
        name: str,
        persona: str,
        port: SeatPort,
        clock: Clock,
        timers: Timers,
        generator: LLMClient,
        scheduler: LLMClient | None = None,
        decisions: DecisionLog,
        rng: random.Random,
        settings: LLMPlayerSettings | None = None,
        fallback: BaselinePolicy | None = None,
        game_id: str = "",
        prompts: PromptBook | None = None,
        mind: SeatMind | None = None,
        talkativeness: float = 1.0,
        learning_tasks: set[asyncio.Task[None]] | None = None,
    ) -> None:
        self.seat = seat
        self.persona = persona
        #: the persona's factor on the fair share of talk (see agent.personas)
        self.talkativeness = talkativeness
        self.port = port
        self.clock = clock
        self.timers = timers
        self.generator = generator
        self.scheduler = scheduler or generator
        self.decisions = decisions
        self.rng = rng
        self.settings = settings or LLMPlayerSettings()
        self.game_id = game_id
        self.prompts = prompts or load_prompts()
        self.knowledge = SeatKnowledge(seat, name)
        #: how this seat's lines end, steered to people's (agent.shape)
        self.endings = Endings()
        # the heuristic scores need only the record, not a whole policy: that is built (and
        # shown the game so far) only if the seat degrades to the baseline
        seed = rng.random()
        self.record = SeatRecord(seat, random.Random(seed))
        self.fallback = fallback or BaselinePolicy(
            seat, name, random.Random(seed), persona=persona, timing=QUIET_BASELINE
        )
        #: the baseline in this seat's place, with people's timing, shown every event as it
        #: comes: it takes the decisions the model fails (see the module docstring)
        self.shadow = BaselinePolicy(
            seat, name, random.Random(f"{seed}:shadow"), persona=persona, timing=SHADOW_TIMING
        )
        #: the model's measured latency, to plan around
        self.latency = Latencies(self.settings.latency_window)
        self._job = ""  # what runs in the request slot (see _start)
        self._preempted = False
        self._bg_call: asyncio.Future[LLMResponse] | None = None
        self._floor_pending = False
        #: the phase in which the seat's own line was last posted, and the floor's last line
        self._spoke_in: int | None = None
        self._floor_in: int | None = None
        #: a talk call is in flight (the scheduler's or the generator's), a line in the port
        self._writing = False
        self._posting = False
        self._cut = False  # the last call was cut off at its phase's end
        self._seen: list[Event] = []  # what the fallback is shown if the seat degrades
        self._closed = False
        self._degraded: PolicyPlayer | None = None
        self._last_event: Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._task_in_port = False
        self._timers: dict[str, TimerHandle] = {}
        self._timer_ids: dict[str, int] = {}
        self._due_at: dict[str, datetime] = {}
        self._next_timer = 0
        self._consult_wanted = False
        self._pending_since: datetime | None = None
        self._last_consult: datetime | None = None
        #: how many messages the seat had seen at its last consultation in this phase
        self._consult_seen: int | None = None
        self._draft: Draft | None = None
        self._regen: Draft | None = None
        #: a burst the scheduler's "send" committed to: its phase and the lines it has left
        #: after the one being written; (phase, messages seen) once a line of it was posted;
        #: whether its next line is due
        self._burst_sent: int | None = None
        self._burst_left = 0
        self._burst: tuple[int, int] | None = None
        self._burst_due = False
        self._decision: Decision | None = None
        #: a slow model's vote asked before voting opened: (the day's number, the name), and
        #: whether that question is due; the length of the last vote phase
        self._prevote: tuple[int, str] | None = None
        self._prevote_due: int | None = None
        self._vote_seconds: float | None = None
        #: failed critical calls in a row (a time-out weighs half: `_call`), and their number
        self._failures = 0.0
        self._failed_calls = 0
        self._invalid_streak = 0
        self.mind = mind
        self.reflector: Reflector | None = None
        if mind is not None:
            record = self.record

            def heuristic() -> dict[int, float]:
                return record.danger() if self.knowledge.is_mafia else record.suspicion()

            self.reflector = Reflector(
                mind, self.prompts, self, self.settings.window, heuristic=heuristic
            )
        self._reflect_for: int | None = None
        #: the cut-offs of the calls in flight (at their phase's end)
        self._cutoffs: set[asyncio.Timeout] = set()
        #: reflections skipped, cut off or outrun by their phase: owed at the game's end
        self._reflections_missed = 0
        #: the end-of-game debrief (experience pool, strategy note), once the game is over
        self.debrief_task: asyncio.Task[None] | None = None
        self._learning_tasks = learning_tasks

    # --- introspection (tests, status pages) ------------------------------------------------------

    @property
    def degraded(self) -> bool:
        return self._degraded is not None

    @property
    def busy(self) -> bool:
        """An LLM request (and what directly follows it) is in flight."""
        return self._task is not None

    async def idle(self) -> None:
        """Wait until no LLM work is in flight (tests, benchmarks)."""
        while (task := self._task) is not None:
            await asyncio.wait({task})

    @property
    def draft(self) -> str | None:
        """The line being "typed", if any."""
        return self._draft.text if self._draft is not None else None

    # --- shared by the layers ---------------------------------------------------------------------

    def _stand_down(self, why: str) -> None:
        """Out of the game: nothing left to say or decide."""
        self._cancel_timers()
        if self._draft is not None:
            self._discard(self._draft, why)
        self._draft = self._regen = None
        self._burst_sent = self._burst = None
        self._burst_due = False
        self._decision = None
        self._consult_wanted = False

    async def _memory(self, kind: str) -> tuple[str, str]:
        """(the memory block for a prompt of ``kind``, the strategy note for its static part)."""
        mind = self.mind
        if mind is None:
            return "", ""
        strategy = mind.strategy_text()
        window = self.settings.window
        try:
            entries, _ = self.knowledge.settled_window(
                window.lines, window.chars, window.keep, window.page
            )
            start = entries[0].t if entries else None
            block = await mind.prompt_block(self.knowledge, kind, start)
        except Exception:
            log.exception("seat %s: building the memory block failed", self.seat)
            block = ""
        return block, strategy

    def _game_s(self, real_s: float) -> float:
        """``real_s`` wall seconds in game seconds at this clock's speed."""
        per_game_second = self.clock.seconds_to_real(1.0)
        return real_s / per_game_second if per_game_second > 0 else real_s

    def _may_talk(self) -> bool:
        k = self.knowledge
        if k.room() is None or k.phase_own >= self.settings.max_lines_per_phase:
            return False
        cutoff = timedelta(seconds=self.settings.talk_cutoff_s)
        return k.deadline is None or self.clock.now() < k.deadline - cutoff

    def _answer_fits(self) -> bool:
        """A scheduler answer, and the line a "send" asks for, as long as this seat's took
        (median), would come back while the seat may still talk. Otherwise the question is not
        asked: it would only hold the server (and the other seats' votes queued behind it) for
        an answer of no use."""
        k = self.knowledge
        typical = self.latency.typical("scheduler") or 0.0
        typical += self.latency.typical("generator") or 0.0
        if typical <= 0.0 or k.deadline is None:
            return True
        end = k.deadline - timedelta(seconds=self.settings.talk_cutoff_s)
        return self.clock.now() + timedelta(seconds=self._game_s(typical)) < end

    def _post_margin(self) -> timedelta:
        """No line is posted this close to the deadline."""
        k = self.knowledge
        floor = self._real_floor()
        if k.deadline is not None and k.phase_start is not None:
            floor = min(floor, 0.1 * (k.deadline - k.phase_start).total_seconds())
        return timedelta(seconds=max(self.settings.post_margin_s, floor))

    def _real_floor(self) -> float:
        """``real_margin_s`` in game seconds at this clock's speed."""
        per_game_second = self.clock.seconds_to_real(1.0)
        return self.settings.real_margin_s / per_game_second if per_game_second > 0 else 0.0

    def _discard(self, draft: Draft, why: str) -> None:
        self._note(f"discard: {why}", text=draft.text)

    # --- defined by the layers above --------------------------------------------------------------

    def _kick(self) -> None:
        """Start the next piece of LLM work if the slot is free (LLMPlayer)."""
        raise NotImplementedError

    def _type(self, draft: Draft) -> None:
        """Type ``draft`` and post it when done (TalkingSeat)."""
        raise NotImplementedError

    def _arm_quiet(self) -> None:
        """Consult again after a quiet spell (TalkingSeat)."""
        raise NotImplementedError

    # --- the Asker protocol (agent.reflection) ----------------------------------------------------

    async def ask(self, req: LLMRequest, kind: DecisionKind) -> LLMResponse | None:
        """A background call (reflection, suspicion, lessons): sent once, never retried, and
        not at all once the job gave way to a critical call."""
        if self._preempted:
            return None
        return await self._call(self.generator, dataclasses.replace(req, max_attempts=1), kind)

    def log_call(
        self,
        kind: DecisionKind,
        req: LLMRequest,
        resp: LLMResponse,
        *,
        decision: str,
        valid: bool,
        fallback: bool = False,
    ) -> None:
        self._record_call(kind, req, resp, decision=decision, valid=valid, fallback=fallback)

    def log_note(
        self, decision: str, *, kind: DecisionKind, fallback: bool = False, error: str | None = None
    ) -> None:
        self._note(decision, kind=kind, fallback=fallback, error=error)

    # --- consultations ----------------------------------------------------------------------------

    async def _due(self) -> None:
        """A consultation timer fired (debounce, quiet spell or phase opening)."""
        self._consult_wanted = True
        self._kick()

    def _consult_gap(self) -> float:
        """Game seconds between consultations: the setting, or longer when the scheduler's
        answers take longer to come back."""
        gap = self.settings.min_consult_gap_s
        typical = self.latency.typical("scheduler")
        return max(gap, self._game_s(typical)) if typical is not None else gap

    # --- calls, logging, degradation --------------------------------------------------------------

    async def _call(
        self,
        client: LLMClient,
        req: LLMRequest,
        kind: DecisionKind,
        *,
        until: datetime | None = None,
    ) -> LLMResponse | None:
        """One model call; failures are logged and counted, None returned.

        A call made in a phase is cut off at the phase's end (its answer would be of no use),
        or at ``until`` when given (a vote asked before voting opens); background calls are
        also sent once. Only critical calls count towards degrading:
        skipped background work is no sign the seat cannot play."""
        t = self.clock.now()
        started = time.monotonic()
        critical = kind in CRITICAL_KINDS
        k = self.knowledge
        left: float | None = None
        per_game_second = self.clock.seconds_to_real(1.0)
        if (until is not None or k.deadline is not None) and not k.over and per_game_second > 0:
            end = until if until is not None else k.deadline
            assert end is not None
            dec = self._decision
            if until is None and kind in ("vote", "night_action") and dec is not None:
                end -= dec.margin  # a later answer could not be cast any more
            left = max(per_game_second * (end - t).total_seconds(), 0.05)
            if not critical:
                req = dataclasses.replace(req, max_attempts=1, timeout_s=left)
        self._cut = False
        background = self._job == "background" and asyncio.current_task() is self._task
        progress = CallProgress()

        async def complete() -> LLMResponse:
            progress.started = True
            return await client.complete(req)

        token = CALL_PROGRESS.set(progress)  # the call's task copies it
        try:
            call = asyncio.ensure_future(complete())
        finally:
            CALL_PROGRESS.reset(token)
        if background:
            self._bg_call = call
        try:
            async with asyncio.timeout(left) as cutoff:
                self._cutoffs.add(cutoff)  # moved later if the phase is extended
                try:
                    resp = await call
                finally:
                    self._cutoffs.discard(cutoff)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if background and self._preempted and (current is None or not current.cancelling()):
                self._record_cancelled(
                    client, kind, req, t, started, progress=progress
                )  # this call only
                return None
            self._record_cancelled(client, kind, req, t, started, progress=progress)
            raise
        except LLMBudgetExceeded as err:
            self._record_failure(client, kind, req, t, started, err, progress)
            raise Degrade("the token budget is spent") from err
        except TimeoutError:
            # not the model's failure: its answer would come too late to be of use
            self._cut = True
            self._record_cancelled(client, kind, req, t, started, "the phase ended", progress)
            self.latency.add(kind, time.monotonic() - started)
            return None
        except LLMError as err:
            self._record_failure(client, kind, req, t, started, err, progress)
            self.latency.add(kind, time.monotonic() - started)
            if critical:
                # a time-out is a slow server more often than a broken one (a one-at-a-time
                # server under load answers late for a while): it weighs half a failure
                self._failures += 0.5 if isinstance(err, LLMTimeout) else 1.0
                self._failed_calls += 1
                if self._failures >= self.settings.max_failures:
                    raise Degrade(f"{self._failed_calls} failed LLM calls in a row") from err
            return None
        self.latency.add(kind, time.monotonic() - started)
        if critical:
            self._failures = 0.0
            self._failed_calls = 0
        return resp

    def _note_answer(self, valid: bool) -> None:
        self._invalid_streak = 0 if valid else self._invalid_streak + 1
        if self._invalid_streak >= self.settings.max_invalid_streak:
            raise Degrade(f"{self._invalid_streak} unusable answers in a row")

    async def _degrade(self, why: str) -> None:
        if self._degraded is not None or self._closed:
            return
        log.warning("seat %s: degrading to the baseline agent: %s", self.seat, why)
        self._note(f"degraded to the baseline: {why}", fallback=True)
        self._stand_down("the seat degraded to the baseline")
        for event in self._seen:  # the game so far, as a restarted seat is shown it
            self.fallback.observe(event)
        self._seen.clear()
        self._degraded = PolicyPlayer(_Observed(self.fallback), self.port, self.clock, self.timers)
        if self._last_event is not None:
            # the policy has seen everything already; this only makes the driver plan now
            await self._degraded.on_event(self._last_event)

    async def _port(self, action: Callable[[], Awaitable[None]]) -> None:
        inside = self._task is not None and asyncio.current_task() is self._task
        if inside:
            self._task_in_port = True
        try:
            await action()
        finally:
            if inside:
                self._task_in_port = False

    def _record_call(
        self,
        kind: DecisionKind,
        req: LLMRequest,
        resp: LLMResponse,
        *,
        decision: str,
        valid: bool,
        fallback: bool = False,
    ) -> None:
        self._emit(
            DecisionRecord(
                game_id=self.game_id,
                seat=self.seat,
                kind=kind,
                prompt=render_request(req),
                output=resp.text,
                decision=decision,
                fallback=fallback,
                valid=valid,
                error=None,
                latency_s=resp.latency_s,
                input_tokens=resp.input_tokens,
                output_tokens=resp.output_tokens,
                cost_usd=resp.cost_usd,
                t=self.clock.now(),
                model=resp.model,
                cached_input_tokens=resp.cached_input_tokens,
            )
        )

    def _record_failure(
        self,
        client: LLMClient,
        kind: DecisionKind,
        req: LLMRequest,
        t: datetime,
        started: float,
        err: LLMError,
        progress: CallProgress | None = None,
    ) -> None:
        error = f"{type(err).__name__}: {err.message}"
        self._emit_unanswered(
            client, kind, req, t, started, decision=None, error=error, progress=progress
        )

    def _record_cancelled(
        self,
        client: LLMClient,
        kind: DecisionKind,
        req: LLMRequest,
        t: datetime,
        started: float,
        why: str | None = None,
        progress: CallProgress | None = None,
    ) -> None:
        """A call cut short (the seat closed, its phase ended, a critical call came due):
        sent (and maybe billed), never answered."""
        if why is None:
            why = (
                "a critical call came due"
                if self._preempted and not self._closed
                else "the seat was closed"
            )
        self._emit_unanswered(
            client, kind, req, t, started, decision=f"cancelled: {why}", progress=progress
        )

    def _emit_unanswered(
        self,
        client: LLMClient,
        kind: DecisionKind,
        req: LLMRequest,
        t: datetime,
        started: float,
        *,
        decision: str | None,
        error: str | None = None,
        progress: CallProgress | None = None,
    ) -> None:
        """The record of a call sent and never answered (failed, or cut short). A call that
        never reached the model (cut short before it ran or before its request went out, held
        back on our side: queued, skipped) is a note, not a call."""
        if progress is not None and not progress.reached_server:
            if error is not None and progress.started and not progress.held:
                self._note(UNREACHED, kind=kind, error=error)  # the model's server is down
            else:
                why = decision if decision is not None else "failed"
                self._note(f"not sent ({why})", kind=kind, error=error)
            return
        self._emit(
            DecisionRecord(
                game_id=self.game_id,
                seat=self.seat,
                kind=kind,
                prompt=render_request(req),
                output=None,
                decision=decision,
                fallback=False,
                valid=False,
                error=error,
                latency_s=time.monotonic() - started,
                input_tokens=0,
                output_tokens=0,
                cost_usd=0.0,
                t=t,
                model=client.name,
            )
        )

    def _note(
        self,
        decision: str,
        *,
        kind: DecisionKind = "other",
        fallback: bool = False,
        error: str | None = None,
        text: str | None = None,
    ) -> None:
        """A decision taken without the model (fallback, discard, degradation, refusal)."""
        self._emit(
            DecisionRecord(
                game_id=self.game_id,
                seat=self.seat,
                kind=kind,
                prompt="",
                output=text,
                decision=decision,
                fallback=fallback,
                valid=False,
                error=error,
                latency_s=0.0,
                input_tokens=0,
                output_tokens=0,
                cost_usd=0.0,
                t=self.clock.now(),
            )
        )

    def _emit(self, rec: DecisionRecord) -> None:
        try:
            self.decisions.record(rec)
        except Exception:
            log.exception("seat %s: recording a decision failed", self.seat)

    # --- timers -----------------------------------------------------------------------------------

    def _seconds(self, span: tuple[float, float]) -> timedelta:
        return timedelta(seconds=self.rng.uniform(*span))

    def _arm(self, name: str, when: datetime, callback: Callable[[], Awaitable[None]]) -> None:
        """(Re)arm the timer ``name``; a time in the past fires promptly."""
        self._cancel(name)
        self._next_timer += 1
        ident = self._next_timer
        self._timer_ids[name] = ident

        async def fire() -> None:
            if self._closed or self._timer_ids.get(name) != ident:
                return  # cancelled, or superseded after the timer library started it
            del self._timer_ids[name]
            self._timers.pop(name, None)
            self._due_at.pop(name, None)
            await callback()

        now = self.clock.now()
        self._due_at[name] = max(when, now)
        self._timers[name] = self.timers.call_at(max(when, now), fire)

    def _cancel(self, name: str) -> None:
        self._timer_ids.pop(name, None)
        self._due_at.pop(name, None)
        handle = self._timers.pop(name, None)
        if handle is not None:
            handle.cancel()

    def _cancel_timers(self) -> None:
        for name in list(self._timers):
            self._cancel(name)
