"""A table of simulated people around the real bot, on the loopback fake Discord.

`bot_stack` builds what `mafiabot run --discord` builds (database, scheduler, service with the
baseline agent, `MafiaBot`) and runs it against the fake; `Table` plays the humans through the
fake's driving API: slash commands, clicks, selects, and typing in booths.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.discord.app import MafiaBot
from bot.discord.options import DiscordOptions
from bot.seats.agents import make_agent_factory
from bot.service.port import GameService
from bot.service.timers import make_scheduler
from bot.settings import Settings
from bot.store.db import make_engine
from bot.store.migrate import upgrade
from tests.fakes.discord import Channel, FakeDiscord, Guild, Member, WebhookExecution
from tests.fakes.discord.interactions import Callback, Interaction
from tests.fakes.discord.model import PERMISSIONS, iter_components
from tests.fakes.discord_fixtures import running_client

JSON = dict[str, Any]
ROLE_CARD = re.compile(r"You are (?P<name>[\w ]+)\. Your role: (?P<role>\w+)\.")


def test_options(**overrides: Any) -> DiscordOptions:
    values: dict[str, Any] = {"afk_reminder_minutes": 0.0}
    values.update(overrides)
    return DiscordOptions(_env_file=None, **values)


@asynccontextmanager
async def new_bot(
    db_url: str, *, speed: float = 1.0, reveal_after: float | None = None, **options: Any
) -> AsyncIterator[MafiaBot]:
    """A service and a bot on ``db_url``, not connected yet; the service is closed after.
    ``reveal_after``: MAFIABOT_REVEAL_AFTER_SECONDS (default: the setting's)."""
    upgrade(db_url)
    engine = make_engine(db_url)
    scheduler = make_scheduler()
    scheduler.start()
    service = GameService(engine, scheduler, make_agent_factory())
    extra: dict[str, Any] = {} if reveal_after is None else {"reveal_after_seconds": reveal_after}
    settings = Settings(_env_file=None, database_url=db_url, **extra)
    bot = MafiaBot(
        service, settings, test_options(test_speed=speed, **options), guild_ready_timeout=0.05
    )
    try:
        yield bot
    finally:
        if not bot.is_closed():
            await bot.close()
        await service.close()
        scheduler.shutdown(wait=False)
        engine.dispose()


@asynccontextmanager
async def bot_stack(
    fake: FakeDiscord,
    db_url: str,
    *,
    speed: float = 1.0,
    reveal_after: float | None = None,
    **options: Any,
) -> AsyncIterator[MafiaBot]:
    """`new_bot`, connected to ``fake`` and caught up."""
    async with (
        new_bot(db_url, speed=speed, reveal_after=reveal_after, **options) as bot,
        running_client(bot, fake),
    ):
        await asyncio.wait_for(bot.caught_up.wait(), 10)
        yield bot


async def answered(inter: Interaction) -> JSON:
    """The message the bot answered with: the response itself, or (slash commands are
    deferred on arrival) the first followup, which Discord turns into the response."""
    callback = await inter.response()
    if callback.type == 5:
        await inter.followup(0)
    assert inter.original is not None
    return inter.original


def run_env(fake: FakeDiscord, db_url: str, **settings: str) -> dict[str, str]:
    """The environment of a ``mafiabot run`` process (tests/bot/ops/runproc.py) on ``fake``:
    none of the caller's MAFIABOT_* variables, the database, the token, no AFK reminders."""
    root = Path(__file__).resolve().parents[3]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAFIABOT_")}
    env.update(
        PYTHONPATH=str(root),
        FAKE_DISCORD_API=fake.api_base,
        FAKE_DISCORD_WS=fake.ws_url,
        MAFIABOT_DATABASE_URL=db_url,
        MAFIABOT_DISCORD_TOKEN=fake.token,
        MAFIABOT_DISCORD_AFK_REMINDER_MINUTES="0",
    )
    env.update(settings)
    return env


def db_url_in(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'db' / 'mafiabot.db'}"


def custom_ids(message: JSON) -> list[str]:
    return [
        c["custom_id"]
        for c in iter_components(message.get("components") or [])
        if c.get("custom_id")
    ]


def component(message: JSON, prefix: str) -> str:
    found = [c for c in custom_ids(message) if c.startswith(prefix)]
    assert found, f"no component {prefix!r} in {custom_ids(message)}"
    return found[0]


async def kill_vote(fake: FakeDiscord, menu: JSON, game_id: str, victim: str, user: Member) -> None:
    """Pick ``victim`` in a mafia kill menu as ``user``; the vote is confirmed privately."""
    inter = await fake.select(menu, component(menu, f"mafia:kill:{game_id}:"), [victim], user=user)
    answer = await inter.response()
    assert answer.ephemeral and f"Your vote: {victim}" in (answer.content or "")


@dataclass
class Table:
    fake: FakeDiscord
    guild: Guild
    town: Channel
    mod: Member
    humans: list[Member]
    spectator: Member
    names: dict[int, str] = field(default_factory=dict)  # user id -> character name
    roles: dict[int, str] = field(default_factory=dict)

    @classmethod
    def build(
        cls, fake: FakeDiscord, humans: int = 5, *, shard: tuple[int, int] | None = None
    ) -> Table:
        guild = fake.add_guild("Mafia Club", shard=shard)
        town = fake.add_channel(guild, "town-square")
        mods = fake.add_role(guild, "Mods", PERMISSIONS["manage_guild"])
        mod = fake.add_member(guild, "mod", roles=[mods])
        people = [mod] + [fake.add_member(guild, f"human{i}") for i in range(1, humans)]
        spectator = fake.add_member(guild, "watcher")
        return cls(fake, guild, town, mod, people, spectator)

    # --- commands ----------------------------------------------------------------------------

    async def slash(
        self, command: str, user: Member, channel: Channel | None = None, **options: Any
    ) -> Interaction:
        return await self.fake.slash(command, options, user=user, channel=channel or self.town)

    async def answer(self, inter: Interaction) -> str:
        """The text of an ephemeral answer (direct, or the first followup after a defer)."""
        return str((await answered(inter)).get("content") or "")

    async def setup(self) -> str:
        return await self.answer(await self.slash("mafia setup", self.mod))

    async def open(self, host: Member | None = None, **options: Any) -> JSON:
        """/mafia new; returns the lobby message."""
        before = self.fake.messages_in(self.town)
        after = int(before[-1]["id"]) if before else 0
        inter = await self.slash("mafia new", host or self.mod, **options)
        text = await self.answer(inter)
        assert "is open" in text, text
        return await self.fake.wait_for_message(
            self.town,
            lambda m: bool(m["embeds"]) and bool(m["components"]),
            after=after,
            from_bot=True,
        )

    @staticmethod
    def game_id(lobby: JSON) -> str:
        return component(lobby, "mafia:lobby:").split(":")[2]

    async def join(self, user: Member, lobby: JSON, *, agree: bool = True) -> Callback:
        gid = self.game_id(lobby)
        inter = await self.fake.click(lobby, f"mafia:lobby:{gid}:join", user=user)
        callback = await inter.response()
        notice = inter.original
        if callback.type == 4 and notice is not None and notice.get("components"):
            answer = component(notice, f"mafia:consent:{gid}:{'yes' if agree else 'no'}:")
            second = await self.fake.click(notice, answer, user=user)
            return await second.response()
        return callback

    async def start(self, user: Member, lobby: JSON) -> Interaction:
        return await self.fake.click(lobby, f"mafia:lobby:{self.game_id(lobby)}:start", user=user)

    async def full_lobby(self, **options: Any) -> JSON:
        assert "every permission" in await self.setup()
        lobby = await self.open(**options)
        for person in self.humans:
            await self.join(person, lobby)
        return lobby

    # --- booths ------------------------------------------------------------------------------

    def booth(self, user: Member) -> Channel | None:
        for ch in self.fake.channels.values():
            if (
                ch.is_thread
                and ch.parent_id == self.town.id
                and user.id in ch.member_ids
                and (ch.name or "").startswith("booth")
            ):
                return ch
        return None

    async def wait_booth(self, user: Member) -> Channel:
        found: Channel = await self.fake.wait_until(lambda: self.booth(user), 20.0)
        return found

    async def read_role(self, user: Member) -> tuple[str, str]:
        booth = await self.wait_booth(user)
        card = await self.fake.wait_for_message(
            booth, lambda m: "Your role" in m["content"], within=20.0
        )
        m = ROLE_CARD.search(card["content"])
        assert m is not None, card["content"]
        self.names[user.id] = m["name"]
        self.roles[user.id] = m["role"]
        return m["name"], m["role"]

    async def say(self, user: Member, text: str) -> JSON:
        booth = self.booth(user)
        assert booth is not None
        return await self.fake.send_message(booth, user, text)

    def stage_posts(
        self, where: Callable[[WebhookExecution], bool] | None = None
    ) -> list[WebhookExecution]:
        return [
            e
            for e in self.fake.webhook_executions
            if e.channel_id == self.town.id and (where is None or where(e))
        ]

    async def wait_post(self, text: str, within: float = 5.0) -> WebhookExecution:
        hit: list[WebhookExecution] = await self.fake.wait_until(
            lambda: [e for e in self.fake.webhook_executions if e.content == text], within
        )
        return hit[0]

    async def wait_stage(self, predicate: Callable[[JSON], bool], within: float = 10.0) -> JSON:
        return await self.fake.wait_for_message(self.town, predicate, within=within)

    async def play(self, **options: Any) -> str:
        """Setup, lobby, everyone joins, the moderator starts; every role read. Returns the
        game id."""
        lobby = await self.full_lobby(**options)
        game_id = self.game_id(lobby)
        assert (await (await self.start(self.mod, lobby)).response()).type == 6
        for person in self.humans:
            await self.read_role(person)
        return game_id

    def player(self, name: str) -> Member:
        return next(p for p in self.humans if self.names.get(p.id) == name)

    async def dms_to(self, user: Member, within: float = 5.0) -> list[str]:
        def found() -> list[str]:
            for ch in self.fake.channels.values():
                if ch.type == 1 and ch.recipient_ids == [user.id]:
                    return [m["content"] for m in self.fake.messages_in(ch)]
            return []

        texts: list[str] = await self.fake.wait_until(found, within)
        return texts
