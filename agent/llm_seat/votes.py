"""Votes and night actions: when to ask the model, its answer read against the legal names,
one corrective retry, and the heuristic fallback cast by a hard timer before the deadline."""

from __future__ import annotations

from datetime import timedelta

from agent.llm.base import FINISH_REFUSAL, LLMRequest, LLMResponse
from agent.llm_seat.core import Decision, SeatCore
from agent.llm_seat.planning import CRITICAL_KINDS
from agent.prompting import TargetKind, corrective_request, parse_target, target_request
from agent.shape import fallback_fraction, vote_delay
from games.events import PhaseStarted
from games.state import PhaseKind

__all__ = ["VotingSeat"]


class VotingSeat(SeatCore):
    """The seat's votes and night actions (one :class:`Decision` per phase that owes one)."""

    def _new_decision(self, kind: TargetKind, event: PhaseStarted) -> None:
        s = self.settings
        seconds = event.seconds
        margin = min(
            max(min(s.deadline_margin_s, 0.1 * seconds), self._real_floor()), 0.3 * seconds
        )
        dec = Decision(kind, event.seq, event.deadline, timedelta(seconds=margin))
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

    async def _decide(self, dec: Decision) -> None:
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

    async def _fallback(self, dec: Decision, why: str) -> None:
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

    async def _cast(self, dec: Decision, name: str, fallback: bool) -> None:
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
