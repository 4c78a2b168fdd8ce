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
from agent.prompting import ScheduleAnswer
from games.events import MessageAccepted, PhaseStarted

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
        self._type(Draft(text, k.phase_seq, len(k.messages), True, intent, floor=True))

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
