"""One LLM seat among five scripted people on the loopback fake Discord, on the real tiny model,
clock speed 1, short phases. The people talk every day, vote, and (the mafia) kill, through the
same slash commands, menus and booths a person uses; the LLM seat must speak on the stage on
every day it is alive and vote legally, the model's own choice or a logged fallback."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.memory.embeddings import default_minilm
from bot.discord.app import MafiaBot
from bot.runtime import running_service
from bot.settings import Settings
from bot.store.migrate import upgrade
from games.state import PhaseKind
from tests.bot.discord.harness import Table, component, custom_ids, db_url_in
from tests.bot.discord.harness import test_options as discord_options
from tests.fakes.discord import FakeDiscord
from tests.fakes.discord_fixtures import running_client
from tests.realmodel.play import LoopLag, read_game
from tests.realmodel.server import LlamaServer
from tests.realmodel.test_simulate import LAG_P99_S, LAG_WORST_S

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

#: the people's lines, a few each day (what they say does not matter here, only that the
#: stage is busy, as with people)
CHATTER = (
    "morning all",
    "ok who do we think it is",
    "I have a weird feeling about {x}",
    "{x} has been pretty quiet",
    "not sure yet, let's hear more",
    "why would the mafia pick that one last night",
    "I'm voting {x} unless someone has a better idea",
    "hmm",
)


@pytest.fixture(autouse=True)
def no_errors_logged(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """The bot and discord.py log exceptions they swallow; none may be logged."""
    caplog.set_level(logging.WARNING, logger="discord")
    caplog.set_level(logging.WARNING, logger="bot")
    yield
    errors = [
        r
        for r in caplog.records
        if r.name.startswith(("discord", "bot")) and r.levelno >= logging.ERROR
    ]
    assert not errors, "errors were logged:\n" + "\n".join(r.getMessage() for r in errors)


async def test_an_llm_seat_among_people_speaks_every_day(
    model_env: LlamaServer, fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake = fake_discord
    table = Table.build(fake)
    url = db_url_in(tmp_path)
    upgrade(url)
    settings = Settings(_env_file=None, database_url=url, data_dir=tmp_path / "data")
    assert settings.llm == "openai:smollm2"
    # loaded when a service starts, before its games (AgentLearning.warm_up): not measured
    await asyncio.to_thread(default_minilm().warm_up)
    async with (
        running_service(settings, url, "llm") as service,  # its start-up is not a game's
        LoopLag() as lag,
    ):
        bot = MafiaBot(
            service,
            settings,
            discord_options(test_speed=1.0, test_seed=19),
            guild_ready_timeout=0.05,
        )
        assert bot.agent_kind == "llm"
        try:
            async with running_client(bot, fake):
                await asyncio.wait_for(bot.caught_up.wait(), 10)
                game_id = await table.play(
                    roles="detective+doctor", day_minutes=1.5, vote_minutes=0.5, night_minutes=0.5
                )
                await People(table, service, game_id).play_out()
                await bot.delivery.drain()
        finally:
            if not bot.is_closed():
                await bot.close()
    game = await asyncio.to_thread(read_game, url, game_id)
    facts = game.describe() + "\n--- server log ---\n" + model_env.log_tail(1500)

    assert game.ended, facts
    (agent,) = game.llm_seats
    agent_name = game.names[agent]
    assert game.days_alive[agent], facts
    assert game.silent_days() == [], facts
    # ... and a person sees it: the agent's lines reached the stage, on each of those days.
    posted = [e for e in table.stage_posts() if e.username == agent_name]
    assert len(posted) >= len(game.days_alive[agent]), facts
    assert game.llm_votes() and game.bad_votes() == [] and game.unvoted() == [], facts
    assert lag.samples and lag.quantile(0.99) <= LAG_P99_S, (lag.quantile(0.99), facts)
    assert lag.worst <= LAG_WORST_S, (lag.worst, facts)


class People:
    """Five scripted people: a few lines each day (spread over the discussion), a vote for the
    same person in each day vote (a human bystander on day 1, then the human mafia), and the
    human mafia's kill of a human at night. Nobody ever votes for or kills the LLM seat, so it
    stays at the table as long as the game lasts."""

    def __init__(self, table: Table, service, game_id: str) -> None:  # type: ignore[no-untyped-def]
        self.table, self.fake, self.service, self.game_id = table, table.fake, service, game_id
        self.last_vote_menu = 0
        self.last_kill_menu: dict[int, int] = {}

    @property
    def state(self):  # type: ignore[no-untyped-def]
        return self.service.games[self.game_id].state

    def alive_humans(self) -> list:  # type: ignore[type-arg]
        alive = {s.name for s in self.state.seats if s.alive}
        return [p for p in self.table.humans if self.table.names[p.id] in alive]

    async def play_out(self) -> None:
        seen: set[tuple[str, int]] = set()
        while not self.state.over:
            phase = self.state.phase
            key = (str(phase.kind), phase.number)
            if key not in seen:
                seen.add(key)
                if phase.kind is PhaseKind.DAY:
                    await self.talk(phase.number)
                elif phase.kind is PhaseKind.VOTE:
                    await self.vote(phase.number)
                elif phase.kind is PhaseKind.NIGHT_VOTE:
                    await self.kill()
            await asyncio.sleep(0.5)
        await self.table.wait_stage(lambda m: "win" in m["content"].lower(), within=30)

    async def talk(self, day: int) -> None:
        """Each living person says something now and again in the first half of the day."""
        people = self.alive_humans()
        others = [self.table.names[p.id] for p in people]
        for turn in range(2):
            for i, person in enumerate(people):
                x = others[(i + turn + 1) % len(others)]
                line = CHATTER[(day * 3 + i + turn) % len(CHATTER)].format(x=x)
                with contextlib.suppress(AssertionError):  # its booth closed: it just died
                    await self.table.say(person, line)
                await asyncio.sleep(2.0)
            await asyncio.sleep(15.0)

    async def vote(self, day: int) -> None:
        menu = await self.fake.wait_for_message(
            self.table.town,
            lambda m: "Voting is open" in m["content"] and bool(m["components"]),
            after=self.last_vote_menu,
            within=30,
        )
        self.last_vote_menu = int(menu["id"])
        people = self.alive_humans()
        roles = self.table.roles
        mafia = [p for p in people if roles[p.id] == "mafia"]
        town = [p for p in people if roles[p.id] != "mafia"]
        target = mafia[0] if mafia and day > 1 else (town[0] if town else people[0])
        select_id = component(menu, f"mafia:vote:{self.game_id}:")
        for person in people:
            choice = target if person is not target else next(p for p in people if p is not target)
            inter = await self.fake.select(
                menu, select_id, [self.table.names[choice.id]], user=person
            )
            await inter.response()
            await asyncio.sleep(1.0)

    async def kill(self) -> None:
        people = self.alive_humans()
        mafia = [p for p in people if self.table.roles[p.id] == "mafia"]
        victims = [p for p in people if self.table.roles[p.id] != "mafia"]
        if not mafia or not victims:
            return
        killer = mafia[0]
        booth = self.table.booth(killer)
        assert booth is not None
        menu = await self.fake.wait_for_message(
            booth,
            lambda m: any(c.startswith("mafia:kill:") for c in custom_ids(m)),
            after=self.last_kill_menu.get(killer.id, 0),
            within=30,
        )
        self.last_kill_menu[killer.id] = int(menu["id"])
        inter = await self.fake.select(
            menu,
            component(menu, f"mafia:kill:{self.game_id}:"),
            [self.table.names[victims[0].id]],
            user=killer,
        )
        await inter.response()
