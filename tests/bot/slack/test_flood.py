"""One player floods the stage on Slack; the game stays fair (issue 21): the flood is cut to
the seat's rate limit with a note to its writer, every other seat's line reaches the stage
within 2 s, nothing of theirs is lost, and the agent still speaks."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from bot.limits import LINE_BURST
from bot.service.live import LiveGame
from bot.slack.delivery import SlackPolicy
from games.events import Event, PhaseStarted
from tests.bot.slack.conftest import SlackHarness
from tests.fakes.slack.model import ApiCall

FLOOD_SECONDS = 15.0


async def test_a_flooding_seat_on_slack(harness: SlackHarness) -> None:
    # (a fixed deal and agent, as below: a random one sometimes kept quiet for minutes)
    game_id = await harness.running_game(5, "day=3600 vote=3600 night=3600 night_vote=3600 seed=3")
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


FLOOD_RATE = 20.0
#: Slack's chat.postMessage allowance per channel as the fake models it: about one a second,
#: a short burst tolerated (over it: 429 with Retry-After)
SLACK_POSTS = (4.0, 1.0)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


class PhaseTimes:
    def __init__(self) -> None:
        self.started: dict[str, float] = {}

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        for e in events:
            if isinstance(e, PhaseStarted):
                self.started.setdefault(f"{e.phase}:{e.number}", time.monotonic())


async def test_a_flooding_seat_on_a_rate_limited_slack(harness: SlackHarness) -> None:
    """Slack allows about one post a second per channel: one seat types 20 lines a second for
    18 s while the others talk (briskly, within what the channel carries) and the day ends
    into the vote. Every other seat's line reaches the stage within 2 s (p99), the vote's
    announcement and menus are not held behind the flood, Slack never has to refuse a post,
    the flood gets its notes, nothing of the others is lost, and the agent still speaks."""
    fake = harness.fake
    fake.post_limit = SLACK_POSTS
    assert harness.adapter is not None
    harness.adapter.out.delivery.policy.pace = SlackPolicy().pace  # as in production
    phases = PhaseTimes()
    assert harness.service is not None
    harness.service.subscribe(phases)
    # (a fixed deal and agent: with a random one, an agent whose people-calibrated timing put
    # its first line after this 16 s day sometimes did not speak at all, 2 runs in 5)
    game_id = await harness.running_game(5, "day=16 vote=3600 night=3600 night_vote=3600 seed=3")
    assert harness.channel is not None
    stage = harness.channel.id
    flooder, *others = harness.users
    names = {u.id: harness.character(game_id, u) for u in harness.users}
    sent: dict[str, float] = {}

    async def flood() -> None:
        end = time.monotonic() + 18.0
        i = 0
        while time.monotonic() < end:
            await fake.message_event(user=flooder, text=f"flood {i}")
            i += 1
            await asyncio.sleep(1 / FLOOD_RATE)

    async def talk(person: Any, k: int) -> None:
        # the channel carries one post a second: four people each saying a line every 8 s
        # (30 lines a minute on the stage, several times a lively LLMafia day) leave room
        # for the Game-Manager, the agent and the flood's fair share
        await asyncio.sleep(2.0 * k)
        for i in range(3):
            text = f"{names[person.id]} says {i}"
            sent[text] = time.monotonic()
            await fake.message_event(user=person, text=text)
            await asyncio.sleep(8.0)

    def stage_posts() -> list[ApiCall]:
        return [
            c for c in fake.calls("chat.postMessage", ok=True) if c.args.get("channel") == stage
        ]

    await asyncio.gather(flood(), *(talk(p, k) for k, p in enumerate(others)))

    def arrived() -> dict[str, float]:
        got = {str(c.args.get("text")): c.at for c in stage_posts() if c.args.get("username")}
        return got if set(sent) <= set(got) else {}

    got = await fake.wait_until(arrived, within=30, what="every other seat's line")
    delays = [got[text] - at for text, at in sent.items()]
    print("delays", sorted(round(d, 2) for d in delays), "429s", fake.rate_limited_posts())
    assert pct(delays, 99) <= 2.0, sorted(delays)[-5:]
    # paced to Slack's allowance: the flood never makes Slack refuse posts
    assert fake.rate_limited_posts() == 0

    # the flood: cut to the seat's rate, its writer told (a few notes, not one per line)
    assert harness.adapter is not None
    await harness.adapter.drain()
    flood_lines = [t for n, t in harness.persona_lines() if t.startswith("flood ")]
    assert LINE_BURST <= len(flood_lines) <= LINE_BURST + 18.0 * 0.5 + 2
    notes = [t for t in harness.dm_texts(flooder) if "faster than the game can pass on" in t]
    assert 1 <= len(notes) <= 3, notes

    # the vote's announcement went out while the flood was still queued: at most one player's
    # line reached the stage between the vote's start and it; each person's menu in their
    # booth came at once
    vote_at = phases.started["vote:1"]
    announce_at = min(
        c.at
        for c in stage_posts()
        if not c.args.get("username") and "Voting is open" in str(c.args.get("text"))
    )
    between = [c for c in stage_posts() if c.args.get("username") and vote_at < c.at < announce_at]
    assert len(between) <= 1, [c.args.get("text") for c in between]
    assert announce_at - vote_at <= 2.0
    for person in others:
        dm = fake.dm(person).id
        menu_at = min(
            c.at
            for c in fake.calls("chat.postMessage", ok=True)
            if c.args.get("channel") == dm and c.at > vote_at and c.args.get("blocks")
        )
        assert menu_at - vote_at <= 2.0

    # the agent spoke on the stage
    agent = {s.name for s in harness.live(game_id).seats if s.is_agent}
    await fake.wait_until(
        lambda: any(n in agent for n, _ in harness.persona_lines()),
        within=60,
        what="the agent speaking",
    )
