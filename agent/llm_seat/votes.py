"""Votes and night actions: when to ask the model, its answer read against the legal names,
one corrective retry, and the heuristic fallback cast by a hard timer before the deadline.

A model too slow to answer inside the vote (three of its slow answers, as measured so far in
the game, would not fit before the fallback: on a one-request-at-a-time server every seat's
vote queues behind the others) is asked for its vote near the end of the day's discussion
instead (``prevote_at`` of the day before voting opens), as a person makes up their mind while
the talk winds down; the seat casts that answer when people vote, without asking again."""

from __future__ import annotations

from datetime import datetime, timedelta

from agent.baseline.acting import act_target
from agent.llm.base import FINISH_REFUSAL, LLMRequest, LLMResponse
from agent.llm_seat.core import Decision, SeatCore
from agent.llm_seat.planning import CRITICAL_KINDS
from agent.prompting import TargetKind, corrective_request, parse_target, target_request
from agent.shape import fallback_fraction, vote_delay
from games.events import PhaseStarted
from games.roles import get_role
from games.state import PhaseKind

__all__ = ["VotingSeat"]


class VotingSeat(SeatCore):
    """The seat's votes and night actions (one :class:`Decision` per phase that owes one)."""

    def _new_decision(self, kind: TargetKind, event: PhaseStarted) -> None:
        s = self.settings
        seconds = event.seconds
        margin = self._decision_margin(seconds)
        fall = fallback_fraction(self.rng, s.fallback_at) if s.human_timing else s.fallback_at
        dec = Decision(
            kind,
            event.seq,
            event.deadline,
            timedelta(seconds=margin),
            start=event.t,
            fall=fall,
            heard=self.clock.now(),
        )
        self._decision = dec
        hard = self._hard_deadline(dec)
        lo, hi = s.vote_start if kind == "vote" else s.act_start
        wait = self.rng.uniform(lo, hi) * seconds
        if s.human_timing and kind == "vote":  # when people vote (agent.shape)
            wait = vote_delay(self.rng, seconds)
        start = min(event.t + timedelta(seconds=wait), hard)
        slow = self.latency.slow(*CRITICAL_KINDS)
        if slow is not None and self._planned_name(kind, event.number) is None:
            # early enough for an answer and its one corrective retry before the fallback
            start = max(min(start, hard - timedelta(seconds=2 * self._game_s(slow))), event.t)

        async def ready() -> None:
            dec.ready = True
            self._kick()

        self._arm("decide", start, ready)
        self._arm_fallback(dec)

    def _plan_side_act(self, event: PhaseStarted) -> None:
        """A mafia role with a night action of its own (a consort, a framer...) in a night
        vote with no night talk before it (the only mafia left): its vote is the decision the
        model is asked; the action beside it is the shadow baseline's, among the offered."""
        lo, hi = self.settings.act_start
        when = event.t + timedelta(seconds=self.rng.uniform(lo, hi) * event.seconds)

        async def act() -> None:
            k = self.knowledge
            legal = k.night_targets_now()
            if self._closed or not legal or not k.acts_tonight() or self._holds_tonight(legal):
                return
            name = self._baseline_act(legal) or self._heuristic_target("night_action", legal)
            self._note(name, kind="night_action", fallback=True, error="beside the kill vote")
            try:
                await self._port(lambda: self.port.night_act(name))
            except Exception as err:
                self._note(
                    f"night_action refused: {name}",
                    kind="night_action",
                    error=f"{type(err).__name__}: {err}",
                )

        self._arm("side_act", when, act)

    def _decision_margin(self, seconds: float) -> float:
        """No vote later than this before the deadline of a phase of ``seconds``."""
        s = self.settings
        return min(max(min(s.deadline_margin_s, 0.1 * seconds), self._real_floor()), 0.3 * seconds)

    def _hard_deadline(self, dec: Decision) -> datetime:
        """When the fallback is cast if the model has not answered: ``fall`` of the phase."""
        start = dec.start or self.clock.now()
        seconds = (dec.deadline - start).total_seconds()
        return start + timedelta(
            seconds=min(dec.fall * seconds, seconds - dec.margin.total_seconds())
        )

    def _arm_fallback(self, dec: Decision) -> None:
        async def hard_deadline() -> None:
            await self._fallback(dec, "the model had not answered in time")

        self._arm("deadline", self._hard_deadline(dec), hard_deadline)

    def _decision_extended(self, deadline: datetime) -> None:
        """The phase now ends at ``deadline``: the decision's margin, its fallback's time and
        the latest moment a model answer may still be cast move with it."""
        dec = self._decision
        if dec is None or dec.phase_seq != self.knowledge.phase_seq:
            return
        dec.deadline = deadline
        if dec.start is not None:
            seconds = (deadline - dec.start).total_seconds()
            dec.margin = timedelta(seconds=self._decision_margin(seconds))
        if "deadline" in self._timers:  # not cast yet, nor settled
            self._arm_fallback(dec)

    def _legal(self, kind: TargetKind) -> dict[int, str]:
        k = self.knowledge
        return k.vote_targets() if kind == "vote" else k.night_targets_now()

    # --- a slow model's vote, asked before voting opens ----------------------------------------

    def _plan_prevote(self, event: PhaseStarted) -> None:
        """A day's discussion began: ``prevote_at`` of it before its end, a seat whose model is
        too slow to answer inside the vote asks for its vote (`_ask_prevote`)."""
        at = self.settings.prevote_at
        if at <= 0 or event.phase != PhaseKind.DAY.value:
            return
        number, seconds = event.number, event.seconds
        when = max(event.deadline - timedelta(seconds=at * seconds), event.t)

        async def due() -> None:
            if self._too_slow_to_vote(seconds):
                self._prevote_due = number
                self._kick()

        self._arm("prevote", when, due)

    def _too_slow_to_vote(self, day_seconds: float) -> bool:
        """Three slow answers (the vote, its corrective retry, and the other seats' votes
        queued ahead of it) would not come back before the vote's fallback."""
        slow = self.latency.slow(*CRITICAL_KINDS)
        if slow is None:
            return False
        vote_s = self._vote_seconds if self._vote_seconds is not None else day_seconds / 3
        return 3 * self._game_s(slow) > self.settings.fallback_at * vote_s

    async def _ask_prevote(self, number: int) -> None:
        """Ask for the coming vote now, with the living others as the names; a valid answer
        is kept for the vote (`_planned_name`), anything else leaves the vote to be asked
        when it opens. The call may run into the vote, up to its fallback."""
        k = self.knowledge
        if (
            k.phase is not PhaseKind.DAY
            or k.phase_number != number
            or not k.me_alive
            or k.over
            or k.deadline is None
        ):
            return
        legal = {i: k.players[i] for i in sorted(k.alive) if i != self.seat}
        if not legal:
            return
        memory, strategy = await self._memory("vote")
        req = target_request(
            self.prompts,
            k,
            self.persona,
            self.clock.now(),
            self.settings.window,
            "vote",
            list(legal.values()),
            max_tokens=self.settings.target_max_tokens,
            memory=memory,
            strategy=strategy,
        )
        vote_s = self._vote_seconds if self._vote_seconds is not None else k.phase_seconds / 3
        until = k.deadline + timedelta(seconds=self.settings.fallback_at * vote_s)
        resp = await self._call(self.generator, req, "vote", until=until)
        if resp is None or self._closed:
            return
        choice, _ = self._read_target("vote", req, resp, legal)
        if choice is not None:
            self._prevote = (number, choice)

    def _planned_name(self, kind: TargetKind, number: int) -> str | None:
        """The name a slow model gave for day ``number``'s vote before it opened, if any."""
        planned = self._prevote
        if kind != "vote" or planned is None or planned[0] != number:
            return None
        if self.knowledge.phase is PhaseKind.NIGHT_VOTE:
            return None
        return planned[1]

    async def _decide(self, dec: Decision) -> None:
        k = self.knowledge
        legal = self._legal(dec.kind)
        if not legal or dec.phase_seq != k.phase_seq:
            dec.model_done = True
            return
        planned = self._planned_name(dec.kind, k.phase_number)
        if planned is not None and planned in legal.values():
            dec.model_done = True  # the model's answer, given before voting opened
            if self._closed or (dec.cast is not None and dec.cast.casefold() == planned.casefold()):
                return
            if self.clock.now() >= dec.deadline - dec.margin:
                return
            await self._cast(dec, planned, fallback=False)
            return
        if dec.kind == "night_action" and self._holds_tonight(legal):
            dec.model_done = True
            self._note("not tonight (baseline)", kind=dec.kind)
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
        """Cast the heuristic choice, unless something was cast already. Its timer is due
        before the deadline; when it runs after it (the process stalled: a loaded machine, a
        long collection), the phase this seat still sees is open until its end is applied,
        and the choice counts as made when it was due, as a person's click on its way does;
        never before this seat heard the phase begin (the same stall can have held back the
        phase's start, and a moment before it was applied belongs to the phase before)."""
        k = self.knowledge
        if self._closed or dec.cast is not None or dec.phase_seq != k.phase_seq:
            return
        legal = self._legal(dec.kind)
        if not legal:
            return
        # (the fallback's due moment is never later than the decision's margin allows)
        late = self.clock.now() >= dec.deadline - dec.margin
        due = self._hard_deadline(dec)
        made = (due if dec.heard is None else max(due, dec.heard)) if late else None
        if dec.kind == "night_action":
            if self._holds_tonight(legal):
                return
            name = self._baseline_act(legal) or self._heuristic_target(dec.kind, legal)
        else:
            name = self._heuristic_target(dec.kind, legal)
        self._note(name, kind=dec.kind, fallback=True, error=why)
        await self._cast(dec, name, fallback=True, made=made)

    async def _cast(
        self, dec: Decision, name: str, fallback: bool, made: datetime | None = None
    ) -> None:
        if dec.kind == "night_action" and name.casefold() not in {
            n.casefold() for n in self._legal("night_action").values()
        }:  # never an act the engine did not offer: a refusal could show the role
            self._note(f"night action not sent: {name} is not offered", kind=dec.kind)
            return
        previous, dec.cast, dec.by_fallback = dec.cast, name, fallback
        try:
            if dec.kind == "vote":
                await self._port(lambda: self.port.vote(name, made=made))
            else:
                await self._port(lambda: self.port.night_act(name, made=made))
        except Exception as err:
            dec.cast = previous
            self._note(
                f"{dec.kind} refused: {name}", kind=dec.kind, error=f"{type(err).__name__}: {err}"
            )

    def _baseline_act(self, legal: dict[int, str]) -> str | None:
        """The shadow baseline's night target, when the engine offers it (its role-aware
        choice: an escort blocks the prime suspect, a tracker follows one...)."""
        try:
            target = act_target(self.shadow)
        except Exception:  # the shadow must never take the seat down
            return None
        return legal.get(target) if target is not None else None

    def _holds_tonight(self, legal: dict[int, str]) -> bool:
        """A limited ability (a vigilante's bullets, a veteran's alerts, a survivor's vests)
        is kept for another night when the shadow baseline would keep it: the model picks the
        target, the baseline whether tonight is the night."""
        role = self.knowledge.role
        if role is None or get_role(role).uses is None:
            return False
        try:
            return act_target(self.shadow) is None
        except Exception:
            return False

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
