"""The restart-share tests' statistics (`tests/bot/restarts.py` `by_phase`): a restart that
changes nothing passes, an agent gone quiet after its catch-ups fails."""

from __future__ import annotations

from tests.bot.restarts import Post, Restart, Run, by_phase, phase_table


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


def test_a_catch_up_late_in_a_day_is_set_beside_that_stretch_of_the_days() -> None:
    """The agents say their day's lines early in it; a catch-up's minute comes late in the
    day the kill hit (the kill, the time down, the release). Set beside the whole day's
    share, an unchanged agent looked quiet after every restart (Slack's catch-ups ended
    later than Discord's: 10 of 108 against 24 of 112); set beside the same stretch of the
    days, it is not, and a quiet one still is."""

    def lines(n: int, agents: int, t: float, into: float) -> list[Post]:
        return [Post(t, "a", i < agents, "g", phase="day", into=into) for i in range(n)]

    posts = [*lines(60, 18, 0.0, 20.0), *lines(40, 1, 0.0, 150.0), *lines(60, 2, 10.0, 150.0)]
    run = Run(posts=posts, restarts=[Restart(8.0, 9.0, 10.0, "g")], speed=4.0)
    table = phase_table(run)
    assert table == {"day 000-060": (0, 0, 18, 60), "day 120-180": (2, 60, 1, 40)}
    assert by_phase(table).matches
    assert not by_phase({"day": (2, 60, 19, 100)}).matches  # by the phase's kind: a tell
    quiet = {"day 000-060": (0, 30, 18, 60), "day 120-180": (2, 60, 1, 40)}
    assert not by_phase(quiet).matches
