"""The one delivery lane (`bot.service.lanes`): order per destination, fairness between seats, the
bot's own posts first, pacing chosen at send time, retries in place, close."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Hashable

import pytest

from bot.service.lanes import Lanes, Line, Pace, Policy


class Rec:
    def __init__(self) -> None:
        self.sent: list[tuple[str, float]] = []
        self.gate = asyncio.Event()
        self.gate.set()

    async def send(self, job: str) -> None:
        await self.gate.wait()
        self.sent.append((job, time.monotonic()))

    def texts(self) -> list[str]:
        return [t for t, _ in self.sent]


class Paced(Policy[str]):
    def __init__(self, burst: float, rate: float, reserve_for_backlog: bool = False) -> None:
        self.pace = Pace(burst, rate)
        self.reserve_for_backlog = reserve_for_backlog

    def wait(self, key: Hashable, job: str, now: float, behind: int) -> float:
        reserve = 1.0 if self.reserve_for_backlog and behind > 0 else 0.0
        return self.pace.wait(key, now, reserve)

    def spend(self, key: Hashable, job: str, now: float) -> None:
        self.pace.spend(key, now)


async def test_order_per_key_and_keys_apart() -> None:
    rec = Rec()
    lanes: Lanes[str, str] = Lanes(rec.send)
    rec.gate.clear()
    for i in range(5):
        lanes.put("a", f"a{i}")
        lanes.put("b", f"b{i}")
    assert lanes.pending() == 10
    rec.gate.set()
    await lanes.drain()
    assert [t for t in rec.texts() if t[0] == "a"] == [f"a{i}" for i in range(5)]
    assert [t for t in rec.texts() if t[0] == "b"] == [f"b{i}" for i in range(5)]
    assert not lanes.busy() and lanes.pending() == 0


async def test_a_flooding_seat_delays_another_by_one_post_and_the_bot_goes_first() -> None:
    rec = Rec()
    lanes: Lanes[str, str] = Lanes(rec.send)
    rec.gate.clear()
    for i in range(20):
        lanes.put("stage", f"flood{i}", lane=1)
    await asyncio.sleep(0)  # flood0 is taken and waits on the gate
    lanes.put("stage", "other", lane=2)
    lanes.put("stage", "announce")
    rec.gate.set()
    await lanes.drain()
    texts = rec.texts()
    assert texts[:3] == ["flood0", "announce", "other"]
    assert [t for t in texts if t.startswith("flood")] == [f"flood{i}" for i in range(20)]


async def test_pacing_is_decided_when_the_post_can_go() -> None:
    """A post queued while the lane waits for its pace is chosen then if it goes first: the
    announcement does not wait behind the line that was at the head."""
    rec = Rec()
    lanes: Lanes[str, str] = Lanes(rec.send, policy=Paced(1, 5.0))  # one post per 0.2 s
    for i in range(3):
        lanes.put("stage", f"flood{i}", lane=1)
    await asyncio.sleep(0.05)  # flood0 went; flood1 waits for the pace
    lanes.put("stage", "announce")
    await lanes.drain()
    assert rec.texts() == ["flood0", "announce", "flood1", "flood2"]
    gaps = [b - a for (_, a), (_, b) in zip(rec.sent, rec.sent[1:], strict=False)]
    assert min(gaps) >= 0.18, gaps  # paced: never faster than the rate


async def test_a_backlog_leaves_a_post_of_the_burst_to_a_newcomer() -> None:
    rec = Rec()
    lanes: Lanes[str, str] = Lanes(rec.send, policy=Paced(3, 2.0, reserve_for_backlog=True))
    for i in range(6):
        lanes.put("stage", f"flood{i}", lane=1)
    await asyncio.sleep(1.2)  # the flood has used the bucket down to its reserve
    at = time.monotonic()
    lanes.put("stage", "other", lane=2)
    await lanes.drain()
    other = dict(rec.sent)["other"]
    assert other - at < 0.1, other - at  # at once: not a pace later


class Flaky(Policy[str]):
    def retry_in(self, job: str, exc: Exception, attempt: int) -> float | None:
        return 0.01 if isinstance(exc, ConnectionError) and attempt < 3 else None


async def test_retries_keep_the_place_and_a_given_up_job_is_reported() -> None:
    fails = {"one": 2, "two": 5}
    sent: list[str] = []

    async def send(job: str) -> None:
        if fails.get(job, 0) > 0:
            fails[job] -= 1
            raise ConnectionError(job)
        sent.append(job)

    errors: list[tuple[str, Exception]] = []

    async def on_error(job: str, exc: Exception) -> None:
        errors.append((job, exc))

    lanes: Lanes[str, str] = Lanes(send, policy=Flaky(), on_error=on_error)
    for job in ("one", "two", "three"):
        lanes.put("k", job)
    await lanes.drain()
    assert sent == ["one", "three"]  # "one" retried in place, before "three"
    assert [j for j, _ in errors] == ["two"]
    assert lanes.retried == 4 and lanes.failed == 1 and lanes.sent == 2


async def test_close_sends_within_the_grace_then_drops_the_rest() -> None:
    rec = Rec()
    dropped: list[str] = []
    lanes: Lanes[str, str] = Lanes(rec.send, on_drop=dropped.append)
    rec.gate.clear()
    lanes.put("k", "a")
    lanes.put("k", "b")
    await asyncio.sleep(0)
    await lanes.close(grace=0.05)
    assert rec.texts() == [] and dropped == ["a", "b"]
    assert lanes.put("k", "late") is False and lanes.pending() == 0


async def test_a_line_hands_over_everything_before_it_closes() -> None:
    got: list[int] = []

    async def deliver(item: int) -> None:
        await asyncio.sleep(0.001)
        if item == 2:
            raise ValueError("a failed delivery is logged, the next goes on")
        got.append(item)

    line = Line(deliver, "test")
    for i in range(5):
        line.put(i)
    await line.close()
    assert got == [0, 1, 3, 4]


def test_a_pace_needs_a_burst_and_a_rate() -> None:
    with pytest.raises(ValueError):
        Pace(0, 1.0)
    pace = Pace(2, 1.0)
    assert pace.wait("k", 0.0) == 0.0
    pace.spend("k", 0.0)
    pace.spend("k", 0.0)
    assert pace.wait("k", 0.0) == pytest.approx(1.0)
    assert pace.wait("k", 0.5) == pytest.approx(0.5)
    assert pace.wait("k", 0.5, reserve=1.0) == pytest.approx(1.5)


async def test_a_line_reaching_an_idle_discord_stage_goes_at_once() -> None:
    """Players' lines are spaced `STAGE_INTERVAL` apart within a backlog only: once the stage's
    lane went idle, the next line goes out at once (the relay bench's p99 was 544 ms when the
    spacing outlived the backlog, 7 ms with the outbox before the lanes and now)."""
    from bot.discord.delivery import DiscordPolicy, Job
    from bot.limits import STAGE_INTERVAL

    async def send(_text: str) -> None:
        return None

    policy = DiscordPolicy(STAGE_INTERVAL, 0.1, 1.0)
    line = Job(send=send, text="hi", lane=3)
    policy.spend("stage", line, 100.0)
    assert policy.wait("stage", line, 100.1, 0) > 0  # (a backlog: spaced)
    policy.forget("stage")  # the lane went idle
    assert policy.wait("stage", line, 100.1, 0) == 0.0
