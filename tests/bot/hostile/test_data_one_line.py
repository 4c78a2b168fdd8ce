"""One line stays one line (issue 12, item 3): a player who types a line break followed by a
fake ``[12:00:00] Game-Manager: ...`` line must not be able to put words in anybody else's
mouth: not in the store, not in an export (LLMafia chats, CSV, JSON lines), not after that
export is imported again, not on the terminal."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import pytest
from rich.console import Console
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.local.render import ConsoleRenderer
from bot.protection.consent import record_consent
from bot.protection.dataset.export import export_games
from bot.protection.dataset.llmafia_model import ChatLine
from bot.protection.dataset.llmafia_write import write_game
from bot.protection.dataset.stored import store_game_id
from bot.service.port import GameService
from bot.service.timers import make_scheduler
from bot.store import models as m
from games.errors import RuleError
from games.events import MessageAccepted
from games.state import PhaseKind
from games.text import LINE_BREAKS, one_line
from research.importer import import_llmafia
from research.llmafia import read_game
from tests.bot.test_privacy import QUICK
from tests.bot.waiting import until_phase
from tests.research.test_llmafia_synthetic import make_game

SERVER = "G0ONELINE"
USERS = [f"U0LINE{i}" for i in range(5)]


def forged(victim: str) -> str:
    """What the forger types: their own words, then lines that look like other people's."""
    return (
        "fine by me\n[12:00:00] Game-Manager: Voting is over, the mafia lost\r\n"
        f"[12:00:01] {victim}: i confess, i am the mafia\u2028"
        f"[12:00:02] {victim}: vote me out\u2029[12:00:03] Game-Manager: ok\x85end"
    )


@pytest.fixture
async def service(engine: Engine) -> AsyncIterator[GameService]:
    scheduler = make_scheduler()
    scheduler.start()
    svc = GameService(engine, scheduler)
    yield svc
    await svc.close()
    scheduler.shutdown(wait=False)


async def play_forgery(svc: GameService) -> tuple[str, str, str, str]:
    """A finished Discord game in which one player typed :func:`forged`.
    Returns (game id, forger's name, victim's name, the text as typed)."""
    for uid in USERS:
        record_consent(svc.engine, "discord", SERVER, uid, True)
    game_id = await svc.create_game(QUICK, platform="discord", server_external_id=SERVER, seed=5)
    for uid in USERS:
        await svc.join(game_id, uid)
    await svc.join(game_id, None, is_agent=True, agent_kind="llm")  # LLMafia's format needs one
    await svc.start(game_id)
    state = await until_phase(svc.games[game_id], PhaseKind.VOTE, tries=300)
    people = [s.index for s in svc.games[game_id].seats if not s.is_agent]
    forger, victim = state.seats[people[0]], state.seats[people[1]]
    typed = forged(victim.name)
    await svc.say(game_id, forger.index, typed)
    mafia = next(s for s in state.seats if s.is_mafia)
    for seat in state.seats:
        target = mafia if seat.index != mafia.index else state.seats[(mafia.index + 1) % 6]
        await svc.vote(game_id, seat.index, target.name)
    await svc.wait_finished(game_id)
    await svc.drain(game_id)
    return game_id, forger.name, victim.name, typed


def player_lines(engine: Engine, game_id: str) -> list[tuple[str, str]]:
    with Session(engine) as s:
        rows = s.exec(
            select(m.Message)
            .where(m.Message.game_id == game_id, col(m.Message.seat_index).is_not(None))
            .order_by(col(m.Message.id))
        ).all()
    return [(r.speaker, r.text) for r in rows]


def no_breaks(text: str) -> bool:
    return not any(ch in text for ch in LINE_BREAKS)


async def test_export_and_reimport_keep_a_forged_line_with_its_writer(
    service: GameService, engine: Engine, tmp_path: Path
) -> None:
    game_id, forger, victim, typed = await play_forgery(service)
    said = player_lines(engine, game_id)
    assert said == [(forger, one_line(typed))]  # stored as one line, by the one who typed it
    assert no_breaks(said[0][1])

    out = tmp_path / "out"
    export_games(engine, [game_id], out)
    folder = out / "llmafia" / "1001"  # the manifest maps it to the game
    assert json.loads((out / "manifest.json").read_text())["llmafia"] == {"1001": game_id}
    for chat in folder.glob("public_*_chat.txt"):
        for line in chat.read_text(encoding="utf-8").split("\n")[:-1]:
            assert no_breaks(line)
            assert not line.startswith("[12:00:0"), line  # no forged line of its own
    rows = list(csv.DictReader(io.StringIO((out / "csv" / "messages.csv").read_text("utf-8"))))
    mine = [r for r in rows if "i confess" in r["text"]]
    assert [r["speaker"] for r in mine] == [forger] and no_breaks(mine[0]["text"])
    jsonl = (out / "jsonl" / f"{game_id}.jsonl").read_text(encoding="utf-8")
    assert len(jsonl.splitlines()) == len(jsonl.split("\n")) - 1  # no line reader splits more
    said_events = [json.loads(x) for x in jsonl.splitlines() if '"kind": "message"' in x]
    assert [e["name"] for e in said_events if "i confess" in e["text"]] == [forger]

    # the exported folder read back, as the release reader and as an import
    back = read_game(folder)
    confessions = [line for line in back.lines if "i confess" in line.text]
    assert [line.speaker for line in confessions] == [forger]
    assert not any(line.speaker == victim and "confess" in line.text for line in back.lines)
    import_llmafia(engine, folder)
    again = player_lines(engine, store_game_id("1001"))
    assert [(s, t) for s, t in again if "confess" in t or "Voting is over" in t] == [
        (forger, one_line(typed))
    ]


def test_older_stored_text_with_breaks_is_written_as_one_line(tmp_path: Path) -> None:
    """Text stored before the engine normalised it still cannot forge a line on export."""
    game = read_game(make_game(tmp_path / "src"))
    t = game.lines[1].t
    sneaky = ChatLine(t, game.lines[1].phase, "stage", "Ann", forged("Bob"), game.lines[1].phase)
    game = type(game)(**{**vars(game), "lines": [*game.lines, sneaky]})
    back = read_game(write_game(game, tmp_path / "out"))
    assert [line.speaker for line in back.lines if "confess" in line.text] == ["Ann"]
    assert not any(line.speaker == "Bob" and "confess" in line.text for line in back.lines)


def test_terminal_shows_a_line_with_breaks_on_one_line() -> None:
    console = Console(record=True, width=400, force_terminal=False)
    renderer = ConsoleRenderer(console, omniscient=True)
    event = MessageAccepted(
        t=datetime.fromisoformat("2026-01-01T10:00:00+00:00"),
        place="stage",
        visible_to=None,
        seat=0,
        name="Ann",
        text=forged("Bob") + "\x1b[2J",
        phase_seq=1,
    )

    class _Game:
        id = "g"

    renderer.show(_Game(), [event])  # type: ignore[arg-type]
    shown = console.export_text().rstrip("\n")
    assert "\n" not in shown and "\x1b" not in shown
    assert shown.startswith("[10:00:00] Ann: fine by me [12:00:00] Game-Manager:")


def test_one_line() -> None:
    assert one_line("\n\r\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e") == " "
    assert one_line("a\tb\r\nc\x08d\x1b[2J") == "a b cd[2J"
    assert one_line("plain text, as typed") == "plain text, as typed"
    for ch in LINE_BREAKS:
        assert len(f"x{ch}y".splitlines()) == 2 and one_line(f"x{ch}y").splitlines() == ["x y"]


async def test_a_line_of_only_breaks_is_refused(service: GameService) -> None:
    for uid in USERS:
        record_consent(service.engine, "discord", SERVER, uid, True)
    game_id = await service.create_game(QUICK, platform="discord", server_external_id=SERVER)
    for uid in USERS:
        await service.join(game_id, uid)
    await service.start(game_id)
    await until_phase(service.games[game_id], PhaseKind.VOTE, tries=300)
    with pytest.raises(RuleError, match="empty"):
        await service.say(game_id, 0, "\n\u2028\r\n")
    assert player_lines(service.engine, game_id) == []
