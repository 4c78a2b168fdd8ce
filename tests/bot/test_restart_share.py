"""An agent is not quiet after a restart (`tests/bot/restarts.py`; ``bench/restarts.py`` runs
20 restarts and more on each platform): a game on the fake Discord with the bot in a
process of its own, killed with SIGKILL a few times while people type through it; the
agents' share of the stage lines in the minute after each catch-up is within the (wide, for
so few restarts) interval of their share in the rest of the game."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from tests.bot.restarts import DiscordPlatform, by_phase, measure, phase_table, shares
from tests.fakes.discord import FakeDiscord

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SPEED = 8.0


async def test_the_agents_speak_after_a_kill_9_as_before(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    # At 8x (a day of 3 game minutes is 22 s), each restart's next process started ahead
    # (`DiscordPlatform`: after the minute measured, in the 10-16 s before the next kill, which
    # count towards the rest), the bot down 2-6 s (16-48 game s, as long as a cold start kept
    # it down at 4x on a quiet machine), and the game followed only until the rest holds 60
    # lines, not to its end: the same game-time windows, as many lines, in less time.
    t0 = time.monotonic()
    platform = DiscordPlatform(fake_discord, tmp_path, SPEED, warm=True)
    try:
        run = await measure(
            platform,
            restarts=3,
            speed=SPEED,
            rng=random.Random(7),
            budget_s=240.0,
            quiet_after_s=(10.0, 16.0),
            down_s=(2.0, 6.0),
            rest_lines=60,
            report=lambda line: print(f"{time.monotonic() - t0:.0f} s: {line}"),
        )
    finally:
        await platform.close()
    assert len(run.restarts) >= 2, run.restarts
    s = shares(run)
    print(f"after {s.after:.3f}, rest {s.rest:.3f}: {s}")
    assert s.rest_all >= 50 and s.after_all >= 10, s
    # Set beside the rest phase by phase: a catch-up's minute falls in the phase the kill
    # hit, often a vote (or a night: no stage lines), where the agents say a word early or
    # none (their share of a vote's lines is a fraction of a day's), so the whole game's
    # share overstated what a vote's minute should hold (0 of 11 in a vote, as in a game
    # never restarted). Each phase's after-lines are set beside that phase's lines pooled
    # (`by_phase`: a phase the kills seldom missed has few lines elsewhere to judge by).
    # A 99.9% interval: a test of a few restarts fails only on a clear tell.
    p = by_phase(phase_table(run), z=3.29)
    print(f"after {p.after:.3f}, expected {p.expected:.3f} [{p.low:.3f}, {p.high:.3f}]: {p.table}")
    assert p.low <= p.after <= p.high, p
    # no agent line at all after the catch-ups: a tell as soon as that many agent lines
    # were due that none is a chance below 0.1% (e^-7), whatever the interval says
    assert p.after_agent >= 1 or p.expected * p.after_all < 7.0, p
