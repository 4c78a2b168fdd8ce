"""Talking: consult the scheduler (send or wait), write the line (cleaned, guarded, not a
repeat), type it at a person's pace, and post it unless the chat moved on meanwhile."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from agent.base import Intent
from agent.guard import check_line
from agent.guard_judge import borderline, judge_line
from agent.llm.base import FINISH_REFUSAL
from agent.llm_seat.core import Draft, log
from agent.llm_seat.floor import ShadowSeat
from agent.prompting import (
    clean_line,
    generator_request,
    is_near_duplicate,
    parse_schedule,
    scheduler_request,
)
from agent.shape import (
    earliest_post,
    fit_ending,
    fit_length,
    generator_tokens,
    length_hint,
    target_chars,
)
from games.state import PhaseKind

__all__ = ["TalkingSeat"]


class TalkingSeat(ShadowSeat):
    """The seat's talking: scheduler, generator, typing, stale drafts."""

    async def _consult(self) -> None:
        k = self.knowledge
        now = self.clock.now()
        self._last_consult = now
        self._consult_seen = len(k.messages)
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
        floor_before = self._floor_in
        self._writing = True  # the never-mute floor waits for the model's turn (to its latest)
        try:
            resp = await self._call(self.scheduler, req, "scheduler")
        finally:
            self._writing = False
        if resp is None and self._cut:
            # the phase ended first: nothing is left to decide, by the model or in its place
            self._arm_quiet()
            return
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
        if answer == "send" and self._floor_in == phase and floor_before != phase:
            self._note("send not acted on: the floor spoke in its place", kind="scheduler")
            answer = "wait"  # one line in the seat's turn, not two
        if answer != "send" or k.phase_seq != phase or not self._may_talk():
            self._arm_quiet()
            return
        # below its share, more lines may follow this one (`_finish_draft`); at it, a burst
        # in course ends here
        self._burst_sent = phase if mode == "talkative" else None
        self._burst_left = self.settings.burst_lines - 1
        await self._compose(phase, regenerated=False)

    async def _compose(self, phase: int, regenerated: bool) -> None:
        k = self.knowledge
        seen = len(k.messages)
        floor_before = self._floor_in
        self._writing = True  # the never-mute floor waits for this line (to its latest moment)
        try:
            text = await self._generate()
        finally:
            self._writing = False
        if self._floor_in == phase and floor_before != phase:
            # the floor's line went out while this one was written: one line, not two
            if text is not None:
                self._discard(Draft(text, phase, seen, regenerated), "the floor spoke in its place")
            self._arm_quiet()
            return
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
        draft = Draft(text, phase, seen, regenerated, baseline)
        if k.phase_seq != phase or not self._may_talk():
            self._discard(draft, "the phase ended while writing")
            return
        if self._draft is not None:
            self._discard(draft, "another line is being typed")
            return
        self._type(draft)

    def _type(self, draft: Draft) -> None:
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
        self._draft = replace(draft, expected=self._expected_messages(when))
        self._arm("typing", when, self._finish_draft)

    def _expected_messages(self, until: datetime) -> int:
        """Messages by others the table's recent pace brings from now until ``until``."""
        span = self.settings.stale_pace_s
        k = self.knowledge
        now = self.clock.now()
        if span <= 0 or k.phase_start is None or until <= now:
            return 0
        since = max(now - timedelta(seconds=span), k.phase_start)
        seconds = (now - since).total_seconds()
        if seconds <= 0:
            return 0
        recent = sum(
            1
            for e in k.messages
            if e.seat != k.seat and e.phase_seq == k.phase_seq and e.t >= since
        )
        return int(recent / seconds * (until - now).total_seconds())

    async def _generate(self) -> str | None:
        """A cleaned, non-repeating line, or None (regenerated once, then dropped)."""
        k = self.knowledge
        s = self.settings
        rejected: str | None = None
        guarded = False
        for _ in range(2):
            target = (
                target_chars(self.rng, s.max_line_chars) if s.people_lengths else s.max_line_chars
            )
            memory, strategy = await self._memory("generator")
            req = generator_request(
                self.prompts,
                k,
                self.persona,
                self.clock.now(),
                s.window,
                rejected=rejected,
                max_tokens=(
                    generator_tokens(target, s.generator_max_tokens)
                    if s.people_lengths
                    else s.generator_max_tokens
                ),
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
            if s.people_lengths and text:
                text = fit_ending(text, self.rng, self.endings)
            if not text:
                self._record_call("generator", req, resp, decision="empty", valid=False)
                self._note_answer(False)
                continue
            problem = check_line(text, k, raw=resp.text)
            if problem is None and s.guard_judge and borderline(text):
                verdict = await judge_line(self.generator, text, s.guard_judge_timeout_s)
                self._note(f"guard judge: {verdict}", kind="generator", text=text)
                if verdict:
                    problem = "judged disclosing by the model"
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

    async def _finish_draft(self) -> None:
        draft, self._draft = self._draft, None
        if draft is None or self._closed:
            return
        why = self._stale(draft)
        if why is None:
            # the last gate before the stage or the den, for every line whatever wrote it: the
            # model's (guarded when written, but the chat has moved since), the shadow
            # baseline's fallback and the never-mute floor's
            problem = check_line(draft.text, self.knowledge)
            if problem is not None:
                why = f"guard: {problem}"
        if why is not None:
            self._discard(draft, why)
            self._burst_sent = None  # a burst ends with a dropped line
            if (
                self.settings.discard_policy == "regenerate"
                and not draft.regenerated
                and draft.phase_seq == self.knowledge.phase_seq
            ):
                self._regen = draft
        else:
            error: str | None = None
            self._posting = True  # said, though its event may not be back yet
            try:
                await self._port(lambda: self.port.say(draft.text))
            except Exception as err:
                error = f"{type(err).__name__}: {err}"
                self._note("say refused", error=error, text=draft.text)
            finally:
                self._posting = False
            if error is None:
                self._spoke_in = draft.phase_seq
                if self._burst_sent == draft.phase_seq and self._burst_left > 0:
                    self._burst = (draft.phase_seq, len(self.knowledge.messages))
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

    def _stale(self, draft: Draft) -> str | None:
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
        if len(new) >= self.settings.discard_after_messages + draft.expected:
            return f"the chat moved on ({len(new)} new messages)"
        if self.settings.discard_when_addressed and k.addressed_in(new):
            return "someone addressed this player meanwhile"
        return None

    def _arm_quiet(self) -> None:
        if self._closed or "consult" in self._timers or self.knowledge.room() is None:
            return
        s = self.settings
        spell = s.quiet_s * self.rng.uniform(1 - s.quiet_jitter, 1 + s.quiet_jitter)
        self._arm("quiet", self.clock.now() + timedelta(seconds=spell), self._due)
