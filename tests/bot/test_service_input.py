"""Every player input is judged once, by the service, where the game was when it was made:
the platform's moment (``at``) and id (``platform_id``) on say, vote and night_act."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.service.clock import GameClock, utcnow
from bot.service.live import LiveGame, SeatPortImpl
from bot.service.moments import grace
from bot.service.port import GameService
from bot.service.timers import make_scheduler
from bot.service.transcript import transcript
from bot.store import models as m
from games import actions as A
from games.config import GameConfig
from games.errors import RuleError
from games.events import ChoicesOffered, MessageAccepted, PhaseEnded, PhaseStarted
from games.state import PhaseKind
from tests.bot.test_service import Recorder
from tests.bot.waiting import until_phase

#: Ari, Blake mafia; Casey detective; Drew doctor; the rest bystanders (seats as joined)
DEAL = ("mafia", "mafia", "detective", "doctor", "bystander", "bystander", "bystander")
ROLES = ("detective", "doctor")
LONG = GameConfig(
    day_seconds=3600, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600,
    deal=DEAL, roles=ROLES,
)  # fmt: skip


async def started(svc: GameService, config: GameConfig = LONG) -> LiveGame:
    game_id = await svc.create_game(config, seed=3)
    for i in range(len(DEAL)):
        await svc.join(game_id, f"user{i}")
    await svc.start(game_id)
    return svc.games[game_id]


def wall(game: LiveGame, moment: datetime) -> datetime:
    """The wall-clock time a platform reports for game time ``moment``."""
    return utcnow() - (game.clock.now() - moment) / game.clock.speed


async def to_deadline(svc: GameService, game: LiveGame, past: float = 0.0) -> None:
    """Jump the game's clock to ``past`` seconds after the phase's deadline, timer not run."""
    assert game.state is not None and game.state.phase.deadline is not None
    game.clock = GameClock(1.0, game.state.phase.deadline + timedelta(seconds=past))


async def close_phase(svc: GameService, game: LiveGame) -> None:
    """What the deadline timer does: the close, stamped at the deadline."""
    assert game.state is not None and game.state.phase.deadline is not None
    deadline = game.state.phase.deadline
    await to_deadline(svc, game, past=grace(game).total_seconds())
    await svc._act(game, lambda t: A.Tick(deadline, t), None)


async def to_night_vote(svc: GameService, game: LiveGame) -> None:
    """Day, day vote (nobody out), night talk: on to the mafia's vote."""
    for _ in range(3):
        await close_phase(svc, game)
    assert game.state is not None and game.state.phase.kind is PhaseKind.NIGHT_VOTE


async def before_the_last_pick(svc: GameService) -> LiveGame:
    """Night 1's vote: the detective and doctor have acted, Ari picked Gray; Blake's pick
    will end the night."""
    game = await started(svc)
    await to_night_vote(svc, game)
    names = game.seat_names()
    await svc.night_act(game.id, 2, names[4])
    await svc.night_act(game.id, 3, names[5])
    await svc.vote(game.id, 0, names[6])
    return game


def stored_messages(engine: Engine, game_id: str, text: str) -> list[m.Message]:
    with Session(engine) as s:
        return list(
            s.exec(select(m.Message).where(m.Message.game_id == game_id, m.Message.text == text))
        )


# --- the moment: the reproduction ---------------------------------------------------


async def test_a_den_line_overtaken_by_the_last_kill_vote_stays_in_the_den(
    service: GameService, engine: Engine
) -> None:
    """A mafia types in the night and, a few milliseconds later, makes the night's last pick;
    the pick reaches the service first and ends the night. The line is placed by the moment
    it was typed: in the den, for the partners, never on the stage."""
    rec = Recorder()
    service.subscribe(rec)
    game = await before_the_last_pick(service)
    names = game.seat_names()
    assert game.state is not None
    night_seq = game.state.phase.seq
    typed = utcnow() - timedelta(milliseconds=20)  # Blake types the line ...
    await service.vote(game.id, 1, names[6], at=utcnow())  # ... then picks: the night ends
    assert game.state.phase.kind is PhaseKind.DAY
    assert await service.say(game.id, 1, "we got gray, act surprised", at=typed)
    await service.drain(game.id)

    said = [e for e in rec.events if isinstance(e, MessageAccepted) and "surprised" in e.text]
    assert len(said) == 1
    line = said[0]
    assert line.place == "den" and line.visible_to == frozenset({0, 1})
    assert line.phase_seq == night_seq and line.t < game.state.phase.started_at
    (row,) = stored_messages(engine, game.id, "we got gray, act surprised")
    assert row.place == "den" and row.phase_seq == night_seq
    # logged after the dawn, the transcript still files it under the night it was typed in,
    # and its stamp sorts it before the dawn (exports order lines by time)
    entries = transcript(await service.history(game.id))
    (entry,) = [e for e in entries if e.get("text") == "we got gray, act surprised"]
    assert entry["phase"] == "night_vote-1" and entry["place"] == "den"
    assert row.t < game.state.phase.started_at


async def test_a_bystanders_night_line_overtaken_by_the_dawn_is_refused_with_a_note(
    service: GameService, engine: Engine
) -> None:
    game = await before_the_last_pick(service)
    names = game.seat_names()
    typed = utcnow() - timedelta(milliseconds=20)  # Eden, asleep, types anyway
    await service.vote(game.id, 1, names[6])
    assert game.state is not None and game.state.phase.kind is PhaseKind.DAY
    actions = len(game.client_ids), game.action_seq
    with pytest.raises(RuleError, match="at night, when only the mafia can talk"):
        await service.say(game.id, 4, "is anyone awake", at=typed, platform_id="slack:x:1")
    assert stored_messages(engine, game.id, "is anyone awake") == []
    assert (len(game.client_ids), game.action_seq) == actions
    # the same line typed now is a day line
    assert await service.say(game.id, 4, "is anyone awake")
    assert [r.place for r in stored_messages(engine, game.id, "is anyone awake")] == ["stage"]


async def test_a_day_line_typed_before_the_vote_closed_stays_on_that_days_stage(
    service: GameService, engine: Engine
) -> None:
    game = await started(service)
    await close_phase(service, game)  # the vote opens
    assert game.state is not None and game.state.phase.kind is PhaseKind.VOTE
    vote_seq = game.state.phase.seq
    for seat in range(7):  # everyone votes Gray out; Eden's last line was typed before that
        if seat == 4:
            typed = utcnow() - timedelta(milliseconds=20)
        if seat != 6:
            await service.vote(game.id, seat, game.seats[6].name)
    await service.vote(game.id, 6, game.seats[0].name)
    # (mypy still holds the phase asserted before the awaits that moved it on)
    assert game.state.phase.kind is PhaseKind.NIGHT  # type: ignore[comparison-overlap]
    assert await service.say(game.id, 4, "bye gray", at=typed)
    (row,) = stored_messages(engine, game.id, "bye gray")
    assert row.place == "stage" and row.phase_seq == vote_seq
    # the mafia's den line typed now is a den line; a bystander's is refused
    with pytest.raises(RuleError, match="only the mafia"):
        await service.say(game.id, 4, "night night")


# --- the moment: the deadline -----------------------------------------------------------------


async def test_a_vote_made_before_the_deadline_counts_when_it_arrives_in_the_grace(
    service: GameService, engine: Engine
) -> None:
    game = await started(service)
    await close_phase(service, game)
    assert game.state is not None and game.state.phase.deadline is not None
    deadline = game.state.phase.deadline
    await to_deadline(service, game, past=0.5)  # in flight: the close has not been applied yet
    clicked = wall(game, deadline - timedelta(seconds=0.2))
    assert await service.vote(game.id, 4, game.seats[0].name, at=clicked)
    assert game.state.votes == {4: 0}
    with pytest.raises(RuleError, match="Too late"):  # one made after the deadline does not
        await service.vote(game.id, 5, game.seats[0].name, at=utcnow())
    with Session(engine) as s:
        (vote,) = s.exec(select(m.Vote).where(m.Vote.game_id == game.id)).all()
    assert vote.t < deadline


async def test_an_agents_late_action_counts_as_made_when_it_was_due(
    service: GameService, engine: Engine
) -> None:
    """A seat's port passes the game-time moment an agent chose its vote (its timer, due
    before the deadline, ran after it) on as the platform's moment of a click: counted then."""
    game = await started(service)
    await close_phase(service, game)
    assert game.state is not None and game.state.phase.deadline is not None
    deadline = game.state.phase.deadline
    await to_deadline(service, game, past=0.5)
    port = SeatPortImpl(service, game.id, 4, game.clock)
    due = deadline - timedelta(seconds=0.2)
    await port.vote(game.seats[0].name, made=due)
    assert game.state.votes == {4: 0}
    with Session(engine) as s:
        (vote,) = s.exec(select(m.Vote).where(m.Vote.game_id == game.id)).all()
    assert abs((vote.t.replace(tzinfo=deadline.tzinfo) - due).total_seconds()) < 0.001
    with pytest.raises(RuleError, match="Too late"):  # without it: made when it arrived
        await port.vote(game.seats[1].name)


async def test_an_agents_late_action_from_the_phase_before_is_judged_there(
    service: GameService,
) -> None:
    """In a game of agents only (no grace) a vote whose moment (``made``) lies in the vote
    that has since ended reaches the night: it is judged where it was made, too late (old:
    its moment was lifted to the instant the night was applied, and it was judged as a vote
    in the night, refused with "no vote for you at night", or accepted had the phase taken
    votes)."""
    game_id = await service.create_game(LONG, seed=3)
    for _ in range(len(DEAL)):
        await service.join(game_id, None, is_agent=True, agent_kind="baseline")
    await service.start(game_id)
    game = service.games[game_id]
    assert grace(game) == timedelta(0)
    await close_phase(service, game)
    assert game.state is not None and game.state.phase.kind is PhaseKind.VOTE
    voting = game.state.phase.started_at
    await close_phase(service, game)
    night = game.state
    assert night is not None and night.phase.kind is PhaseKind.NIGHT
    port = SeatPortImpl(service, game.id, 4, game.clock)
    with pytest.raises(RuleError, match="Too late"):
        await port.vote(game.seats[0].name, made=voting + timedelta(seconds=10))
    assert game.state is night  # nothing applied


async def test_the_deadline_closes_a_grace_after_it_stamped_at_the_deadline(
    service: GameService, engine: Engine
) -> None:
    config = GameConfig(
        day_seconds=0.5, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600,
        deal=DEAL, roles=ROLES,
    )  # fmt: skip
    game = await started(service, config)
    assert game.state is not None and game.state.phase.deadline is not None
    deadline = game.state.phase.deadline
    assert grace(game) == timedelta(seconds=0.05)  # a tenth of the shortest phase
    rec = Recorder()
    service.subscribe(rec)
    await until_phase(game, PhaseKind.VOTE)
    await service.drain(game.id)
    ended = next(e for e in rec.events if isinstance(e, PhaseEnded))
    opened = next(e for e in rec.events if isinstance(e, PhaseStarted))
    assert ended.t == deadline == opened.t and ended.reason == "deadline"
    with Session(engine) as s:
        tick = s.exec(select(m.Action).where(m.Action.game_id == game.id)).one()
    assert tick.kind == "tick" and tick.payload["t"] == deadline.isoformat()
    assert datetime.fromisoformat(tick.payload["applied"]) >= deadline + grace(game)


async def test_a_game_of_agents_only_has_no_grace(service: GameService) -> None:
    game_id = await service.create_game(LONG, seed=1)
    for _ in range(len(DEAL)):
        await service.join(game_id, None, is_agent=True, agent_kind="baseline")
    assert grace(service.games[game_id]) == timedelta(0)


# --- the moment: bounds -------------------------------------------------------------------------


async def test_the_platforms_moment_is_trusted_only_within_bounds(
    service: GameService, engine: Engine
) -> None:
    game = await started(service)
    assert game.state is not None
    began = game.state.phase.started_at
    # from the future: now
    await service.say(game.id, 4, "from the future", at=utcnow() + timedelta(hours=1))
    # from long before the game: the phase's start (day 1 has no phase before it)
    await service.say(game.id, 5, "from the past", at=utcnow() - timedelta(hours=1))
    # never before the same seat's previous line
    await service.say(game.id, 4, "and then", at=utcnow() - timedelta(minutes=5))
    with Session(engine) as s:
        rows = {r.text: r.t for r in s.exec(select(m.Message).where(m.Message.game_id == game.id))}
    now = game.clock.now()
    assert rows["from the future"] <= now
    assert rows["from the past"] == began
    assert rows["and then"] == rows["from the future"]
    with pytest.raises(ValueError, match="timezone-aware"):
        await service.say(game.id, 4, "naive", at=datetime(2024, 1, 1))


# --- the platform id --------------------------------------------------------------------------


async def test_a_replayed_vote_does_not_undo_a_later_change_also_after_a_restart(
    engine: Engine,
) -> None:
    """Slack accepts a signed request again for 5 minutes: resending the first click must not
    revert the vote the player changed since, before or after the bot restarts."""
    scheduler = make_scheduler()
    scheduler.start()
    first = GameService(engine, scheduler)
    game = await started(first)
    await close_phase(first, game)
    kai, lee = game.seats[0].name, game.seats[1].name
    assert await first.vote(game.id, 4, kai, platform_id="slack:action:U4:1.1")
    assert await first.vote(game.id, 4, kai, platform_id="slack:action:U4:1.2")  # the same
    assert await first.vote(game.id, 4, lee, platform_id="slack:action:U4:1.3")
    assert not await first.vote(game.id, 4, kai, platform_id="slack:action:U4:1.1")
    assert not await first.vote(game.id, 4, kai, platform_id="slack:action:U4:1.2")
    assert game.state is not None and game.state.votes == {4: 1}
    await first.close()

    second = GameService(engine, scheduler)
    again = await second.resume(game.id, paused=True)  # (its clock was moved ahead above)
    for replayed in ("slack:action:U4:1.1", "slack:action:U4:1.2"):
        assert not await second.vote(game.id, 4, kai, platform_id=replayed)
    assert again.state is not None and again.state.votes == {4: 1}
    assert await second.vote(game.id, 4, kai, platform_id="slack:action:U4:1.4")
    assert again.state.votes == {4: 0}
    with Session(engine) as s:
        ids = s.exec(
            select(m.Action.client_id)
            .where(m.Action.game_id == game.id, col(m.Action.client_id).is_not(None))
            .order_by(col(m.Action.seq))
        ).all()
    assert ids == [f"slack:action:U4:1.{i}" for i in (1, 2, 3, 4)]
    await second.close()
    scheduler.shutdown(wait=False)


async def test_a_replayed_night_action_is_ignored(service: GameService) -> None:
    game = await started(service)
    await to_night_vote(service, game)
    names = game.seat_names()
    assert await service.night_act(game.id, 3, names[4], platform_id="discord:ix:1")
    assert await service.night_act(game.id, 3, names[5], platform_id="discord:ix:2")
    assert not await service.night_act(game.id, 3, names[4], platform_id="discord:ix:1")
    assert game.state is not None and game.state.night_actions == {3: 5}


# --- choices ------------------------------------------------------------------------------------


async def test_each_acting_seat_is_offered_its_choices_and_names_resolve_against_them(
    service: GameService,
) -> None:
    game = await started(service)
    rec = Recorder()
    service.subscribe(rec)
    await close_phase(service, game)  # the day vote
    await service.drain(game.id)
    offers = [e for e in rec.events if isinstance(e, ChoicesOffered)]
    assert [o.seat for o in offers] == list(range(7))
    assert all(o.verb == "vote" and o.can_abstain and o.seat not in o.targets for o in offers)
    # a name outside the choices is refused with the choices listed
    with pytest.raises(RuleError, match="Choose one of"):
        await service.vote(game.id, 4, "Nobody")


# --- races ------------------------------------------------------------------------------------


async def test_the_same_click_delivered_twice_at_once_is_applied_once(
    service: GameService, engine: Engine
) -> None:
    game = await started(service)
    await close_phase(service, game)
    name = game.seats[0].name
    results = await asyncio.gather(
        *(service.vote(game.id, 4, name, platform_id="discord:ix:77") for _ in range(3))
    )
    assert sorted(results) == [False, False, True]
    with Session(engine) as s:
        votes = s.exec(select(m.Vote).where(m.Vote.game_id == game.id)).all()
    assert len(votes) == 1


async def test_a_line_and_the_last_pick_in_the_same_instant_keep_the_line_in_the_den(
    service: GameService, engine: Engine
) -> None:
    """Which came first is unknowable: a den line must never reach the stage, and a sleeping
    bystander's line is refused rather than posted."""
    game = await before_the_last_pick(service)
    names = game.seat_names()
    same = utcnow()
    await service.vote(game.id, 1, names[6], at=same)
    assert game.state is not None and game.state.phase.kind is PhaseKind.DAY
    assert await service.say(game.id, 1, "same instant", at=same)
    with pytest.raises(RuleError, match="at night"):
        await service.say(game.id, 4, "same instant too", at=same)
    assert [r.place for r in stored_messages(engine, game.id, "same instant")] == ["den"]
    # and a click on the night's menu in that instant is not taken as a day action
    with pytest.raises(RuleError, match="Too late"):
        await service.vote(game.id, 0, names[5], at=same)


async def test_a_line_said_while_the_last_pick_is_being_applied_stays_in_the_den(
    service: GameService, engine: Engine
) -> None:
    """An agent (no platform moment) speaks in the den while the night's last pick is being
    stored: it spoke in the night, and its line is placed there."""
    game = await before_the_last_pick(service)
    names = game.seat_names()
    writing = asyncio.Event()
    write = service._run_db

    async def slow_write(fn: Any) -> Any:  # the pick holds the game while it is written
        writing.set()
        return await write(fn)

    service._run_db = slow_write  # type: ignore[method-assign]
    pick = asyncio.create_task(service.vote(game.id, 1, names[6]))
    await writing.wait()
    assert game.state is not None and game.state.phase.kind is PhaseKind.NIGHT_VOTE
    said = asyncio.create_task(service.say(game.id, 0, "while it is written"))
    refused = asyncio.create_task(service.say(game.id, 4, "me too"))
    await asyncio.sleep(0)  # both have been received (and wait for the game)
    await pick
    service._run_db = write  # type: ignore[method-assign]
    # (mypy still holds the phase asserted before the awaits that moved it on)
    assert game.state.phase.kind is PhaseKind.DAY  # type: ignore[comparison-overlap]
    assert await said
    with pytest.raises(RuleError, match="at night"):
        await refused
    assert [r.place for r in stored_messages(engine, game.id, "while it is written")] == ["den"]
    # said after the dawn was applied: a day line
    assert await service.say(game.id, 0, "good morning")
    assert [r.place for r in stored_messages(engine, game.id, "good morning")] == ["stage"]


async def test_a_line_older_than_the_phase_before_is_refused_not_placed_in_the_wrong_phase(
    service: GameService, engine: Engine
) -> None:
    """A night line relayed late (the platform was down through the dawn and the day's
    discussion) can't be placed any more: its writer is told, nothing reaches the stage."""
    game = await before_the_last_pick(service)
    typed = game.clock.now()  # (game time: the test's jumps move the wall-clock mapping)
    await service.vote(game.id, 1, game.seat_names()[6])  # dawn
    await close_phase(service, game)  # the day's discussion ends: the vote opens
    assert game.state is not None and game.state.phase.kind is PhaseKind.VOTE
    with pytest.raises(RuleError, match="too long ago"):
        await service.say(game.id, 0, "kill drew next", at=wall(game, typed))
    assert stored_messages(engine, game.id, "kill drew next") == []


async def test_a_night_line_delivered_after_the_same_persons_day_line_stays_a_night_line(
    service: GameService, engine: Engine
) -> None:
    """Lines normally arrive in the order typed; if a platform ever delivers a night line
    after a later day line, the 'never before the previous line' bound does not carry it
    over the dawn."""
    game = await before_the_last_pick(service)
    typed_at_night = utcnow() - timedelta(milliseconds=20)
    await service.vote(game.id, 1, game.seat_names()[6])  # dawn
    assert await service.say(game.id, 0, "morning all")
    assert await service.say(game.id, 0, "gray was easy", at=typed_at_night)
    assert [r.place for r in stored_messages(engine, game.id, "gray was easy")] == ["den"]


async def test_right_after_a_restart_a_vote_is_judged_in_the_phase_it_was_made_in(
    engine: Engine,
) -> None:
    """A fast game resumes its clock from its last recorded moment, which includes when the
    last close was applied (a grace after the deadline it is stamped at): the first clicks
    after the restart are in the vote, not before it."""
    scheduler = make_scheduler()
    scheduler.start()
    first = GameService(engine, scheduler)
    config = GameConfig(
        day_seconds=4, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600,
        deal=DEAL, roles=ROLES,
    )  # fmt: skip
    game_id = await first.create_game(config, seed=3, speed=20.0)
    for i in range(len(DEAL)):
        await first.join(game_id, f"user{i}")
    await first.start(game_id)
    game = first.games[game_id]
    await until_phase(game, PhaseKind.VOTE)
    assert game.state is not None and game.state.prior is not None
    assert game.state.prior.until > game.state.phase.started_at  # closed a grace late
    await first.close()

    second = GameService(engine, scheduler)
    again = await second.resume(game_id)
    names = again.seat_names()
    assert await second.vote(game_id, 4, names[0], at=utcnow())  # a platform's click
    assert await second.vote(game_id, 5, names[0])  # an agent's
    assert again.state is not None and again.state.votes == {4: 0, 5: 0}
    await second.close()
    scheduler.shutdown(wait=False)
