"""Several `mafiabot run --discord --shards ...` processes on one PostgreSQL against a
two-shard fake gateway: each drives only its own shards' games; a killed process's games come
back when it restarts, untouched by the other; a rolling restart (a new process for the same
shards, then SIGTERM to the old) hands the games over with every line posted exactly once.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from bot.store.db import make_engine
from tests.bot.discord.harness import Table, run_env
from tests.fakes.discord import FakeDiscord

ROOT = Path(__file__).resolve().parents[3]
RUN = ROOT / "tests" / "bot" / "ops" / "runproc.py"
READY = "ready on shards"
#: generous: two loaded cores start Python, migrate PostgreSQL and connect
START_SECONDS = 60.0
WITHIN = 30.0

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@dataclass
class Proc:
    name: str
    proc: asyncio.subprocess.Process
    log: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def text(self) -> str:
        return self.log.read_text(errors="replace")


async def start(fake: FakeDiscord, url: str, tmp_path: Path, name: str, shards: str) -> Proc:
    """`mafiabot run --discord --shards SHARDS --shard-count 2`, connected and caught up."""
    log = tmp_path / f"{name}.log"
    env = run_env(fake, url, MAFIABOT_HTTP_ADDR="")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(RUN),
        *("run", "--discord", "--shards", shards, "--shard-count", "2"),
        cwd=tmp_path,  # no .env of the repository
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=log.open("wb"),
    )
    bot = Proc(name, proc, log)
    try:
        await fake.wait_until(lambda: READY in bot.text() or proc.returncode is not None, 60)
    except TimeoutError:
        proc.kill()
        raise AssertionError(f"{name} never got ready:\n{bot.text()}") from None
    assert proc.returncode is None, f"{name} exited:\n{bot.text()}"
    return bot


@asynccontextmanager
async def processes() -> AsyncIterator[list[Proc]]:
    """The processes a test starts; each killed at the end if it still runs."""
    started: list[Proc] = []
    try:
        yield started
    finally:
        for bot in started:
            if bot.proc.returncode is None:
                bot.proc.kill()
                await bot.proc.wait()


def leases(url: str) -> dict[str, tuple[int, int]]:
    """game id -> (holder pid, epoch)."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT game_id, pid, epoch FROM game_leases")).all()
    finally:
        engine.dispose()
    return {r.game_id: (r.pid, r.epoch) for r in rows}


async def wait_held(fake: FakeDiscord, url: str, game_id: str, pid: int) -> tuple[int, int]:
    def held() -> tuple[int, int] | None:
        got = leases(url).get(game_id)
        return got if got is not None and got[0] == pid else None

    found: tuple[int, int] = await fake.wait_until(held, WITHIN)
    return found


def lines_on_stage(table: Table) -> list[str]:
    """What the characters said on the game's stage, in order (each post once)."""
    names = set(table.names.values())
    return [e.content for e in table.stage_posts() if e.username in names]


def refused_twice(fake: FakeDiscord, kind: int = 3) -> list[str]:
    """Answers to interactions of ``kind`` (3: clicks and menus, 2: slash commands) that
    Discord refused as already given: two processes answered the same interaction."""
    kinds = {str(i.id): i.payload.get("type") for i in fake.interactions.values()}
    return [
        r.path
        for r in fake.requests
        if r.status == 400
        and isinstance(r.response, dict)
        and r.response.get("code") == 40060
        and kinds.get(r.path.split("/")[2]) == kind
    ]


def two_shards(fake: FakeDiscord) -> tuple[Table, Table]:
    """A gateway of two shards, and a server on each."""
    fake.shards = 2
    return Table.build(fake, shard=(0, 2)), Table.build(fake, shard=(1, 2))


async def say_all(table: Table, texts: list[tuple[int, str]]) -> None:
    for who, text in texts:
        await table.say(table.humans[who], text)


async def test_kill_9_one_process_its_games_resume_and_the_other_never_touches_them(
    fake_discord: FakeDiscord, pg_url: str, tmp_path: Path
) -> None:
    fake, url = fake_discord, pg_url
    west, east = two_shards(fake)
    async with processes() as bots:
        a = await start(fake, url, tmp_path, "a", "0")
        bots.append(a)
        b = await start(fake, url, tmp_path, "b", "1")
        bots.append(b)
        west_game = await west.play(day_minutes=30.0)
        east_game = await east.play(day_minutes=30.0)
        await say_all(west, [(0, "west before")])
        await say_all(east, [(0, "east before")])
        await west.wait_post("west before", within=WITHIN)
        await east.wait_post("east before", within=WITHIN)
        held = leases(url)
        assert held[west_game][0] == a.pid and held[east_game][0] == b.pid

        a.proc.kill()  # kill -9: no shutdown code runs, its leases stay in the database
        await a.proc.wait()
        down = [(1, "west while down 1"), (2, "west while down 2"), (1, "west while down 3")]
        await say_all(west, down)
        await say_all(east, [(1, "east while west is down")])
        await east.wait_post("east while west is down", within=WITHIN)  # b carries on

        a2 = await start(fake, url, tmp_path, "a2", "0")
        bots.append(a2)
        for _, text in down:
            await west.wait_post(text, within=WITHIN)
        await say_all(west, [(0, "west after")])
        await say_all(east, [(0, "east after")])
        await west.wait_post("west after", within=WITHIN)
        await east.wait_post("east after", within=WITHIN)

        after = leases(url)
        # one takeover of the west game, by the restarted process; b never took it
        assert after[west_game] == (a2.pid, held[west_game][1] + 1)
        assert after[east_game] == held[east_game]  # b held its game all along
        assert f"recovered game {west_game}" not in b.text()
        assert f"recovered game {west_game}" in a2.text()
        assert f"game {east_game}" not in a2.text()

    expected_west = ["west before"] + [t for _, t in down] + ["west after"]
    assert [t for t in lines_on_stage(west) if t in expected_west] == expected_west
    expected_east = ["east before", "east while west is down", "east after"]
    assert [t for t in lines_on_stage(east) if t in expected_east] == expected_east
    # no click or command was answered by both processes
    assert refused_twice(fake) == refused_twice(fake, 2) == []


async def test_rolling_restart_hands_every_game_over_each_line_posted_once(
    fake_discord: FakeDiscord, pg_url: str, tmp_path: Path
) -> None:
    fake, url = fake_discord, pg_url
    west, east = two_shards(fake)
    async with processes() as bots:
        old = await start(fake, url, tmp_path, "old", "0-1")
        bots.append(old)
        games = {
            "west": await west.play(day_minutes=30.0),
            "east": await east.play(day_minutes=30.0),
        }
        await say_all(west, [(0, "west 1")])
        await say_all(east, [(0, "east 1")])
        await west.wait_post("west 1", within=WITHIN)
        await east.wait_post("east 1", within=WITHIN)
        before = leases(url)

        new = await start(fake, url, tmp_path, "new", "0-1")  # the same shards, overlapping
        bots.append(new)
        # both receive every event now; only the holder acts on it
        await say_all(west, [(1, "west during the overlap")])
        await say_all(east, [(1, "east during the overlap")])
        await west.wait_post("west during the overlap", within=WITHIN)
        await east.wait_post("east during the overlap", within=WITHIN)
        # a game opened during the overlap: both receive the commands and the clicks; one
        # lobby, each click answered once (by the process that opened it)
        north = Table.build(fake, shard=(0, 2))
        lobby = await north.full_lobby(day_minutes=30.0)
        lobbies = [m for m in fake.messages_in(north.town) if m["components"]]
        assert len(lobbies) == 1
        assert {k: v for k, v in leases(url).items() if k in before} == before  # none taken
        assert "recovered game" not in new.text()
        assert "standing by" in new.text()

        old.proc.send_signal(signal.SIGTERM)
        await say_all(west, [(2, "west during the handover")])  # typed as the old one stops
        assert await asyncio.wait_for(old.proc.wait(), WITHIN) == 0
        for game_id in games.values():
            _, epoch = await wait_held(fake, url, game_id, new.pid)
            assert epoch == before[game_id][1] + 1
        await say_all(west, [(0, "west after")])
        await say_all(east, [(0, "east after")])
        for table, text in ((west, "west during the handover"), (west, "west after"),
                            (east, "east after")):  # fmt: skip
            await table.wait_post(text, within=WITHIN)
        # the lobby opened during the overlap goes on in the new process
        north_game = north.game_id(lobby)
        await wait_held(fake, url, north_game, new.pid)
        assert (await (await north.start(north.mod, lobby)).response()).type == 6
        for person in north.humans:
            await north.read_role(person)
        await say_all(north, [(0, "north after")])
        await north.wait_post("north after", within=WITHIN)

    expected = {
        "west": ["west 1", "west during the overlap", "west during the handover", "west after"],
        "east": ["east 1", "east during the overlap", "east after"],
    }
    for table, key in ((west, "west"), (east, "east")):
        said = [t for t in lines_on_stage(table) if t in expected[key]]
        assert said == expected[key], key  # each once, in order
    assert lines_on_stage(north).count("north after") == 1
    assert refused_twice(fake) == []
