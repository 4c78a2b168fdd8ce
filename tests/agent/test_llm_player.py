"""The LLM player on a hand-cranked table: the real rules engine, game time that moves only
when the test says so, and an in-process model whose answers the test scripts (and can hold
back, to play a slow provider). Timing claims (debounce, one request in flight, typing, vote
before the deadline) are checked in game seconds, exactly."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import itertools
import re
import warnings
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from agent.base import Player
from agent.decisions import DecisionRecord, InMemoryDecisionLog, summarize
from agent.llm import BudgetedClient, LLMRequest, LLMResponse, LLMUnavailable, TokenBudget
from agent.llm_player import LLMPlayer, LLMPlayerSettings
from games import GameConfig, apply, new_game
from games.actions import Action, NightAct, Say, Tick, Vote
from games.errors import RuleError
from games.events import (
    Event,
    MessageAccepted,
    NightActionRecorded,
    PhaseStarted,
    VoteCast,
    visible,
)
from games.names import resolve_name
from games.state import PhaseKind

T0 = datetime(2025, 2, 10, 20, 0, 0, tzinfo=UTC)
NAMES = ["Ari", "Ariel", "Blake", "Casey", "Drew", "Eden", "Finley"]
# Ari (the agent, seat 0) is a bystander; Blake and Casey are the mafia.
DEAL = ("bystander", "bystander", "mafia", "mafia", "detective", "doctor", "bystander")
ROLES = ("detective", "doctor")


# --- a hand-cranked clock and timers -----------------------------------------------------------


class ManualClock:
    def __init__(self, t: datetime) -> None:
        self.t = t

    def now(self) -> datetime:
        return self.t

    def seconds_to_real(self, game_seconds: float) -> float:
        return 0.0


@dataclass
class Job:
    when: datetime
    seq: int
    callback: Callable[[], Awaitable[None]]
    cancelled: bool = False
    ran: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualTimers:
    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.jobs: list[Job] = []
        self._seq = itertools.count()

    def call_at(self, when: datetime, callback: Callable[[], Awaitable[None]]) -> Job:
        job = Job(when, next(self._seq), callback)
        self.jobs.append(job)
        return job

    def next_due(self, until: datetime) -> Job | None:
        due = [j for j in self.jobs if not j.cancelled and not j.ran and j.when <= until]
        return min(due, key=lambda j: (j.when, j.seq)) if due else None


# --- a scripted model --------------------------------------------------------------------------

Answer = str | BaseException | LLMResponse


class StubLLM:
    """Answers by request kind; ``hold(kind)`` makes requests of that kind wait for release."""

    name = "stub:model"

    def __init__(self, **answers: Callable[[LLMRequest], Answer] | str) -> None:
        self.answers = answers
        self.requests: list[LLMRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.held: dict[str, asyncio.Event] = {}

    def hold(self, kind: str) -> None:
        self.held[kind] = asyncio.Event()

    def release(self, kind: str) -> None:
        self.held.pop(kind).set()

    def of(self, kind: str) -> list[LLMRequest]:
        return [r for r in self.requests if r.kind == kind]

    async def complete(self, req: LLMRequest) -> LLMResponse:
        self.requests.append(req)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            gate = self.held.get(req.kind)
            if gate is not None:
                await gate.wait()
            rule = self.answers.get(req.kind, "<wait>")
            out = rule(req) if callable(rule) else rule
            if isinstance(out, BaseException):
                raise out
            if isinstance(out, LLMResponse):
                return out
            return LLMResponse(
                text=out,
                model="stub",
                input_tokens=len(req.system) // 4,
                output_tokens=1,
                cached_input_tokens=0,
                latency_s=0.01,
                finish_reason="stop",
                attempts=1,
                cost_usd=0.0,
            )
        finally:
            self.in_flight -= 1


def options_of(req: LLMRequest) -> list[str]:
    """The names a vote/night request offers (from the first or the corrective message)."""
    m = re.search(r"(?:Choose one of|and nothing else): (.+)", req.messages[-1][1])
    assert m is not None
    return [n.strip() for n in m.group(1).split(",")]


# --- the table ---------------------------------------------------------------------------------


class TablePort:
    def __init__(self, table: Table, seat: int) -> None:
        self.table = table
        self._seat = seat

    @property
    def seat(self) -> int:
        return self._seat

    async def say(self, text: str) -> None:
        self.table.act(Say(self._seat, text, self.table.clock.now()))

    async def vote(self, target: str | None, *, made: datetime | None = None) -> None:
        index = None if target is None else resolve_name(target, self.table.names)
        self.table.act(Vote(self._seat, index, made or self.table.clock.now()))

    async def night_act(self, target: str, *, made: datetime | None = None) -> None:
        index = resolve_name(target, self.table.names)
        self.table.act(NightAct(self._seat, index, made or self.table.clock.now()))


@dataclass
class Table:
    """A game on the real engine; events reach players through a queue, like the outboxes."""

    config: GameConfig
    clock: ManualClock = field(default_factory=lambda: ManualClock(T0))
    players: dict[int, Player] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.timers = ManualTimers(self.clock)
        self.state, first = new_game(self.config, NAMES, 5, self.clock.now())
        self.names = dict(enumerate(NAMES))
        self.queue: list[Event] = []
        self._armed = 0
        self._record(first)

    @property
    def now(self) -> datetime:
        return self.clock.now()

    def port(self, seat: int) -> TablePort:
        return TablePort(self, seat)

    def _record(self, events: list[Event]) -> None:
        self.events.extend(events)
        self.queue.extend(events)
        state = self.state
        if not state.over and state.phase.deadline and self._armed != state.phase.seq:
            self._armed = state.phase.seq
            seq, deadline = state.phase.seq, state.phase.deadline

            async def tick() -> None:
                if self.state.phase.seq == seq:
                    self.act(Tick(deadline))

            self.timers.call_at(deadline, tick)

    def act(self, action: Action) -> None:
        try:
            self.state, events = apply(self.state, action)
        except RuleError as err:
            self.refused.append(str(err))
            raise
        self._record(events)

    def say(self, seat: int, text: str) -> None:
        """A human speaks now."""
        self.act(Say(seat, text, self.now))

    async def settle(self) -> None:
        for _ in range(40):
            await asyncio.sleep(0)
            while self.queue:
                event = self.queue.pop(0)
                for seat, player in self.players.items():
                    if visible(event, seat):
                        await player.on_event(event)

    async def advance(self, seconds: float) -> None:
        """Move game time on, running every timer that falls due, in order."""
        until = self.now + timedelta(seconds=seconds)
        await self.settle()
        while (job := self.timers.next_due(until)) is not None:
            job.ran = True
            self.clock.t = max(self.clock.t, job.when)
            await job.callback()
            await self.settle()
        self.clock.t = until
        await self.settle()

    async def until_phase(self, kind: PhaseKind, limit: float = 600) -> None:
        for _ in range(int(limit)):
            if self.state.phase.kind is kind:
                return
            await self.advance(1)
        raise AssertionError(f"never reached {kind}")

    def said(self, seat: int) -> list[MessageAccepted]:
        return [e for e in self.events if isinstance(e, MessageAccepted) and e.seat == seat]

    def votes_by(self, seat: int) -> list[VoteCast]:
        return [e for e in self.events if isinstance(e, VoteCast) and e.voter == seat]


QUICK = LLMPlayerSettings(
    people_lengths=False,
    human_timing=False,
    open_delay_s=(1.0, 1.0),
    debounce_s=(2.0, 2.0),
    max_debounce_s=6.0,
    min_consult_gap_s=5.0,
    # a consultation after every message (the default waits for a few): exact triggers
    consult_after=(1, 1),
    quiet_s=20.0,
    quiet_jitter=0.0,
    vote_start=(0.1, 0.1),
    act_start=(0.1, 0.1),
)


def make_table(
    llm: StubLLM,
    *,
    seat: int = 0,
    settings: LLMPlayerSettings = QUICK,
    config: GameConfig | None = None,
    deal: tuple[str, ...] = DEAL,
    generator: object | None = None,
    seed: int = 1,
) -> tuple[Table, LLMPlayer, InMemoryDecisionLog]:
    config = config or GameConfig(
        deal=deal,
        roles=ROLES,
        day_seconds=60,
        vote_seconds=30,
        night_seconds=30,
        night_vote_seconds=20,
    )
    table = Table(config)
    log = InMemoryDecisionLog()
    import random

    player = LLMPlayer(
        seat=seat,
        name=NAMES[seat],
        persona="You are calm.",
        port=table.port(seat),
        clock=table.clock,
        timers=table.timers,
        generator=generator or llm,  # type: ignore[arg-type]
        scheduler=llm,
        decisions=log,
        rng=random.Random(seed),
        settings=settings,
        game_id="g-test",
    )
    table.players[seat] = player
    return table, player, log


def user_text(req: LLMRequest) -> str:
    return req.messages[0][1]


# --- talking -----------------------------------------------------------------------------------


async def test_opens_the_phase_then_types_about_a_second_per_word() -> None:
    llm = StubLLM(scheduler="<send>", generator="hey all who is being quiet today")
    table, _, log = make_table(llm)
    await table.advance(1.5)
    assert len(llm.of("scheduler")) == 1  # nobody said anything yet: it may speak first
    assert len(llm.of("generator")) == 1
    assert table.said(0) == []  # still typing: 7 words take 7 s
    await table.advance(6)
    assert table.said(0) == []
    await table.advance(1)
    (line,) = table.said(0)
    assert line.text == "hey all who is being quiet today"
    assert (line.t - T0).total_seconds() == pytest.approx(1 + 7, abs=0.01)
    assert all(r.kind in ("scheduler", "generator") for r in log.records)
    assert table.refused == []


async def test_typing_time_is_capped() -> None:
    long = " ".join(["word"] * 40)
    llm = StubLLM(scheduler="<send>", generator=long)
    settings = dataclasses.replace(QUICK, max_line_chars=400)
    table, _, _ = make_table(llm, settings=settings)
    await table.advance(1)
    await table.advance(10)
    assert len(table.said(0)) == 1


async def test_consults_are_debounced_and_one_request_is_in_flight() -> None:
    llm = StubLLM(scheduler="<wait>")
    table, player, _ = make_table(llm)
    await table.advance(1)  # the opening consultation
    assert len(llm.of("scheduler")) == 1
    llm.hold("scheduler")
    await table.advance(5)
    for i, who in enumerate((1, 2, 3)):
        table.say(who, f"message {i} from {NAMES[who]}")
        await table.advance(0.5)
    # the burst is answered once, 2 s after its last line (and >= 5 s after the last consult)
    await table.advance(2.5)
    assert len(llm.of("scheduler")) == 2
    assert player.busy
    # more chat while that request hangs: no second request, however long it takes
    for i in range(6):
        table.say(4, f"still talking {i}")
        await table.advance(3)
    assert len(llm.of("scheduler")) == 2 and llm.max_in_flight == 1
    llm.release("scheduler")
    await table.advance(0.1)
    # ... and exactly one re-consultation once it completes
    assert len(llm.of("scheduler")) == 3
    await table.advance(4)
    assert len(llm.of("scheduler")) == 3
    assert llm.max_in_flight == 1


async def test_a_silent_table_is_not_polled() -> None:
    llm = StubLLM(scheduler="<wait>")
    table, _, _ = make_table(llm)
    await table.advance(59)
    calls = len(llm.of("scheduler"))
    # the opening one, then one per 20 s quiet spell, never one a second
    assert calls == 3


async def test_a_steady_stream_cannot_postpone_consultation_forever() -> None:
    llm = StubLLM(scheduler="<wait>")
    table, _, _ = make_table(llm)
    await table.advance(1.5)
    first = len(llm.of("scheduler"))
    for i in range(12):  # a line every second: never 2 s of quiet
        table.say(1 + i % 3, f"line {i}")
        await table.advance(1)
    assert len(llm.of("scheduler")) > first


async def test_scheduler_prose_is_invalid_and_the_baseline_decides() -> None:
    """An unusable scheduler answer is logged invalid; send/wait is then the shadow
    baseline's call (logged as a fallback), not a silent "wait"."""
    llm = StubLLM(scheduler="Sure! I think I should <send> a message now.", generator="hm ok")
    table, _, log = make_table(llm)
    await table.advance(2)
    model, fallback = [r for r in log.records if r.kind == "scheduler"]
    assert not model.valid and model.decision is not None and model.decision.startswith("invalid")
    assert fallback.fallback and not fallback.called
    assert fallback.decision in ("send (baseline)", "wait (baseline)")
    # what the shadow planned decides it: a line due before the next consultation is "send"
    assert (fallback.decision == "send (baseline)") == (len(llm.of("generator")) == 1)
    assert summarize(log.records).fallbacks_by_kind == {"scheduler": 1}


async def test_a_failing_scheduler_still_lets_the_seat_talk() -> None:
    """Every scheduler call fails (the seat is not allowed to degrade here): the shadow's
    send/wait stands in for each, and the seat speaks in the day."""
    llm = StubLLM(
        scheduler=lambda _req: LLMUnavailable("HTTP 503"), generator="who wants to start then"
    )
    patient = dataclasses.replace(QUICK, max_failures=1000)
    table, player, log = make_table(llm, settings=patient)
    await table.advance(55)
    assert not player.degraded
    assert table.said(0)  # the shadow's send, or its line at the never-mute floor
    falls = [r for r in log.records if r.kind == "scheduler" and r.fallback]
    assert falls and all(r.error == "the scheduler call failed" for r in falls)


@pytest.mark.parametrize(
    ("when", "reason"),
    [("phase", "phase ended"), ("chat", "chat moved on"), ("named", "addressed")],
)
async def test_a_stale_draft_is_discarded(when: str, reason: str) -> None:
    llm = StubLLM(scheduler="<send>", generator="i have a feeling about this one guys really")
    day = 5 if when == "phase" else 60
    config = GameConfig(deal=DEAL, roles=ROLES, day_seconds=day, vote_seconds=30)
    table, _, log = make_table(llm, config=config)
    await table.advance(1.5)  # consulted, generated: 9 words = 9 s of typing
    assert len(llm.of("generator")) == 1
    llm.answers["scheduler"] = "<wait>"
    if when == "chat":
        for who in (1, 2, 4):
            table.say(who, f"{NAMES[who]} here with news")
            await table.advance(1)
    elif when == "named":
        table.say(2, "ari what do you think")
    await table.advance(12)
    assert [e.text for e in table.said(0)] == []
    discards = [r for r in log.records if (r.decision or "").startswith("discard")]
    assert len(discards) == 1 and reason in (discards[0].decision or "")
    assert discards[0].output == "i have a feeling about this one guys really"
    assert summarize(log.records).discards == 1


async def test_two_messages_meanwhile_do_not_make_a_draft_stale() -> None:
    llm = StubLLM(scheduler="<send>", generator="i have a feeling about this one")
    table, _, _ = make_table(llm)
    await table.advance(1.5)
    llm.answers["scheduler"] = "<wait>"
    table.say(1, "hello")
    table.say(2, "hey there")
    await table.advance(10)
    assert [e.text for e in table.said(0)] == ["i have a feeling about this one"]


async def test_regenerate_policy_writes_a_fresh_line_once() -> None:
    lines = iter(["first draft about blake being odd", "second take after the news"])
    llm = StubLLM(scheduler="<send>", generator=lambda _req: next(lines))
    settings = dataclasses.replace(QUICK, discard_policy="regenerate")
    table, _, _ = make_table(llm, settings=settings)
    await table.advance(1.5)
    llm.answers["scheduler"] = "<wait>"
    table.say(3, "ari are you there")
    await table.advance(15)
    assert [e.text for e in table.said(0)] == ["second take after the news"]
    assert len(llm.of("generator")) == 2
    assert len(llm.of("scheduler")) >= 1


async def test_repeats_are_regenerated_once_then_the_baseline_line_is_typed() -> None:
    llm = StubLLM(scheduler="<send>", generator="i think blake is mafia")
    table, _, log = make_table(llm)
    await table.advance(1.5)
    await table.advance(10)
    assert [e.text for e in table.said(0)] == ["i think blake is mafia"]
    llm.answers["generator"] = "I think Blake is mafia!!"
    table.say(2, "why me")
    await table.advance(30)
    repeats = [r for r in log.records if (r.decision or "").startswith("repeat")]
    assert len(repeats) >= 2
    # the second try was told what was wrong
    assert "too close to something you already said" in user_text(llm.of("generator")[2])
    # then the shadow baseline's line, logged as a fallback, not the repeat and not silence
    said = [e.text for e in table.said(0)]
    assert said[0] == "i think blake is mafia" and "I think Blake is mafia!!" not in said
    lines = [r for r in log.records if r.kind == "generator" and r.fallback]
    assert lines and lines[0].decision == "baseline line" and lines[0].output == said[1]


async def test_generated_lines_are_cleaned() -> None:
    llm = StubLLM(scheduler="<send>", generator='[20:00:03] Ari: "ok who voted blake."')
    table, _, _ = make_table(llm)
    await table.advance(12)
    assert [e.text for e in table.said(0)] == ["ok who voted blake"]


async def test_refusal_is_not_posted_the_baseline_line_is() -> None:
    refusal = LLMResponse("I'm sorry, I can't do that.", "stub", 1, 1, 0, 0.0, "refusal", 1, 0.0)
    llm = StubLLM(scheduler="<send>", generator=lambda _req: refusal)
    table, _, log = make_table(llm)
    await table.advance(12)
    said = [e.text for e in table.said(0)]
    assert len(said) == 1 and "sorry" not in said[0].casefold()
    generator = [r for r in log.records if r.kind == "generator"]
    assert [r.decision for r in generator] == ["refusal", "refusal", "baseline line"]
    assert generator[-1].fallback and generator[-1].output == said[0]


async def test_the_rate_instruction_follows_the_share() -> None:
    llm = StubLLM(scheduler="<send>", generator=lambda req: f"line number {len(llm.requests)}")
    table, _, _ = make_table(llm)
    await table.advance(12)  # the agent speaks first: 1 of 1 messages, above 1/7
    assert len(table.said(0)) == 1
    llm.answers["scheduler"] = "<wait>"
    table.say(1, "hi")
    await table.advance(3)
    last = user_text(llm.of("scheduler")[-1])
    assert "already said your share" in last and "1 of the 2 player messages" in last
    for i in range(12):
        table.say(2 + i % 4, f"chatter {i}")
    await table.advance(8)
    last = user_text(llm.of("scheduler")[-1])
    assert "quieter than the others" in last and "1 of the 14 player messages" in last


async def test_chatter_brings_a_consultation_every_few_messages_a_name_at_once() -> None:
    """The seat is asked again once ``consult_after`` messages by others came since the last
    question (here 3, 4 once it has said its share), or at once when one names it: a line of
    chatter rarely turns a "wait" into a "send", and every question re-reads the prompt."""
    llm = StubLLM(scheduler="<wait>")
    table, _, _ = make_table(llm, settings=dataclasses.replace(QUICK, consult_after=(3, 4)))
    await table.advance(3)  # the phase's opening consultation
    first = len(llm.of("scheduler"))
    assert first == 1
    for i in range(2):
        table.say(2 + i, f"chatter {i}")
        await table.advance(6)
    assert len(llm.of("scheduler")) == first  # two lines: not yet
    table.say(4, "chatter 2")
    await table.advance(6)
    assert len(llm.of("scheduler")) == first + 1  # the third
    table.say(5, "what do you think, Ari?")
    await table.advance(6)
    assert len(llm.of("scheduler")) == first + 2  # named: at once
    table.say(6, "hmm")
    await table.advance(25)  # a quiet spell still brings one
    assert len(llm.of("scheduler")) == first + 3


# --- who may talk ------------------------------------------------------------------------------


async def test_a_bystander_is_not_consulted_at_night_nor_after_elimination() -> None:
    llm = StubLLM(scheduler="<wait>", vote=lambda req: "Ari" if "Ari" in options_of(req) else "")
    # the agent (Ariel, seat 1, bystander) will be voted out by everyone on day 1
    table, _, _ = make_table(llm, seat=1)
    await table.until_phase(PhaseKind.VOTE)
    for voter in (0, 2, 3, 4, 5, 6):
        table.act(Vote(voter, 1, table.now))
    await table.advance(5)  # the agent votes too, which ends the vote
    assert not table.state.seats[1].alive
    before = len(llm.of("scheduler"))
    await table.advance(200)
    assert len(llm.of("scheduler")) == before


async def test_a_bystander_is_quiet_at_night() -> None:
    llm = StubLLM(scheduler="<wait>", vote=lambda req: options_of(req)[0])
    table, _, _ = make_table(llm)
    await table.until_phase(PhaseKind.NIGHT)
    before = len(llm.of("scheduler"))
    await table.advance(25)
    assert table.state.phase.kind.is_night
    assert len(llm.of("scheduler")) == before


# --- votes -------------------------------------------------------------------------------------


async def test_votes_by_whole_name() -> None:
    llm = StubLLM(vote="my vote: ariel")
    table, _, log = make_table(llm)
    await table.until_phase(PhaseKind.VOTE)
    await table.advance(4)
    (vote,) = table.votes_by(0)
    assert vote.target_name == "Ariel"
    (rec,) = [r for r in log.records if r.kind == "vote"]
    assert rec.valid and not rec.fallback and rec.decision == "Ariel"
    assert options_of(llm.of("vote")[0]) == ["Ariel", "Blake", "Casey", "Drew", "Eden", "Finley"]


async def test_an_unusable_vote_gets_one_corrective_retry_then_the_fallback() -> None:
    llm = StubLLM(vote=lambda req: "Ariel or Blake" if len(llm.of("vote")) == 1 else "Zed")
    table, _, log = make_table(llm)
    await table.until_phase(PhaseKind.VOTE)
    await table.advance(4)
    _, second = llm.of("vote")
    assert second.messages[1] == ("assistant", "Ariel or Blake")
    assert "names several players (Ariel and Blake)" in second.messages[2][1]
    (vote,) = table.votes_by(0)
    assert vote.target_name in NAMES[1:]
    kinds = [(r.valid, r.fallback) for r in log.records if r.kind == "vote"]
    assert kinds == [(False, False), (False, False), (False, True)]
    summary = summarize(r for r in log.records if r.kind == "vote")
    assert summary.fallbacks_by_kind == {"vote": 1} and summary.valid == 0
    assert summary.answered == 2 and summary.valid_rate == 0.0
    assert table.refused == []


async def just_before_the_fallback() -> tuple[
    StubLLM, Table, InMemoryDecisionLog, datetime, datetime
]:
    """Seat 0's model holds its vote; half a second before the fallback (24 s into the 30 s
    vote), nothing cast yet. The stub, the table, the log, the vote's start and deadline."""
    llm = StubLLM()
    llm.hold("vote")
    table, _, log = make_table(llm)
    await table.until_phase(PhaseKind.VOTE)
    start = table.state.phase.started_at
    deadline = table.state.phase.deadline
    assert deadline is not None
    await table.advance(30 * 0.8 - 0.5)
    assert table.votes_by(0) == []
    return llm, table, log, start, deadline


async def test_a_slow_model_still_votes_before_the_deadline() -> None:
    llm, table, log, start, deadline = await just_before_the_fallback()
    await table.advance(1)
    (fallback,) = table.votes_by(0)
    assert (fallback.t - start).total_seconds() == pytest.approx(24, abs=0.01)
    assert fallback.t < deadline
    (rec,) = [r for r in log.records if r.kind == "vote"]
    assert rec.fallback and not rec.called and rec.decision == fallback.target_name
    # the model answers late but with time to spare: the vote follows the model
    other = next(n for n in NAMES[1:] if n != fallback.target_name)
    llm.answers["vote"] = other
    llm.release("vote")
    await table.advance(0.5)
    votes = table.votes_by(0)
    assert [v.target_name for v in votes] == [fallback.target_name, other] and votes[1].changed
    model = [r for r in log.records if r.kind == "vote" and r.called]
    assert len(model) == 1 and model[0].valid and not model[0].fallback


async def test_a_fallback_whose_timer_runs_after_the_deadline_still_votes() -> None:
    """The process stalls across the vote's deadline (a loaded machine, a long collection):
    the fallback's timer and the phase's end come due together, the fallback first. Its
    vote counts as made when it was due, before the deadline (old: dropped as too late, and
    in a game of agents nobody voted that day: a CI failure)."""
    llm, table, log, start, deadline = await just_before_the_fallback()
    table.clock.t = deadline + timedelta(seconds=2)  # the stall: nothing ran meanwhile
    await table.advance(0)
    (fallback,) = table.votes_by(0)
    assert (fallback.t - start).total_seconds() == pytest.approx(24, abs=0.01)
    assert table.state.phase.kind is not PhaseKind.VOTE  # then the vote ended, on time
    assert any(r.fallback and r.kind == "vote" for r in log.records)
    llm.release("vote")
    await table.advance(1)


async def test_a_fallback_after_a_stall_that_held_back_the_phase_start_still_votes() -> None:
    """The process stalls at the end of the day: the day's end is applied (and the seat
    hears the vote open) 28.5 s into the 30 s vote, after the fallback's moment (24 s) and
    inside the last-moment margin. The fallback is cast at once, made when the seat heard
    the vote open: a moment before that belongs to the day, and the vote was refused as too
    late (old: in a CI run, two mafia seats' night votes refused this way)."""
    llm = StubLLM()
    llm.hold("vote")
    table, _, log = make_table(llm)
    await table.until_phase(PhaseKind.DAY)
    day_end = table.state.phase.deadline
    assert day_end is not None
    table.clock.t = day_end + timedelta(seconds=28.5)  # the stall: nothing ran meanwhile
    table.act(Tick(day_end, applied=table.now))  # the day's end, applied late
    assert table.state.phase.kind is PhaseKind.VOTE
    deadline = table.state.phase.deadline
    assert deadline is not None and table.now < deadline
    await table.advance(0)
    assert table.refused == []
    (fallback,) = table.votes_by(0)
    assert fallback.t == day_end + timedelta(seconds=28.5) and fallback.t < deadline
    assert any(r.fallback and r.kind == "vote" for r in log.records)
    llm.release("vote")
    await table.advance(2)


async def test_a_model_too_slow_for_the_vote_is_asked_before_it_opens() -> None:
    """On a model whose answers take longer than the vote leaves (measured in play), the seat
    asks for its vote near the end of the day's discussion and casts that answer when the
    vote opens, as the model's (not a fallback), without asking again."""
    llm = StubLLM(vote=lambda req: options_of(req)[-1], scheduler="<wait>")
    table, player, log = make_table(llm)
    player.latency.slow = lambda *kinds: 30.0  # type: ignore[method-assign]
    await table.until_phase(PhaseKind.DAY)
    await table.advance(45)  # day 60 s: asked at 70% of it
    early = llm.of("vote")
    assert len(early) == 1 and table.state.phase.kind is PhaseKind.DAY
    assert "Voting opens when the discussion ends" in user_text(early[0])
    assert "Ari" not in options_of(early[0])  # (seat 0 never votes for itself)
    await table.until_phase(PhaseKind.VOTE)
    await table.advance(5)
    (vote,) = table.votes_by(0)
    assert vote.target_name == options_of(early[0])[-1]
    assert len(llm.of("vote")) == 1  # not asked again
    (rec,) = [r for r in log.records if r.kind == "vote"]
    assert rec.called and rec.valid and not rec.fallback


async def test_a_fast_model_is_asked_for_its_vote_when_the_vote_opens() -> None:
    llm = StubLLM(vote=lambda req: options_of(req)[-1], scheduler="<wait>")
    table, _, _ = make_table(llm)
    await table.until_phase(PhaseKind.VOTE)
    assert llm.of("vote") == []  # nothing asked during the day
    await table.advance(5)
    assert len(llm.of("vote")) == 1 and "Voting is open" in user_text(llm.of("vote")[0])
    assert len(table.votes_by(0)) == 1


async def test_a_model_answer_after_the_margin_is_only_logged() -> None:
    llm = StubLLM()
    llm.hold("vote")
    table, _, log = make_table(llm)
    await table.until_phase(PhaseKind.VOTE)
    await table.advance(28.5)  # 1.5 s before the deadline: inside the 2 s margin
    (fallback,) = table.votes_by(0)
    llm.answers["vote"] = next(n for n in NAMES[1:] if n != fallback.target_name)
    llm.release("vote")
    await table.advance(0.2)
    assert len(table.votes_by(0)) == 1
    assert any((r.decision or "").startswith("late vote") for r in log.records)


async def test_mafia_night_vote_offers_no_partner_and_follows_the_model() -> None:
    llm = StubLLM(vote=lambda req: options_of(req)[-1], scheduler="<wait>")
    table, _, _ = make_table(llm, seat=2)  # Blake, mafia with Casey
    await table.until_phase(PhaseKind.NIGHT_VOTE)
    await table.advance(3)
    night = [r for r in llm.of("vote") if "tonight's victim" in user_text(r)]
    assert night and "Casey" not in options_of(night[0]) and "Blake" not in options_of(night[0])
    votes = [v for v in table.votes_by(2) if v.night]
    assert [v.target_name for v in votes] == [options_of(night[0])[-1]]


async def test_detective_investigates_at_night() -> None:
    llm = StubLLM(night_action="i want to check casey", vote=lambda req: options_of(req)[0])
    table, _, log = make_table(llm, seat=4)  # Drew, the detective
    await table.until_phase(PhaseKind.NIGHT)
    await table.advance(5)
    acts = [e for e in table.events if isinstance(e, NightActionRecorded) and e.seat == 4]
    assert [a.target_name for a in acts] == ["Casey"]
    assert "Drew" not in options_of(llm.of("night_action")[0])
    assert [r.decision for r in log.records if r.kind == "night_action"] == ["Casey"]


async def test_doctor_cannot_repeat_and_the_fallback_knows_it() -> None:
    llm = StubLLM(night_action="Eden", vote=lambda req: options_of(req)[0])
    table, _, log = make_table(llm, seat=5)  # Eden, the doctor, always wants to protect herself
    await table.until_phase(PhaseKind.NIGHT)
    await table.advance(5)
    await table.until_phase(PhaseKind.DAY)
    await table.until_phase(PhaseKind.NIGHT)
    await table.advance(5)
    acts = [e for e in table.events if isinstance(e, NightActionRecorded) and e.seat == 5]
    assert len(acts) == 2 and acts[0].target_name == "Eden"
    assert acts[1].target_name != "Eden"
    first, retry = llm.of("night_action")[1:3]
    assert "Eden" not in options_of(first)
    assert "Eden is not a valid choice now" in retry.messages[-1][1]
    notes = [r for r in log.records if r.kind == "night_action" and not r.called]
    assert [(r.fallback, r.decision) for r in notes] == [(True, acts[1].target_name)]
    assert table.refused == []


# --- degradation -------------------------------------------------------------------------------


async def test_a_spent_budget_hands_the_seat_to_the_baseline() -> None:
    llm = StubLLM(scheduler="<wait>")
    budget = TokenBudget(1)
    client = BudgetedClient(llm, budget)
    table, player, log = make_table(llm, generator=client)
    player.scheduler = client
    await table.advance(2)
    assert budget.exhausted and not player.degraded
    await table.advance(25)
    assert player.degraded
    assert len(llm.requests) == 1  # nothing more is sent once the budget is spent
    assert summarize(log.records).degraded
    await table.until_phase(PhaseKind.VOTE)
    await table.advance(30)
    assert len(table.votes_by(0)) >= 1  # the baseline votes for the seat
    assert table.refused == []


async def test_repeated_failures_degrade() -> None:
    llm = StubLLM(scheduler=lambda _req: LLMUnavailable("down"))
    table, player, log = make_table(llm)
    await table.advance(60)
    assert player.degraded
    assert len(llm.requests) == 3
    assert summarize(log.records).errors == 3


async def test_time_outs_weigh_half_towards_handing_over() -> None:
    """A slow server's time-outs are not a broken model: the seat hands over after twice as
    many of them in a row (and an answer in between starts the count again)."""
    from agent.llm.base import LLMTimeout

    def late(_req: LLMRequest) -> LLMTimeout:
        return LLMTimeout("no answer within 20 s")

    llm = StubLLM(scheduler=late, vote=late)
    table, player, log = make_table(llm)
    for _ in range(120):
        if len(llm.requests) >= 3:
            break
        await table.advance(1)
    assert not player.degraded and len(llm.requests) == 3  # (3 in a row used to be enough)
    for _ in range(600):
        if len(llm.requests) >= 6 or player.degraded:
            break
        await table.advance(1)
    assert player.degraded
    assert len(llm.requests) == 6
    assert any("6 failed LLM calls in a row" in (r.decision or "") for r in log.records)


async def test_close_cancels_pending_work() -> None:
    llm = StubLLM(scheduler="<send>", generator="something to say here")
    table, player, _ = make_table(llm)
    await table.advance(1.5)
    assert player.draft is not None
    await player.close()
    await table.advance(30)
    assert table.said(0) == []
    assert all(j.cancelled or j.ran for j in table.timers.jobs if "LLMPlayer" in repr(j.callback))


async def test_work_cancelled_before_it_began_is_closed_and_frees_the_slot() -> None:
    """The seat closes in the same moment its next piece of work starts (the game ended as a
    consultation came due): the task is cancelled before its first step. Its consultation is
    closed, not left to warn "never awaited" when collected (a CI failure: the warning fired
    inside a frame without builtins), and the slot is free, so `idle` returns."""
    llm = StubLLM(scheduler="<wait>")
    table, player, _ = make_table(llm)
    await table.advance(1)  # the opening consultation
    await asyncio.wait_for(player.idle(), 5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        player._start(player._consult())  # what `_kick` does when a consultation is due
        await player.close()
        await asyncio.wait_for(player.idle(), 5)
        assert not player.busy
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]


async def test_a_call_whose_server_refused_the_connection_is_a_failure_not_a_call() -> None:
    """The model's server is down: each call fails before its request goes out (the SDK
    clients say so, `agent.llm.base.note_tracking`). Logged as a failure that never reached
    the model (counted as an error, not as a call), and the seat still plays."""
    from agent.decisions import UNREACHED
    from agent.llm.base import note_tracking

    def refused(_req: LLMRequest) -> LLMUnavailable:
        note_tracking()  # a client that says when its request goes out: never, here
        return LLMUnavailable("Connection refused")

    llm = StubLLM(scheduler=refused, generator="x")
    table, player, log = make_table(llm)
    await table.advance(20)
    assert llm.of("scheduler")
    ours = log.for_seat(0)
    assert not [r for r in ours if r.called and r.kind == "scheduler"]
    unreached = [r for r in ours if r.unreached]
    assert unreached and all(r.decision == UNREACHED for r in unreached)
    assert all((r.error or "").startswith("LLMUnavailable") for r in unreached)
    await player.close()


async def test_a_call_cut_short_in_our_queue_is_no_model_call() -> None:
    """A seat closed while its call waits its turn in the server queue: the request never
    reached the model, so it is logged as a note, not as a call (the service's call count is
    the requests a server saw). A call cut short in flight still counts as a call."""
    from agent.llm.queue import QueuedClient, Slots

    llm = StubLLM(scheduler="<send>", generator="something to say here", other="x")
    slots = Slots()
    queued = QueuedClient(llm, 1, slots=slots)
    llm.hold("other")  # someone else's request holds the server's one place
    other = asyncio.ensure_future(queued.complete(LLMRequest("s", [("user", "u")], kind="other")))
    await asyncio.sleep(0)
    table, player, log = make_table(llm)
    player.scheduler = QueuedClient(llm, 1, slots=slots)  # same server: waits behind it
    await table.advance(1.5)
    assert queued.waiting == 1  # the seat's scheduler call, not sent
    await player.close()
    await table.settle()  # the seat's task takes its cancellation
    ours = log.for_seat(0)
    assert [r.kind for r in ours if r.called] == []
    assert any(r.decision and r.decision.startswith("not sent") for r in ours), ours
    assert [r.kind for r in llm.requests] == ["other"]
    llm.release("other")
    await other

    # the same seat's call cut short while the model computes it: a call (sent, maybe billed)
    llm2 = StubLLM(scheduler="<send>", generator="something to say here")
    llm2.hold("scheduler")
    table2, player2, log2 = make_table(llm2)
    player2.scheduler = QueuedClient(llm2, 1, slots=Slots())
    await table2.advance(1.5)
    assert llm2.in_flight == 1
    await player2.close()
    await table2.settle()
    assert [r.kind for r in log2.for_seat(0) if r.called] == ["scheduler"]


# --- what a seat can know ----------------------------------------------------------------------


async def test_a_bystander_prompt_never_shows_the_den() -> None:
    llm = StubLLM(
        scheduler="<send>",
        generator=lambda req: f"thinking out loud {len(llm.requests)}",
        vote=lambda req: options_of(req)[0],
    )
    table, _, _ = make_table(llm, seat=0)
    await table.until_phase(PhaseKind.NIGHT)
    table.say(2, "den secret: we kill finley tonight")
    table.say(3, "agreed casey here")
    await table.until_phase(PhaseKind.DAY)
    await table.advance(20)
    assert llm.requests
    for req in llm.requests:
        text = req.system + "\n".join(m for _, m in req.messages)
        assert "den secret" not in text and "agreed casey here" not in text
        assert "fellow mafia" not in text.lower()
        assert "Your role: bystander" in req.system


async def test_a_mafia_agent_sees_the_den_at_night_but_does_not_quote_it_by_day() -> None:
    llm = StubLLM(scheduler="<wait>", vote=lambda req: options_of(req)[-1])
    table, _, _ = make_table(llm, seat=2)
    await table.until_phase(PhaseKind.NIGHT)
    table.say(3, "den secret: finley next")
    await table.advance(5)
    night = llm.of("scheduler")[-1]
    assert "den secret: finley next" in user_text(night)
    assert "Your fellow mafia: Casey" in night.system
    await table.until_phase(PhaseKind.DAY)
    await table.advance(3)
    day = llm.of("scheduler")[-1]
    assert "den secret" not in user_text(day)
    assert day.system == night.system  # the static part is identical across phases


async def test_an_own_vote_it_did_not_make_now_settles_the_decision() -> None:
    """A resumed game replays the seat's earlier vote: no second vote, no model call."""
    llm = StubLLM(vote="Blake")
    table, _, log = make_table(llm)
    await table.until_phase(PhaseKind.VOTE)
    table.act(Vote(0, 5, table.now))  # cast for this seat before its decision was due
    await table.advance(29)
    assert [v.target_name for v in table.votes_by(0)] == ["Eden"]
    assert llm.of("vote") == []
    assert not [r for r in log.records if r.kind == "vote"]


# --- never mute --------------------------------------------------------------------------------


async def days_spoken(table: Table, seat: int, limit: float = 900) -> list[tuple[int, int]]:
    """Play on (other seats silent) until the game ends or ``seat`` is out; then, for every
    day's discussion the seat was alive through, (day number, its lines that day)."""
    for _ in range(int(limit)):
        if table.state.over or not table.state.seats[seat].alive:
            break
        await table.advance(1)
    days: dict[int, int] = {}
    for e in table.events:
        if isinstance(e, PhaseStarted) and e.phase == PhaseKind.DAY.value:
            days[e.seq] = 0
    for line in table.said(seat):
        if line.phase_seq in days:
            days[line.phase_seq] += 1
    finished = {
        e.seq
        for e in table.events
        if isinstance(e, PhaseStarted) and e.phase == PhaseKind.VOTE.value
    }
    return [(seq, n) for seq, n in sorted(days.items()) if seq + 1 in finished]


async def test_a_model_that_always_waits_still_speaks_every_day() -> None:
    """Valid answers, but always "<wait>": the seat still speaks each day, typing the shadow
    baseline's line at the never-mute floor (logged as a fallback)."""
    llm = StubLLM(scheduler="<wait>")
    table, player, log = make_table(llm)
    days = await days_spoken(table, 0)
    assert days and all(n >= 1 for _, n in days), days
    floors = [r for r in log.records if r.error == "silent so far this day"]
    assert len(floors) >= len(days) and all(r.fallback and r.kind == "generator" for r in floors)
    assert not player.degraded
    assert table.refused == []


async def test_a_model_that_never_answers_still_speaks_and_votes_every_day() -> None:
    """Every call hangs: the seat speaks each day (floor) and votes legally (fallback) before
    every deadline; nothing failed, so it never degrades."""
    llm = StubLLM()
    for kind in ("scheduler", "generator", "vote", "night_action"):
        llm.hold(kind)
    table, player, log = make_table(llm)
    days = await days_spoken(table, 0)
    assert days and all(n >= 1 for _, n in days), days
    votes = table.votes_by(0)
    assert len(votes) >= len(days)
    assert all(r.fallback for r in log.records if r.kind == "vote")
    assert table.refused == []
    await player.close()


async def test_a_seat_with_a_call_in_flight_still_speaks_each_day_in_a_busy_chat() -> None:
    """The model never answers (a call stays in flight all game) while the others talk all
    day, calling this seat by name: the floor's line must still be posted each day, not
    dropped as stale because the chat moved on while it was being typed."""
    llm = StubLLM()
    for kind in ("scheduler", "generator", "vote", "night_action"):
        llm.hold(kind)
    table, player, log = make_table(llm)
    for tick in range(900):
        if table.state.over or not table.state.seats[0].alive:
            break
        if table.state.phase.kind is PhaseKind.DAY:
            speaker = 1 + tick % 4
            if table.state.seats[speaker].alive:
                table.say(speaker, f"{NAMES[0]} what do you think about round {tick}")
        await table.advance(1)
    days = await days_spoken(table, 0, limit=0)
    assert days and all(n >= 1 for _, n in days), (days, [r.decision for r in log.records])
    await player.close()


# --- planning around a slow model ------------------------------------------------------------


@pytest.mark.parametrize(
    ("latency", "asked_at"), [(None, 63.0), (10.0, 63.0), (11.0, 62.0), (15.0, 60.0)]
)
async def test_a_slow_model_is_asked_for_the_vote_at_once(
    latency: float | None, asked_at: float
) -> None:
    """The vote is asked at 10% of the phase (3 s) unless an answer and its corrective retry,
    at the measured latency, would not both be back by the fallback (24 s): then earlier, at
    the phase's opening at the latest. (Not asked before the vote opens: `prevote_at` 0.)"""
    llm = StubLLM(vote=lambda req: options_of(req)[0])
    table, player, log = make_table(llm, settings=dataclasses.replace(QUICK, prevote_at=0.0))
    await table.advance(30)
    if latency is not None:
        for _ in range(3):
            player.latency.add("vote", latency)
    await table.until_phase(PhaseKind.VOTE)
    await table.advance(4)
    (asked,) = [r for r in log.records if r.kind == "vote" and r.called]
    assert (asked.t - T0).total_seconds() == pytest.approx(asked_at)


async def test_the_scheduler_is_not_asked_more_often_than_it_answers() -> None:
    llm = StubLLM(scheduler="<wait>")
    table, player, log = make_table(llm)
    for _ in range(3):
        player.latency.add("scheduler", 15.0)
    for i in range(40):  # a busy chat: every message would call for a consultation
        table.say(1 + i % 3, f"chatter {i}")
        await table.advance(1)
    times = [r.t for r in log.records if r.kind == "scheduler" and r.called]
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
    assert gaps and min(gaps) >= 15.0


async def test_background_work_that_would_run_past_its_phase_is_skipped() -> None:
    from agent.memory import HashingEmbedder
    from agent.memory.seatmind import SeatMind

    llm = StubLLM()
    table = Table(GameConfig(deal=DEAL, roles=ROLES, day_seconds=60, vote_seconds=30))
    log = InMemoryDecisionLog()
    import random

    player = LLMPlayer(
        seat=0,
        name=NAMES[0],
        persona="You are calm.",
        port=table.port(0),
        clock=table.clock,
        timers=table.timers,
        generator=llm,
        scheduler=llm,
        decisions=log,
        rng=random.Random(1),
        settings=QUICK,
        game_id="g-test",
        mind=SeatMind(0, HashingEmbedder(64)),
    )
    table.players[0] = player
    for _ in range(3):
        player.latency.add("scheduler", 25.0)  # three reflection calls: 75 s > 60 s
    table.say(4, "i'm the detective. checked blake, blake is mafia")
    for _ in range(400):
        await table.settle()
        if not player.busy and player.mind is not None and player.mind.prepared:
            break
        await asyncio.sleep(0.005)
    await table.advance(0.5)
    await player.idle()
    assert not llm.of("reflect_questions")
    skipped = [r for r in log.records if (r.decision or "").startswith("reflection skipped")]
    assert skipped and "past the phase" in (skipped[0].decision or "")
    await player.close()


async def test_a_scheduler_answer_cut_off_by_the_phases_end_is_no_fallback() -> None:
    """The scheduler's answer has not come back when the day ends: there is nothing left to
    decide, so no send/wait is taken in the model's place (old: a baseline "fallback" logged
    at every phase's end, counted against the model)."""
    llm = StubLLM(scheduler="<wait>")
    llm.hold("scheduler")
    table, _, log = make_table(llm)
    # a game second is a real millisecond: the call is cut off when the day's time is up
    table.clock.seconds_to_real = lambda game_seconds: game_seconds / 1000  # type: ignore[method-assign]
    await table.until_phase(PhaseKind.DAY)
    await table.advance(2)
    assert llm.of("scheduler")  # asked, and held
    await table.until_phase(PhaseKind.VOTE)
    scheduler: list[DecisionRecord] = []
    for _ in range(500):  # until the cut-off call is logged
        scheduler = [r for r in log.records if r.kind == "scheduler"]
        if scheduler:
            break
        await asyncio.sleep(0.01)
    assert scheduler and not any(r.fallback for r in scheduler), scheduler


async def test_the_scheduler_is_not_asked_when_its_answer_cannot_come_back_in_time() -> None:
    """Answers (the scheduler's and then the line's) have taken longer than the day has
    left: asking would only hold the server, and the other seats' votes behind it, for an
    answer of no use. The seat still speaks: the never-mute floor."""
    llm = StubLLM(scheduler="<send>", generator="ok so who do we think it is")
    table, player, _ = make_table(llm)
    player.latency.typical = lambda *kinds: 100.0  # type: ignore[method-assign]
    await table.until_phase(PhaseKind.DAY)
    await table.until_phase(PhaseKind.VOTE)
    assert llm.of("scheduler") == []
    assert table.said(0)


# --- talking as much as the table ---------------------------------------------------------------


async def test_a_send_below_the_seats_share_brings_a_second_line_without_asking_again() -> None:
    """The scheduler's "send" while the seat is below its share commits to a short burst: once
    its line is out and ``burst_after`` messages by others came, one more line is written
    without a second question (up to ``burst_lines`` in all). One line: the second line waits
    for a "send"."""
    for burst_lines in (2, 1):
        lines = iter(["first thing i noticed today", "and blake went quiet after that"])

        def write(_req: LLMRequest, it: Iterator[str] = lines) -> str:
            return next(it)

        llm = StubLLM(scheduler="<wait>", generator=write)
        settings = dataclasses.replace(
            QUICK, burst_lines=burst_lines, burst_after=2, consult_after=(9, 9)
        )
        config = GameConfig(deal=DEAL, roles=ROLES, day_seconds=300, vote_seconds=30)
        table, _, _ = make_table(llm, settings=settings, config=config)
        for i in range(10):  # the others talk: the seat is well below its share
            table.say(1 + i % 6, f"table talk number {i}")
            await table.advance(1.0)
        llm.answers["scheduler"] = "<send>"
        await table.advance(25)  # a quiet spell: asked, sent, typed
        assert [e.text for e in table.said(0)] == ["first thing i noticed today"]
        llm.answers["scheduler"] = "<wait>"
        asked = len(llm.of("scheduler"))
        table.say(2, "ok then")
        table.say(3, "sure")
        await table.advance(8)
        said = [e.text for e in table.said(0)]
        if burst_lines > 1:
            assert said[-1] == "and blake went quiet after that"
            assert len(llm.of("scheduler")) == asked  # not asked again
            table.say(4, "right")
            table.say(5, "yep")
            await table.advance(8)
            assert len(table.said(0)) == 2  # its two lines said: asked again as usual
        else:
            assert said == ["first thing i noticed today"]


async def test_at_a_busy_table_a_draft_survives_as_many_lines_as_its_pace_brings() -> None:
    """Three lines by others while the seat types go stale at a quiet table, but not at one
    that posts that many in the typing time anyway (``stale_pace_s``; 0: always stale)."""
    for pace_s in (60.0, 0.0):
        llm = StubLLM(scheduler="<wait>", generator="i have a feeling about this one guys really")
        settings = dataclasses.replace(QUICK, stale_pace_s=pace_s, burst_lines=1)
        config = GameConfig(deal=DEAL, roles=ROLES, day_seconds=300, vote_seconds=30)
        table, _, log = make_table(llm, settings=settings, config=config)
        for i in range(20):  # one line a second
            table.say(1 + i % 6, f"busy table line {i}")
            await table.advance(1.0)
        llm.answers["scheduler"] = "<send>"
        while not llm.of("generator"):
            await table.advance(0.5)
        llm.answers["scheduler"] = "<wait>"
        for who in (1, 2, 4):  # 9 words = 9 s of typing
            table.say(who, f"{NAMES[who]} here with news")
            await table.advance(1)
        await table.advance(12)
        said = [e.text for e in table.said(0)]
        discards = [r for r in log.records if (r.decision or "").startswith("discard")]
        if pace_s:
            assert said == ["i have a feeling about this one guys really"] and not discards
        else:
            assert said == [] and "chat moved on" in (discards[0].decision or "")
