"""The real-model bench's measure of the issue's target, "votes and scheduler answers valid from
the model itself (fallbacks not counted)", on a hand-made game log (no model needed)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from agent.decisions import DecisionRecord
from tests.realmodel.play import analyse

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def record(seat: int, kind: Any, t: float, **kw: Any) -> DecisionRecord:
    base: dict[str, Any] = dict(
        game_id="g",
        seat=seat,
        kind=kind,
        prompt="",
        output=None,
        decision=None,
        fallback=False,
        valid=False,
        error=None,
        latency_s=0.0,
        input_tokens=0,
        output_tokens=0,
        cost_usd=0.0,
        t=T0 + timedelta(seconds=t),
    )
    base.update(kw)
    return DecisionRecord(**base)


def at(t: float) -> str:
    return (T0 + timedelta(seconds=t)).isoformat()


def test_a_fallback_vote_or_schedule_counts_against_the_model() -> None:
    names = {0: "Ann", 1: "Bob", 2: "Cy"}
    events = [
        {"kind": "phase_started", "seq": 1, "phase": "vote", "number": 1, "t": at(0)},
        *(
            {
                "kind": "choices_offered",
                "seat": s,
                "phase_seq": 1,
                "verb": "vote",
                "target_names": [n for i, n in names.items() if i != s],
            }
            for s in names
        ),
        {
            "kind": "vote_cast",
            "voter": 0,
            "voter_name": "Ann",
            "target_name": "Bob",
            "phase_seq": 1,
            "t": at(10),
        },
        {
            "kind": "vote_cast",
            "voter": 1,
            "voter_name": "Bob",
            "target_name": "Cy",
            "phase_seq": 1,
            "t": at(20),
        },
        # Cy's vote: none cast at all
    ]
    records = [
        # Ann: the model's answer, valid
        record(0, "vote", 9, prompt="p", output='{"name": "Bob"}', decision="Bob", valid=True),
        # Bob: the call was cut off at the phase's end; the fallback voted
        record(1, "vote", 19, prompt="p", decision="cancelled: the phase ended"),
        record(1, "vote", 20, decision="Cy", fallback=True, error="not in time"),
        # the scheduler: two valid answers, one unusable one (the baseline decided), one
        # call cut off (the baseline decided)
        record(0, "scheduler", 1, prompt="p", output="send", decision="send", valid=True),
        record(1, "scheduler", 1, prompt="p", output="wait", decision="wait", valid=True),
        record(2, "scheduler", 1, prompt="p", output="hm", decision="invalid", valid=False),
        record(2, "scheduler", 1, decision="wait (baseline)", fallback=True),
        record(0, "scheduler", 2, prompt="p", decision="cancelled: the phase ended"),
        record(0, "scheduler", 2, decision="wait (baseline)", fallback=True),
    ]
    game = analyse("g", events, names, [0, 1, 2], records)

    # the answers the model gave were all valid ...
    assert game.valid_rate("vote") == (1, 1)
    # ... but of the three votes owed only Ann's was the model's: Bob's came from the
    # fallback, and Cy cast none
    assert game.by_model("vote") == (1, 3)
    # of four consultations, two were decided by the model
    assert game.by_model("scheduler") == (2, 4)
