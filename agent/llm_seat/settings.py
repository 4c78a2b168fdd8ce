"""The LLM seat's knobs, and the quieter baseline timing it degrades to."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Literal

from agent.baseline import BaselineTiming
from agent.baseline.timing import DEFAULT_TIMING
from agent.prompting import PromptWindow
from games.config import MAX_MESSAGE_CHARS

__all__ = ["QUIET_BASELINE", "SHADOW_TIMING", "LLMPlayerSettings"]

#: the shadow baseline's timing (the fallbacks and the never-mute floor): people's, except
#: that it never draws a day with nothing to say (people do, on 8% of days). An LLM seat
#: speaks on every day it is alive: a silent seat among players who talk is the loudest tell
#: there is, and a day of silence is what a seat whose model failed would look like.
SHADOW_TIMING = dataclasses.replace(DEFAULT_TIMING, silent_day=0.0)

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
    #: after a consultation, the next one waits for this many new messages by others (while
    #: the seat is below its share of the talk, then at or above it), unless one of them names
    #: the seat: a line or two more of chatter rarely turns a "wait" into a "send", and each
    #: question re-reads the whole prompt. A quiet spell or a new phase still brings one.
    consult_after: tuple[int, int] = (4, 6)
    #: a "send" while the seat is below its share of the talk commits to a short burst of up
    #: to ``burst_lines`` lines: once a line of it is posted and ``burst_after`` messages by
    #: others came, the next is written without asking again, while the seat is still below
    #: its share (people who join in say two or three things in a row). 1: no burst
    burst_lines: int = 3
    burst_after: int = 2
    #: consult again after this much silence, ± ``quiet_jitter`` (a fraction)
    quiet_s: float = 20.0
    quiet_jitter: float = 0.3
    #: first consultation after a phase opens
    open_delay_s: tuple[float, float] = (1.0, 5.0)
    #: a draft is stale once this many messages by others arrived while it was being typed
    #: (more than the table's pace brings in its typing time: see ``stale_pace_s``)
    discard_after_messages: int = 3
    #: the table's pace is its others' messages per second over this much of the phase so
    #: far; at a busy table a person's line lands several lines after the one it answers, and
    #: people post it all the same (0: count every message, whatever the pace)
    stale_pace_s: float = 60.0
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
    #: a model too slow to answer inside the vote (`agent.llm_seat.votes`: three of its slow
    #: answers would not fit before the fallback) is asked for its vote this fraction of the
    #: day before voting opens, and the seat casts that answer when people vote
    prevote_at: float = 0.3
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
    #: baseline's next line types the shadow's line (never when the shadow would say nothing);
    #: that moment is kept within these fractions of the phase
    floor_at: tuple[float, float] = (0.3, 0.7)
    #: how long a due consultation waits for background work (reflection) in the slot
    background_wait_s: float = 6.0
    #: latencies remembered per kind of call (the last this many), to plan around
    latency_window: int = 12
    scheduler_max_tokens: int = 8
    generator_max_tokens: int = 60
    target_max_tokens: int = 16
    generator_temperature: float | None = 0.9
    #: ask the seat's model, yes or no, about a line the guard passed but that comes near what
    #: it looks for (agent.guard_judge); no verdict within the timeout (real seconds) leaves
    #: the guard's own
    guard_judge: bool = False
    guard_judge_timeout_s: float = 2.0

    def __post_init__(self) -> None:
        if self.seconds_per_word < 0 or self.max_typing_s < 0:
            raise ValueError("typing times must be non-negative")
        if not 0.0 <= self.prevote_at < 1.0:
            raise ValueError("prevote_at must be a fraction of the day in [0, 1) (0: never)")
        if not 0.0 < self.fallback_at < 1.0:
            raise ValueError("fallback_at must be a fraction of the phase in (0, 1)")
        if self.stale_pace_s < 0:
            raise ValueError("stale_pace_s must be non-negative")
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
        if self.burst_lines < 1 or self.burst_after < 1:
            raise ValueError("burst_lines and burst_after must be at least 1")
        if min(self.consult_after) < 1:
            raise ValueError("consult_after counts must be at least 1")
        if self.discard_after_messages < 1 or self.max_failures < 1:
            raise ValueError("counts must be at least 1")
