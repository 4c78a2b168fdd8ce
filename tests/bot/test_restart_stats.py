"""The restart-share tests' statistics (`tests/bot/restarts.py` `by_phase`): a restart that
changes nothing passes, an agent gone quiet after its catch-ups fails."""

from __future__ import annotations

from tests.bot.restarts import by_phase


def test_a_phase_seen_little_elsewhere_does_not_set_the_expectation_alone() -> None:
    # CI's run: the kills fell in votes, so the rest held 4 vote lines (2 of them the
    # agents'); 2 of the 21 vote lines after the catch-ups is what a pooled vote gives
    # (treating 2 of 4 as the vote's known share expected 10.5 of 21 and failed it)
    p = by_phase({"day": (0, 7, 5, 57), "vote": (2, 21, 2, 4)}, z=3.29)
    assert p.matches, p
    assert 0.10 < p.expected < 0.20, p


def test_an_agent_quiet_after_every_catch_up_is_a_tell() -> None:
    # 0 of 80 day lines after the catch-ups where the agents held 20 of 100 elsewhere
    p = by_phase({"day": (0, 80, 20, 100)}, z=3.29)
    assert not p.matches, p
    assert p.after < p.low


def test_an_agent_loud_after_every_catch_up_is_a_tell() -> None:
    # the burst after a restart: 30 of 60 where the agents held 15 of 100 elsewhere
    p = by_phase({"day": (20, 40, 10, 70), "vote": (10, 20, 5, 30)}, z=3.29)
    assert not p.matches, p
    assert p.after > p.high


def test_the_same_share_everywhere_matches_in_every_phase_mix() -> None:
    p = by_phase({"day": (6, 40, 15, 100), "vote": (1, 20, 2, 40), "night": (0, 0, 0, 10)}, z=1.96)
    assert p.matches, p
    assert abs(p.expected - 7 / 60) < 0.03, p
