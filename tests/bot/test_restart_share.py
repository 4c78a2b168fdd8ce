"""An agent is not quiet after a restart (`tests/bot/restarts.py`; ``bench/restarts.py`` runs
20 restarts and more on each platform): a whole game on the fake Discord with the bot in a
process of its own, killed with SIGKILL a few times while people type through it; the
agents' share of the stage lines in the minute after each catch-up is within the (wide, for
so few restarts) interval of their share in the rest of the game."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.bot.restarts import DiscordPlatform, interval, measure, shares
from tests.fakes.discord import FakeDiscord

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


async def test_the_agents_speak_after_a_kill_9_as_before(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    platform = DiscordPlatform(fake_discord, tmp_path, speed=4.0)
    try:
        run = await measure(platform, restarts=3, speed=4.0, rng=random.Random(7), budget_s=240.0)
    finally:
        await platform.close()
    assert len(run.restarts) >= 2, run.restarts
    s = shares(run)
    print(f"after {s.after:.3f} ({s.after_agent}/{s.after_all}), rest {s.rest:.3f}")
    assert s.rest_all >= 50 and s.after_all >= 10, s
    # a 99.9% interval: a test of a few restarts fails only on a clear tell
    low, high = interval(s.rest, s.after_all, z=3.29)
    assert low <= s.after <= high, s
    assert s.after_agent >= 1, s
