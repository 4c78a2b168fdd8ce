"""Consent before joining on Discord/Slack, per server, per notice version; which seats'
data research may use (bot.protection.consent), against SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from bot.protection import consent as C
from bot.protection.consent import (
    CONSENT_VERSION,
    ConsentRequired,
    consent_status,
    consent_text,
    has_consent,
    record_consent,
    research_seats,
)
from bot.service.port import GameService, ServiceError
from bot.service.timers import make_scheduler
from bot.store import models as m
from bot.store.db import session_scope
from games.config import GameConfig

LONG = GameConfig(day_seconds=3600, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600)


@pytest.fixture
async def service(engine: Engine) -> AsyncIterator[GameService]:
    scheduler = make_scheduler()
    scheduler.start()
    svc = GameService(engine, scheduler)
    yield svc
    await svc.close()
    scheduler.shutdown(wait=False)


def seats(engine: Engine, game_id: str) -> list[m.Seat]:
    with Session(engine) as s:
        return list(s.exec(select(m.Seat).where(m.Seat.game_id == game_id)).all())


def set_logging(engine: Engine, platform: str, server: str, enabled: bool) -> None:
    with session_scope(engine) as s:
        row = s.exec(
            select(m.Server).where(m.Server.platform == platform, m.Server.external_id == server)
        ).first()
        if row is None:
            row = m.Server(platform=platform, external_id=server)
        row.logging_enabled = enabled
        s.add(row)


def test_notice_says_what_people_agree_to() -> None:
    text = consent_text()
    assert text == consent_text(CONSENT_VERSION)
    assert f"version {CONSENT_VERSION}" in text
    for needle in ("AI agent", "not be told which", "character name", "votes", "survey"):
        assert needle in text
    assert "/mafia consent withdraw" in text and "mafiabot consent withdraw" in text
    assert "anonymised" in text and "Declining just means you don't play" in text
    ack = consent_text(CONSENT_VERSION, research=False)
    assert ack != text and "AI agent" in ack and "logging off" in ack
    with pytest.raises(LookupError):
        consent_text("0")


async def test_discord_join_needs_consent(service: GameService, engine: Engine) -> None:
    game_id = await service.create_game(LONG, platform="discord", server_external_id="G1")
    with pytest.raises(ConsentRequired) as refused:
        await service.join(game_id, "111")
    err = refused.value
    assert isinstance(err, ServiceError)  # adapters that only know ServiceError still cope
    assert err.version == CONSENT_VERSION and err.text == consent_text(CONSENT_VERSION)
    assert err.research and err.previous is None
    assert (err.platform, err.server, err.user_id) == ("discord", "G1", "111")
    assert seats(engine, game_id) == [] and service.games[game_id].seats == []

    record_consent(engine, "discord", "G1", "111", True)
    info = await service.join(game_id, "111")
    assert info.user_id == "111" and len(seats(engine, game_id)) == 1


async def test_declining_keeps_refusing(service: GameService) -> None:
    game_id = await service.create_game(LONG, platform="slack", server_external_id="T1")
    record_consent(service.engine, "slack", "T1", "U1", False)
    with pytest.raises(ConsentRequired) as refused:
        await service.join(game_id, "U1")
    assert refused.value.previous == "declined"
    assert not has_consent(service.engine, "slack", "T1", "U1")
    # the latest answer counts: agreeing after declining lets them in
    record_consent(service.engine, "slack", "T1", "U1", True)
    await service.join(game_id, "U1")


async def test_consent_is_per_server(service: GameService) -> None:
    record_consent(service.engine, "discord", "G-other", "111", True)
    game_id = await service.create_game(LONG, platform="discord", server_external_id="G1")
    with pytest.raises(ConsentRequired):
        await service.join(game_id, "111")
    # the same id on another platform is another person
    assert not has_consent(service.engine, "slack", "G-other", "111")


async def test_local_play_and_agents_need_no_consent(service: GameService) -> None:
    game_id = await service.create_game(LONG)  # platform "local"
    await service.join(game_id, "me")
    assert has_consent(service.engine, "local", "local", "me")
    discord_game = await service.create_game(LONG, platform="discord", server_external_id="G1")
    agent = await service.join(discord_game, None, is_agent=True, agent_kind="baseline")
    assert agent.is_agent


async def test_an_older_version_must_be_agreed_again(
    service: GameService, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_consent(service.engine, "discord", "G1", "111", True)
    monkeypatch.setitem(C._RESEARCH_TEXTS, "2", "Before you play (version 2): changed terms.")
    monkeypatch.setattr(C, "CONSENT_VERSION", "2")
    game_id = await service.create_game(LONG, platform="discord", server_external_id="G1")
    with pytest.raises(ConsentRequired) as refused:
        await service.join(game_id, "111")
    assert refused.value.previous == "outdated" and refused.value.version == "2"
    assert "version 2" in refused.value.text
    assert consent_text("1") != consent_text("2")  # old versions stay retrievable
    record_consent(service.engine, "discord", "G1", "111", True, version="2")
    await service.join(game_id, "111")


async def test_logging_off_needs_only_an_acknowledgement(service: GameService) -> None:
    set_logging(service.engine, "discord", "Gquiet", False)
    game_id = await service.create_game(LONG, platform="discord", server_external_id="Gquiet")
    with pytest.raises(ConsentRequired) as refused:
        await service.join(game_id, "111")
    assert not refused.value.research  # the shorter notice, AI disclosure included
    assert refused.value.text == consent_text(CONSENT_VERSION, research=False)
    row = record_consent(service.engine, "discord", "Gquiet", "111", True)
    assert row.research is False  # defaults to the notice the server shows
    await service.join(game_id, "111")

    # turning logging on asks again: an acknowledgement is not research consent
    set_logging(service.engine, "discord", "Gquiet", True)
    status = consent_status(service.engine, "discord", "Gquiet", "111")
    assert not status.ok and status.problem == "acknowledged only"
    assert "acknowledgement only" in status.describe()
    other = await service.create_game(LONG, platform="discord", server_external_id="Gquiet")
    with pytest.raises(ConsentRequired) as again:
        await service.join(other, "111")
    assert again.value.research and again.value.previous == "acknowledged only"


async def test_status_reports_withdrawal(service: GameService) -> None:
    engine = service.engine
    record_consent(engine, "slack", "T1", "U1", True)
    assert consent_status(engine, "slack", "T1", "U1").ok
    with session_scope(engine) as s:
        for row in s.exec(select(m.Consent)).all():
            row.withdrawn_at = m.utcnow()
    status = consent_status(engine, "slack", "T1", "U1")
    assert not status.ok and status.problem == "withdrawn"
    assert "withdrawn at" in status.describe()
    assert consent_status(engine, "slack", "T1", "nobody").problem == "never answered"
    with pytest.raises(LookupError):
        record_consent(engine, "slack", "T1", "U1", True, version="99")


async def test_research_seats_follow_the_answer_in_force(service: GameService) -> None:
    engine = service.engine
    for uid in ("a", "b", "c", "d", "e"):
        record_consent(engine, "discord", "G1", uid, True)
    game_id = await service.create_game(LONG, platform="discord", server_external_id="G1")
    for uid in ("a", "b", "c", "d", "e"):
        await service.join(game_id, uid)
    await service.join(game_id, None, is_agent=True, agent_kind="llm")
    await service.start(game_id)
    await service.end(game_id)
    with session_scope(engine) as s:
        game = s.get(m.Game, game_id)
        assert game is not None and game.ended_at is not None
        ended = game.ended_at
        by_user = {r.user_id: r for r in s.exec(select(m.Seat).where(m.Seat.game_id == game_id))}
        # b: research consent replaced, before the game ended, by an acknowledgement
        for row in s.exec(select(m.Consent).where(m.Consent.user_id == "b")):
            row.t = ended - timedelta(hours=1)
        s.add(
            m.Consent(
                platform="discord",
                server_external_id="G1",
                user_id="b",
                version=CONSENT_VERSION,
                agreed=True,
                research=False,
                t=ended - timedelta(minutes=30),
            )
        )
        # c: declined only after the game: that game keeps their consent
        s.add(
            m.Consent(
                platform="discord",
                server_external_id="G1",
                user_id="c",
                version=CONSENT_VERSION,
                agreed=False,
                t=ended + timedelta(hours=1),
            )
        )
        # d: withdrew (stamps every answer)
        for row in s.exec(select(m.Consent).where(m.Consent.user_id == "d")):
            row.withdrawn_at = ended + timedelta(days=1)
        # e: seat marked withdrawn (pending cleaning)
        seat_e = by_user["e"]
        seat_e.withdrawn = True
        s.add(seat_e)
    with Session(engine) as s:
        allowed = research_seats(s, game_id)
    index = {r.user_id: r.index for r in seats(engine, game_id)}
    agent = next(r.index for r in seats(engine, game_id) if r.is_agent)
    assert allowed == {
        index["a"]: True,
        index["b"]: False,
        index["c"]: True,
        index["d"]: False,
        index["e"]: False,
        agent: True,
    }
    set_logging(engine, "discord", "G1", False)
    with Session(engine) as s:
        assert not any(research_seats(s, game_id).values())
        with pytest.raises(LookupError):
            research_seats(s, "gnope")
