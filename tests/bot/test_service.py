"""The service port against a real database (SQLite and PostgreSQL): persistence of every
accepted action, refusals that change nothing, deadlines, idempotent resends and recovery."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, func, select

from bot.service.live import LiveGame, SeatInfo, seating
from bot.service.port import GameService, ServiceError
from bot.service.timers import make_scheduler
from bot.store import models as m
from games.config import GameConfig
from games.errors import ConfigError, RuleError
from games.events import Event, GameOver, MessageAccepted, PhaseStarted
from games.state import PhaseKind
from tests.bot.waiting import until_phase


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        self.events.extend(events)


LONG = GameConfig(day_seconds=3600, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600)


async def started(
    svc: GameService, config: GameConfig = LONG, players: int = 6, **kw: object
) -> str:
    game_id = await svc.create_game(config, seed=7, **kw)  # type: ignore[arg-type]
    for i in range(players):
        await svc.join(game_id, f"user{i}")
    await svc.start(game_id)
    return game_id


def count(engine: Engine, model: type, game_id: str) -> int:
    with Session(engine) as s:
        return s.exec(select(func.count()).select_from(model).where(model.game_id == game_id)).one()  # type: ignore[attr-defined]


async def test_start_deals_roles_and_stores_them(service: GameService, engine: Engine) -> None:
    game_id = await started(service)
    state = service.games[game_id].state
    assert state is not None and state.phase.kind is PhaseKind.DAY
    with Session(engine) as s:
        seats = s.exec(select(m.Seat).where(m.Seat.game_id == game_id)).all()
        game = s.get(m.Game, game_id)
    assert game is not None and game.status == "running"
    assert sorted(x.role or "" for x in seats) == sorted(x.role for x in state.seats)
    assert sum(x.role == "mafia" for x in seats) == 1
    # character names are drawn by the service, never the account ids
    assert all(not x.character_name.startswith("user") for x in seats)


async def test_speech_is_stored_with_service_time(service: GameService, engine: Engine) -> None:
    game_id = await started(service)
    before = service.games[game_id].clock.now()
    assert await service.say(game_id, 0, "  hello table  ")
    with Session(engine) as s:
        msg = s.exec(
            select(m.Message).where(m.Message.game_id == game_id, m.Message.seat_index == 0)
        ).one()
    assert msg.text == "hello table" and msg.place == "stage"
    assert msg.t >= before and msg.t.tzinfo is not None


async def test_refusals_change_nothing(service: GameService, engine: Engine) -> None:
    game_id = await started(service)
    game = service.games[game_id]
    state_before = game.state
    actions_before = count(engine, m.Action, game_id)
    with pytest.raises(RuleError, match="Voting hasn't started"):
        await service.vote(game_id, 0, game.seats[1].name)
    with pytest.raises(RuleError, match="No player called 'Nobody'"):
        await service.vote(game_id, 0, "Nobody")
    with pytest.raises(RuleError, match="empty"):
        await service.say(game_id, 0, "   ")
    with pytest.raises(ServiceError):
        await service.say("gnope", 0, "hi")
    assert game.state is state_before
    assert count(engine, m.Action, game_id) == actions_before


async def test_impossible_setup_creates_nothing(service: GameService, engine: Engine) -> None:
    game_id = await service.create_game(LONG, seed=1)
    for i in range(4):
        await service.join(game_id, f"u{i}")
    with pytest.raises(ConfigError, match="at least 5 players"):
        await service.start(game_id)
    assert service.games[game_id].status == "lobby"
    assert count(engine, m.Event, game_id) == 0


async def test_duplicate_client_id_is_stored_once(service: GameService, engine: Engine) -> None:
    game_id = await started(service)
    assert await service.say(game_id, 1, "first", platform_id="discord:111")
    assert not await service.say(game_id, 1, "first", platform_id="discord:111")
    assert await service.say(game_id, 1, "second", platform_id="discord:112")
    with Session(engine) as s:
        texts = s.exec(
            select(m.Message.text)
            .where(m.Message.game_id == game_id, m.Message.seat_index == 1)
            .order_by(col(m.Message.id))
        ).all()
    assert texts == ["first", "second"]


async def test_deadlines_advance_without_votes(service: GameService) -> None:
    """Nothing waits forever: a fast clock runs day -> vote -> night with nobody acting."""
    quick = GameConfig(day_seconds=5, vote_seconds=5, night_seconds=5, night_vote_seconds=5)
    rec = Recorder()
    service.subscribe(rec)
    game_id = await started(service, quick, players=7, speed=500.0)  # 2 mafia: night talk
    game = service.games[game_id]
    for _ in range(200):
        if (
            game.state is not None
            and game.state.phase.kind is PhaseKind.DAY
            and game.state.phase.number == 2
        ):
            break
        await asyncio.sleep(0.01)
    await service.drain(game_id)
    phases = [e.phase for e in rec.events if isinstance(e, PhaseStarted)]
    assert phases[:5] == ["day", "vote", "night", "night_vote", "day"]
    # nobody voted by day, so nobody was voted out; nobody voted at night, so no kill
    assert game.state is not None and all(s.alive for s in game.state.seats)


async def test_full_vote_ends_early_and_eliminates(service: GameService, engine: Engine) -> None:
    rec = Recorder()
    service.subscribe(rec)
    game_id = await started(
        service,
        GameConfig(
            day_seconds=0.01, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600
        ),
        speed=1.0,
    )
    game = service.games[game_id]
    state = await until_phase(game, PhaseKind.VOTE, tries=100)
    mafia = next(s for s in state.seats if s.is_mafia)
    for voter in state.seats:
        target = (
            mafia.name if voter.index != mafia.index else state.seats[(mafia.index + 1) % 6].name
        )
        await service.vote(game_id, voter.index, target.upper())  # names match in any case
    await service.wait_finished(game_id)
    await service.drain(game_id)
    over = [e for e in rec.events if isinstance(e, GameOver)]
    assert over and over[0].winner == "bystanders"
    with Session(engine) as s:
        row = s.get(m.Game, game_id)
        seat = s.exec(
            select(m.Seat).where(m.Seat.game_id == game_id, m.Seat.index == mafia.index)
        ).one()
        votes = s.exec(
            select(func.count()).select_from(m.Vote).where(m.Vote.game_id == game_id)
        ).one()
    assert row is not None and row.status == "finished" and row.winner == "bystanders"
    assert not seat.alive
    assert votes == 6


async def test_a_vote_received_before_the_deadline_counts_even_if_applied_after(
    service: GameService, engine: Engine
) -> None:
    """A vote is stamped when the service receives it: a busy game (its lock held, as while
    the store writes the previous action) does not make an in-time vote late, and the
    deadline tick that queued behind it does not overtake it."""
    game_id = await started(
        service,
        GameConfig(day_seconds=0.01, vote_seconds=0.3, night_seconds=3600, night_vote_seconds=3600),
        speed=1.0,
    )
    game = service.games[game_id]
    state = await until_phase(game, PhaseKind.VOTE, tries=100)
    deadline = state.phase.deadline
    assert deadline is not None
    voter, target = state.seats[0], state.seats[1]
    async with game.lock:  # the store is busy: nothing is applied until it is released
        vote = asyncio.create_task(service.vote(game_id, voter.index, target.name))
        await asyncio.sleep(0)  # the vote reaches the service and queues for the lock
        await asyncio.sleep(max(0.0, (deadline - game.clock.now()).total_seconds()) + 0.2)
        assert game.clock.now() > deadline and not vote.done()
    await vote
    await service.drain(game_id)
    with Session(engine) as s:
        rows = s.exec(select(m.Vote).where(m.Vote.game_id == game_id)).all()
    assert [(v.voter_index, v.target_index) for v in rows] == [(voter.index, target.index)]
    stamped = rows[0].t if rows[0].t.tzinfo else rows[0].t.replace(tzinfo=deadline.tzinfo)
    assert stamped < deadline
    # the deadline then ended the vote (after the vote was counted), not before it
    for _ in range(100):
        if game.state is not None and game.state.phase.seq > state.phase.seq:
            break
        await asyncio.sleep(0.01)
    assert game.state is not None and game.state.phase.seq > state.phase.seq
    # the lone vote decided the day: its target is out
    assert not game.state.seats[target.index].alive


async def test_resume_rebuilds_the_same_game(engine: Engine) -> None:
    """A second service on the same database carries on exactly where the first stopped."""
    scheduler = make_scheduler()
    scheduler.start()
    first = GameService(engine, scheduler)
    game_id = await started(first)
    await first.say(game_id, 2, "i think it's kai", platform_id="c1")
    await first.say(game_id, 3, "no way", platform_id="c2")
    before = first.games[game_id]
    await first.close()

    second = GameService(engine, scheduler)
    game = await second.resume(game_id)
    assert game.state == before.state
    assert game.event_seq == before.event_seq and game.action_seq == before.action_seq
    # a resend of a line already stored before the restart is still recognised
    assert not await second.say(game_id, 2, "i think it's kai", platform_id="c1")
    assert await second.say(game_id, 4, "hello again", platform_id="c3")
    assert count(engine, m.Message, game_id) >= 3
    assert count(engine, m.Action, game_id) == 3
    # the remaining time is kept, not a fresh timer
    assert game.state is not None and game.state.phase.deadline == before.state.phase.deadline  # type: ignore[union-attr]
    await second.close()
    scheduler.shutdown(wait=False)


# --- seating ------------------------------------------------------------------------------


async def lobby_humans_then_agents(svc: GameService, seed: int, config: GameConfig = LONG) -> str:
    """How the chat adapters fill a table: the people first (the host first of all), then two
    agents added at the start."""
    game_id = await svc.create_game(config, seed=seed)
    for i in range(5):
        await svc.join(game_id, f"user{i}")
    for persona in ("calm", "chatty"):
        await svc.join(game_id, None, is_agent=True, agent_kind="baseline", persona=persona)
    return game_id


def who(seats: Sequence[SeatInfo]) -> list[tuple[int, str, str | None, bool, str | None]]:
    return [(s.index, s.name, s.user_id, s.is_agent, s.persona) for s in seats]


def stored_seats(engine: Engine, game_id: str) -> list[m.Seat]:
    with Session(engine) as s:
        return list(
            s.exec(
                select(m.Seat).where(m.Seat.game_id == game_id).order_by(col(m.Seat.index))
            ).all()
        )


async def test_start_seats_everyone_by_the_seed_not_by_when_they_joined(
    service: GameService, engine: Engine
) -> None:
    agent_seats: set[int] = set()
    host_seats: set[int] = set()
    for seed in range(16):
        game_id = await lobby_humans_then_agents(service, seed)
        game = service.games[game_id]
        lobby = {(s.name, s.user_id, s.is_agent, s.persona) for s in game.seats}
        await service.start(game_id)
        state = game.state
        assert state is not None
        # the same people and agents, with their names and personas, only renumbered
        assert {(s.name, s.user_id, s.is_agent, s.persona) for s in game.seats} == lobby
        assert [s.index for s in game.seats] == list(range(7))
        assert [s.name for s in game.seats] == [s.name for s in state.seats]
        # the database holds the final table, roles included
        rows = stored_seats(engine, game_id)
        assert [(r.index, r.character_name, r.user_id, r.is_agent, r.persona) for r in rows] == (
            who(game.seats)
        )
        assert [r.role for r in rows] == [s.role for s in state.seats]
        agent_seats |= {s.index for s in game.seats if s.is_agent}
        host = game.seat_of_user("user0")
        assert host is not None
        host_seats.add(host.index)
    # agents are not always last, nor the host always first: any seat may be anyone's
    assert agent_seats == set(range(7))
    assert len(host_seats) >= 4


async def test_the_same_seed_seats_the_same_table(service: GameService) -> None:
    first, second = [await lobby_humans_then_agents(service, 1234) for _ in range(2)]
    for game_id in (first, second):
        await service.start(game_id)
    one, two = service.games[first], service.games[second]
    assert who(one.seats) == who(two.seats)
    assert one.state is not None and two.state is not None
    assert [s.role for s in one.state.seats] == [s.role for s in two.state.seats]
    order = seating(1234, 7)
    assert [s.user_id for s in one.seats] == [
        f"user{i}" if i < 5 else None for i in order
    ]  # the service applies `seating` and nothing else
    assert order != list(range(7))


async def test_a_resumed_game_keeps_the_seating(engine: Engine) -> None:
    scheduler = make_scheduler()
    scheduler.start()
    first = GameService(engine, scheduler)
    game_id = await lobby_humans_then_agents(first, 99)
    await first.start(game_id)
    before = first.games[game_id]
    assert [s.is_agent for s in before.seats][-2:] != [True, True]  # they did not stay last
    seated = who(before.seats)
    await first.say(game_id, 0, "hello from seat zero")
    await first.close()

    second = GameService(engine, scheduler)
    game = await second.resume(game_id)
    assert who(game.seats) == seated
    assert game.state == before.state
    await second.close()
    scheduler.shutdown(wait=False)


async def test_a_failed_start_keeps_the_lobby_order(service: GameService, engine: Engine) -> None:
    game_id = await service.create_game(LONG, seed=5)
    for i in range(4):
        await service.join(game_id, f"u{i}")
    lobby = who(service.games[game_id].seats)
    with pytest.raises(ConfigError):
        await service.start(game_id)
    assert who(service.games[game_id].seats) == lobby
    rows = stored_seats(engine, game_id)
    assert [(r.index, r.user_id) for r in rows] == [(i, f"u{i}") for i in range(4)]


async def test_a_fixed_deal_keeps_the_table_it_was_dealt_for(service: GameService) -> None:
    """Replays of recorded games fix roles by seat as joined: their table stays as recorded."""
    deal = ("bystander", "mafia", "bystander", "bystander", "bystander")
    game_id = await service.create_game(
        GameConfig(deal=deal, day_seconds=3600, vote_seconds=3600), seed=8
    )
    names = ["Ari", "Blake", "Casey", "Drew", "Eden"]
    for i, name in enumerate(names):
        await service.join(game_id, f"u{i}", name=name)
    await service.start(game_id)
    state = service.games[game_id].state
    assert state is not None
    assert [(s.name, s.role) for s in state.seats] == list(zip(names, deal, strict=True))


async def test_unfinished_games_lists_running_only(service: GameService) -> None:
    running = await started(service)
    lobby = await service.create_game(LONG, seed=3)
    ended = await started(service)
    await service.end(ended, "test")
    ids = await service.unfinished_games()
    assert running in ids and lobby not in ids and ended not in ids


async def test_waiting_for_a_deadline_uses_no_cpu(service: GameService) -> None:
    """No polling: while a phase waits for its deadline, the process does (almost) nothing."""
    import time

    game_id = await started(service)  # humans only, hour-long phases
    await service.drain(game_id)
    await asyncio.sleep(0.2)
    cpu0, wall0 = time.process_time(), time.monotonic()
    await asyncio.sleep(2.0)
    cpu = time.process_time() - cpu0
    wall = time.monotonic() - wall0
    assert wall >= 2.0
    assert cpu < 0.05, f"{cpu:.3f} s of CPU while idle for {wall:.1f} s"


async def test_kicked_seat_is_taken_over_by_an_agent_silently(engine: Engine) -> None:
    from bot.seats.agents import make_agent_factory

    scheduler = make_scheduler()
    scheduler.start()
    svc = GameService(engine, scheduler, make_agent_factory())
    rec = Recorder()
    svc.subscribe(rec)
    quick = GameConfig(day_seconds=60, vote_seconds=30, night_seconds=30, night_vote_seconds=30)
    game_id = await started(svc, quick, speed=20.0)
    await svc.say(game_id, 0, "hello, i'm about to go afk")
    await svc.drain(game_id)
    seen_before = len(rec.events)
    info = await svc.replace_seat(game_id, 0, agent_kind="baseline")
    assert info.is_agent and info.user_id is None
    await svc.drain(game_id)
    assert len(rec.events) == seen_before  # nobody is told
    game = svc.games[game_id]
    for _ in range(400):  # the agent now speaks and votes for seat 0
        if any(
            getattr(e, "seat", None) == 0
            and e.kind == "message"
            and e.t > game.clock.now() - __import__("datetime").timedelta(minutes=10)
            and getattr(e, "text", "") != "hello, i'm about to go afk"
            for e in rec.events
        ):
            break
        await asyncio.sleep(0.02)
    spoken = [e for e in rec.events if e.kind == "message" and getattr(e, "seat", None) == 0]
    assert len(spoken) >= 2, "the agent never spoke in the taken-over seat"
    with Session(engine) as s:
        row = s.exec(select(m.Seat).where(m.Seat.game_id == game_id, m.Seat.index == 0)).one()
    assert row.is_agent and row.user_id is None and row.agent_kind == "baseline"
    await svc.close()
    scheduler.shutdown(wait=False)


async def test_lobby_configure_remove_seat_and_platform_resume(service: GameService) -> None:
    game_id = await service.create_game(LONG, seed=4, platform="slack", server_external_id="T1")
    await service.join(game_id, None, is_agent=True, agent_kind="baseline")
    await service.join(game_id, None, is_agent=True, agent_kind="baseline")
    await service.leave(game_id, None, seat=0)
    assert [s.index for s in service.games[game_id].seats] == [0]
    await service.configure(game_id, GameConfig(day_seconds=99))
    assert service.games[game_id].config.day_seconds == 99
    local = await started(service)
    assert await service.unfinished_games(["slack"]) == []
    assert local in await service.unfinished_games(["local"])
    with pytest.raises(ServiceError, match="has started"):
        await service.configure(local, LONG)


async def test_resumed_agents_carry_on_the_talk_without_repeating_themselves(
    engine: Engine,
) -> None:
    """A resumed game hands each agent the game so far: nobody greets the table twice or says
    a line of their own again."""
    from agent.templates import TEMPLATES
    from bot.seats.agents import make_agent_factory

    greetings = {t.casefold() for t in TEMPLATES["greet"]}
    scheduler = make_scheduler()
    scheduler.start()
    config = GameConfig(day_seconds=120, vote_seconds=30, night_seconds=30, night_vote_seconds=30)
    first = GameService(engine, scheduler, make_agent_factory())
    game_id = await first.create_game(config, seed=3, speed=20.0)
    for _ in range(7):
        await first.join(game_id, None, is_agent=True)
    await first.start(game_id)
    rec = Recorder()
    first.subscribe(rec)
    for _ in range(500):  # stop once most of the table has spoken
        if len({e.seat for e in rec.events if isinstance(e, MessageAccepted)}) >= 5:
            break
        await asyncio.sleep(0.01)
    await first.close()

    second = GameService(engine, scheduler, make_agent_factory())
    game = await second.resume(game_id)
    before = [e for e in game.replayed if isinstance(e, MessageAccepted)]
    assert len({e.seat for e in before}) >= 5
    after = Recorder()
    second.subscribe(after)
    await until_phase(game, PhaseKind.VOTE, tries=1000)
    await second.close()
    scheduler.shutdown(wait=False)

    day = before + [e for e in after.events if isinstance(e, MessageAccepted)]
    assert len(day) > len(before) + 3  # the talk went on
    lines = [(e.seat, e.text.casefold()) for e in day]
    assert len(set(lines)) == len(lines), "a seat said a line of its own again"
    greeted = [seat for seat, text in lines if text in greetings]
    assert len(set(greeted)) == len(greeted), "a seat greeted the table twice"
