"""A Slack adapter on the loopback fake: the real Bolt AsyncApp (request signatures verified)
and AsyncWebClient, a real GameService on a migrated database, the baseline agent.

`SlackHarness.boot()` can run more than once on the same database: that is a restart.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.engine import Engine

from bot.protection.consent import record_consent
from bot.seats.agents import make_agent_factory
from bot.service.live import LiveGame, seating
from bot.service.port import GameService
from bot.service.timers import make_scheduler
from bot.slack.adapter import SlackAdapter
from bot.slack.app import build_app
from bot.store.db import make_engine
from games.config import GameConfig
from games.engine import assign_roles
from tests.fakes.slack import FakeChannel, FakeSlack, FakeUser, Message

NAMES = ("alice", "bob", "carol", "dave", "erin", "frank", "grace")


@dataclass
class SlackHarness:
    fake: FakeSlack
    db_url: str
    secret: str
    sdk_rate_limit_retries: int = 2
    engine: Engine | None = None
    service: GameService | None = None
    adapter: SlackAdapter | None = None
    app: AsyncApp | None = None
    users: list[FakeUser] = field(default_factory=list)
    channel: FakeChannel | None = None
    _schedulers: list[Any] = field(default_factory=list)

    async def boot(self) -> SlackAdapter:
        """A fresh engine, scheduler, service, client, adapter and app on the same DB."""
        self.engine = make_engine(self.db_url)
        scheduler = make_scheduler()
        scheduler.start()
        self._schedulers.append(scheduler)
        self.service = GameService(self.engine, scheduler, make_agent_factory())
        client = AsyncWebClient(
            token=self.fake.bot_token,
            base_url=self.fake.base_url,
            retry_handlers=[
                AsyncRateLimitErrorRetryHandler(max_retry_count=self.sdk_rate_limit_retries)
            ],
        )
        self.adapter = SlackAdapter(self.service, client, allow_test_options=True)
        if self.fake.post_limit is None:
            # this fake takes any number of posts: nothing to pace to (a test that models
            # Slack's post limit sets `fake.post_limit` and paces to it: test_flood.py)
            self.adapter.out.delivery.policy.pace = None
        self.app = build_app(self.adapter, self.secret)
        self.fake.target = None
        await self.fake.serve(self.app)
        await self.adapter.start()
        return self.adapter

    async def shutdown(self) -> None:
        """Stop like a process would: nothing more is sent, timers die with it."""
        if self.adapter is not None:
            await self.adapter.close()
        if self.service is not None:
            await self.service.close()
        for scheduler in self._schedulers:
            if scheduler.running:
                scheduler.shutdown(wait=False)
        self._schedulers.clear()
        if self.engine is not None:
            self.engine.dispose()
        self.adapter = self.service = None

    # --- people ---------------------------------------------------------------------------

    def people(self, n: int, *, admin_host: bool = True) -> list[FakeUser]:
        self.users = [
            self.fake.add_user(name, is_admin=admin_host and i == 0)
            for i, name in enumerate(NAMES[:n])
        ]
        self.channel = self.fake.add_channel("mafia-night", members=self.users)
        return self.users

    def consent_all(self, users: Iterable[FakeUser]) -> None:
        assert self.engine is not None
        for u in users:
            record_consent(self.engine, "slack", self.fake.team_id, u.id, True)

    # --- driving --------------------------------------------------------------------------

    async def slash(self, user: FakeUser, text: str, channel: Any = None) -> str:
        before = len(self.fake.responses)
        result = await self.fake.slash(user=user, channel=channel or self.channel, text=text)
        assert result.status == 200, result
        replies = await self.fake.wait_for_responses(before + 1, within=10)
        return replies[before].text

    async def new_game(self, host: FakeUser, settings: str) -> str:
        reply = await self.slash(host, f"new {settings}")
        assert "is open" in reply, reply
        return reply.split("`")[1]

    async def join_all(self, users: Iterable[FakeUser]) -> None:
        for u in users:
            before = len(self.fake.responses)
            await self.fake.click(user=u, action_id="mafia_join", channel=self.channel)
            await self.fake.wait_for_responses(before + 1)
            assert "You're in" in self.fake.responses[before].text, self.fake.responses[before]

    async def running_game(
        self, n: int = 5, settings: str = "day=3600 vote=3600 night=3600 night_vote=3600"
    ) -> str:
        """A started game of ``n`` consenting humans and the agent; every role card delivered."""
        game_id, _ = await self.running_game_of(self.people(n), settings)
        return game_id

    async def running_game_of(
        self, users: list[FakeUser], settings: str
    ) -> tuple[str, list[FakeUser]]:
        """A started game of ``users`` (all consenting) and the agent; role cards delivered."""
        self.consent_all(users)
        game_id = await self.new_game(users[0], settings)
        await self.join_all(users)
        assert "has started" in await self.slash(users[0], "start")
        for u in users:
            await self.fake.wait_until(
                lambda u=u: any("You are" in t for t in self.dm_texts(u)),  # type: ignore[misc]
                what="role card",
            )
        return game_id, users

    def live(self, game_id: str) -> LiveGame:
        assert self.service is not None
        return self.service.games[game_id]

    def character(self, game_id: str, user: FakeUser) -> str:
        seat = self.live(game_id).seat_of_user(user.id)
        assert seat is not None
        return seat.name

    def stage(self) -> list[Message]:
        assert self.channel is not None
        return [m for m in self.fake.messages_in(self.channel) if m.source != "user"]

    def persona_lines(self, channel: Any = None) -> list[tuple[str, str]]:
        """(character, text) of every line posted under a character's name."""
        target = channel or self.channel
        assert target is not None
        msgs = self.fake.messages_in(target)
        return [(m.username, m.text) for m in msgs if m.username]

    async def wait_stage(self, predicate: Any, within: float = 10, what: str = "stage") -> Any:
        return await self.fake.wait_until(predicate, within=within, what=what)

    def dm_texts(self, user: FakeUser) -> list[str]:
        return [m.text for m in self.fake.messages_in(self.fake.dm(user)) if m.source != "user"]


def seed_where(predicate: Any, start: int = 1) -> int:
    for seed in range(start, start + 10_000):
        if predicate(seed):
            return seed
    raise AssertionError("no seed fits")


# --- the den (night talk relayed between mafia booths) ------------------------------------

#: what a character's line is posted with, on the stage and in a booth alike
LINE_KEYS = frozenset({"channel", "text", "username", "icon_url", "unfurl_links", "unfurl_media"})
DEN_CONFIG = GameConfig(mafia=2)


def agent_role(seed: int) -> str:
    """The agent's role in a 5-humans-plus-agent game with 2 mafia and ``seed`` (the agent
    joins last, lobby seat 5; the service seats everyone by the seed)."""
    return assign_roles(DEN_CONFIG, 6, seed)[seating(seed, 6).index(5)]


async def start(harness: SlackHarness, settings: str) -> tuple[str, list[FakeUser]]:
    """5 consenting humans and the agent in a started game; every role card delivered."""
    return await harness.running_game_of(harness.people(5), settings)


def roles_of(harness: SlackHarness, game_id: str, users: list[FakeUser]) -> dict[str, str]:
    """Each human's role, by Slack user id."""
    game = harness.live(game_id)
    assert game.state is not None
    roles = {}
    for u in users:
        seat = game.seat_of_user(u.id)
        assert seat is not None
        roles[u.id] = game.state.seats[seat.index].role
    return roles


async def vote_out_a_bystander(
    harness: SlackHarness, game_id: str, users: list[FakeUser], role: dict[str, str]
) -> None:
    """Day 1's vote: the humans vote out one human bystander (4 of 6 votes, whatever the
    agent does), then wait for the night."""
    assert harness.service is not None
    game = harness.live(game_id)
    bystanders = [u for u in users if role[u.id] != "mafia"]
    victim, scapegoat = bystanders[0], bystanders[1]
    await harness.fake.wait_until(
        lambda: game.state is not None and game.state.phase.kind.value == "vote",
        within=10,
        what="the day vote",
    )
    for u in users:
        target = scapegoat if u is victim else victim
        seat = game.seat_of_user(u.id)
        assert seat is not None
        await harness.service.vote(game_id, seat.index, harness.character(game_id, target))
    await harness.fake.wait_until(
        lambda: game.state is not None and game.state.phase.kind.value == "night",
        within=10,
        what="the night",
    )


def line_posts(harness: SlackHarness, channel: Any) -> list[dict[str, Any]]:
    """The arguments of every character line posted into ``channel``."""
    return [
        c.args
        for c in harness.fake.calls("chat.postMessage", ok=True)
        if c.args.get("channel") == channel.id and c.args.get("username")
    ]


@pytest.fixture
async def harness(
    fake_slack: FakeSlack, slack_signing_secret: str, engine: Engine, db_url: str
) -> AsyncIterator[SlackHarness]:
    fake_slack.grant_scope("files:write")  # the manifest asks for it; the fake's default lacks it
    h = SlackHarness(fake_slack, db_url, slack_signing_secret)
    await h.boot()
    try:
        yield h
    finally:
        await h.shutdown()
