"""The LLM agent: a hidden player that decides when to talk, what to say, and how to vote.

It follows the "Time to Talk" design (a *scheduler* prompt answers ``<send>`` or ``<wait>``, a
*generator* prompt writes the line, typing takes about a second per word) but is event-driven
rather than polled:

* **When to consult the scheduler.** After new messages, debounced (a short random pause after
  the latest one, never longer than ``max_debounce_s`` after the first unanswered one), after a
  quiet spell (jittered), and shortly after a phase opens, so the agent can speak first. Never
  more often than ``min_consult_gap_s``, and never when it cannot speak (out of the game, a
  bystander at night, the game over). All times are game time on the :class:`Timers` port.
* **One request in flight.** At most one LLM request per agent at a time; whatever wanted a
  consultation meanwhile is remembered as a single flag and served once when it completes.
  In a phase where the seat owes a vote or night action, it decides first and talks after.
* **Typing.** After ``<send>`` the line is generated, then "typed" (``seconds_per_word`` per
  word, capped) on a timer, then posted through the seat port, unless meanwhile the phase
  ended, or the chat moved on (``discard_after_messages`` new messages by others, or someone
  named the agent): then the draft is discarded, or regenerated once (``discard_policy``).
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
  when the shadow would have spoken: if it has said nothing by the shadow's first line
  (clamped to ``floor_at`` of the phase), it types the shadow's line.
* **Slow models.** The seat measures its model's latency as it plays. Decisions come first
  (a vote or night action, then talking); background work (reflection, suspicion) waits
  until its expected length fits before the next critical call (a consultation may wait
  ``background_wait_s``, a decision not at all), is skipped when it would run past its phase's
  end, is sent once (no retries, a deadline at the phase's end), and is cancelled when a
  decision comes due meanwhile, or a consultation has waited ``background_wait_s`` for it. A
  vote is asked early enough for two answers to come back before the fallback; the scheduler
  is never consulted more often than its answers come back.
* **Degradation.** When the token budget is spent, after ``max_failures`` failed calls in a
  row, or ``max_invalid_streak`` unusable answers in a row, the seat hands over to the
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
(``debrief_task``) that outlives the seat.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import statistics
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal

from agent.base import Clock, Intent, Policy, SeatPort, TimerHandle, Timers
from agent.baseline import BaselinePolicy, BaselineTiming, SeatRecord
from agent.baseline.speech import compose as baseline_compose
from agent.decisions import DecisionKind, DecisionLog, DecisionRecord, flush_log
from agent.driver import PolicyPlayer
from agent.guard import baseline_line, check_line
from agent.knowledge import SeatKnowledge
from agent.llm.base import (
    FINISH_REFUSAL,
    LLMBudgetExceeded,
    LLMClient,
    LLMError,
    LLMRequest,
    LLMResponse,
)
from agent.memory.seatmind import SeatMind
from agent.prompting import (
    PromptBook,
    PromptWindow,
    ScheduleAnswer,
    TargetKind,
    clean_line,
    corrective_request,
    generator_request,
    is_near_duplicate,
    load_prompts,
    parse_schedule,
    parse_target,
    render_request,
    scheduler_request,
    target_request,
)
from agent.reflection import Reflector
from agent.shape import (
    earliest_post,
    fallback_fraction,
    fit_length,
    length_hint,
    target_chars,
    vote_delay,
)
from games.config import MAX_MESSAGE_CHARS
from games.events import (
    Event,
    GameOver,
    MessageAccepted,
    NightActionRecorded,
    PhaseStarted,
    PlayerEliminated,
    VoteCast,
)
from games.state import PhaseKind

__all__ = ["QUIET_BASELINE", "LLMPlayer", "LLMPlayerSettings"]

log = logging.getLogger(__name__)

#: the baseline's timing once an LLM seat has degraded: fewer, later lines
QUIET_BASELINE = BaselineTiming(
    short_delay=(8.0, 20.0),
    long_delay=(30.0, 70.0),
    day_cap=2,
    vote_cap=1,
    den_cap=1,
    skip_when_loud=0.6,
)


@dataclass(frozen=True)
class LLMPlayerSettings:
    """Knobs of the LLM agent; durations are game seconds."""

    #: typing time per word of a line (the paper's one word per second), and its cap
    seconds_per_word: float = 1.0
    max_typing_s: float = 10.0
    #: pause after the latest message before consulting the scheduler
    debounce_s: tuple[float, float] = (1.5, 3.0)
    #: a steady stream of messages postpones a consultation at most this long
    max_debounce_s: float = 6.0
    #: never two consultations closer than this (caps calls at 60/gap per minute)
    min_consult_gap_s: float = 6.0
    #: consult again after this much silence, ± ``quiet_jitter`` (a fraction)
    quiet_s: float = 20.0
    quiet_jitter: float = 0.3
    #: first consultation after a phase opens
    open_delay_s: tuple[float, float] = (1.0, 5.0)
    #: a draft is stale once this many messages by others arrived while it was being typed
    discard_after_messages: int = 3
    #: ... or once someone named the agent meanwhile
    discard_when_addressed: bool = True
    #: what to do with a stale draft: drop it, or write a fresh one once
    discard_policy: Literal["discard", "regenerate"] = "discard"
    #: the same limit as people's lines (the game's own, when the host set one)
    max_line_chars: int = MAX_MESSAGE_CHARS
    #: draw each line's length from people's (agent.shape); False: only ``max_line_chars``
    people_lengths: bool = True
    #: post no sooner than a person could have read and typed, and vote when people do, both
    #: drawn from people's figures (agent.shape); False: ``seconds_per_word`` and
    #: ``vote_start``/``fallback_at`` as given (exact timing, for tests)
    human_timing: bool = True
    duplicate_threshold: float = 0.85
    #: safety cap on the agent's own lines per phase
    max_lines_per_phase: int = 12
    #: no line is posted this close to the phase's deadline (the seat's view of the game lags
    #: the engine by a delivery, so a line at the very end could land in the next phase)
    post_margin_s: float = 0.5
    #: no consultation this close to the deadline: the line could not be typed in time
    talk_cutoff_s: float = 2.0
    window: PromptWindow = field(default_factory=PromptWindow)
    #: when (fractions of the phase) to ask the model for a vote / night action
    vote_start: tuple[float, float] = (0.05, 0.25)
    act_start: tuple[float, float] = (0.05, 0.3)
    #: the heuristic decides at this fraction of the phase if the model has not
    fallback_at: float = 0.8
    #: no vote later than this before the deadline (capped at 10% of short phases)
    deadline_margin_s: float = 2.0
    #: real seconds that margins never go below (still capped at 30% of the phase): an
    #: accelerated clock (``--speed``) turns the service's real write latency and event-loop
    #: stalls on a loaded machine into many game seconds
    real_margin_s: float = 0.3
    #: degrade to the baseline after this many failed calls in a row
    max_failures: int = 3
    #: ... or this many unusable answers in a row
    max_invalid_streak: int = 8
    #: never-mute floor: in a day's discussion a seat that has said nothing by the shadow
    #: baseline's first line types the shadow's line; that moment is kept within these
    #: fractions of the phase
    floor_at: tuple[float, float] = (0.3, 0.7)
    #: how long a due consultation waits for background work (reflection) in the slot
    background_wait_s: float = 6.0
    #: latencies remembered per kind of call (the last this many), to plan around
    latency_window: int = 12
    scheduler_max_tokens: int = 8
    generator_max_tokens: int = 60
    target_max_tokens: int = 16
    generator_temperature: float | None = 0.9

    def __post_init__(self) -> None:
        if self.seconds_per_word < 0 or self.max_typing_s < 0:
            raise ValueError("typing times must be non-negative")
        if not 0.0 < self.fallback_at < 1.0:
            raise ValueError("fallback_at must be a fraction of the phase in (0, 1)")
        if self.min_consult_gap_s <= 0 or self.quiet_s <= 0:
            raise ValueError("consultation intervals must be positive")
        if not 0.0 <= self.quiet_jitter < 1.0:
            raise ValueError("quiet_jitter must be in [0, 1)")
        for lo, hi in (
            self.debounce_s,
            self.open_delay_s,
            self.vote_start,
            self.act_start,
            self.floor_at,
        ):
            if lo < 0 or hi < lo:
                raise ValueError("ranges must be (low, high) with 0 <= low <= high")
        if self.discard_after_messages < 1 or self.max_failures < 1:
            raise ValueError("counts must be at least 1")


class _Degrade(Exception):
    """Raised inside a request to hand the seat over to the baseline."""


@dataclass
class _Draft:
    text: str
    phase_seq: int
    #: how many player messages the generator had seen
    seen: int
    regenerated: bool
    #: the shadow baseline's line (its intent), typed in place of the model's
    baseline: Intent | None = None
    #: the never-mute floor's line: only the phase's end may drop it
    floor: bool = False


@dataclass
class _Decision:
    """A vote or night action owed in the current phase."""

    kind: TargetKind
    phase_seq: int
    deadline: datetime
    margin: timedelta
    ready: bool = False
    model_done: bool = False
    cast: str | None = None
    by_fallback: bool = False


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


#: why background work is skipped rather than deferred
PAST_PHASE = "it would run past the phase"
#: calls the game waits for; everything else is background work
CRITICAL_KINDS: tuple[DecisionKind, ...] = ("scheduler", "generator", "vote", "night_action")


class Latencies:
    """Wall seconds of this seat's recent calls, by kind (answered or failed: the game waited
    either way). ``typical`` is their median, ``slow`` a high quantile; None before any."""

    def __init__(self, window: int = 12) -> None:
        self.window = max(1, window)
        self._by_kind: dict[str, deque[float]] = {}

    def add(self, kind: str, seconds: float) -> None:
        bucket = self._by_kind.get(kind)
        if bucket is None:
            bucket = self._by_kind[kind] = deque(maxlen=self.window)
        bucket.append(max(seconds, 0.0))

    def _pooled(self, kinds: tuple[str, ...]) -> list[float]:
        wanted = kinds or tuple(self._by_kind)
        return sorted(x for k in wanted for x in self._by_kind.get(k, ()))

    def typical(self, *kinds: str) -> float | None:
        xs = self._pooled(kinds)
        return statistics.median(xs) if xs else None

    def slow(self, *kinds: str) -> float | None:
        xs = self._pooled(kinds)
        return xs[min(len(xs) - 1, int(0.8 * len(xs)))] if xs else None


class LLMPlayer:
    """An LLM-driven seat. See the module docstring for how it decides and when."""

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
        # the heuristic scores need only the record, not a whole policy: that is built (and
        # shown the game so far) only if the seat degrades to the baseline
        seed = rng.random()
        self.record = SeatRecord(seat, random.Random(seed))
        self.fallback = fallback or BaselinePolicy(
            seat, name, random.Random(seed), persona=persona, timing=QUIET_BASELINE
        )
        #: the baseline in this seat's place, with people's timing, shown every event as it
        #: comes: it takes the decisions the model fails (see the module docstring)
        self.shadow = BaselinePolicy(seat, name, random.Random(f"{seed}:shadow"), persona=persona)
        #: the model's measured latency, to plan around
        self.latency = Latencies(self.settings.latency_window)
        self._job = ""  # what runs in the request slot (see _start)
        self._preempted = False
        self._bg_call: asyncio.Future[LLMResponse] | None = None
        self._floor_pending = False
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
        self._draft: _Draft | None = None
        self._regen: _Draft | None = None
        self._decision: _Decision | None = None
        self._failures = 0
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
        elif isinstance(event, MessageAccepted):
            if event.seat == self.seat:
                self._shadow_spoke(event)
            self._on_message(event)
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
                await self.reflector.debrief(self.knowledge, self.game_id)
        except _Degrade as why:
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
        await self.reflector.reflect(k, self.persona, self.clock.now, live)
        if not self._preempted:
            # its calls and its memory work (embeddings, the pool, saving), as it ran
            self.latency.add("background", time.monotonic() - started)

    async def _memory(self, kind: str) -> tuple[str, str]:
        """(the memory block for a prompt of ``kind``, the strategy note for its static part)."""
        mind = self.mind
        if mind is None:
            return "", ""
        strategy = mind.strategy_text()
        window = self.settings.window
        try:
            entries = self.knowledge.window_entries(window.lines, window.chars)
            start = entries[0].t if entries else None
            block = await mind.prompt_block(self.knowledge, kind, start)
        except Exception:
            log.exception("seat %s: building the memory block failed", self.seat)
            block = ""
        return block, strategy

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

    # --- events -----------------------------------------------------------------------------------

    def _on_phase(self, event: PhaseStarted) -> None:
        self._cancel_timers()
        if self._draft is not None:
            self._discard(self._draft, "the phase ended while typing")
        self._draft = self._regen = None
        self._consult_wanted = False
        self._pending_since = None
        self._decision = None
        k = self.knowledge
        if k.over or not k.me_alive:
            return
        if k.room() is not None:
            self._arm("consult", event.t + self._seconds(self.settings.open_delay_s), self._due)
        if k.votes_now():
            self._new_decision("vote", event)
        elif k.acts_tonight():
            self._new_decision("night_action", event)
        self._floor_pending = False
        if k.phase is PhaseKind.DAY and k.room() is not None:
            self._arm_floor(event)
        if self.reflector is not None:
            self._reflect_for = event.seq
            self._kick()

    def _on_message(self, event: MessageAccepted) -> None:
        k = self.knowledge
        if event.seat == self.seat or k.room() is None or event.phase_seq != k.phase_seq:
            return
        s = self.settings
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

    def _stand_down(self, why: str) -> None:
        """Out of the game: nothing left to say or decide."""
        self._cancel_timers()
        if self._draft is not None:
            self._discard(self._draft, why)
        self._draft = self._regen = None
        self._decision = None
        self._consult_wanted = False

    # --- the one request slot ---------------------------------------------------------------------

    async def _due(self) -> None:
        """A consultation timer fired (debounce, quiet spell or phase opening)."""
        self._consult_wanted = True
        self._kick()

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
        if self._reflect_for is not None and self.reflector is not None:
            seq = self._reflect_for
            if seq != k.phase_seq or not self.reflector.due(k):
                self._reflect_for = None
            else:
                why = self._background_blocked(calls=3)
                if why is None:
                    self._reflect_for = None
                    self._start(self._reflect(seq), job="background")
                    return
                if why == PAST_PHASE:
                    self._reflect_for = None
                    self._note(f"reflection skipped: {why}", kind="reflection")
                # else it waits behind the critical work, and is tried when the slot is free
        if self._regen is not None:
            draft, self._regen = self._regen, None
            if draft.phase_seq == k.phase_seq and self._may_talk():
                self._start(self._compose(draft.phase_seq, regenerated=True))
                return
        if dec is not None and dec.phase_seq == k.phase_seq and not dec.model_done:
            return  # a vote or night action is owed: decide first, talk after
        if not self._consult_wanted or self._draft is not None:
            return  # a draft being typed: consult once it is posted or dropped
        self._consult_wanted = False
        if not self._may_talk():
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
        if self._decision_due():
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

    def _game_s(self, real_s: float) -> float:
        """``real_s`` wall seconds in game seconds at this clock's speed."""
        per_game_second = self.clock.seconds_to_real(1.0)
        return real_s / per_game_second if per_game_second > 0 else real_s

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

    def _consult_gap(self) -> float:
        """Game seconds between consultations: the setting, or longer when the scheduler's
        answers take longer to come back."""
        gap = self.settings.min_consult_gap_s
        typical = self.latency.typical("scheduler")
        return max(gap, self._game_s(typical)) if typical is not None else gap

    def _start(self, work: Coroutine[Any, Any, None], job: str = "other") -> None:
        #: what runs in the slot: a "background" job may be preempted
        self._job = job
        self._preempted = False
        self._task = asyncio.create_task(self._run(work), name=f"llm-seat-{self.seat}")

    async def _run(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except _Degrade as why:
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

    def _may_talk(self) -> bool:
        k = self.knowledge
        if k.room() is None or k.phase_own >= self.settings.max_lines_per_phase:
            return False
        cutoff = timedelta(seconds=self.settings.talk_cutoff_s)
        return k.deadline is None or self.clock.now() < k.deadline - cutoff

    # --- talking ----------------------------------------------------------------------------------

    async def _consult(self) -> None:
        k = self.knowledge
        now = self.clock.now()
        self._last_consult = now
        self._pending_since = None
        phase = k.phase_seq
        memory, strategy = await self._memory("scheduler")
        req, mode = scheduler_request(
            self.prompts,
            k,
            self.persona,
            now,
            self.settings.window,
            max_tokens=self.settings.scheduler_max_tokens,
            memory=memory,
            strategy=strategy,
            talkativeness=self.talkativeness,
        )
        resp = await self._call(self.scheduler, req, "scheduler")
        if resp is None:
            answer = self._baseline_schedule("the scheduler call failed")
        else:
            refused = resp.finish_reason == FINISH_REFUSAL
            parsed = None if refused else parse_schedule(resp.text)
            shown = parsed or ("refusal" if refused else "invalid")
            self._record_call(
                "scheduler", req, resp, decision=f"{shown} ({mode})", valid=bool(parsed)
            )
            self._note_answer(parsed is not None)
            answer = parsed or self._baseline_schedule(
                "the model refused" if refused else "the scheduler's answer was unusable"
            )
        if answer != "send" or k.phase_seq != phase or not self._may_talk():
            self._arm_quiet()
            return
        await self._compose(phase, regenerated=False)

    def _baseline_schedule(self, why: str) -> ScheduleAnswer:
        """Send or wait as the shadow baseline would: send when it means to say a line before
        the next consultation could come round."""
        now = self.clock.now()
        intent = self._shadow_plan(now)
        horizon = now + timedelta(seconds=self._consult_gap())
        answer: ScheduleAnswer = (
            "send"
            if intent is not None and intent.kind == "say" and intent.at <= horizon
            else "wait"
        )
        self._note(f"{answer} (baseline)", kind="scheduler", fallback=True, error=why)
        return answer

    def _shadow_plan(self, now: datetime) -> Intent | None:
        try:
            return self.shadow.plan(now)
        except Exception:  # the shadow must never take the seat down
            log.exception("seat %s: the shadow baseline failed to plan", self.seat)
            return None

    def _baseline_line(self, now: datetime) -> tuple[str | None, Intent | None]:
        """The shadow's line: the one it plans to say, else one composed for now."""
        intent = self._shadow_plan(now)
        if intent is not None and intent.kind == "say" and intent.text:
            return intent.text, intent
        try:
            composed = baseline_compose(self.shadow, now)
        except Exception:
            log.exception("seat %s: the shadow baseline failed to compose", self.seat)
            composed = None
        return (composed[0], None) if composed is not None else (None, None)

    def _shadow_spoke(self, event: MessageAccepted) -> None:
        """The seat's own line was said: it stands in for the shadow's next planned line."""
        intent = self._shadow_plan(event.t)
        if intent is None or intent.kind != "say":
            return
        if (intent.text or "").casefold() == event.text.casefold():
            return  # the shadow's very line: the shadow hears it back itself
        try:
            self.shadow.done(intent, None)
        except Exception:
            log.exception("seat %s: the shadow baseline failed to take a line", self.seat)

    async def _compose(self, phase: int, regenerated: bool) -> None:
        k = self.knowledge
        seen = len(k.messages)
        text = await self._generate()
        baseline: Intent | None = None
        if text is None and k.phase_seq == phase and self._may_talk():
            text, baseline = self._baseline_line(self.clock.now())
            if text is not None:
                self._note(
                    "baseline line",
                    kind="generator",
                    fallback=True,
                    error="the model gave no usable line",
                    text=text,
                )
        if text is None:
            self._arm_quiet()
            return
        draft = _Draft(text, phase, seen, regenerated, baseline)
        if k.phase_seq != phase or not self._may_talk():
            self._discard(draft, "the phase ended while writing")
            return
        if self._draft is not None:
            self._discard(draft, "another line is being typed")
            return
        self._type(draft)

    def _type(self, draft: _Draft) -> None:
        s = self.settings
        typing = min(len(draft.text.split()) * s.seconds_per_word, s.max_typing_s)
        when = self.clock.now() + timedelta(seconds=typing)
        if s.human_timing:  # read and typed as a person would: never sooner (agent.shape)
            earliest = earliest_post(self.knowledge, draft.seen, draft.text, self.rng)
            when = max(self.clock.now(), earliest or when)
        k = self.knowledge
        if draft.floor and k.deadline is not None:
            last = k.deadline - self._post_margin() - timedelta(seconds=self._game_s(1.0))
            when = max(self.clock.now(), min(when, last))
        self._draft = draft
        self._arm("typing", when, self._finish_draft)

    def _arm_floor(self, event: PhaseStarted) -> None:
        """Never a silent day: by the shadow's first line (clamped), say something."""
        intent = self._shadow_plan(event.t)
        lo, hi = self.settings.floor_at
        start, seconds = event.t, event.seconds
        latest = start + timedelta(seconds=hi * seconds)
        if intent is None or intent.kind != "say":
            self._arm("floor", latest, self._floor)  # silence all day is a tell: speak anyway
            return
        at = min(max(intent.at, start + timedelta(seconds=lo * seconds)), latest)
        self._arm("floor", at, self._floor)

    async def _floor(self) -> None:
        k = self.knowledge
        self._floor_pending = False
        if self._closed or self._degraded is not None or k.phase_own > 0 or not self._may_talk():
            return
        if self._draft is not None:
            self._floor_pending = True  # checked again once that line is posted or dropped
            return
        # whatever model call is in flight, this line does not wait for it: a late answer
        # finds the seat typing (or done) and is dropped or said after it
        text, intent = self._baseline_line(self.clock.now())
        if text is None:
            self._floor_pending = True  # tried again after the next line or quiet spell
            self._arm_quiet()
            return
        self._note(
            "baseline line",
            kind="generator",
            fallback=True,
            error="silent so far this day",
            text=text,
        )
        self._type(_Draft(text, k.phase_seq, len(k.messages), True, intent, floor=True))

    async def _generate(self) -> str | None:
        """A cleaned, non-repeating line, or None (regenerated once, then dropped)."""
        k = self.knowledge
        s = self.settings
        rejected: str | None = None
        guarded = False
        for _ in range(2):
            target = target_chars(self.rng) if s.people_lengths else s.max_line_chars
            memory, strategy = await self._memory("generator")
            req = generator_request(
                self.prompts,
                k,
                self.persona,
                self.clock.now(),
                s.window,
                rejected=rejected,
                max_tokens=s.generator_max_tokens,
                temperature=s.generator_temperature,
                memory=memory,
                strategy=strategy,
            )
            if s.people_lengths:
                role, said = req.messages[-1]
                req = replace(
                    req, messages=[*req.messages[:-1], (role, f"{said}\n{length_hint(target)}")]
                )
            resp = await self._call(self.generator, req, "generator")
            if resp is None:
                return None
            if resp.finish_reason == FINISH_REFUSAL:
                self._record_call("generator", req, resp, decision="refusal", valid=False)
                self._note_answer(False)
                continue
            text = clean_line(
                resp.text, own_name=k.name, names=k.players, max_chars=s.max_line_chars
            )
            text = fit_length(text, target, s.max_line_chars)
            if not text:
                self._record_call("generator", req, resp, decision="empty", valid=False)
                self._note_answer(False)
                continue
            problem = check_line(text, k, raw=resp.text)
            if problem is not None:  # it would mark the seat: write it again, once
                self._record_call(
                    "generator", req, resp, decision=f"guard: {problem}: {text}", valid=False
                )
                self._note_answer(False)
                guarded = True
                continue
            if is_near_duplicate(text, k.own_lines, s.duplicate_threshold):
                self._record_call("generator", req, resp, decision=f"repeat: {text}", valid=False)
                self._note_answer(False)
                rejected = text
                continue
            self._record_call("generator", req, resp, decision=text, valid=True)
            self._note_answer(True)
            return text
        return self._guard_fallback() if guarded else None

    def _guard_fallback(self) -> str | None:
        """The baseline's line for this moment, in place of lines the guard refused twice."""
        k = self.knowledge
        now = self.clock.now()
        line = baseline_line(self.seat, k.name, self.persona, self._seen, now, self.rng.random())
        if line is not None and (check_line(line, k) is not None or line in k.own_lines):
            line = None
        what = "guard: the baseline's line instead" if line else "guard: nothing said"
        self._note(what, kind="generator", fallback=True, text=line)
        return line

    async def _finish_draft(self) -> None:
        draft, self._draft = self._draft, None
        if draft is None or self._closed:
            return
        why = self._stale(draft)
        if why is not None:
            self._discard(draft, why)
            if (
                self.settings.discard_policy == "regenerate"
                and not draft.regenerated
                and draft.phase_seq == self.knowledge.phase_seq
            ):
                self._regen = draft
        else:
            error: str | None = None
            try:
                await self._port(lambda: self.port.say(draft.text))
            except Exception as err:
                error = f"{type(err).__name__}: {err}"
                self._note("say refused", error=error, text=draft.text)
            if draft.baseline is not None:
                try:
                    self.shadow.done(draft.baseline, error)
                except Exception:
                    log.exception("seat %s: the shadow baseline failed to take a line", self.seat)
        if self._closed:
            return
        self._arm_quiet()
        if self._floor_pending and draft.phase_seq == self.knowledge.phase_seq:
            await self._floor()
        self._kick()

    def _stale(self, draft: _Draft) -> str | None:
        k = self.knowledge
        if k.over or not k.me_alive:
            return "the game moved on without this seat"
        if k.phase_seq != draft.phase_seq or k.room() is None:
            return "the phase ended while typing"
        if k.deadline is not None and self.clock.now() >= k.deadline - self._post_margin():
            return "the phase was ending"
        if draft.floor:
            return None  # the seat's only line today: late is better than silent
        if k.phase is PhaseKind.VOTE and len(k.current_votes) >= len(k.alive):
            return "everyone has voted: the phase is ending"
        new = k.messages_by_others_since(draft.seen)
        if len(new) >= self.settings.discard_after_messages:
            return f"the chat moved on ({len(new)} new messages)"
        if self.settings.discard_when_addressed and k.addressed_in(new):
            return "someone addressed this player meanwhile"
        return None

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

    def _discard(self, draft: _Draft, why: str) -> None:
        self._note(f"discard: {why}", text=draft.text)

    def _arm_quiet(self) -> None:
        if self._closed or "consult" in self._timers or self.knowledge.room() is None:
            return
        s = self.settings
        spell = s.quiet_s * self.rng.uniform(1 - s.quiet_jitter, 1 + s.quiet_jitter)
        self._arm("quiet", self.clock.now() + timedelta(seconds=spell), self._due)

    # --- votes and night actions ------------------------------------------------------------------

    def _new_decision(self, kind: TargetKind, event: PhaseStarted) -> None:
        s = self.settings
        seconds = event.seconds
        margin = min(
            max(min(s.deadline_margin_s, 0.1 * seconds), self._real_floor()), 0.3 * seconds
        )
        dec = _Decision(kind, event.seq, event.deadline, timedelta(seconds=margin))
        self._decision = dec
        fall = fallback_fraction(self.rng, s.fallback_at) if s.human_timing else s.fallback_at
        hard = event.t + timedelta(seconds=min(fall * seconds, seconds - margin))
        lo, hi = s.vote_start if kind == "vote" else s.act_start
        wait = self.rng.uniform(lo, hi) * seconds
        if s.human_timing and kind == "vote":  # when people vote (agent.shape)
            wait = vote_delay(self.rng, seconds)
        start = min(event.t + timedelta(seconds=wait), hard)
        slow = self.latency.slow(*CRITICAL_KINDS)
        if slow is not None:
            # early enough for an answer and its one corrective retry before the fallback
            start = max(min(start, hard - timedelta(seconds=2 * self._game_s(slow))), event.t)

        async def ready() -> None:
            dec.ready = True
            self._kick()

        async def hard_deadline() -> None:
            await self._fallback(dec, "the model had not answered in time")

        self._arm("decide", start, ready)
        self._arm("deadline", hard, hard_deadline)

    def _legal(self, kind: TargetKind) -> dict[int, str]:
        k = self.knowledge
        return k.vote_targets() if kind == "vote" else k.night_targets_now()

    async def _decide(self, dec: _Decision) -> None:
        k = self.knowledge
        legal = self._legal(dec.kind)
        if not legal or dec.phase_seq != k.phase_seq:
            dec.model_done = True
            return
        options = list(legal.values())
        s = self.settings
        memory, strategy = await self._memory(dec.kind)
        req = target_request(
            self.prompts,
            k,
            self.persona,
            self.clock.now(),
            s.window,
            dec.kind,
            options,
            max_tokens=s.target_max_tokens,
            memory=memory,
            strategy=strategy,
        )
        choice: str | None = None
        try:
            resp = await self._call(self.generator, req, dec.kind)
            if resp is not None:
                choice, problem = self._read_target(dec.kind, req, resp, legal)
                if choice is None and dec.phase_seq == k.phase_seq and not self._closed:
                    retry = corrective_request(self.prompts, req, resp.text, problem, options)
                    resp = await self._call(self.generator, retry, dec.kind)
                    if resp is not None:
                        choice, _ = self._read_target(dec.kind, retry, resp, legal)
        finally:
            dec.model_done = True
        if self._closed:
            return
        if choice is None:
            why = (
                "the model had not answered in time"
                if self._cut
                else "the model gave no valid name"
            )
            await self._fallback(dec, why)
            return
        now = self.clock.now()
        if dec.phase_seq != k.phase_seq or now >= dec.deadline - dec.margin:
            self._note(f"late {dec.kind} not used: {choice}", kind=dec.kind)
            return
        if dec.cast is not None and dec.cast.casefold() == choice.casefold():
            return
        await self._cast(dec, choice, fallback=False)

    def _read_target(
        self, kind: TargetKind, req: LLMRequest, resp: LLMResponse, legal: dict[int, str]
    ) -> tuple[str | None, str]:
        if resp.finish_reason == FINISH_REFUSAL:
            problem = "it is a refusal, but this is only a party game and a name is needed"
            self._record_call(kind, req, resp, decision="refusal", valid=False)
            self._note_answer(False)
            return None, problem
        parsed = parse_target(resp.text, legal, self.knowledge.names)
        self._record_call(
            kind, req, resp, decision=parsed.name or f"invalid: {parsed.problem}", valid=parsed.ok
        )
        self._note_answer(parsed.ok)
        return parsed.name, parsed.problem or ""

    async def _fallback(self, dec: _Decision, why: str) -> None:
        """Cast the heuristic choice, unless something was cast already."""
        k = self.knowledge
        if self._closed or dec.cast is not None or dec.phase_seq != k.phase_seq:
            return
        if self.clock.now() >= dec.deadline:
            return
        legal = self._legal(dec.kind)
        if not legal:
            return
        name = self._heuristic_target(dec.kind, legal)
        self._note(name, kind=dec.kind, fallback=True, error=why)
        await self._cast(dec, name, fallback=True)

    async def _cast(self, dec: _Decision, name: str, fallback: bool) -> None:
        previous, dec.cast, dec.by_fallback = dec.cast, name, fallback
        try:
            if dec.kind == "vote":
                await self._port(lambda: self.port.vote(name))
            else:
                await self._port(lambda: self.port.night_act(name))
        except Exception as err:
            dec.cast = previous
            self._note(
                f"{dec.kind} refused: {name}", kind=dec.kind, error=f"{type(err).__name__}: {err}"
            )

    def _heuristic_target(self, kind: TargetKind, legal: dict[int, str]) -> str:
        """Always one of ``legal``: the baseline's suspicion (town) or danger (mafia) scores."""
        k = self.knowledge
        seats = list(legal)
        if kind == "vote" and k.phase is PhaseKind.NIGHT_VOTE:
            partners = set(k.partners)
            for voter, target in k.current_votes.items():
                if voter in partners and target is not None and target in legal.values():
                    return target  # one kill, not a split vote
        if kind == "night_action" and k.role == "doctor":
            if self.seat in legal and self.rng.random() < 0.4:
                return legal[self.seat]
            others = [s for s in seats if s != self.seat] or seats
            trust = self.record.suspicion()
            return legal[min(others, key=lambda s: (trust.get(s, 0.0), self.rng.random()))]
        if kind == "night_action" and k.role == "detective":
            fresh = [s for s in seats if legal[s] not in k.inspections] or seats
            seats = fresh
        scores = self.record.danger() if k.is_mafia else self.record.suspicion()
        best = max(seats, key=lambda s: (scores.get(s, float("-inf")), self.rng.random()))
        return legal[best]

    # --- calls, logging, degradation --------------------------------------------------------------

    async def _call(
        self, client: LLMClient, req: LLMRequest, kind: DecisionKind
    ) -> LLMResponse | None:
        """One model call; failures are logged and counted, None returned.

        A call made in a phase is cut off at the phase's end (its answer would be of no use);
        background calls are also sent once. Only critical calls count towards degrading:
        skipped background work is no sign the seat cannot play."""
        t = self.clock.now()
        started = time.monotonic()
        critical = kind in CRITICAL_KINDS
        k = self.knowledge
        left: float | None = None
        per_game_second = self.clock.seconds_to_real(1.0)
        if k.deadline is not None and not k.over and per_game_second > 0:
            end = k.deadline
            dec = self._decision
            if kind in ("vote", "night_action") and dec is not None:
                end -= dec.margin  # a later answer could not be cast any more
            left = max(per_game_second * (end - t).total_seconds(), 0.05)
            if not critical:
                req = dataclasses.replace(req, max_attempts=1, timeout_s=left)
        self._cut = False
        background = self._job == "background" and asyncio.current_task() is self._task
        call = asyncio.ensure_future(client.complete(req))
        if background:
            self._bg_call = call
        try:
            async with asyncio.timeout(left):
                resp = await call
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if background and self._preempted and (current is None or not current.cancelling()):
                self._record_cancelled(client, kind, req, t, started)  # this call only
                return None
            self._record_cancelled(client, kind, req, t, started)
            raise
        except LLMBudgetExceeded as err:
            self._record_failure(client, kind, req, t, started, err)
            raise _Degrade("the token budget is spent") from err
        except TimeoutError:
            # not the model's failure: its answer would come too late to be of use
            self._cut = True
            self._record_cancelled(client, kind, req, t, started, "the phase ended")
            self.latency.add(kind, time.monotonic() - started)
            return None
        except LLMError as err:
            self._record_failure(client, kind, req, t, started, err)
            self.latency.add(kind, time.monotonic() - started)
            if critical:
                self._failures += 1
                if self._failures >= self.settings.max_failures:
                    raise _Degrade(f"{self._failures} failed LLM calls in a row") from err
            return None
        self.latency.add(kind, time.monotonic() - started)
        if critical:
            self._failures = 0
        return resp

    def _note_answer(self, valid: bool) -> None:
        self._invalid_streak = 0 if valid else self._invalid_streak + 1
        if self._invalid_streak >= self.settings.max_invalid_streak:
            raise _Degrade(f"{self._invalid_streak} unusable answers in a row")

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
    ) -> None:
        self._emit(
            DecisionRecord(
                game_id=self.game_id,
                seat=self.seat,
                kind=kind,
                prompt=render_request(req),
                output=None,
                decision=None,
                fallback=False,
                valid=False,
                error=f"{type(err).__name__}: {err.message}",
                latency_s=time.monotonic() - started,
                input_tokens=0,
                output_tokens=0,
                cost_usd=0.0,
                t=t,
                model=client.name,
            )
        )

    def _record_cancelled(
        self,
        client: LLMClient,
        kind: DecisionKind,
        req: LLMRequest,
        t: datetime,
        started: float,
        why: str | None = None,
    ) -> None:
        """A call cut short (the seat closed, its phase ended, a critical call came due):
        sent (and maybe billed), never answered."""
        if why is None:
            why = (
                "a critical call came due"
                if self._preempted and not self._closed
                else "the seat was closed"
            )
        self._emit(
            DecisionRecord(
                game_id=self.game_id,
                seat=self.seat,
                kind=kind,
                prompt=render_request(req),
                output=None,
                decision=f"cancelled: {why}",
                fallback=False,
                valid=False,
                error=None,
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
