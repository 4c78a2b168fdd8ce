"""The model as a second judge of borderline lines (agent/guard_judge.py): asked only when
configured and only about lines near what the guard looks for; its "yes" refuses the line, and
no verdict in time (a hang, an error, an unclear answer) leaves the guard's own."""

from __future__ import annotations

import asyncio
import dataclasses

from agent.guard import check_line
from agent.guard_judge import borderline, parse_verdict
from bench.guard import TABLE, seat
from tests.agent.test_llm_player import QUICK, StubLLM, make_table

NEAR = "honestly i feel kinda robotic today lol"
FAR = "drew has been quiet all day"
JUDGED = dataclasses.replace(QUICK, guard_judge=True, guard_judge_timeout_s=0.2)


def test_borderline_lines_are_those_near_what_the_guard_looks_for() -> None:
    k = seat("Ari", TABLE, mafia=False)
    assert check_line(NEAR, k) is None and borderline(NEAR)
    assert check_line(FAR, k) is None and not borderline(FAR)
    assert parse_verdict("Yes.") is True and parse_verdict("no") is False
    assert parse_verdict("I think so") is None


async def test_a_yes_refuses_the_line() -> None:
    llm = StubLLM(scheduler="<send>", generator=NEAR, guard="yes")
    table, _, log = make_table(llm, settings=JUDGED)
    await table.advance(12)
    said = [e.text for e in table.said(0)]
    assert said and NEAR not in said  # the baseline's line instead
    assert (
        llm.of("guard")
        and '"honestly i feel kinda robotic today lol"' in (llm.of("guard")[0].messages[0][1])
    )
    assert any(r.decision == "guard: judged disclosing by the model: " + NEAR for r in log.records)


async def test_no_verdict_in_time_leaves_the_guards_own() -> None:
    llm = StubLLM(scheduler="<send>", generator=NEAR, guard="yes")
    llm.hold("guard")  # the model never answers
    table, _, log = make_table(llm, settings=JUDGED)
    await table.advance(2)
    for _ in range(500):  # until the judge's real-time bound has passed
        if any(r.decision == "guard judge: None" for r in log.records):
            break
        await asyncio.sleep(0.01)
    await table.advance(12)
    assert [e.text for e in table.said(0)] == [NEAR]
    assert any(r.decision == "guard judge: None" for r in log.records)


async def test_only_borderline_lines_are_judged_and_only_when_configured() -> None:
    llm = StubLLM(scheduler="<send>", generator=FAR, guard="yes")
    table, _, _ = make_table(llm, settings=JUDGED)
    await table.advance(12)
    assert [e.text for e in table.said(0)] == [FAR] and not llm.of("guard")
    llm = StubLLM(scheduler="<send>", generator=NEAR, guard="yes")
    table, _, _ = make_table(llm)  # the judge is off by default
    await table.advance(12)
    assert [e.text for e in table.said(0)] == [NEAR] and not llm.of("guard")
