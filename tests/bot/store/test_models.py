"""Behaviour of the table models on a migrated database (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, func, select

from bot.store.db import session_scope
from bot.store.models import (
    GAME_MANAGER,
    Action,
    Event,
    Game,
    Message,
    Phase,
    Seat,
    Server,
    Vote,
)

SEED = 2**62 + 12345  # does not fit a 32-bit INTEGER


def _game(gid: str = "g7k2m9qx", **kw: Any) -> Game:
    kw.setdefault("config", {"players": 5})
    return Game(id=gid, seed=SEED, **kw)


def _count(s: Session, model: type) -> int:
    return s.exec(select(func.count()).select_from(model)).one()


# --- timestamps -------------------------------------------------------------------------------


def test_aware_utc_round_trip_keeps_date_and_zone(engine: Engine) -> None:
    # Just before midnight UTC and in March: a naive/local conversion would move the date.
    t = datetime(2025, 3, 30, 23, 59, 58, 123456, tzinfo=UTC)
    with session_scope(engine) as s:
        s.add(_game(created_at=t, started_at=t + timedelta(seconds=1)))
    with session_scope(engine) as s:
        g = s.get_one(Game, "g7k2m9qx")
        assert g.created_at == t
        assert g.created_at.tzinfo is UTC
        assert g.created_at.date() == date(2025, 3, 30)
        assert g.started_at == datetime(2025, 3, 30, 23, 59, 59, 123456, tzinfo=UTC)
        assert g.ended_at is None


def test_other_zones_are_converted_to_utc(engine: Engine) -> None:
    plus_two = timezone(timedelta(hours=2))
    t = datetime(2025, 1, 1, 1, 30, tzinfo=plus_two)  # = 2024-12-31 23:30 UTC
    with session_scope(engine) as s:
        s.add(_game())
        s.add(Message(game_id="g7k2m9qx", place="stage", speaker=GAME_MANAGER, text="hi", t=t))
    with session_scope(engine) as s:
        msg = s.exec(select(Message)).one()
        assert msg.t == datetime(2024, 12, 31, 23, 30, tzinfo=UTC)
        assert msg.t.tzinfo is UTC
        raw = s.connection().execute(sa.text("SELECT t FROM messages")).scalar_one()
    # Stored as naive UTC: the same wall time everywhere, whatever the server's zone.
    assert str(raw).startswith("2024-12-31 23:30:00")


def test_naive_datetimes_are_rejected(engine: Engine) -> None:
    with pytest.raises(sa.exc.StatementError) as err, session_scope(engine) as s:
        s.add(_game(created_at=datetime(2025, 1, 1, 12, 0)))
    assert isinstance(err.value.orig, ValueError)
    assert "naive" in str(err.value.orig)
    with session_scope(engine) as s:
        assert _count(s, Game) == 0


def test_naive_datetime_rejected_in_queries_too(engine: Engine) -> None:
    with pytest.raises(sa.exc.StatementError), session_scope(engine) as s:
        s.exec(select(Message).where(Message.t > datetime(2025, 1, 1))).all()


def test_time_range_queries_compare_in_utc(engine: Engine) -> None:
    base = datetime(2025, 6, 1, 12, tzinfo=UTC)
    with session_scope(engine) as s:
        s.add(_game())
        for i in range(4):
            s.add(
                Message(
                    game_id="g7k2m9qx",
                    place="stage",
                    speaker="Alice",
                    text=f"m{i}",
                    t=base + timedelta(minutes=i),
                )
            )
    since = (base + timedelta(minutes=2)).astimezone(timezone(timedelta(hours=-5)))
    with session_scope(engine) as s:
        rows = s.exec(
            select(Message)
            .where(Message.game_id == "g7k2m9qx", Message.t >= since)
            .order_by(col(Message.t))
        ).all()
    assert [m.text for m in rows] == ["m2", "m3"]


def test_defaults(engine: Engine) -> None:
    before = datetime.now(UTC)
    with session_scope(engine) as s:
        s.add(Server(platform="discord", external_id="123"))
        s.add(_game())
        s.add(Seat(game_id="g7k2m9qx", index=0, character_name="Alice"))
    with session_scope(engine) as s:
        server = s.exec(select(Server)).one()
        game = s.get_one(Game, "g7k2m9qx")
        seat = s.exec(select(Seat)).one()
    assert server.settings == {}
    assert server.logging_enabled is True
    assert game.status == "lobby"
    assert game.clock_speed == 1.0
    assert game.last_seq == 0
    assert game.seed == SEED
    assert seat.alive is True
    assert seat.is_agent is False
    assert seat.role is None
    for t in (server.created_at, game.created_at, seat.joined_at):
        assert t.tzinfo is UTC
        assert before - timedelta(seconds=1) <= t <= datetime.now(UTC) + timedelta(seconds=1)


# --- uniqueness -------------------------------------------------------------------------------


def _msg(gid: str, client_id: str | None, text: str = "x") -> Message:
    return Message(
        game_id=gid, place="stage", speaker="Bob", seat_index=1, text=text, client_id=client_id
    )


def test_message_client_id_unique_per_game(engine: Engine) -> None:
    with session_scope(engine) as s:
        s.add_all([_game("ga"), _game("gb")])
    with session_scope(engine) as s:
        s.add_all([_msg("ga", "discord:1"), _msg("gb", "discord:1")])  # other game: fine
        s.add_all([_msg("ga", None), _msg("ga", None)])  # no idempotency key: any number
    with pytest.raises(sa.exc.IntegrityError), session_scope(engine) as s:
        s.add(_msg("ga", "discord:1", text="redelivered"))
    with session_scope(engine) as s:
        assert _count(s, Message) == 4


def test_action_seq_and_client_id_unique_per_game(engine: Engine) -> None:
    with session_scope(engine) as s:
        s.add_all([_game("ga"), _game("gb")])
        s.add(Action(game_id="ga", seq=1, kind="join", payload={}, client_id="c1"))
        s.add(Action(game_id="gb", seq=1, kind="join", payload={}, client_id="c1"))
        s.add(Action(game_id="ga", seq=2, kind="say", payload={}))
        s.add(Action(game_id="ga", seq=3, kind="say", payload={}))
    with pytest.raises(sa.exc.IntegrityError), session_scope(engine) as s:
        s.add(Action(game_id="ga", seq=1, kind="say", payload={}))
    with pytest.raises(sa.exc.IntegrityError), session_scope(engine) as s:
        s.add(Action(game_id="ga", seq=4, kind="say", payload={}, client_id="c1"))


@pytest.mark.parametrize(
    "dup",
    [
        {"index": 0, "character_name": "Bob"},
        {"index": 1, "character_name": "Alice"},
    ],
)
def test_seat_index_and_name_unique_per_game(engine: Engine, dup: dict[str, Any]) -> None:
    with session_scope(engine) as s:
        s.add_all([_game("ga"), _game("gb")])
        s.add(Seat(game_id="ga", index=0, character_name="Alice"))
        s.add(Seat(game_id="gb", index=0, character_name="Alice"))
    with pytest.raises(sa.exc.IntegrityError), session_scope(engine) as s:
        s.add(Seat(game_id="ga", **dup))


def test_server_platform_external_id_unique(engine: Engine) -> None:
    with session_scope(engine) as s:
        s.add(Server(platform="discord", external_id="1"))
        s.add(Server(platform="slack", external_id="1"))
    with pytest.raises(sa.exc.IntegrityError), session_scope(engine) as s:
        s.add(Server(platform="discord", external_id="1"))


def test_rows_need_an_existing_game(engine: Engine) -> None:
    with pytest.raises(sa.exc.IntegrityError), session_scope(engine) as s:
        s.add(Action(game_id="nope", seq=1, kind="join", payload={}))


# --- cascades ---------------------------------------------------------------------------------


def _populate(s: Session, gid: str) -> None:
    s.add(_game(gid))
    s.flush()
    s.add(Seat(game_id=gid, index=0, character_name="Alice"))
    s.add(Phase(game_id=gid, seq=1, kind="day", number=1))
    s.add(_msg(gid, f"{gid}-m"))
    s.add(Vote(game_id=gid, phase_seq=1, kind="day", voter_index=0, target_index=None))
    s.add(Event(game_id=gid, seq=1, kind="phase", payload={}))
    s.add(Action(game_id=gid, seq=1, kind="join", payload={}))


CHILDREN = (Seat, Phase, Message, Vote, Event, Action)


def test_deleting_a_game_cascades_to_its_rows_only(engine: Engine) -> None:
    with session_scope(engine) as s:
        _populate(s, "gone")
        _populate(s, "kept")
    with session_scope(engine) as s:
        s.delete(s.get_one(Game, "gone"))
    with session_scope(engine) as s:
        for model in CHILDREN:
            ids = s.exec(select(model.game_id)).all()
            assert ids == ["kept"], model.__name__


def test_game_and_its_rows_insert_in_one_flush(engine: Engine) -> None:
    # Added children-first on purpose: the unit of work must still insert the game first.
    with session_scope(engine) as s:
        s.add(Action(game_id="g1", seq=1, kind="join", payload={}))
        s.add(Seat(game_id="g1", index=0, character_name="Alice"))
        s.add(_game("g1"))
    with session_scope(engine) as s:
        assert (_count(s, Action), _count(s, Seat)) == (1, 1)


def test_deleting_a_game_with_loaded_rows(engine: Engine) -> None:
    with session_scope(engine) as s:
        _populate(s, "g1")
    with session_scope(engine) as s:
        game = s.get_one(Game, "g1")
        assert [seat.character_name for seat in game.seats] == ["Alice"]
        assert len(game.actions) == 1
        s.delete(game)
    with session_scope(engine) as s:
        assert sum(_count(s, m) for m in CHILDREN) == 0


def test_bulk_sql_delete_cascades(engine: Engine) -> None:
    with session_scope(engine) as s:
        _populate(s, "g1")
    with session_scope(engine) as s:
        s.execute(sa.delete(Game).where(col(Game.id) == "g1"))
    with session_scope(engine) as s:
        assert sum(_count(s, m) for m in CHILDREN) == 0


def test_deleting_a_server_keeps_its_games(engine: Engine) -> None:
    with session_scope(engine) as s:
        server = Server(platform="discord", external_id="9")
        s.add(server)
        s.flush()
        s.add(_game(server_id=server.id, channel_id="c1"))
    with session_scope(engine) as s:
        s.delete(s.exec(select(Server)).one())
    with session_scope(engine) as s:
        game = s.get_one(Game, "g7k2m9qx")
        assert game.server_id is None
        assert game.channel_id == "c1"


# --- JSON -------------------------------------------------------------------------------------


def test_json_fields_round_trip(engine: Engine) -> None:
    config = {
        "roles": {"mafia": 2, "bystander": 5},
        "speed": 1.5,
        "names": ["Zoë", "李"],
        "flags": [True, None],
        "nested": {"a": [{"b": 1}]},
    }
    with session_scope(engine) as s:
        s.add(Server(platform="slack", external_id="T", settings={"lang": "he", "max": 3}))
        s.add(_game(config=config))
        s.add(Action(game_id="g7k2m9qx", seq=1, kind="vote", payload={"voter": 2, "target": None}))
        s.add(
            Event(game_id="g7k2m9qx", seq=1, kind="kill", payload={"victim": 3}, visible_to=[0, 4])
        )
        s.add(Event(game_id="g7k2m9qx", seq=2, kind="day", payload={}, visible_to=None))
    with session_scope(engine) as s:
        assert s.exec(select(Server)).one().settings == {"lang": "he", "max": 3}
        assert s.get_one(Game, "g7k2m9qx").config == config
        assert s.exec(select(Action)).one().payload == {"voter": 2, "target": None}
        events = s.exec(select(Event).order_by(col(Event.seq))).all()
        assert [e.visible_to for e in events] == [[0, 4], None]
        # "public" is a real SQL NULL, so it can be filtered in the database.
        public = s.exec(select(Event.seq).where(col(Event.visible_to).is_(None))).all()
        assert public == [2]


def test_json_reassignment_is_persisted(engine: Engine) -> None:
    with session_scope(engine) as s:
        s.add(_game())
    with session_scope(engine) as s:
        g = s.get_one(Game, "g7k2m9qx")
        g.config = {**g.config, "players": 7}
        s.add(g)
    with session_scope(engine) as s:
        assert s.get_one(Game, "g7k2m9qx").config == {"players": 7}
