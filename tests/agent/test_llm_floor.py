"""The never-mute floor (issue 19): a seat that has said nothing in a day's discussion types
the shadow baseline's line when, and only when, the baseline in its place would speak; and it
never adds a line on top of one the model is writing. On the hand-cranked table of
test_llm_player (real engine, game time moved by the test)."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from agent.baseline import BaselinePolicy, BaselineTiming
from games.events import PhaseStarted
from games.state import PhaseKind
from tests.agent.test_llm_player import NAMES, T0, StubLLM, make_table

#: a baseline that says nothing in a day's discussion (no lines drawn, never a forced one)
SILENT = BaselineTiming(day_rate=0.0, silent_day=1.0, vote_talk=0.0)


def first_day(table_events: Sequence[object]) -> int:
    for e in table_events:
        if isinstance(e, PhaseStarted) and e.phase == PhaseKind.DAY.value:
            return e.seq
    raise AssertionError("no day")


async def test_no_floor_line_on_a_day_the_shadow_would_not_speak() -> None:
    """The model waits all day and the baseline in its place would not speak either: the seat
    stays quiet (the old floor typed a baseline line at 70% of the day regardless)."""
    llm = StubLLM(scheduler="<wait>")
    table, player, log = make_table(llm)
    player.shadow = BaselinePolicy(0, NAMES[0], random.Random(5), timing=SILENT)
    await table.until_phase(PhaseKind.VOTE)
    day = first_day(table.events)
    assert [e.text for e in table.said(0) if e.phase_seq == day] == []
    assert not [r for r in log.records if r.error == "silent so far this day"]
    assert llm.of("scheduler"), "the model was consulted (and chose to wait)"
    await player.close()


async def test_the_floor_speaks_when_the_shadow_would() -> None:
    """The same table with a baseline that does speak: the floor types its line that day."""
    llm = StubLLM(scheduler="<wait>")
    table, player, log = make_table(llm)
    await table.until_phase(PhaseKind.VOTE)
    day = first_day(table.events)
    lines = [e for e in table.said(0) if e.phase_seq == day]
    assert len(lines) == 1
    (floor,) = [r for r in log.records if r.error == "silent so far this day"]
    assert floor.output == lines[0].text and floor.fallback
    await player.close()


async def test_a_seat_whose_model_always_waits_speaks_on_every_day() -> None:
    """The issue's "every LLM seat speaks on every day it is alive": the seat's own shadow
    never draws a day with nothing to say (people do, on 8% of days; a quiet persona's
    baseline more often), and when the line it drew would come too late for the phase the
    floor composes one at its latest moment. Over many seats (seeds) whose model waits all
    day, not one silent day (before: seeds 57, 98, 101, 119 stayed silent)."""
    silent = []
    for seed in range(50, 130):
        llm = StubLLM(scheduler="<wait>")
        table, player, _log = make_table(llm, seed=seed)
        await table.until_phase(PhaseKind.VOTE)
        day = first_day(table.events)
        if not [e for e in table.said(0) if e.phase_seq == day]:
            silent.append(seed)
        await player.close()
    assert silent == []


@pytest.mark.parametrize("slow", ["generator", "scheduler"])
async def test_the_floor_does_not_double_a_line_the_model_is_writing(slow: str) -> None:
    """The model is still deciding to send, or writing, when the shadow's first line comes
    due: the floor gives it until the latest floor moment (70% of the day) instead of typing
    the baseline's line on top, so the day has the model's one line, not two."""
    llm = StubLLM(scheduler="<send>", generator="i think we should hear from drew first")
    llm.hold(slow)
    table, player, log = make_table(llm)
    await table.advance(35)  # past the shadow's first line (>= 30% of the 60 s day)
    assert llm.of(slow) and player.busy
    llm.release(slow)
    await table.until_phase(PhaseKind.VOTE)
    day = first_day(table.events)
    lines = [e.text for e in table.said(0) if e.phase_seq == day]
    assert lines[:1] == ["i think we should hear from drew first"], lines
    assert not [r for r in log.records if r.error == "silent so far this day"]
    first = next(e for e in table.said(0) if e.phase_seq == day)
    assert (first.t - T0).total_seconds() < 60
    await player.close()
