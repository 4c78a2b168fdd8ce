"""Whom the baseline names (agent.baseline.targets), one rule at a time, on hand-made inputs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

from agent.baseline.targets import (
    bandwagon,
    day_target,
    detective_target,
    night_target,
    protect_target,
    quiet_target,
)


def test_day_target_is_the_top_score_then_leans_to_the_votes() -> None:
    scores = {1: 0.5, 2: 0.9, 3: 0.9}
    assert day_target(scores, Counter(), set(), mafia=False) == 2  # first of a tie
    assert day_target({}, Counter(), set(), mafia=False) is None
    # two votes on 1 add 0.7 for the town (0.35 each): 1.2 beats 0.9
    assert day_target(scores, Counter({1: 2}), set(), mafia=False) == 1
    # one vote adds 0.35 (0.85 < 0.9) for the town, 0.6 (1.1) for the mafia
    assert day_target(scores, Counter({1: 1}), set(), mafia=False) == 2
    assert day_target(scores, Counter({1: 1}), set(), mafia=True) == 1
    # a refused target is never named again, however it scores
    assert day_target(scores, Counter(), {2, 3}, mafia=False) == 1
    assert day_target(scores, Counter(), {1, 2, 3}, mafia=False) is None


def test_the_kill_follows_a_partner_then_the_den_then_danger() -> None:
    asked: list[str] = []

    def danger() -> Mapping[int, float]:
        asked.append("danger")
        return {4: 0.2, 5: 0.7, 6: 0.1}

    others, partners = (4, 5, 6), {2}
    votes: dict[int, int | None] = {3: 6, 2: 4}  # 3 is not a partner: not followed
    assert night_target(others, set(), partners, votes, 6, danger) == 4
    assert night_target(others, {4}, partners, votes, 6, danger) == 6  # the den's proposal
    assert asked == []  # scores are not worked out when a vote or a proposal decides
    assert night_target(others, {4}, partners, votes, None, danger) == 5
    assert asked == ["danger"]
    assert night_target(others, {4, 5, 6}, partners, votes, None, danger) is None


def test_the_detective_inspects_the_most_suspicious_not_yet_inspected() -> None:
    score = {1: 0.9, 2: 0.5, 3: 0.7}
    assert detective_target(score, {1: False}, set()) == 3
    assert detective_target(score, {1: False}, {3}) == 2
    # everyone inspected: the most suspicious of those it may name
    assert detective_target(score, {1: False, 2: True, 3: False}, {1}) == 3
    assert detective_target(score, {}, {1, 2, 3}) is None
    assert quiet_target(score, set()) == 2
    assert quiet_target(score, {2}) == 3


def test_the_doctor_saves_a_claimed_detective_then_itself_then_a_trusted_voice() -> None:
    flips: list[bool] = []

    def coin(value: bool) -> Callable[[], bool]:
        def flip() -> bool:
            flips.append(value)
            return value

        return flip

    def suspicion() -> Mapping[int, float]:
        return {1: 0.5, 2: 0.2, 3: 0.25}

    talk = {2: 0, 3: 1}  # 3 is a little more vocal: 0.25 - 0.1 = 0.15 beats 2's 0.2
    claims = {3: (1, "mafia")}
    me = 0
    assert protect_target([0, 1, 2, 3], me, claims, coin(True), suspicion, talk) == 3
    assert flips == []  # a claimed detective decides before the coin is drawn
    assert protect_target([0, 1, 2, 3], me, {}, coin(True), suspicion, talk) == 0
    assert protect_target([0, 1, 2, 3], me, {}, coin(False), suspicion, talk) == 3
    # the coin is drawn even when I may not save myself (last night's save): same draws
    assert protect_target([1, 2], me, {}, coin(True), suspicion, talk) == 2
    assert flips == [True, False, True]
    assert protect_target([], me, claims, coin(True), suspicion, talk) is None
    assert flips == [True, False, True]


def lead(
    tally: Counter[int],
    voted: int | None,
    *,
    partners: set[int] | None = None,
    mafia: bool = False,
    inspections: dict[int, bool] | None = None,
) -> int | None:
    """The bandwagon seat 0 would join among 7 living (40% of 7: 3 votes make one)."""
    return bandwagon(
        tally, voted, me=0, alive=set(range(7)), partners=partners or set(), banned=set(),
        mafia=mafia, inspections=inspections or {},
    )  # fmt: skip


def test_a_bandwagon_is_joined_only_when_it_is_strong_and_not_mine() -> None:
    assert lead(Counter({4: 3}), 5) == 4
    assert lead(Counter({4: 2}), 5) is None  # too weak
    assert lead(Counter(), 5) is None
    assert lead(Counter({4: 3, 5: 2}), 5) is None  # mine is close behind
    assert lead(Counter({4: 3}), 4) is None  # already on it
    assert lead(Counter({0: 3}), 5) is None  # never me
    # a town seat does not follow onto one it found clean, nor leave one it found mafia
    assert lead(Counter({4: 3}), 5, inspections={4: False}) is None
    assert lead(Counter({4: 3}), 5, inspections={5: True}) is None
    assert lead(Counter({4: 3}), 5, inspections={4: False}, mafia=True) == 4
    assert lead(Counter({4: 3}), 5, partners={4}, mafia=True) is None  # never a partner
    # on a tie of counts the lower seat leads
    assert lead(Counter({6: 3, 3: 3}), None) == 3
