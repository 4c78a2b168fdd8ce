"""The graceful stop inside one process: the order of things after SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.ops.serve import Ops, serve_until_stopped
from bot.protection.consent import record_consent
from bot.service.port import ServiceError
from bot.slack.app import SlackRunner
from games.config import GameConfig
from games.events import Event, MessageAccepted
from tests.bot.ops.conftest import ops_on
from tests.bot.ops.slack_people import People
from tests.fakes.slack import FakeSlack

CONFIG = GameConfig(day_seconds=600, vote_seconds=60, night_seconds=60, night_vote_seconds=60)


class SlowRenderer:
    """A listener that takes its time with each batch, like a renderer queueing posts."""

    def __init__(self) -> None:
        self.batches = 0
        self.started = asyncio.Event()

    async def on_events(self, game: object, events: Sequence[Event]) -> None:
        self.started.set()
        await asyncio.sleep(0.2)
        self.batches += 1


async def test_sigterm_refuses_new_games_delivers_what_was_accepted_then_stops_adapters(
    ops: Ops,
) -> None:
    order: list[str] = []
    service = ops.service
    renderer = SlowRenderer()
    service.subscribe(renderer)
    game_id = await service.create_game(CONFIG, seed=1)
    for _ in range(5):
        await service.join(game_id, None, is_agent=True, agent_kind="baseline")

    async def adapter() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            order.append(f"adapter closed after {renderer.batches} batch(es)")
            raise

    async def stop_while_a_batch_is_rendering() -> None:
        await service.start(game_id)
        await renderer.started.wait()
        os.kill(os.getpid(), signal.SIGTERM)

    trigger = asyncio.create_task(stop_while_a_batch_is_rendering())
    await asyncio.wait_for(serve_until_stopped(ops, {"fake": adapter()}), 10)
    await trigger

    assert order == ["adapter closed after 1 batch(es)"]  # the start was rendered first
    assert ops.health.stopping and await ops.health.down() == ["shutting down", "fake"]
    with pytest.raises(ServiceError, match="restarting"):
        await service.create_game(CONFIG)


async def test_an_adapter_that_fails_stops_the_others_and_its_error_is_raised(
    ops: Ops,
) -> None:
    stopped = asyncio.Event()

    async def broken() -> None:
        raise RuntimeError("the gateway refused us")

    async def other() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()

    with pytest.raises(RuntimeError, match="refused"):
        await serve_until_stopped(ops, {"broken": broken(), "other": other()})
    assert stopped.is_set()


class Lines:
    """A listener keeping the lines it was handed."""

    def __init__(self) -> None:
        self.said: list[str] = []

    async def on_events(self, game: object, events: Sequence[Event]) -> None:
        self.said += [e.text for e in events if isinstance(e, MessageAccepted)]


async def test_a_line_being_written_at_the_stop_is_rendered_before_the_adapters_close(
    ops: Ops,
) -> None:
    seen_at_close: list[list[str]] = []
    service = ops.service
    lines = Lines()
    service.subscribe(lines)
    game_id = await service.create_game(CONFIG, seed=2)
    for i in range(5):
        await service.join(game_id, f"person{i}")
    await service.start(game_id)

    async def adapter() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen_at_close.append(list(lines.said))
            raise

    async def stop_while_a_line_is_being_written() -> None:
        busy = threading.Event()
        # the writer is busy, so the line waits for it with its game's lock held
        blocker = asyncio.create_task(service._run_db(lambda _: busy.wait(5)))
        say = asyncio.create_task(service.say(game_id, 0, "typed as the bot stops"))
        await asyncio.sleep(0)  # one turn: the say takes the lock and queues its write
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.sleep(0.2)  # the stop is under way and waiting for the line
        busy.set()
        await blocker
        await say

    trigger = asyncio.create_task(stop_while_a_line_is_being_written())
    await asyncio.wait_for(serve_until_stopped(ops, {"fake": adapter()}), 10)
    await trigger
    assert seen_at_close == [["typed as the bot stops"]]


async def test_slack_lines_received_before_sigterm_are_posted_before_the_process_ends(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    """Booth lines queued behind one the database is still writing when SIGTERM comes: Slack's
    websocket closes first, then every line already received reaches the stage, once."""
    url = f"sqlite:///{tmp_path / 'db' / 'mafiabot.db'}"
    tokens = {"slack_bot_token": fake_slack.bot_token, "slack_app_token": fake_slack.app_token}
    people = People(fake_slack)
    lines = [f"line {i} typed as the bot stops" for i in range(4)]
    async with ops_on(url, **tokens) as ops:
        service = ops.service
        runner = SlackRunner(ops.settings, service, base_url=fake_slack.base_url)
        ops.watch_slack(runner)
        await runner.prepare()
        for u in people.users:
            record_consent(service.engine, "slack", fake_slack.team_id, u.id, True)
        serving = asyncio.create_task(serve_until_stopped(ops, {"slack": runner.serve()}))
        await fake_slack.wait_socket_connected(10)
        await people.play()

        busy = threading.Event()
        blocker = asyncio.create_task(service._run_db(lambda _: busy.wait(5)))
        for user, line in zip(people.users, lines, strict=False):
            await people.say(user, line)  # acknowledged by the bot: it has the line
        os.kill(os.getpid(), signal.SIGTERM)
        await fake_slack.wait_until(lambda: not fake_slack.hub.connected, 5, "input stopped")
        busy.set()
        await blocker
        await asyncio.wait_for(serving, 10)
        await runner.close()
    posted = people.stage_lines()
    assert [posted.count(line) for line in lines] == [1, 1, 1, 1], posted
