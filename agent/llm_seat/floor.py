"""The shadow baseline: the baseline agent in the seat's place, shown every event, that takes
the decisions the model fails (send or wait, a line), and the never-mute floor that keeps the
seat from a silent day."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from agent.base import Intent
from agent.baseline.speech import compose as baseline_compose
from agent.guard import baseline_line, check_line
from agent.llm_seat.core import Draft
from agent.llm_seat.votes import VotingSeat
from agent.prompting import ScheduleAnswer, is_near_duplicate
from games.events import MessageAccepted
from games.state import PhaseKind

__all__ = ["ShadowSeat"]

log = logging.getLogger("agent.llm_player")


class ShadowSeat(VotingSeat):
    """The seat's fallbacks from its shadow baseline, and the never-mute floor."""

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
        return self._composed_line(now), None

    def _composed_line(self, now: datetime) -> str | None:
        """A line the shadow composes for now (not one it plans)."""
        try:
            composed = baseline_compose(self.shadow, now)
        except Exception:
            log.exception("seat %s: the shadow baseline failed to compose", self.seat)
            composed = None
        return composed[0] if composed is not None else None

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

    def _floor_open(self) -> bool:
        """The floor may still speak: a day's discussion, the seat alive and silent so far
        (nothing said, nothing being typed or posted, no floor line yet)."""
        k = self.knowledge
        return (
            not self._closed
            and self._degraded is None
            and not k.over
            and k.me_alive
            and k.phase is PhaseKind.DAY
            and k.room() is not None
            and k.phase_own == 0
            and self._spoke_in != k.phase_seq
            and self._floor_in != k.phase_seq
        )

    def _floor_window(self) -> tuple[datetime, datetime] | None:
        """The earliest and latest floor moments of this phase (``floor_at``)."""
        k = self.knowledge
        if k.phase_start is None or k.deadline is None:
            return None
        seconds = (k.deadline - k.phase_start).total_seconds()
        lo, hi = self.settings.floor_at
        return (
            k.phase_start + timedelta(seconds=lo * seconds),
            k.phase_start + timedelta(seconds=hi * seconds),
        )

    def _shadow_line_due(self, now: datetime) -> tuple[Intent | None, datetime] | None:
        """The shadow's next line and the floor's moment for it (the line's time, kept
        within the floor window), or None when the shadow would say nothing. A shadow that
        means to talk today but has no line planned (the one it drew would come too late for
        this phase) gives no line: the floor composes one at its latest moment."""
        intent = self._shadow_plan(now)
        window = self._floor_window()
        if window is None:
            return None
        earliest, latest = window
        if intent is None or intent.kind != "say":
            return (None, latest) if self._shadow_means_to_talk() else None
        return intent, min(max(intent.at, earliest), latest)

    def _shadow_means_to_talk(self) -> bool:
        try:
            return self.shadow.means_to_talk_today()
        except Exception:  # the shadow must never take the seat down
            log.exception("seat %s: the shadow baseline failed to say", self.seat)
            return False

    def _arm_floor(self, now: datetime) -> None:
        """Never a silent day when the baseline in the seat's place would speak: while the
        seat has said nothing, the floor is armed for the shadow's next line (seen afresh
        after every event), and disarmed while the shadow means to say nothing."""
        if not self._floor_open():
            self._cancel("floor")
            return
        due = self._shadow_line_due(now)
        if due is None:
            self._cancel("floor")
            return
        at = max(due[1], now)
        if self._due_at.get("floor") != at:
            self._arm("floor", at, self._floor)

    async def _floor(self) -> None:
        k = self.knowledge
        self._floor_pending = False
        if not self._floor_open() or not self._may_talk():
            return
        now = self.clock.now()
        due = self._shadow_line_due(now)
        if due is None:
            return  # the shadow would say nothing: nor does the floor
        intent, at = due
        if at > now:
            self._arm("floor", at, self._floor)  # its line moved later
            return
        if self._draft is not None or self._posting:
            self._floor_pending = True  # checked again once that line is posted or dropped
            return
        window = self._floor_window()
        latest = window[1] if window is not None else now
        if self._writing and now < latest:
            # the model is deciding whether to speak, or writing: its turn, not a line on top
            # of it; the floor comes back at its latest moment if the seat is still silent
            self._floor_pending = True
            self._arm("floor", latest, self._floor)
            return
        # its planned line, or (when that repeats the seat's own) one composed for now
        text: str | None = intent.text or None if intent is not None else None
        line: Intent | None = intent
        threshold = self.settings.duplicate_threshold
        if text is None or is_near_duplicate(text, k.own_lines, threshold):
            text, line = self._composed_line(now), None
            if text is not None and is_near_duplicate(text, k.own_lines, threshold):
                text = None
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
        self._floor_in = k.phase_seq
        self._type(Draft(text, k.phase_seq, len(k.messages), True, line, floor=True))

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
