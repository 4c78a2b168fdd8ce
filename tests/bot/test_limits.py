"""The limits that keep a game fair (issue 21): the per-seat line bucket applied by the service
to humans and agents alike, the fair stage queue, cooldowns, the per-address bucket, and idle
lobbies closing by themselves."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from sqlalchemy.engine import Engine

from bot.limits import (
    CHANGE_BURST,
    LINE_BURST,
    LINE_RATE,
    AddressLimiter,
    ChangeLimited,
    ChangeLimiter,
    CoolingDown,
    FairQueue,
    LineLimited,
    LineLimiter,
)
from bot.service.live import SeatPortImpl
from bot.service.lobbies import IdleLobbies
from bot.service.port import GameService
from bot.service.timers import make_scheduler
from games.config import GameConfig
from games.errors import RuleError

LONG = GameConfig(day_seconds=3600, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600)


@pytest.fixture
async def service(engine: Engine) -> AsyncIterator[GameService]:
    scheduler = make_scheduler()
    scheduler.start()
    svc = GameService(engine, scheduler)
    yield svc
    await svc.close()
    scheduler.shutdown(wait=False)


async def running(svc: GameService, humans: int = 5) -> str:
    game_id = await svc.create_game(LONG, seed=3)
    for i in range(humans):
        await svc.join(game_id, f"U{i}")
    await svc.join(game_id, None, is_agent=True)
    await svc.start(game_id)
    return game_id


def test_fair_queue_manager_first_then_seats_in_turn() -> None:
    q: FairQueue[str] = FairQueue()
    for i in range(5):
        q.append(f"flood{i}", 1)
    q.append("gm0")
    assert q.popleft() == "gm0"
    assert q.popleft() == "flood0"
    q.append("b0", 2)  # a seat with nothing queued goes before the flood's backlog
    q.append("c0", 3)
    q.append("gm1")
    assert [q.popleft() for _ in range(4)] == ["gm1", "b0", "c0", "flood1"]
    q.append("b1", 2)
    q.append("b2", 2)
    assert q.popleft() == "b1"
    assert q.peek_same() == "b2" and q.pop_same() == "b2"
    assert [q.popleft() for _ in range(len(q))] == ["flood2", "flood3", "flood4"]
    assert not q


def test_the_line_bucket_fits_the_llmafia_players_and_cuts_a_flood() -> None:
    limiter = LineLimiter()
    # the busiest LLMafia burst: 12 lines in 10 s, then 24 in a minute
    t, refused = 0.0, 0
    for _ in range(12):
        refused += limiter.check("g", 1, t) is not True
        t += 10 / 12
    for _ in range(12):
        t += 50 / 12
        refused += limiter.check("g", 1, t) is not True
    assert refused == 0
    # a flood: 20 lines a second for 10 s
    verdicts = [limiter.check("g", 2, i / 20) for i in range(200)]
    passed = sum(v is True for v in verdicts)
    assert LINE_BURST <= passed <= LINE_BURST + 10 * LINE_RATE + 1
    assert verdicts.count(False) == 1  # one note in the run (then at most one per 30 s)


async def test_the_service_limits_every_seat_human_or_agent(service: GameService) -> None:
    game_id = await running(service)
    game = service.games[game_id]
    human = next(s.index for s in game.seats if not s.is_agent)
    agent = next(s.index for s in game.seats if s.is_agent)
    for i in range(LINE_BURST):
        assert await service.say(game_id, human, f"line {i}")
    with pytest.raises(LineLimited):
        await service.say(game_id, human, "one too many")
    assert await service.say(game_id, human, "and another") is False  # quietly
    port = SeatPortImpl(service, game_id, agent, game.clock)
    for i in range(LINE_BURST):
        await port.say(f"agent line {i}")
    with pytest.raises(RuleError):  # the agent's driver reads it as the game's refusal
        await port.say("agent line too many")
    texts = [e.get("text") for e in await service.history(game_id)]
    assert "line 0" in texts and "agent line 0" in texts
    assert "one too many" not in texts and "agent line too many" not in texts


async def test_a_seat_flipping_its_vote_is_limited_its_first_vote_never(
    service: GameService,
) -> None:
    """Each vote is a Game-Manager announcement, and those go before everyone's lines: a
    seat flipping its vote as fast as it can click is limited (a burst, then one change
    every few seconds); the vote stays as it was, its voter is told when to try again; a
    first vote, the same vote again and every other seat are not touched."""
    from games.state import PhaseKind
    from tests.bot.waiting import until_phase

    quick_day = GameConfig(
        day_seconds=0.01, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600
    )
    game_id = await service.create_game(quick_day, seed=3)
    for i in range(5):
        await service.join(game_id, f"U{i}")
    await service.join(game_id, None, is_agent=True)
    await service.start(game_id)
    game = service.games[game_id]
    state = await until_phase(game, PhaseKind.VOTE, tries=400)
    flipper, other = [s.index for s in game.seats if not s.is_agent][:2]
    a, b = [s.name for s in state.seats if s.index not in (flipper, other)][:2]
    assert await service.vote(game_id, flipper, a)  # the first vote: free
    targets = [b, a] * CHANGE_BURST
    for target in targets[:CHANGE_BURST]:
        assert await service.vote(game_id, flipper, target)
    last = targets[CHANGE_BURST - 1]
    with pytest.raises(ChangeLimited) as refused:
        await service.vote(game_id, flipper, a if last == b else b)
    assert "stays as it was" in str(refused.value) and refused.value.wait > 0
    assert await service.vote(game_id, flipper, last) is True  # the same vote: no change
    assert game.state is not None and game.state.votes[flipper] == next(
        s.index for s in game.state.seats if s.name == last
    )
    assert await service.vote(game_id, other, a)  # another seat votes as it likes
    casts = [e for e in await service.history(game_id) if e["kind"] == "vote_cast"]
    assert len([e for e in casts if e.get("voter") == flipper]) == 1 + CHANGE_BURST
    # the bucket refills (here quickly): changes go through again
    service.vote_changes = ChangeLimiter(burst=1, every=0.01)
    assert await service.vote(game_id, flipper, a if last == b else b)


def test_vote_changes_a_burst_then_one_every_few_seconds() -> None:
    limiter = ChangeLimiter(burst=4, every=5.0)
    assert [limiter.check("g", 1, 0.0) for _ in range(4)] == [0.0] * 4
    assert limiter.check("g", 1, 0.0) == pytest.approx(5.0)
    assert limiter.check("g", 2, 0.0) == 0.0  # per seat
    assert limiter.check("g", 1, 5.0) == 0.0
    limiter.forget("g")
    assert limiter.check("g", 1, 5.0) == 0.0


async def test_a_host_opens_one_lobby_per_cooldown(service: GameService) -> None:
    service.lobby_cooldown.seconds = 30.0
    await service.create_game(LONG, platform="slack", server_external_id="T1", host_user_id="U1")
    with pytest.raises(CoolingDown):
        await service.create_game(
            LONG, platform="slack", server_external_id="T1", host_user_id="U1"
        )
    await service.create_game(LONG, platform="slack", server_external_id="T1", host_user_id="U2")


def test_address_limiter_is_bounded() -> None:
    limiter = AddressLimiter(2, 0.0, size=100)
    assert [limiter.allow("a", 0) for _ in range(3)] == [True, True, False]
    for i in range(1000):
        limiter.allow(f"10.0.{i // 256}.{i % 256}", 0)
    assert len(limiter._buckets) == 100


async def test_an_idle_lobby_closes_by_itself(service: GameService) -> None:
    idle = await service.create_game(LONG)
    busy = await service.create_game(LONG)
    closed: list[tuple[str, str]] = []

    async def close(game_id: str, reason: str) -> None:
        closed.append((game_id, reason))
        await service.end(game_id, reason)

    watch = IdleLobbies(service, lambda: [idle, busy], close, idle=3600)
    assert await watch.sweep() == []
    later = time.monotonic() + 3000
    await service.join(busy, "U9")  # activity resets the clock ...
    service.games[busy].active_at = later  # (as if it came 3000 s later)
    assert await watch.sweep(now=time.monotonic() + 3601) == [idle]
    assert closed and closed[0][0] == idle
    assert service.games[idle].status == "aborted"
    assert service.games[busy].status == "lobby"


def test_commands_a_burst_then_one_every_few_seconds_per_person() -> None:
    from bot.limits import COMMAND_BURST, COMMAND_EVERY, CommandLimiter

    limiter = CommandLimiter()
    for _ in range(COMMAND_BURST):
        limiter.check("discord", "G", "alice", now=100.0)
    with pytest.raises(CoolingDown, match=rf"Please wait {int(COMMAND_EVERY)} s before you use"):
        limiter.check("discord", "G", "alice", now=100.0)
    limiter.check("discord", "G", "bob", now=100.0)  # another person
    limiter.check("discord", "OTHER", "alice", now=100.0)  # another server
    with pytest.raises(CoolingDown, match="Please wait 1 s"):  # (rounded up, never 0)
        limiter.check("discord", "G", "alice", now=100.0 + COMMAND_EVERY - 0.4)
    limiter.check("discord", "G", "alice", now=100.0 + COMMAND_EVERY + 0.01)  # refilled
    assert limiter.refused == 2
    CommandLimiter(burst=0).check("discord", "G", "alice", now=0.0)  # (off)
