"""The anonymised research export (bot.protection.dataset.export): no platform id, account name,
e-mail
or phone number anywhere in the bundle; people without research consent withheld; every
format parses; skipped games say why."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.console import Console
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, delete, func, select

from bot.protection.dataset.export import export_games, export_zip, run_export
from bot.protection.dataset.scrub import Scrubber, name_variants, redact_lines
from bot.protection.dataset.stored import store_game_id
from bot.protection.privacy import withdraw
from bot.service.port import GameService
from bot.service.timers import make_scheduler
from bot.store import models as m
from bot.store.db import session_scope
from research.importer import import_llmafia
from research.llmafia import read_game
from research.paths import llmafia_games_dir
from tests.bot.test_privacy import (
    AGENT_LINE,
    ALICE,
    BOB,
    ERIN,
    LINES,
    PEOPLE,
    SERVER,
    Table,
    bundle_text,
    play_table,
)

# Everything that identifies a person: none of it may appear in any exported file.
FORBIDDEN = [
    *PEOPLE,
    *(name for names in PEOPLE.values() for name in names),
    "McDistinctive",
    "alice.wonder",
    "bob@example.org",
    "415 555 0100",
    "+1 415",
    "<@",
]


@pytest.fixture
async def service(engine: Engine) -> AsyncIterator[GameService]:
    scheduler = make_scheduler()
    scheduler.start()
    svc = GameService(engine, scheduler)
    yield svc
    await svc.close()
    scheduler.shutdown(wait=False)


def drop_consent(engine: Engine, user_id: str) -> None:
    """No consent record at all for ``user_id`` (e.g. removed by an operator)."""
    with session_scope(engine) as s:
        s.exec(delete(m.Consent).where(col(m.Consent.user_id) == user_id))


def files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def llmafia_dir(bundle: dict[str, str], game_id: str) -> str:
    """The game's folder in the bundle: its number, found through the manifest."""
    folder: dict[str, str] = json.loads(bundle["manifest.json"])["llmafia"]
    return "llmafia/" + next(k for k, v in folder.items() if v == game_id)


def word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE)


async def exported_table(service: GameService, out: Path) -> tuple[Table, dict[str, str]]:
    t = await play_table(service)
    drop_consent(service.engine, ERIN)
    report = export_games(service.engine, "all", out, with_agent_log=True, identities=PEOPLE)
    assert [g.game_id for g in report.exported] == [t.game_id]
    assert report.exported[0].withheld == ["[withheld]"]
    assert report.exported[0].withheld_lines == len(LINES[ERIN])
    return t, files(out)


async def test_bundle_has_no_identities(service: GameService, tmp_path: Path) -> None:
    t, bundle = await exported_table(service, tmp_path / "out")
    gid = t.game_id
    assert {"manifest.json", f"jsonl/{gid}.jsonl", f"agent_log/{gid}.jsonl"} <= set(bundle)
    assert {"csv/messages.csv", "csv/votes.csv", "csv/players.csv"} <= set(bundle)
    for name in (
        "config.json",
        "player_names.txt",
        "mafia_names.txt",
        "public_daytime_chat.txt",
        "public_nighttime_chat.txt",
        "public_manager_chat.txt",
        "who_wins.txt",
        "remaining_players.txt",
        f"{t.name_of[BOB]}_vote.txt",
        f"{t.name_of[BOB]}_survey.txt",
    ):
        assert f"{llmafia_dir(bundle, gid)}/{name}" in bundle, name
    for path, text in bundle.items():
        for secret in FORBIDDEN:
            assert secret.casefold() not in text.casefold(), f"{secret!r} in {path}"
        # the withheld player: neither their character name nor their lines
        assert not word(t.name_of[ERIN]).search(text), f"{t.name_of[ERIN]} in {path}"
        assert "QXE-LINE" not in text and "lanterns are lit" not in text
    # identities became the character names of the people they belong to
    chat = bundle[f"{llmafia_dir(bundle, gid)}/public_daytime_chat.txt"]
    carol_line = next(line for line in chat.splitlines() if "told me" in line)
    assert carol_line.endswith(
        f"{t.name_of[BOB]} told me, ask {t.name_of[ALICE]} or {t.name_of[BOB]}"
    )
    assert f"{t.name_of[BOB]}: ping {t.name_of[ALICE]} or mail [email] or call [phone]" in chat
    assert "] [withheld]: [withheld]\n" in chat
    assert f"{t.name_of[ALICE]}: {LINES[ALICE][0]}" in chat  # consenting people's lines stay
    log = bundle[f"agent_log/{gid}.jsonl"]
    assert "[withheld]: [withheld]" in log and LINES[ALICE][0] in log


async def test_formats_parse_and_match_the_store(
    service: GameService, engine: Engine, tmp_path: Path
) -> None:
    t, bundle = await exported_table(service, tmp_path / "out")
    gid = t.game_id
    with Session(engine) as s:
        n_messages = s.exec(
            select(func.count()).select_from(m.Message).where(m.Message.game_id == gid)
        ).one()
        n_votes = s.exec(
            select(func.count()).select_from(m.Vote).where(m.Vote.game_id == gid)
        ).one()
        n_events = s.exec(
            select(func.count()).select_from(m.Event).where(m.Event.game_id == gid)
        ).one()
    names = {*t.name_of.values()} - {t.name_of[ERIN]}

    events = [json.loads(line) for line in bundle[f"jsonl/{gid}.jsonl"].splitlines()]
    assert len(events) == n_events  # nothing private of the withheld player in this game
    assert [e["event_seq"] for e in events] == sorted(e["event_seq"] for e in events)
    for e in events:
        assert e["t"].endswith("+00:00") and "visible_to" not in e and "seat" not in e
    said = [e for e in events if e["kind"] == "message"]
    assert {e["name"] for e in said} <= names | {"[withheld]", t.agent_name}
    assert [e["text"] for e in said if e["name"] == "[withheld]"] == ["[withheld]"]
    over = next(e for e in events if e["kind"] == "game_over")
    assert "[withheld]" in [name for name, _ in over["roles"]]

    messages = list(csv.DictReader(io.StringIO(bundle["csv/messages.csv"])))
    assert len(messages) == n_messages
    assert {r["game_id"] for r in messages} == {gid}
    assert any(r["text"] == AGENT_LINE for r in messages)
    assert {r["phase"] for r in messages} >= {"day-1"}
    votes = list(csv.DictReader(io.StringIO(bundle["csv/votes.csv"])))
    assert len(votes) == n_votes == 6
    assert all(r["voter"] in names | {"[withheld]", t.agent_name} for r in votes)
    players = list(csv.DictReader(io.StringIO(bundle["csv/players.csv"])))
    assert sorted(r["withheld"] for r in players) == ["False"] * 5 + ["True"]
    assert [r["is_llm"] for r in players].count("True") == 1

    folder = llmafia_dir(bundle, gid)
    assert folder == "llmafia/1001"  # numbered, as LLMafia's analysis keys its games
    config = json.loads(bundle[f"{folder}/config.json"])
    assert len(config["players"]) == 6 and sum(p["is_llm"] for p in config["players"]) == 1
    assert "[withheld]" in bundle[f"{folder}/player_names.txt"].split("\n")
    assert bundle[f"{folder}/who_wins.txt"] == "Bystanders win!"
    # their answers are left out: an empty survey file, as for anyone who answered nothing
    assert bundle[f"{folder}/[withheld]_survey.txt"] == ""
    manager = bundle[f"{folder}/public_manager_chat.txt"]
    assert re.match(r"^\[\d\d:\d\d:\d\d\] Game-Manager: ", manager)
    assert "voted for" not in manager  # vote lines stay in the phase's chat, as in LLMafia
    manifest = json.loads(bundle["manifest.json"])
    assert manifest["games"][0]["withheld"] == ["[withheld]"]


async def test_skipped_games_say_why(service: GameService, engine: Engine, tmp_path: Path) -> None:
    t = await play_table(service)
    running = await play_table(service, finish=False, server="G0OTHER")
    with session_scope(engine) as s:
        server = s.exec(select(m.Server).where(m.Server.external_id == SERVER)).one()
        server.logging_enabled = False
    report = export_games(engine, [t.game_id, running.game_id], tmp_path / "out")
    assert report.exported == []
    assert report.skipped == {
        t.game_id: "logging is off on its server",
        running.game_id: "it is still running",
    }
    assert not (tmp_path / "out" / "llmafia").exists()
    assert export_games(engine, "all", tmp_path / "all").exported == []
    with pytest.raises(LookupError):
        export_games(engine, ["gnope"], tmp_path / "x")
    with pytest.raises(ValueError, match="unknown export format"):
        export_games(engine, "all", tmp_path / "x", formats=["pdf"])
    await service.end(running.game_id)


async def test_zip_and_command(
    service: GameService, engine: Engine, db_url: str, tmp_path: Path
) -> None:
    t = await play_table(service)
    data, report = export_zip(engine, [t.game_id], formats=["jsonl", "csv"], identities=PEOPLE)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = set(zf.namelist())
        content = "\n".join(zf.read(n).decode("utf-8") for n in names)
    assert names == {
        "manifest.json",
        f"jsonl/{t.game_id}.jsonl",
        "csv/messages.csv",
        "csv/votes.csv",
        "csv/players.csv",
        "csv/surveys.csv",
    }
    assert report.exported[0].withheld == []
    for secret in FORBIDDEN:
        assert secret.casefold() not in content.casefold()

    ids_file = tmp_path / "identities.json"
    ids_file.write_text(json.dumps(PEOPLE))
    out = io.StringIO()
    report = run_export(
        db_url,
        [t.game_id],
        tmp_path / "cli",
        "llmafia,csv",
        True,
        Console(file=out, width=200),
        identities_file=ids_file,
    )
    assert f"{t.game_id}: 6 players" in out.getvalue()
    assert set(report.formats) == {"llmafia", "csv"}
    text = bundle_text(tmp_path / "cli")
    for secret in FORBIDDEN:
        assert secret.casefold() not in text.casefold()


async def test_reexport_after_withdrawal_leaves_nothing(
    service: GameService, engine: Engine, tmp_path: Path
) -> None:
    t = await play_table(service)
    out = tmp_path / "out"
    export_games(engine, "all", out, identities=PEOPLE)
    assert LINES[ALICE][0] in bundle_text(out)
    assert (out / "llmafia" / "1001" / f"{t.name_of[ALICE]}_survey.txt").exists()
    withdraw(engine, "discord", SERVER, ALICE)
    with pytest.raises(LookupError):
        export_games(engine, [t.game_id, "gnope"], out)
    assert (out / "csv" / "messages.csv").exists()  # a refused export deletes nothing
    (out / "notes.txt").write_text("mine")
    report = export_games(engine, "all", out, formats=["llmafia"], identities=PEOPLE, force=True)
    assert report.exported[0].withheld == ["[withheld]"]
    text = bundle_text(out)
    assert "QXA-LINE" not in text and "qxa-second-remark" not in text
    assert not (out / "llmafia" / "1001" / f"{t.name_of[ALICE]}_survey.txt").exists()
    assert (out / "llmafia" / "1001" / "[withheld]_survey.txt").read_text() == ""
    assert not (out / "csv").exists() and not (out / "jsonl").exists()  # no stale formats
    assert (out / "notes.txt").read_text() == "mine"  # nothing else is touched


def test_scrubber_patterns() -> None:
    scrub = Scrubber(
        {"Bob McDistinctive": "Ziggy", "McDistinctive": "Ziggy", "U0X": "Ziggy", "Blake": "B"},
        {"U0X": "Ziggy"},
        protected=["Blake"],
    )
    assert scrub("hi <@U0X> and <@!U0X>, <@U9|someone> <#C1|general> <@&42>") == (
        "hi Ziggy and Ziggy, [player] [mention] [mention]"
    )
    assert scrub("Bob McDistinctive / mcdistinctive / @McDistinctive / U0X") == (
        "Ziggy / Ziggy / Ziggy / Ziggy"
    )
    assert scrub("mail a.b+c@mail.example.co.uk now") == "mail [email] now"
    assert scrub("call +1 (415) 555-0100 or 07700 900123") == "call [phone] or [phone]"
    # not phone numbers: times, dates, small counts; protected and game words stay
    kept = "at 12:30 on 2026-11-24, 3 votes, 1 2 3, Blake the mafia @here, @Blake @mafia"
    assert scrub(kept) == kept
    assert scrub("ask @someone_else.") == "ask [player]."
    assert name_variants("Bob McDistinctive") == {"Bob McDistinctive", "McDistinctive"}
    assert name_variants("alice.wonder@example.com") == {
        "alice.wonder@example.com",
        "alice.wonder",
    }
    assert redact_lines("[1] Al: yes\nBo: yes", [("Al", "yes")], "[x]") == "[1] Al: [x]\nBo: yes"
    assert redact_lines("he said long enough line", [("Al", "long enough line")], "[x]") == (
        "he said [x]"
    )


@pytest.mark.skipif(not llmafia_games_dir().is_dir(), reason="LLMafia data not present")
def test_imported_llmafia_games_read_back_unchanged(engine: Engine, tmp_path: Path) -> None:
    """The llmafia layout is the release's own: our reader reads an exported import back with
    the same players, lines and winner (0007 addresses players as "@Jamie")."""
    source = llmafia_games_dir()
    for folder in ("0007", "0013"):
        import_llmafia(engine, source / folder)
    assert export_games(engine, "all", tmp_path / "none").exported == []  # imports: only by id
    ids = [store_game_id("0007"), store_game_id("0013")]
    report = export_games(engine, ids, tmp_path / "out", formats=["llmafia"])
    assert [g.game_id for g in report.exported] == ids
    assert [g.llmafia_folder for g in report.exported] == ["0007", "0013"]
    for folder in ("0007", "0013"):
        original = read_game(source / folder)
        back = read_game(tmp_path / "out" / "llmafia" / folder)  # the release's number
        assert [p.name for p in back.players] == [p.name for p in original.players]
        assert [(x.speaker, x.text, x.place) for x in back.lines] == [
            (x.speaker, x.text, x.place) for x in original.lines
        ]
        assert back.winner == original.winner
        assert len(back.surveys) == len([s for s in original.surveys if s.final])


def test_quotes_in_agent_prompts_are_redacted() -> None:
    """Prompts quote a player's words as JSON strings (agent.prompting.speech), also cut short
    in the memory block; a withheld or withdrawn person's lines go in every form."""
    from datetime import UTC, datetime

    from agent.knowledge import ChatEntry
    from agent.prompting import chat_line, speech

    t = datetime(2026, 1, 1, 12, 0, 1, tzinfo=UTC)
    lines = ["yes", 'she said "vote Bo" twice, trust me on this one', "x" * 400]
    prompt = "\n".join(chat_line(ChatEntry(t, "stage", "Al", line, 1, 1)) for line in lines)
    prompt += f"\n- [12:00:01] Al: {speech(lines[2], 60)}"  # a memory line, cut
    prompt += '\n[12:00:02] Bo: "yes"\n[12:00:03] Bo: "Al said: she said \\"vote Bo\\" twice"'
    out = redact_lines(prompt, [("Al", line) for line in lines], "[x]")
    assert out.count('Al: "[x]"') == 4 and "xxxxx" not in out and "trust me" not in out
    assert '[12:00:02] Bo: "yes"' in out  # someone else's own words stay
