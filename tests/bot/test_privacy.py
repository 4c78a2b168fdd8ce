"""Withdrawal (bot.protection.privacy): a person leaves no trace in storage or in a fresh export,
other
people's data survives, open games are cleaned once they end and can still be resumed.

`play_table` (also used by the export tests) plays a real Discord game through GameService
with five consenting humans with distinctive ids, names and lines, and the agent."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import sqlalchemy as sa
from rich.console import Console
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.protection import privacy
from bot.protection.consent import has_consent, record_consent
from bot.protection.dataset.export import export_games
from bot.protection.dataset.stored import game_from_store
from bot.protection.privacy import (
    PendingWithdrawals,
    apply_pending_withdrawals,
    run_withdraw,
    withdraw,
)
from bot.service.port import GameService
from bot.service.timers import make_scheduler
from bot.service.transcript import transcript
from bot.store import models as m
from bot.store.db import session_scope
from games.config import GameConfig
from games.state import PhaseKind
from tests.bot.waiting import until_phase

SERVER = "G0PRIVACY"
# user id -> the account / display names an adapter would know
PEOPLE: dict[str, list[str]] = {
    "U0SECRETALICE": ["alice.wonder@example.com", "Alice Wonderhouse"],
    "U0SECRETBOB": ["Bob McDistinctive", "bobbymcd"],
    "U0SECRETCAROL": ["carol_quartz"],
    "U0SECRETDAVE": ["Dave Pelicanson"],
    "U0SECRETERIN": ["Erin Nightjarova"],
}
ALICE, BOB, CAROL, DAVE, ERIN = PEOPLE
LINES: dict[str, list[str]] = {
    ALICE: [
        "QXA-LINE one: the moon base smells of cheese",
        "qxa-second-remark about lanterns and ropes",
    ],
    BOB: [
        "Quoting her: QXA-LINE one: the moon base smells of cheese",
        "ping <@U0SECRETALICE> or mail bob@example.org or call +1 415 555 0100",
    ],
    CAROL: ["Bob McDistinctive told me, ask alice.wonder@example.com or @bobbymcd"],
    DAVE: ["U0SECRETALICE and <@!U0SECRETBOB> look shifty to me"],
    ERIN: ["QXE-LINE the lanterns are lit tonight"],
}
AGENT_LINE = "I am just a regular player, honest"
QUICK = GameConfig(day_seconds=0.01, vote_seconds=3600, night_seconds=3600, night_vote_seconds=3600)


@dataclass
class Table:
    game_id: str
    seat_of: dict[str, int]  # user id -> seat index
    name_of: dict[str, str]  # user id -> character name
    agent_seat: int
    agent_name: str
    mafia_seat: int
    survey_texts: dict[str, str] = field(default_factory=dict)


@pytest.fixture
async def service(engine: Engine) -> AsyncIterator[GameService]:
    scheduler = make_scheduler()
    scheduler.start()
    svc = GameService(engine, scheduler)
    yield svc
    await svc.close()
    scheduler.shutdown(wait=False)


async def play_table(svc: GameService, *, finish: bool = True, server: str = SERVER) -> Table:
    """Everyone talks in the day vote, then (``finish``) all vote the mafia out."""
    engine = svc.engine
    for uid in PEOPLE:
        record_consent(engine, "discord", server, uid, True)
    game_id = await svc.create_game(
        QUICK, platform="discord", server_external_id=server, seed=11, host_user_id=ALICE
    )
    for uid in PEOPLE:
        await svc.join(game_id, uid)
    await svc.join(game_id, None, is_agent=True, agent_kind="llm")
    await svc.start(game_id)
    game = svc.games[game_id]
    # seat numbers are final only once started (the service seats everyone by the seed)
    seat_of = {s.user_id: s.index for s in game.seats if s.user_id is not None}
    agent = next(s.index for s in game.seats if s.is_agent)
    state = await until_phase(game, PhaseKind.VOTE, tries=200)
    names = {uid: state.seats[i].name for uid, i in seat_of.items()}
    for uid, lines in LINES.items():
        for line in lines:
            await svc.say(game_id, seat_of[uid], line)
    await svc.say(game_id, agent, AGENT_LINE)
    mafia = next(s for s in state.seats if s.is_mafia)
    alice_name = names[ALICE]
    table = Table(game_id, seat_of, names, agent, state.seats[agent].name, mafia.index)
    with session_scope(engine) as s:
        s.add(
            m.LLMCall(
                game_id=game_id,
                seat_index=agent,
                kind="generator",
                model="fake",
                prompt=(
                    f"[10:00:01] {alice_name}: {LINES[ALICE][0]}\n"
                    f"[10:00:02] {names[BOB]}: {LINES[BOB][1]}\n"
                    f"[10:00:03] {names[ERIN]}: {LINES[ERIN][0]}\n"
                    "Bob McDistinctive (U0SECRETBOB) mentioned <@U0SECRETALICE>."
                ),
                output=f"{alice_name} keeps saying '{LINES[ALICE][1]}', suspicious",
                decision=f"say: {alice_name} is odd",
            )
        )
        for uid, i in seat_of.items():
            text = f"SURVEY-{uid[-5:]} fun game; reach me at +1 415 555 0100, {PEOPLE[uid][0]}"
            table.survey_texts[uid] = text
            s.add(
                m.SurveyResponse(
                    game_id=game_id,
                    seat_index=i,
                    about_seat_index=agent,
                    identified_ai=True,
                    similarity=3.0,
                    comments=text,
                    source="discord",
                )
            )
    if finish:
        for seat in state.seats:
            target = mafia if seat.index != mafia.index else state.seats[(mafia.index + 1) % 6]
            await svc.vote(game_id, seat.index, target.name)
        await svc.wait_finished(game_id)
        await svc.drain(game_id)
    return table


def dump(engine: Engine) -> dict[str, str]:
    """Every row of every table in the database, as text."""
    out: dict[str, str] = {}
    with engine.connect() as conn:
        for name in sa.inspect(conn).get_table_names():
            table = sa.Table(name, sa.MetaData(), autoload_with=conn)
            rows = conn.execute(sa.select(table)).all()
            out[name] = "\n".join(repr(tuple(r)) for r in rows)
    return out


def bundle_text(root: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(root.rglob("*")) if p.is_file())


async def test_withdrawal_leaves_no_trace(
    service: GameService, engine: Engine, tmp_path: Path
) -> None:
    t = await play_table(service)
    alice_seat = t.seat_of[ALICE]
    secrets = [ALICE, *LINES[ALICE], t.survey_texts[ALICE], "qxa-second-remark", "QXA-LINE"]
    before = dump(engine)
    for table in ("seats", "messages", "events", "actions", "llm_calls"):
        assert ALICE in before[table] or LINES[ALICE][0] in before[table]  # the check can fail
    report = withdraw(engine, "discord", SERVER, ALICE)
    assert report.scrubbed == [t.game_id] and report.pending == []
    assert report.counts["messages"] == 2 and report.counts["survey_responses"] == 1
    assert report.counts["votes"] == 1 and report.counts["manager_vote_lines"] == 1
    assert report.counts["llm_calls_redacted"] == 1
    assert any("removed from 1 game" in line for line in report.summary())

    tables = dump(engine)
    consents = tables.pop("consents")
    for name, text in tables.items():
        for secret in secrets:
            assert secret not in text, f"{secret!r} left in table {name}"
    # the consent answers remain, as the record of the withdrawal, all stamped
    with Session(engine) as s:
        answers = s.exec(select(m.Consent).where(m.Consent.user_id == ALICE)).all()
        seat = s.exec(
            select(m.Seat).where(m.Seat.game_id == t.game_id, m.Seat.index == alice_seat)
        ).one()
        game = s.get(m.Game, t.game_id)
        bob_lines = s.exec(
            select(m.Message.text).where(
                m.Message.game_id == t.game_id, m.Message.seat_index == t.seat_of[BOB]
            )
        ).all()
        call = s.exec(select(m.LLMCall).where(m.LLMCall.game_id == t.game_id)).one()
        votes = s.exec(select(m.Vote).where(m.Vote.game_id == t.game_id)).all()
    assert ALICE in consents and answers and all(a.withdrawn_at is not None for a in answers)
    assert seat.user_id is None and seat.withdrawn and seat.character_name == t.name_of[ALICE]
    assert game is not None and game.host_user_id is None and game.status == "finished"
    assert not has_consent(engine, "discord", SERVER, ALICE)
    # other people's data stays, their quotes of her lines and mentions of her are redacted
    assert bob_lines == [
        "Quoting her: [withdrawn]",
        "ping [withdrawn] or mail bob@example.org or call +1 415 555 0100",
    ]
    assert f"{t.name_of[ALICE]}: [withdrawn]" in call.prompt
    assert f"{t.name_of[BOB]}: {LINES[BOB][1].replace('<@U0SECRETALICE>', '[withdrawn]')}" in (
        call.prompt
    )
    assert "'[withdrawn]'" in (call.output or "")
    assert len(votes) == 5 and all(v.voter_index != alice_seat for v in votes)
    # what is left still reads as a game
    with Session(engine) as s:
        events = [
            dict(e.payload)
            for e in s.exec(
                select(m.Event).where(m.Event.game_id == t.game_id).order_by(col(m.Event.seq))
            )
        ]
    lines = transcript(events)
    assert any(e.get("text") == AGENT_LINE for e in lines)
    assert game_from_store(engine, t.game_id).winner == "bystanders"

    # a fresh export shows her seat as withheld and nothing of hers
    export_games(engine, "all", tmp_path / "out", with_agent_log=True, identities=PEOPLE)
    text = bundle_text(tmp_path / "out")
    for secret in [*secrets, *PEOPLE[ALICE]]:
        assert secret.casefold() not in text.casefold()
    assert "[withheld]" in text


async def test_withdrawal_is_idempotent_and_per_server(service: GameService) -> None:
    engine = service.engine
    record_consent(engine, "discord", "G-elsewhere", ALICE, True)
    t = await play_table(service)
    first = withdraw(engine, "discord", SERVER, ALICE)
    before = dump(engine)
    second = withdraw(engine, "discord", SERVER, ALICE)
    assert first.scrubbed == [t.game_id]
    assert second.scrubbed == [] and not any(second.counts.values())
    assert second.summary() == [
        f"Withdrawal (discord server {SERVER}, user {ALICE}): nothing left to remove."
    ]
    assert dump(engine) == before
    assert has_consent(engine, "discord", "G-elsewhere", ALICE)  # another server: untouched
    # agreeing again lets them play again; the old game stays clean
    record_consent(engine, "discord", SERVER, ALICE, True)
    assert has_consent(engine, "discord", SERVER, ALICE)
    assert apply_pending_withdrawals(engine) == []


async def test_withdrawal_without_any_game_is_still_recorded(engine: Engine) -> None:
    report = withdraw(engine, "slack", "T-none", "U-stranger")
    assert report.scrubbed == [] and report.counts["consent_answers_withdrawn"] == 1
    with Session(engine) as s:
        row = s.exec(select(m.Consent).where(m.Consent.user_id == "U-stranger")).one()
    assert not row.agreed and row.withdrawn_at is not None
    assert not has_consent(engine, "slack", "T-none", "U-stranger")


async def test_withdrawal_hooks_run_per_seat(
    service: GameService, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, int]] = []

    def hook(session: Session, game_id: str, seat: int) -> int:
        assert session.get(m.Game, game_id) is not None  # inside the same transaction
        calls.append((game_id, seat))
        return 3

    monkeypatch.setattr(privacy, "WITHDRAWAL_HOOKS", [hook])
    t = await play_table(service)
    report = withdraw(service.engine, "discord", SERVER, BOB)
    assert calls == [(t.game_id, t.seat_of[BOB])]
    assert report.counts["hook_rows"] == 3


async def test_running_game_is_cleaned_when_it_ends(service: GameService, engine: Engine) -> None:
    pending = PendingWithdrawals(engine)
    service.subscribe(pending)
    t = await play_table(service, finish=False)
    report = withdraw(engine, "discord", SERVER, ALICE)
    assert report.pending == [t.game_id] and report.scrubbed == []
    assert any("cleaned when they end" in line for line in report.summary())
    with Session(engine) as s:
        seat = s.exec(
            select(m.Seat).where(m.Seat.game_id == t.game_id, m.Seat.index == t.seat_of[ALICE])
        ).one()
        kept = s.exec(
            select(m.Message).where(
                m.Message.game_id == t.game_id, m.Message.seat_index == t.seat_of[ALICE]
            )
        ).all()
    assert seat.withdrawn and seat.user_id == ALICE and len(kept) == 2  # the log stays whole
    assert seat.scrubbed_at is None
    # even if the seat's flag gets lost (GameService.leave rewrites lobby seats), the stamped
    # consent answers still mark the seat for cleaning
    with session_scope(engine) as s:
        row = s.exec(
            select(m.Seat).where(m.Seat.game_id == t.game_id, m.Seat.index == t.seat_of[ALICE])
        ).one()
        row.withdrawn = False

    # the game can still be rebuilt from its action log (by any process: read only)
    scheduler = make_scheduler()
    scheduler.start()
    other = GameService(engine, scheduler)
    try:
        replayed = await other.replay(t.game_id)
        assert replayed.state == service.games[t.game_id].state
    finally:
        await other.close()
        scheduler.shutdown(wait=False)

    # they may go on playing; all of it goes when the game ends
    await service.say(t.game_id, t.seat_of[ALICE], "QXA-LATE line said after withdrawing")
    await service.end(t.game_id)
    await pending.wait()
    tables = dump(engine)
    tables.pop("consents")
    for name, text in tables.items():
        for secret in (ALICE, "QXA-LINE", "QXA-LATE", "qxa-second-remark"):
            assert secret not in text, f"{secret!r} left in table {name}"
    with Session(engine) as s:
        seat = s.exec(
            select(m.Seat).where(m.Seat.game_id == t.game_id, m.Seat.index == t.seat_of[ALICE])
        ).one()
    assert seat.withdrawn and seat.user_id is None and seat.scrubbed_at is not None
    assert apply_pending_withdrawals(engine) == []  # nothing left over


async def test_seat_handed_to_an_agent_is_cleaned_when_the_game_ends(
    service: GameService, engine: Engine
) -> None:
    t = await play_table(service, finish=False)
    report = withdraw(engine, "discord", SERVER, ALICE)
    assert report.pending == [t.game_id]
    await service.replace_seat(t.game_id, t.seat_of[ALICE], agent_kind="llm")
    await service.end(t.game_id)
    [done] = apply_pending_withdrawals(engine, t.game_id)
    assert done.scrubbed == [t.game_id] and done.counts["messages"] == 2
    text = "\n".join(dump(engine).values())
    assert "QXA-LINE" not in text and "qxa-second-remark" not in text


async def test_lobby_games_are_listed_for_the_adapter(service: GameService) -> None:
    record_consent(service.engine, "discord", SERVER, ALICE, True)
    game_id = await service.create_game(QUICK, platform="discord", server_external_id=SERVER)
    await service.join(game_id, ALICE)
    report = withdraw(service.engine, "discord", SERVER, ALICE)
    assert report.pending == report.lobby == [game_id]
    await service.leave(game_id, ALICE)  # what the adapter does with report.lobby
    assert service.games[game_id].seats == []


async def test_operator_command(service: GameService, db_url: str) -> None:
    t = await play_table(service)
    out = io.StringIO()
    report = run_withdraw(db_url, "discord", SERVER, DAVE, Console(file=out, width=200))
    assert report.scrubbed == [t.game_id]
    assert f"removed from 1 game(s): {t.game_id}" in out.getvalue()


async def test_someone_mentioned_in_a_running_game_who_withdraws_is_gone_at_its_end(
    service: GameService, engine: Engine
) -> None:
    """A person with no seat, named by id in a game still running when they withdraw: the
    withdrawal rewrites its lines and events but must leave its action log (the game replays
    it); when the game ends, the id goes from the action log too."""
    zed = "U0SECRETZED"
    record_consent(engine, "discord", SERVER, zed, True)
    pending = PendingWithdrawals(engine)
    service.subscribe(pending)
    t = await play_table(service, finish=False)
    await service.say(t.game_id, t.seat_of[BOB], f"ask <@{zed}> about the lanterns")
    withdraw(engine, "discord", SERVER, zed)
    await service.end(t.game_id)
    await pending.wait()
    tables = dump(engine)
    tables.pop("consents")
    left = [name for name, text in tables.items() if zed in text]
    assert not left, f"{zed} left in {left}"
