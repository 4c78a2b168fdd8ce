"""One player floods the stage on Slack; the game stays fair (issue 21): the flood is cut to
the seat's rate limit with a note to its writer, every other seat's line reaches the stage
within 2 s, nothing of theirs is lost, and the agent still speaks."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bot.limits import LINE_BURST
from tests.bot.slack.conftest import SlackHarness

FLOOD_SECONDS = 15.0


async def test_a_flooding_seat_on_slack(harness: SlackHarness) -> None:
    game_id = await harness.running_game(5, "day=3600 vote=3600 night=3600 night_vote=3600")
    fake = harness.fake
    flooder, *others = harness.users
    names = {u.id: harness.character(game_id, u) for u in harness.users}
    sent: dict[str, float] = {}

    async def flood() -> None:
        end = time.monotonic() + FLOOD_SECONDS
        i = 0
        while time.monotonic() < end:
            await fake.message_event(user=flooder, text=f"flood {i}")
            i += 1
            await asyncio.sleep(0.05)

    async def talk(person: Any, k: int) -> None:
        await asyncio.sleep(1.1 * k)
        for i in range(3):
            text = f"{names[person.id]} says {i}"
            sent[text] = time.monotonic()
            await fake.message_event(user=person, text=text)
            await asyncio.sleep(4.5)

    landed: dict[str, float] = {}

    async def watch() -> None:
        while True:
            for _, text in harness.persona_lines():
                landed.setdefault(text, time.monotonic())
            await asyncio.sleep(0.02)

    watcher = asyncio.create_task(watch())
    try:
        await asyncio.gather(flood(), *(talk(p, k) for k, p in enumerate(others)))
        await fake.wait_until(lambda: set(sent) <= set(landed), within=20, what="all lines")
    finally:
        watcher.cancel()
    delays = sorted(landed[t] - at for t, at in sent.items())
    assert delays[-1] <= 2.0, delays[-5:]
    flood_lines = [t for n, t in harness.persona_lines() if t.startswith("flood ")]
    assert LINE_BURST <= len(flood_lines) <= LINE_BURST + FLOOD_SECONDS * 0.5 + 2
    notes = [t for t in harness.dm_texts(flooder) if "faster than the game can pass on" in t]
    assert 1 <= len(notes) <= 3, notes
    agent = {s.name for s in harness.live(game_id).seats if s.is_agent}
    await fake.wait_until(
        lambda: any(n in agent for n, _ in harness.persona_lines()),
        within=60,
        what="the agent speaking",
    )
