"""A phase given time back (`PhaseExtended`: the platform's input was down) ends later for the
LLM seat too: talk, the vote's fallback and the cut-off of a call in flight all move to the
new end, as the baseline's do. On the hand-cranked table of test_llm_player."""

from __future__ import annotations

from datetime import timedelta

from games.actions import Extend, Tick
from games.events import PhaseExtended
from games.state import PhaseKind
from tests.agent.test_llm_player import NAMES, StubLLM, Table, make_table, options_of


def extend(table: Table, seconds: float) -> PhaseExtended:
    """Give the current phase ``seconds`` back, and end it at its new deadline."""
    table.act(Extend(table.now, seconds))
    (event,) = [e for e in table.events if isinstance(e, PhaseExtended)][-1:]
    seq, deadline = event.seq, event.deadline

    async def tick() -> None:
        if table.state.phase.seq == seq:
            table.act(Tick(deadline))

    table.timers.call_at(deadline, tick)
    return event


async def test_the_seat_talks_until_the_new_end_of_a_day() -> None:
    """The day (60 s) gets 60 s back: a message at 80 s is still answered (old: the seat held
    the old end, so it stopped consulting at 58 s and never spoke again that day)."""
    llm = StubLLM(scheduler="<wait>", generator="we have time, let us hear drew")
    table, player, _ = make_table(llm)
    await table.advance(10)
    extend(table, 60)
    await table.settle()
    assert player.knowledge.deadline == table.state.phase.deadline
    await table.advance(70)  # 80 s into a day that now ends at 120 s
    assert table.state.phase.kind is PhaseKind.DAY
    llm.answers["scheduler"] = "<send>"
    asked = len(llm.of("scheduler"))
    table.say(4, f"{NAMES[0]} what do you think")
    await table.advance(15)
    assert len(llm.of("scheduler")) > asked
    day = table.state.phase.seq
    assert "we have time, let us hear drew" in [e.text for e in table.said(0) if e.phase_seq == day]
    await player.close()


async def test_the_vote_waits_for_the_model_until_the_new_end() -> None:
    """The vote (30 s) gets 60 s back while the model is still thinking: its call is not cut
    off at the old end, the fallback does not fire at 80% of the old length, and the model's
    own choice is cast when it answers at 40 s (old: the fallback was cast at 24 s)."""
    llm = StubLLM(vote=lambda req: options_of(req)[-1])
    llm.hold("vote")
    table, player, log = make_table(llm)
    await table.until_phase(PhaseKind.VOTE)
    start = table.now
    await table.advance(5)
    assert llm.of("vote")
    extend(table, 60)
    await table.advance(35)  # 40 s in: past the old end (30 s), before the new one (90 s)
    assert table.state.phase.kind is PhaseKind.VOTE
    assert table.votes_by(0) == []
    assert not [r for r in log.records if r.kind == "vote" and r.fallback]
    llm.release("vote")
    await table.advance(1)
    (vote,) = table.votes_by(0)
    assert vote.target_name == options_of(llm.of("vote")[0])[-1]
    assert vote.t - start < timedelta(seconds=45)
    await player.close()


async def test_without_an_answer_the_fallback_comes_before_the_new_end() -> None:
    """The model never answers: the fallback vote is cast at 80% of the phase's new length
    (72 s of 90 s), still before the deadline."""
    llm = StubLLM()
    llm.hold("vote")
    table, player, log = make_table(llm)
    await table.until_phase(PhaseKind.VOTE)
    start = table.now
    await table.advance(5)
    event = extend(table, 60)
    await table.advance(80)
    (vote,) = table.votes_by(0)
    assert timedelta(seconds=70) <= vote.t - start <= timedelta(seconds=75)
    assert vote.t < event.deadline
    (fallback,) = [r for r in log.records if r.kind == "vote" and r.fallback]
    assert fallback.error == "the model had not answered in time"
    await player.close()
