"""Is an agent quiet after a restart? Whole games on the fake Discord or Slack, the bot in a
process of its own killed with SIGKILL now and then, people typing through it all; the
stage's character lines are stamped as they arrive, and the agents' share of them in the
minute (of game time) after each catch-up is set beside their share in the rest of the game.

The catch-up ends when the last line a person typed while the bot was down is on the stage
(the restarted bot reads the booths back and releases that backlog at the pace it was typed,
`bot.service.outages`), or when the new process is ready if nobody typed meanwhile.

Used by ``bench/restarts.py`` (20 restarts and more on each platform) and, with a few
restarts, by ``tests/bot/test_restart_share.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from sqlmodel import Session, select

from bot.protection.consent import record_consent
from bot.service.outages import RELEASE_SECONDS
from bot.store.db import make_engine
from bot.store.models import Event, Game, Message, Seat

#: how long a bot process may take to be ready
SPAWN_S = 120.0
#: the options of every game: short phases (days of 3 game minutes), run at a fast clock
DAY_S = 180.0
VOTE_S = 60.0
NIGHT_S = 60.0


@dataclass
class Post:
    """A character line on the stage: when it arrived (monotonic), whose, of which game."""

    t: float
    name: str
    agent: bool
    game: str
    text: str = ""
    #: the kind of phase it was said in ("day", "vote"), from the game's database
    phase: str = ""
    #: game seconds from the start of that phase to the line (NaN: not known)
    into: float = math.nan


@dataclass
class Restart:
    killed: float
    ready: float
    caught_up: float
    game: str


@dataclass
class Run:
    posts: list[Post] = field(default_factory=list)
    restarts: list[Restart] = field(default_factory=list)
    games: int = 0
    speed: float = 1.0


@dataclass
class Shares:
    after_agent: int
    after_all: int
    rest_agent: int
    rest_all: int
    low: float
    high: float

    @property
    def after(self) -> float:
        return self.after_agent / self.after_all if self.after_all else math.nan

    @property
    def rest(self) -> float:
        return self.rest_agent / self.rest_all if self.rest_all else math.nan

    @property
    def matches(self) -> bool:
        """The share after the catch-ups lies within the 95% interval of a share drawn, over
        as many lines, from the rest of the game's."""
        return self.low <= self.after <= self.high


def interval(share: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson 95% interval around ``share`` for ``n`` lines: where the share of ``n``
    lines drawn at ``share`` falls 95% of the time (the binomial's own spread)."""
    if n <= 0:
        return (0.0, 1.0)
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class PhaseShares:
    """The after-share against the share expected from the rest of the games phase by phase
    (a catch-up's minute falls in the phase the kill hit, which the restart extended: more
    often a day, where the agents talk, than a vote, where they mostly do not)."""

    after_agent: int
    after_all: int
    expected: float
    low: float
    high: float
    #: phase -> (agents after, all after, agents elsewhere, all elsewhere)
    table: dict[str, tuple[int, int, int, int]]

    @property
    def after(self) -> float:
        return self.after_agent / self.after_all if self.after_all else math.nan

    @property
    def matches(self) -> bool:
        return self.low <= self.after <= self.high


def by_phase(table: dict[str, tuple[int, int, int, int]], z: float = 1.96) -> PhaseShares:
    """`PhaseShares` of per-phase counts, by the Cochran-Mantel-Haenszel test: in each phase
    the after-lines and the rest's are pooled, and the agents' lines among the after-lines
    are a draw without replacement from that pool (hypergeometric); the expected count and
    its variance add up over the phases. The rest's share of a phase is an estimate too: a
    phase with few lines elsewhere (a vote the kills seldom missed: 2 agent lines of 4) says
    little of what its after-lines should hold, and the pooled draw gives it that spread,
    where treating the rest's share as known made 2 of 21 look like a tell."""
    n = sum(row[1] for row in table.values())
    a = sum(row[0] for row in table.values())
    mean = var = 0.0
    for a_after, n_after, a_rest, n_rest in table.values():
        total = n_after + n_rest
        agents = a_after + a_rest
        if n_after == 0 or total == 0:
            continue
        mean += n_after * agents / total
        if total > 1:
            var += n_after * n_rest * agents * (total - agents) / (total * total * (total - 1))
    if n == 0:
        return PhaseShares(a, n, math.nan, 0.0, 1.0, table)
    half = z * math.sqrt(var)
    return PhaseShares(
        a, n, mean / n, max(0.0, (mean - half) / n), min(1.0, (mean + half) / n), table
    )


#: the strata of `phase_table`: the kind of phase and which of its stretches of this many game
#: seconds a line came in
STRATUM_S = 60.0


def stratum(p: Post) -> str:
    """A line's stratum: its phase's kind and how far into the phase it came ("day 060-120"):
    the agents say most of a day's lines early in it (people's first lines come early, and a
    seat that said its share keeps quiet), so a catch-up's minute late in a day holds fewer
    of theirs however a restart went."""
    if math.isnan(p.into):
        return p.phase or "?"
    low = int(max(p.into, 0.0) // STRATUM_S * STRATUM_S)
    return f"{p.phase or '?'} {low:03d}-{low + int(STRATUM_S):03d}"


def phase_table(run: Run, window_game_s: float = 60.0) -> dict[str, tuple[int, int, int, int]]:
    """Per stratum (`stratum`): the agents' lines and all lines in the minutes after the
    catch-ups, and elsewhere (outside every kill-to-minute-end span)."""
    window = window_game_s / run.speed
    spans = [(r.killed, r.caught_up + window) for r in run.restarts]
    table: dict[str, list[int]] = {}
    for p in run.posts:
        row = table.setdefault(stratum(p), [0, 0, 0, 0])
        if any(r.caught_up <= p.t < r.caught_up + window for r in run.restarts):
            row[0] += p.agent
            row[1] += 1
        elif not any(a <= p.t < b for a, b in spans):
            row[2] += p.agent
            row[3] += 1
    return {k: (v[0], v[1], v[2], v[3]) for k, v in table.items()}


def shares(run: Run, window_game_s: float = 60.0) -> Shares:
    """The agents' share of stage lines in the ``window_game_s`` after each catch-up, against
    their share in the rest of the game (outside every kill-to-window-end span), with the
    interval the after-share should fall in if a restart changes nothing."""
    window = window_game_s / run.speed
    spans = [(r.killed, r.caught_up + window) for r in run.restarts]
    after = [
        p for p in run.posts if any(r.caught_up <= p.t < r.caught_up + window for r in run.restarts)
    ]
    rest = [p for p in run.posts if not any(a <= p.t < b for a, b in spans)]
    rest_share = sum(p.agent for p in rest) / len(rest) if rest else math.nan
    n = len(after)
    low, high = interval(rest_share, n) if rest else (0.0, 1.0)
    return Shares(sum(p.agent for p in after), n, sum(p.agent for p in rest), len(rest), low, high)


class Platform(Protocol):
    """One platform's fake with people on it, and the bot as a process."""

    db_url: str

    async def spawn(self) -> None: ...

    def ahead(self) -> None:
        """The minute after a catch-up is over: what the next `spawn` needs may be made
        ready now (without slowing the bot in the minute measured)."""
        ...

    def kill(self) -> Awaitable[None]: ...

    async def new_game(self) -> str: ...

    async def say(self, who: int, text: str, *, up: bool) -> None: ...

    def stage(self) -> list[str]:
        """The character names of the stage's character lines so far, in order."""
        ...

    def stage_texts(self) -> list[str]: ...

    def people(self) -> int: ...

    async def close(self) -> None: ...


def agents_of(db_url: str, game_id: str) -> set[str]:
    engine = make_engine(db_url)
    try:
        with Session(engine) as s:
            seats = s.exec(select(Seat).where(Seat.game_id == game_id)).all()
            return {seat.character_name for seat in seats if seat.is_agent}
    finally:
        engine.dispose()


def phases_of(db_url: str, game_id: str) -> dict[str, tuple[str, float]]:
    """Each stage line's text -> the kind of phase it was said in, and the game seconds from
    that phase's start to the line."""
    engine = make_engine(db_url)
    try:
        with Session(engine) as s:
            events = s.exec(select(Event).where(Event.game_id == game_id)).all()
            starts = {
                int(e.payload["seq"]): (
                    str(e.payload["phase"]),
                    datetime.fromisoformat(str(e.payload["t"])),
                )
                for e in events
                if e.kind == "phase_started"
            }
            said = {
                str(e.payload["text"]): datetime.fromisoformat(str(e.payload["t"]))
                for e in events
                if e.kind == "message" and "t" in e.payload
            }
            lines = s.exec(
                select(Message).where(Message.game_id == game_id, Message.place == "stage")
            ).all()
            out: dict[str, tuple[str, float]] = {}
            for m in lines:
                kind, start = starts.get(m.phase_seq or -1, ("?", None))
                at = said.get(m.text)
                into = (at - start).total_seconds() if at and start else math.nan
                out[m.text] = (kind, into)
            return out
    finally:
        engine.dispose()


def mark_phases(run: Run, db_url: str, game_id: str) -> None:
    phases = phases_of(db_url, game_id)
    for p in run.posts:
        if p.game == game_id and not p.phase:
            p.phase, p.into = phases.get(p.text, ("?", math.nan))


def status_of(db_url: str, game_id: str) -> str:
    engine = make_engine(db_url)
    try:
        with Session(engine) as s:
            row = s.get(Game, game_id)
            return "gone" if row is None else row.status
    finally:
        engine.dispose()


async def measure(
    platform: Platform,
    *,
    restarts: int,
    speed: float,
    rng: random.Random,
    budget_s: float,
    line_every_s: float = 40.0,
    quiet_after_s: tuple[float, float] = (8.0, 20.0),
    down_s: tuple[float, float] = (0.5, 3.0),
    rest_lines: int | None = None,
    report: Callable[[str], None] = lambda _: None,
) -> Run:
    """Whole games, one after another, until ``restarts`` kills were made (or ``budget_s``
    real seconds passed): each person types a line every ``line_every_s`` game seconds on
    average (people's pace in the LLMafia games), the bot is killed at a random moment
    ``quiet_after_s`` real seconds after the minute (game time) that follows the previous
    catch-up, and stays down ``down_s``.

    The last game is played to its end; with ``rest_lines``, only until the minute after
    the last catch-up is over and the rest of the game (outside every kill-to-minute-end
    span, see `shares`) holds that many stage lines, in another game when the last one ended
    before that."""
    run = Run(speed=speed)
    window = 60.0 / speed
    start = time.monotonic()
    seen = 0
    up = True
    typed_down: list[str] = []
    game_id = ""
    agents: set[str] = set()
    stop = asyncio.Event()

    async def watch() -> None:
        nonlocal seen
        while not stop.is_set():
            names, texts = platform.stage(), platform.stage_texts()
            now = time.monotonic()
            for name, text in zip(names[seen:], texts[seen:], strict=False):
                run.posts.append(Post(now, name, name in agents, game_id, text))
            seen = len(names)
            await asyncio.sleep(0.05)

    async def person(who: int) -> None:
        n = 0
        while not stop.is_set():
            await asyncio.sleep(rng.expovariate(speed / line_every_s))
            if not game_id or stop.is_set():
                continue
            n += 1
            text = f"p{who} line {n} hmm not sure yet"
            was_up = up
            with contextlib.suppress(Exception):
                await platform.say(who, text, up=was_up)
                if not was_up:
                    typed_down.append(text)

    await platform.spawn()
    watcher = asyncio.create_task(watch())
    typists: list[asyncio.Task[None]] = []
    try:
        # (with ``rest_lines``: a game that ends before the rest holds them is followed by
        # another, without restarts, whose lines are all of the rest)
        while (
            len(run.restarts) < restarts
            or (rest_lines is not None and not _enough(run, rest_lines, window))
        ) and time.monotonic() - start < budget_s:
            game_id = await platform.new_game()
            agents = agents_of(platform.db_url, game_id)
            run.games += 1
            report(f"game {run.games} ({game_id}): agents {sorted(agents)}")
            if not typists:
                typists = [asyncio.create_task(person(i)) for i in range(platform.people())]
            while status_of(platform.db_url, game_id) == "running":
                if len(run.restarts) >= restarts or time.monotonic() - start > budget_s:
                    break
                # the minute after the last catch-up, then a while of the rest of the game
                await asyncio.sleep(window)
                platform.ahead()
                await asyncio.sleep(rng.uniform(*quiet_after_s))
                if status_of(platform.db_url, game_id) != "running":
                    break
                killed = time.monotonic()
                up = False
                typed_down.clear()
                await platform.kill()
                await asyncio.sleep(rng.uniform(*down_s))
                await platform.spawn()
                ready = time.monotonic()
                up = True
                backlog = list(typed_down)
                # the release lasts as long as the backlog took to type, 30 s at most
                release = min(ready - killed, RELEASE_SECONDS)
                caught = await _caught_up(platform, backlog, ready, within=release + 5.0)
                run.restarts.append(Restart(killed, ready, caught, game_id))
                now = shares(run)
                report(
                    f"restart {len(run.restarts)}: down {ready - killed:.1f} s, "
                    f"{len(backlog)} lines typed meanwhile, caught up {caught - ready:.1f} s "
                    f"after the start; so far the agents' share after a catch-up "
                    f"{now.after_agent}/{now.after_all}, elsewhere {now.rest_agent}/{now.rest_all}"
                )
            while status_of(platform.db_url, game_id) == "running":
                if time.monotonic() - start > budget_s:
                    break
                if rest_lines is not None and _enough(run, rest_lines, window):
                    break
                await asyncio.sleep(0.5)
            mark_phases(run, platform.db_url, game_id)
    finally:
        stop.set()
        for task in [watcher, *typists]:
            task.cancel()
        for task in [watcher, *typists]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
    return run


def _enough(run: Run, rest_lines: int, window: float) -> bool:
    """The restarts are all made, the minute after the last one's catch-up is over, and the
    rest holds ``rest_lines`` lines."""
    if not run.restarts or time.monotonic() < run.restarts[-1].caught_up + window:
        return False
    return shares(run).rest_all >= rest_lines


async def _caught_up(platform: Platform, backlog: list[str], ready: float, within: float) -> float:
    """When the last line of ``backlog`` is on the stage; when it never comes (typed into a
    night, it is not shown), when the release must have ended."""
    if not backlog:
        return ready
    deadline = ready + within
    while time.monotonic() < deadline:
        if backlog[-1] in platform.stage_texts():
            return time.monotonic()
        await asyncio.sleep(0.05)
    return deadline


# --- Discord ----------------------------------------------------------------------------------


class DiscordPlatform:
    """``warm``: each restart's process is started ahead (`ahead`: past the minute measured
    after the previous catch-up, so its imports do not slow that bot there), and the bot is
    down for ``down_s`` and what it does at its start, not for the interpreter's imports too
    (a test's restarts: quicker, and less apart however loaded the machine). Without it, cold
    starts, as a real restart has (the bench)."""

    def __init__(self, fake: Any, tmp: Path, speed: float, *, warm: bool = False) -> None:
        from tests.bot.discord.harness import Table, db_url_in

        self.fake = fake
        self.tmp = tmp
        self.speed = speed
        self.table = Table.build(fake)
        self.db_url = db_url_in(tmp)
        self.proc: asyncio.subprocess.Process | None = None
        self.spawns = 0
        self._set_up = False
        self.warm = warm
        #: the next process, started ahead (`_warm`)
        self._next: asyncio.Task[asyncio.subprocess.Process] | None = None
        self.logs: dict[int, Path] = {}

    async def _warm(self) -> asyncio.subprocess.Process:
        """A `tests.bot.discord.botproc` process with its imports done, waiting for its
        config (it has not touched the database or the fake yet)."""
        import os
        import sys

        from tests.bot.discord.test_restart import ROOT

        self.spawns += 1
        env = {k: v for k, v in os.environ.items() if not k.startswith("MAFIABOT_")}
        log = self.tmp / f"bot{self.spawns}.log"
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.bot.discord.botproc",
            "-",
            cwd=ROOT,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=log.open("wb"),
        )
        assert proc.stdout is not None
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), SPAWN_S)
        except TimeoutError:
            proc.kill()
            raise AssertionError("bot process never loaded:\n" + log.read_text()) from None
        assert line.strip() == b"LOADED", log.read_text()
        self.logs[proc.pid] = log
        return proc

    async def spawn(self) -> None:
        """`tests.bot.discord.botproc` as `spawn_bot` starts it, waiting longer for it to be
        ready (a loaded machine starts a process slowly). When ``warm``, the process may
        have been started ahead (`ahead`), while the previous one ran (its imports done,
        nothing else)."""
        import json

        warm = self._next if self._next is not None else asyncio.create_task(self._warm())
        self._next = None
        proc = self.proc = await warm
        config = {
            "api_base": self.fake.api_base,
            "ws_url": self.fake.ws_url,
            "token": self.fake.token,
            "db_url": self.db_url,
            "speed": self.speed,
            "seed": None,
        }
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(config).encode() + b"\n")
        await proc.stdin.drain()
        log = self.logs[proc.pid]
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), SPAWN_S)
        except TimeoutError:
            proc.kill()
            raise AssertionError("bot process never got ready:\n" + log.read_text()) from None
        assert line.strip() == b"READY", log.read_text()

    def ahead(self) -> None:
        if self.warm and self._next is None:
            self._next = asyncio.create_task(self._warm())

    async def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()

    async def new_game(self) -> str:
        t = self.table
        if not self._set_up:
            assert "every permission" in await t.setup()
            self._set_up = True
        lobby = await t.open(
            day_minutes=DAY_S / 60, vote_minutes=VOTE_S / 60, night_minutes=NIGHT_S / 60, agents=2
        )
        for person in t.humans:
            await t.join(person, lobby)
        game_id = t.game_id(lobby)
        assert (await (await t.start(t.mod, lobby)).response()).type == 6
        await t.fake.wait_until(lambda: status_of(self.db_url, game_id) == "running", 15.0)
        for person in t.humans:
            with contextlib.suppress(Exception):
                await t.wait_booth(person)
        return game_id

    async def say(self, who: int, text: str, *, up: bool) -> None:
        user = self.table.humans[who]
        booths = [
            ch
            for ch in self.fake.channels.values()
            if ch.is_thread
            and ch.parent_id == self.table.town.id
            and user.id in ch.member_ids
            and (ch.name or "").startswith("booth")
        ]
        if booths:  # this game's booth: the newest (each game opens its own)
            await self.fake.send_message(max(booths, key=lambda ch: int(ch.id)), user, text)

    def stage(self) -> list[str]:
        return [e.username or "" for e in self.table.stage_posts() if e.username]

    def stage_texts(self) -> list[str]:
        return [e.content for e in self.table.stage_posts() if e.username]

    def people(self) -> int:
        return len(self.table.humans)

    async def close(self) -> None:
        await self.kill()
        if self._next is not None:  # the spare process: stopped (it never started a bot)
            with contextlib.suppress(Exception):
                spare = await self._next
                spare.kill()
                await spare.wait()


# --- Slack ------------------------------------------------------------------------------------


class SlackPlatform:
    def __init__(self, fake: Any, tmp: Path, speed: float) -> None:
        from tests.bot.ops.slack_people import People

        self.fake = fake
        self.tmp = tmp
        self.speed = speed
        self.people_ = People(fake)
        self.db_url = f"sqlite:///{tmp / 'db' / 'mafiabot.db'}"
        self._bot: Any = None
        self._cm: Any = None
        self.spawns = 0
        self._consented = False

    async def spawn(self) -> None:
        for attempt in range(3):  # a loaded machine may start a process too slowly: again
            self.spawns += 1
            self._cm = _slack_bot(self.fake, self.db_url, self.tmp, f"bot{self.spawns}", self.speed)
            try:
                self._bot = await self._cm.__aenter__()
                break
            except AssertionError:
                if attempt == 2:
                    raise
        await self.fake.wait_socket_connected(within=30)
        if not self._consented:
            engine = make_engine(self.db_url)  # migrated by the bot at its start
            for u in self.people_.users:
                record_consent(engine, "slack", self.fake.team_id, u.id, True)
            engine.dispose()
            self._consented = True

    def ahead(self) -> None:
        pass  # (a process of `mafiabot run`, started cold each time)

    async def kill(self) -> None:
        if self._bot is not None and self._bot.proc.returncode is None:
            self._bot.proc.kill()
            await self._bot.proc.wait()
        if self._cm is not None:
            with contextlib.suppress(Exception):
                await self._cm.__aexit__(None, None, None)
        self._bot = self._cm = None

    async def new_game(self) -> str:
        p = self.people_
        reply = await p.slash(
            p.users[0], f"new day={DAY_S:.0f} vote={VOTE_S:.0f} night={NIGHT_S:.0f} "
            f"night_vote={NIGHT_S:.0f} agents=2",
        )  # fmt: skip
        assert "is open" in reply, reply
        game_id = reply.split("`")[1]
        for u in p.users:
            before = len(self.fake.responses)
            await self.fake.click(
                self.fake.socket, user=u, action_id="mafia_join", channel=p.channel
            )
            await self.fake.wait_for_responses(before + 1, within=15)
        assert "has started" in await p.slash(p.users[0], "start")
        return game_id

    async def say(self, who: int, text: str, *, up: bool) -> None:
        """An event when a bot's socket is connected (as Slack sends it: a restarted bot may
        connect before `spawn` is done), else only a line in the booth's history."""
        user = self.people_.users[who]
        if self.fake.hub.connected:
            await self.people_.say(user, text)
        else:
            self.people_.typed_offline(user, text)

    def stage(self) -> list[str]:
        return [m.username for m in self.fake.messages_in(self.people_.channel) if m.username]

    def stage_texts(self) -> list[str]:
        return [m.text for m in self.fake.messages_in(self.people_.channel) if m.username]

    def people(self) -> int:
        return len(self.people_.users)

    async def close(self) -> None:
        await self.kill()


@asynccontextmanager
async def _slack_bot(fake: Any, url: str, tmp: Path, name: str, speed: float) -> AsyncIterator[Any]:
    from tests.bot.ops.process import bot_process

    env = {
        "MAFIABOT_DATABASE_URL": url,
        "MAFIABOT_SLACK_BOT_TOKEN": fake.bot_token,
        "MAFIABOT_SLACK_APP_TOKEN": fake.app_token,
        "MAFIABOT_SLACK_API_URL": fake.base_url,
        "MAFIABOT_CLOCK_SPEED": str(speed),
    }
    async with bot_process(["--slack"], env, tmp, name) as bot:
        yield bot
