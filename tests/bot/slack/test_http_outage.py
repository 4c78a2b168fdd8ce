"""Outages are symmetric in Slack's HTTP mode too (`bot.slack.http_watch`): when Slack can't
reach the endpoint, the agents pause and the day's clock stands still, as for a dropped
socket, and what people typed meanwhile is read back and released when Slack gets through
again (its retry with ``X-Slack-Retry-Num``)."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta

from aiohttp import web

from bot.slack.http_watch import HttpWatch, events_handler, watch_http
from tests.bot.slack.conftest import SlackHarness
from tests.fakes.slack.echo import SlackEcho


class Sink:
    def __init__(self) -> None:
        self.calls: list[tuple[str, datetime | None]] = []

    def input_lost(self, since: datetime | None = None) -> None:
        self.calls.append(("lost", since))

    def input_regained(self) -> None:
        self.calls.append(("regained", None))


def echo_body(channel: str) -> bytes:
    event = {"type": "message", "bot_id": "B1", "channel": channel, "text": "x", "ts": "1.0"}
    return json.dumps({"type": "event_callback", "event": event}).encode()


async def test_a_post_that_does_not_echo_is_an_outage_until_the_next_request() -> None:
    sink = Sink()
    watch = HttpWatch(sink, echo_wait_s=0.2)
    try:
        watch.posted("C1")  # never echoed: nothing is expected of it
        await asyncio.sleep(0.4)
        assert sink.calls == []
        watch.seen({}, echo_body("C1"))  # C1 echoes
        watch.posted("C1")
        watch.seen({}, echo_body("C1"))  # its echo came: all well
        await asyncio.sleep(0.4)
        assert sink.calls == []
        before = datetime.now(UTC)
        watch.posted("C1")
        watch.posted("C1")
        await asyncio.sleep(0.4)
        assert [c for c, _ in sink.calls] == ["lost"]
        since = sink.calls[0][1]
        assert since is not None and before <= since <= before + timedelta(seconds=0.1)
        watch.posted("C1")  # still down: nothing new
        await asyncio.sleep(0.3)
        assert len(sink.calls) == 1
        watch.seen({"X-Slack-Retry-Num": "1"}, echo_body("D1"))  # Slack gets through again
        assert [c for c, _ in sink.calls] == ["lost", "regained"]
        assert not watch.down
    finally:
        watch.close()


async def test_a_retried_event_tells_of_an_outage_no_post_showed() -> None:
    sink = Sink()
    watch = HttpWatch(sink, echo_wait_s=0.2)
    happened = int(time.time()) - 90
    body = json.dumps({"type": "event_callback", "event_time": happened, "event": {}})
    watch.seen({"X-Slack-Retry-Num": "2", "X-Slack-Retry-Reason": "http_error"}, body)
    assert sink.calls == [("lost", datetime.fromtimestamp(happened, UTC)), ("regained", None)]
    watch.seen({}, body)  # a first delivery: nothing to tell
    assert len(sink.calls) == 2


async def test_app_rate_limited_is_an_outage_for_the_rest_of_its_minute() -> None:
    sink = Sink()
    watch = HttpWatch(sink)
    started = int(time.time()) - 59  # the minute has one or two seconds left
    body = json.dumps({"type": "app_rate_limited", "minute_rate_limited": started})
    try:
        watch.seen({}, body)
        assert sink.calls == [("lost", datetime.fromtimestamp(started, UTC))]
        watch.seen({}, echo_body("C1"))  # events of the minute may still trickle in
        assert len(sink.calls) == 1
        await asyncio.sleep(2.5)
        assert [c for c, _ in sink.calls] == ["lost", "regained"]
    finally:
        watch.close()


async def test_slack_cannot_reach_the_endpoint_the_agents_pause_and_the_day_waits(
    harness: SlackHarness,
) -> None:
    """HTTP mode with signed requests through the production endpoint handler: Slack stops
    reaching it in the middle of a day (its echoes of the app's own posts stop coming). The
    agents stop posting and the day's clock stands still; when Slack's retry gets through,
    what people typed meanwhile is read back and released, and the day gets the gap back.
    Fails on the code before the watch: the agents talk on while nothing people type
    arrives, and the day ends on its old deadline."""
    fake = harness.fake
    users = harness.people(5)
    game_id, _ = await harness.running_game_of(
        users, "day=60 vote=600 night=600 night_vote=600 agents=2 speed=10"
    )
    game = harness.live(game_id)
    agents = [s.name for s in game.seats if s.is_agent]
    assert game.state is not None and game.state.phase.deadline is not None
    deadline = game.state.phase.deadline
    assert harness.adapter is not None and harness.app is not None
    assert harness.service is not None
    watch = watch_http(harness.adapter, echo_wait_s=1.5)
    site = web.Application()
    site.router.add_post("/slack/events", events_handler(harness.app, watch, harness.secret))
    runner = web.AppRunner(site, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/slack/events"
    fake.target = url
    echo = SlackEcho(fake, url)
    echo.start()
    try:
        await harness.wait_stage(
            lambda: any(n in agents for n, _ in harness.persona_lines()), what="an agent line"
        )
        await fake.wait_until(lambda: echo.echoed > 0, what="an echo")
        outages = harness.service.outages
        echo.unreachable = True
        await fake.wait_until(lambda: outages.is_down(game_id), within=20, what="input down")
        down = time.monotonic()
        seen = len(harness.stage())
        typed = []
        for i in range(5):
            u = users[i % len(users)]
            text = f"typed while slack could not reach us {i}"
            fake.workspace.post(fake.dm(u), user=u.id, text=text, source="user")
            typed.append(text)
            await asyncio.sleep(0.4)
        # on to two real seconds past the day's old deadline (a wait for the game's clock)
        await asyncio.sleep(game.clock.real_delay_until(deadline + timedelta(seconds=20)))
        gap_posts = [m.text for m in harness.stage()[seen:]]
        assert gap_posts == [], f"posted while Slack could not reach the endpoint: {gap_posts}"
        assert game.state.phase.kind.value == "day"
        echo.unreachable = False
        assert await echo.retry(users[0], typed[0]) == 200  # Slack's retry gets through
        gap = time.monotonic() - down
        await harness.wait_stage(
            lambda: [t for _, t in harness.persona_lines() if t in typed] == typed,
            within=20,
            what="the backlog",
        )
        assert game.state.phase.kind.value == "day"  # still the day, after its old deadline
        extended = (game.state.phase.deadline - deadline).total_seconds()
        assert abs(extended - gap * 10.0) < 25.0, (extended, gap)
        texts = [t for _, t in harness.persona_lines()]
        assert texts.count(typed[0]) == 1  # the retry and the read-back: once
    finally:
        await echo.stop()
        watch.close()
        await runner.cleanup()
