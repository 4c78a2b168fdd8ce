"""Anonymised research export of finished games: LLMafia folders, JSON lines, CSV tables.

Layout under ``out_dir``::

    manifest.json                     what was exported, withheld and skipped (no ids)
    llmafia/<number>/...              the LLMafia release's files (config.json, chats, votes,
                                      surveys, statuses, the agent's log, who_wins.txt, ...)
    jsonl/<game_id>.jsonl             every stored event, one JSON object a line, UTC ISO-8601
    csv/messages.csv, csv/votes.csv,  one table each across the exported games
    csv/players.csv, csv/surveys.csv
    csv/night_actions.csv             each night action, its actor, role, target and result
                                      (only when an exported game has one)
    agent_log/<game_id>.jsonl         the agent's decisions (only with ``with_agent_log``)

What may appear, and what never does:

- Players appear only by character name. Platform ids, account, display and nick names never
  do, also not inside text: ids and mentions (``<@U1>``, ``<@!1>``), the names the adapter
  passes as ``identities`` (user id -> names) and ``@handles`` become the character name of the
  person they belong to (a placeholder when that person did not play the game); e-mail
  addresses and phone numbers become "[email]" / "[phone]". See `bot.protection.dataset.scrub`.
- A person whose data may not be used (`bot.protection.consent.research_seats`: no research consent
in
  force at the game's end, declined, withdrawn) is "[withheld]" ("[withheld-2]", ... when there
  are several): the name everywhere and the text of their lines, also where others or the
  agent's prompts quote them. Their votes stay (everybody saw them announced), under that
  label; their survey answers and private night choices are left out.
- Games on servers with logging off, and games not yet ended, are skipped; the report and the
  manifest say why. "all" means every ended game played here; LLMafia imports (already public
  in their own release) are exported only when named.
- ``llmafia/`` is what LLMafia's own analysis code reads (``analyze.py``): one numbered folder
  a game (an imported game keeps its release number when free; games played here are numbered
  from 1001 on, above the release's pilot games, whose survey scale the analysis treats
  differently), mapped to our game id by the manifest (``llmafia`` and each game's
  ``llmafia_folder``). The Game-Manager lines of games played here are LLMafia's sentences,
  rebuilt from the events (`bot.protection.dataset.llmafia_manager`), not our narration. A game the
  format cannot hold (no agent, or more than one: the analysis finds its one LLM player by its
  log file) is left out of ``llmafia/`` with the reason in the manifest (``llmafia_left_out``);
  its csv and jsonl rows are written as usual. Chat lines left empty are left out and counted
  (``llmafia_empty_lines``).

The output folder (`bot.protection.dataset.outdir`): a new or empty folder, or, with ``force``, one
holding an earlier export, of which exactly the files that export wrote are replaced (so
re-exporting after a withdrawal, or with fewer games or formats, leaves nothing stale behind).
Any other folder is refused with one line before anything is written; a file of the user's is
never deleted or overwritten.

One line stays one line: player text never holds a line break in the LLMafia chats or the CSV
tables (`games.text.one_line`; older stored text is flattened on the way out), and JSON lines
escape U+2028, U+2029 and NEL as well as the breaks JSON itself escapes, so a line-based reader
cannot be made to see a line nobody wrote.
"""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from rich.console import Console
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.players import seat_story
from bot.protection.consent import CONSENT_VERSION, research_seats
from bot.protection.dataset.export_surveys import HEADER as SURVEYS_HEADER
from bot.protection.dataset.export_surveys import UNREVEALED, survey_rows
from bot.protection.dataset.llmafia_fit import llmafia_problem, setup_problem
from bot.protection.dataset.llmafia_manager import StoredEvent, manager_lines
from bot.protection.dataset.llmafia_model import MANAGER, ChatLine, LLMafiaGame, Survey
from bot.protection.dataset.llmafia_write import AGENT_LOG_MARKER, write_counted
from bot.protection.dataset.names import inside
from bot.protection.dataset.night_actions import HEADER as NIGHT_HEADER
from bot.protection.dataset.night_actions import night_action_rows
from bot.protection.dataset.outdir import MARKER, OutputFolder
from bot.protection.dataset.scrub import (
    PLAYER,
    WITHHELD,
    Scrubber,
    name_variants,
    redact_lines,
    replace_words,
)
from bot.protection.dataset.stored import SERVER_PLATFORM, SOURCE, game_from_store, resolve_game_ids
from bot.protection.dataset.tables import iso, put, write_csv, write_jsonl
from bot.store.db import make_engine
from bot.store.migrate import upgrade
from bot.store.models import Event, Game, LLMCall, Message, Phase, Seat, Server, Vote, utcnow
from games.roles import get_role

__all__ = [
    "FORMATS",
    "ExportReport",
    "ExportedGame",
    "export_file_name",
    "export_games",
    "export_zip",
    "load_identities",
    "run_export",
]

FORMATS = ("llmafia", "jsonl", "csv")
Format = Literal["llmafia", "jsonl", "csv"]
Identities = Mapping[str, Iterable[str]]

_ENDED = ("finished", "aborted")
_FAMILY = {"day": "day", "vote": "day", "night": "night", "night_vote": "night"}
# LLMafia folders of games played here start above the release's numbers (and its pilot games)
_FIRST_PLAYED_FOLDER = 1001
# Event payload keys: seat indices (dropped), single names, lists of names, (name, x) pairs.
_INDEX_KEYS = {"seat", "voter", "target", "targets", "victim", "chosen", "visible_to", "seats"}
_NAME_KEYS = {"name", "voter_name", "target_name", "victim_name", "chosen_name"}
_NAME_LIST_KEYS = {"players", "partners", "abstained", "tied", "target_names", "names"}
_PAIR_KEYS = {"tally", "roles"}
_TEXT_KEYS = {"text", "reason"}
# Private events of a withheld seat (their own night choice, what they learned) are left out.
_PRIVATE_OWN = {"night_action": "seat", "inspection_result": "seat", "private_note": "seat"}
_MESSAGES_HEADER = ["game_id", "t", "phase", "place", "speaker", "text"]
_VOTES_HEADER = ["game_id", "t", "phase", "kind", "voter", "target"]
# characters a line reader may end a line at that json.dumps leaves as they are
_PLAYERS_HEADER = ["game_id", "name", "role", "is_mafia", "is_llm", "survived", "withheld"]


@dataclass
class ExportedGame:
    game_id: str
    players: int
    withheld: list[str]
    withheld_lines: int
    files: list[str] = field(default_factory=list)
    llmafia_folder: str | None = None
    llmafia_left_out: str | None = None
    llmafia_empty_lines: int = 0


@dataclass
class ExportReport:
    out_dir: Path
    formats: list[str]
    with_agent_log: bool
    exported: list[ExportedGame] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    def summary(self) -> list[str]:
        out = [
            f"Exported {len(self.exported)} game(s) to {self.out_dir} "
            f"({', '.join(self.formats)}{', agent log' if self.with_agent_log else ''})."
        ]
        for g in self.exported:
            held = (
                f"; withheld: {', '.join(g.withheld)} ({g.withheld_lines} lines)"
                if g.withheld
                else ""
            )
            folder = f"; llmafia/{g.llmafia_folder}" if g.llmafia_folder else ""
            if g.llmafia_left_out:
                folder = f"; not in llmafia/: {g.llmafia_left_out}"
            out.append(f"  {g.game_id}: {g.players} players{held}{folder}")
        for game_id, why in self.skipped.items():
            out.append(f"  {game_id}: skipped, {why}")
        return out

    def manifest(self) -> dict[str, Any]:
        return {
            "exported_at": utcnow().isoformat(),
            "consent_version": CONSENT_VERSION,
            "formats": self.formats,
            "with_agent_log": self.with_agent_log,
            "games": [
                {
                    "game_id": g.game_id,
                    "players": g.players,
                    "withheld": g.withheld,
                    "withheld_lines": g.withheld_lines,
                    "files": g.files,
                    "llmafia_folder": g.llmafia_folder,
                    "llmafia_left_out": g.llmafia_left_out,
                    "llmafia_empty_lines": g.llmafia_empty_lines,
                }
                for g in self.exported
            ],
            "llmafia": {g.llmafia_folder: g.game_id for g in self.exported if g.llmafia_folder},
            "skipped": self.skipped,
        }


def export_games(
    engine: Engine,
    game_ids: Sequence[str] | Literal["all"],
    out_dir: Path,
    formats: Iterable[str] = FORMATS,
    with_agent_log: bool = False,
    identities: Identities | None = None,
    *,
    force: bool = False,
    revealed_only: bool = False,
) -> ExportReport:
    """Export ``game_ids`` (store ids, or "all") into ``out_dir``; see the module doc.
    ``revealed_only`` (the chat commands) skips finished games whose AI is not revealed yet.

    ``force`` replaces an earlier export in ``out_dir``; raises OutputError (a ValueError) for
    a folder that may not be written, before anything is written."""
    wanted = _formats(formats)
    report = ExportReport(Path(out_dir), wanted, with_agent_log)
    ids = _all_games(engine) if game_ids == "all" else list(dict.fromkeys(game_ids))
    _check_known(engine, ids)  # before anything is touched: a typo must not cost the old bundle
    folder = OutputFolder.claim(Path(out_dir), "export", force=force)
    try:
        _write_bundle(
            engine, ids, folder.staging, wanted, with_agent_log, identities, report, revealed_only
        )
    except BaseException:
        folder.abandon()
        raise
    folder.commit()
    return report


def _write_bundle(
    engine: Engine,
    ids: Sequence[str],
    out: Path,
    wanted: list[str],
    with_agent_log: bool,
    identities: Identities | None,
    report: ExportReport,
    revealed_only: bool = False,
) -> None:
    tables: dict[str, list[list[Any]]] = {"messages": [], "votes": [], "players": [], "surveys": []}
    tables["night_actions"] = []
    folders: set[str] = set()
    for game_id in ids:
        g, why = _prepare(engine, game_id, identities or {}, revealed_only)
        if g is None:
            report.skipped[game_id] = why
            continue
        files: list[str] = []
        exported = ExportedGame(g.id, len(g.seats), g.withheld_labels(), g.withheld_lines(), files)
        if "llmafia" in wanted:
            unfit = setup_problem(s.role for s in g.seats)
            game = g.llmafia(engine) if unfit is None else None
            left_out = unfit if game is None else llmafia_problem(game)
            if left_out is not None:
                exported.llmafia_left_out = left_out
            else:
                assert game is not None
                folder = _llmafia_folder(game.game_id if g.imported else None, folders)
                log = g.llmafia_agent_log() if with_agent_log else None
                written = write_counted(game, inside(out, f"llmafia/{folder}"), agent_log=log)
                exported.llmafia_folder = folder
                exported.llmafia_empty_lines = written.empty_lines
                files.append(f"llmafia/{folder}/")
        if "jsonl" in wanted:
            write_jsonl(inside(out, f"jsonl/{g.id}.jsonl"), g.events())
            files.append(f"jsonl/{g.id}.jsonl")
        if "csv" in wanted:
            tables["messages"].extend(g.message_rows())
            tables["votes"].extend(g.vote_rows())
            tables["players"].extend(g.player_rows())
            tables["surveys"].extend(survey_rows(engine, g))
            labels = {s.index: g.label[s.character_name] for s in g.seats}
            night = night_action_rows(g.id, g.event_rows, labels, g.allowed, g.name)
            tables["night_actions"].extend(night)
        if with_agent_log:
            write_jsonl(inside(out, f"agent_log/{g.id}.jsonl"), g.agent_log())
            files.append(f"agent_log/{g.id}.jsonl")
        report.exported.append(exported)
    if "csv" in wanted:
        for name, header in (
            ("messages", _MESSAGES_HEADER),
            ("votes", _VOTES_HEADER),
            ("players", _PLAYERS_HEADER),
            ("surveys", SURVEYS_HEADER),
            ("night_actions", NIGHT_HEADER),
        ):
            if name == "night_actions" and not tables[name]:
                continue  # (a game without night actions exports the files it always did)
            write_csv(out / "csv" / f"{name}.csv", header, tables[name])
    put(out / "manifest.json", json.dumps(report.manifest(), indent=2, ensure_ascii=False))


def _llmafia_folder(number: str | None, used: set[str]) -> str:
    """The game's folder under llmafia/: its release number when it has a free one, else the
    next free number from 1001 (never one holding "00001", which the analysis skips)."""
    if number is not None and number.isdigit() and "00001" not in number and number not in used:
        used.add(number)
        return number
    n = _FIRST_PLAYED_FOLDER
    while f"{n:04d}" in used or "00001" in f"{n:04d}":
        n += 1
    used.add(f"{n:04d}")
    return f"{n:04d}"


def export_file_name(now: datetime | None = None) -> str:
    """The name of an export sent in chat: the moment only, never a server's, workspace's or
    channel's id (a file passed on must not say where its games were played)."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return f"mafiabot-export-{moment:%Y%m%d-%H%M%S}.zip"


def export_zip(
    engine: Engine,
    game_ids: Sequence[str] | Literal["all"],
    formats: Iterable[str] = FORMATS,
    with_agent_log: bool = False,
    identities: Identities | None = None,
    *,
    revealed_only: bool = False,
) -> tuple[bytes, ExportReport]:
    """The same bundle as one zip in memory, for a platform command to upload."""
    with tempfile.TemporaryDirectory(prefix="mafiabot-export-") as tmp:
        root = Path(tmp) / "export"
        report = export_games(engine, game_ids, root, formats, with_agent_log, identities,
                              revealed_only=revealed_only)  # fmt: skip
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(root.rglob("*")):
                if path.is_file() and path.name != MARKER:
                    zf.write(path, path.relative_to(root).as_posix())
    report.out_dir = Path("export.zip")
    return buf.getvalue(), report


def load_identities(path: Path) -> dict[str, list[str]]:
    """A JSON file {"<user id>": ["account name", "display name", ...]} for the CLI.

    Raises ValueError (one line) when it cannot be read or has another shape."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise ValueError(f"--identities {path}: cannot read it ({e.strerror or e})") from None
    except ValueError as e:
        raise ValueError(f"--identities {path}: not a JSON file ({e})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object of user id -> list of names")
    out: dict[str, list[str]] = {}
    for user_id, names in data.items():
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"{path}: names of {user_id!r} must be a list of strings")
        out[str(user_id)] = list(names)
    return out


def run_export(
    db_url: str,
    games: Sequence[str] | None,
    out: Path,
    formats: str | Sequence[str],
    with_agent_log: bool,
    console: Console,
    identities_file: Path | None = None,
    *,
    force: bool = False,
) -> ExportReport:
    """``mafiabot export``: ``games`` None means all; formats as "llmafia,jsonl,csv".

    Bad options (formats, the identities file, the output folder) raise ValueError with one
    line before the database is opened."""
    if isinstance(formats, str):
        formats = [f.strip() for f in formats.split(",") if f.strip()]
    _formats(formats)
    identities = load_identities(identities_file) if identities_file is not None else None
    OutputFolder.check(out, "export", force=force)
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        ids: Sequence[str] | Literal["all"] = (
            "all" if games is None else resolve_game_ids(engine, _split(games))
        )
        report = export_games(engine, ids, out, formats, with_agent_log, identities, force=force)
    finally:
        engine.dispose()
    for line in report.summary():
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    return report


# --- per game ---------------------------------------------------------------------------------


@dataclass
class _Game:
    """One game's rows and the mappings that anonymise them."""

    id: str
    row: Game
    imported: bool
    seats: list[Seat]
    allowed: dict[int, bool]
    label: dict[str, str]  # character name -> exported name
    clean: Callable[[str], str]  # free text -> scrubbed text
    own_lines: dict[int, list[str]]  # seat -> texts (to find quotes of withheld people)
    phase_label: dict[int, str]
    messages: list[Message]
    votes: list[Vote]
    event_rows: list[Event]
    llm_calls: list[LLMCall]

    def name(self, character: str | None) -> str | None:
        return None if character is None else self.label.get(character, character)

    def seat_name(self, index: int | None) -> str | None:
        seat = next((s for s in self.seats if s.index == index), None)
        return None if seat is None else self.label[seat.character_name]

    def withheld_labels(self) -> list[str]:
        return [self.label[s.character_name] for s in self.seats if not self.allowed[s.index]]

    def withheld_lines(self) -> int:
        return sum(len(v) for k, v in self.own_lines.items() if not self.allowed[k])

    def message_text(self, speaker_seat: int | None, text: str) -> str:
        if speaker_seat is not None and not self.allowed.get(speaker_seat, False):
            return WITHHELD
        return self.clean(text)

    # ---- csv

    def message_rows(self) -> list[list[Any]]:
        return [
            [
                self.id,
                iso(m.t),
                self.phase_label.get(m.phase_seq or 0, ""),
                m.place,
                m.speaker if m.seat_index is None else self.seat_name(m.seat_index),
                self.message_text(m.seat_index, m.text),
            ]
            for m in self.messages
        ]

    def vote_rows(self) -> list[list[Any]]:
        return [
            [
                self.id,
                iso(v.t),
                self.phase_label.get(v.phase_seq, ""),
                v.kind,
                self.seat_name(v.voter_index),
                self.seat_name(v.target_index) or "",
            ]
            for v in self.votes
        ]

    def player_rows(self) -> list[list[Any]]:
        return [
            [
                self.id,
                self.label[s.character_name],
                s.role or "",
                _is_mafia(s.role),
                seat_story.agent_throughout(s),
                s.alive,
                not self.allowed[s.index],
            ]
            for s in self.seats
        ]

    # ---- jsonl

    def events(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for row in self.event_rows:
            payload = dict(row.payload)
            own = _PRIVATE_OWN.get(row.kind)
            if own is not None and not self.allowed.get(payload.get(own, -1), True):
                continue
            speaker = payload.get("seat") if row.kind == "message" else None
            record: dict[str, Any] = {"game_id": self.id, "event_seq": row.seq, "t": iso(row.t)}
            record["kind"] = row.kind
            record["place"] = payload.get("place", "stage")
            if own is not None:  # a night action or its result: whose (the seat is an index)
                record["actor"] = self.seat_name(payload.get(own))
            for key, value in payload.items():
                if key in _INDEX_KEYS or key in ("kind", "t", "place"):
                    continue
                record[key] = self._field(key, value, speaker)
            out.append(record)
        return out

    def _field(self, key: str, value: Any, speaker: int | None) -> Any:
        if key in _NAME_KEYS:
            return self.name(value) if isinstance(value, str) else value
        if key in _NAME_LIST_KEYS and isinstance(value, list):
            return [self.name(v) if isinstance(v, str) else v for v in value]
        if key in _PAIR_KEYS and isinstance(value, list):
            return [[self.name(p[0]), *p[1:]] if isinstance(p, list) and p else p for p in value]
        if key in _TEXT_KEYS and isinstance(value, str):
            return self.message_text(speaker, value) if key == "text" else self.clean(value)
        return value

    # ---- agent log

    def agent_log(self) -> list[dict[str, Any]]:
        return [
            {
                "game_id": self.id,
                "t": iso(c.t),
                "seat": self.seat_name(c.seat_index),
                "kind": c.kind,
                "model": c.model,
                "prompt": self.clean(c.prompt),
                "output": None if c.output is None else self.clean(c.output),
                "decision": None if c.decision is None else self.clean(c.decision),
                "error": None if c.error is None else self.clean(c.error),
                "fallback": c.fallback,
                "valid": c.valid,
                "latency_s": c.latency_s,
                "input_tokens": c.input_tokens,
                "output_tokens": c.output_tokens,
                "cost_usd": c.cost_usd,
            }
            for c in self.llm_calls
        ]

    # ---- llmafia

    def llmafia(self, engine: Engine) -> LLMafiaGame:
        g = game_from_store(engine, self.id)
        seat_of = {s.character_name: s.index for s in self.seats}
        lines = []
        for line in g.lines:
            if not self.imported and line.speaker == MANAGER:
                continue  # our narration: LLMafia's sentences are rebuilt from the events below
            seat = seat_of.get(line.speaker) if line.speaker != MANAGER else None
            lines.append(
                replace(
                    line,
                    speaker=self.name(line.speaker) or line.speaker,
                    text=self.message_text(seat, line.text),
                    raw=self.message_text(seat, line.raw) if line.raw else "",
                )
            )
        if not self.imported:
            lines.extend(
                manager_lines(
                    (StoredEvent(_naive(e.t), e.kind, e.payload) for e in self.event_rows),
                    day_minutes=g.day_minutes,
                    night_minutes=g.night_minutes,
                    phase_label=self.phase_label,  # "day-1", "night-1": LLMafia's phases
                    name=lambda n: self.name(n) or n,
                    is_mafia_role=_is_mafia,
                )
            )
        vote_files = {
            self.name(k) or k: [self._vote_entry(e) for e in v] for k, v in g.vote_files.items()
        }
        if not vote_files:
            for v in self.votes:
                voter, target = self.seat_name(v.voter_index), self.seat_name(v.target_index)
                if voter is not None and target is not None:
                    vote_files.setdefault(voter, []).append(target)
        surveys = [
            self._survey(s) for s in g.surveys if self.allowed.get(seat_of.get(s.player, -1), False)
        ]
        return replace(
            g,
            players=[replace(p, name=self.name(p.name) or p.name) for p in g.players],
            lines=_time_ordered(lines),
            votes=[
                replace(
                    v, voter=self.name(v.voter) or v.voter, target=self.name(v.target) or v.target
                )
                for v in g.votes
            ],
            eliminations=[replace(e, name=self.name(e.name) or e.name) for e in g.eliminations],
            surveys=surveys,
            vote_files=vote_files,
            remaining_players=[self.name(p) or p for p in g.remaining_players],
        )

    def llmafia_agent_log(self) -> str:
        """The agent's decisions in the release's log layout (``# NEW LOG`` blocks)."""
        blocks = []
        for c in self.llm_calls:
            parts = [
                "# NEW LOG",
                f"## TIME: {_naive(c.t).strftime('%H:%M:%S')}",
                f"## OPERATION: {c.kind}" + (f" ({c.model})" if c.model else ""),
            ]
            if c.decision is not None:
                parts.append(f"## DECISION: {self.clean(c.decision)}")
            if c.output is not None:
                parts.append(f"## CONTENT: {self.clean(c.output)}")
            if c.error is not None:
                parts.append(f"## ERROR: {self.clean(c.error)}")
            blocks.append("\n".join(parts) + "\n")
        return "".join(blocks) or AGENT_LOG_MARKER

    def _vote_entry(self, entry: str) -> str:
        return self.label.get(entry, self.clean(entry))

    def _survey(self, survey: Survey) -> Survey:
        return replace(
            survey,
            player=self.name(survey.player) or survey.player,
            about=self.name(survey.about),
            comments=None if survey.comments is None else self.clean(survey.comments),
        )


def _is_mafia(role: str | None) -> bool:
    if role is None:
        return False
    try:
        return get_role(role).team == "mafia"
    except Exception:  # a role this engine does not know: only "mafia" is mafia
        return role == "mafia"


def _naive(t: datetime) -> datetime:
    return t.astimezone(UTC).replace(tzinfo=None) if t.tzinfo else t


def _time_ordered(lines: list[ChatLine]) -> list[ChatLine]:
    return sorted(lines, key=lambda line: line.t)  # stable: same-second lines keep their order


def _prepare(
    engine: Engine, game_id: str, identities: Identities, revealed_only: bool = False
) -> tuple[_Game | None, str]:
    with Session(engine) as s:
        row = s.get(Game, game_id)
        if row is None:
            raise LookupError(f"no game {game_id!r} in the store")
        server = s.get(Server, row.server_id) if row.server_id is not None else None
        if server is None:
            return None, "its server is unknown (deleted), so consent cannot be checked"
        if not server.logging_enabled:
            return None, "logging is off on its server"
        if row.status not in _ENDED:
            return None, f"it is still {row.status}"
        if row.started_at is None:
            return None, "it never started"
        if revealed_only and row.status == "finished" and row.revealed_at is None:
            return None, UNREVEALED
        allowed = research_seats(s, game_id)
        seats = list(s.exec(select(Seat).where(Seat.game_id == game_id).order_by(col(Seat.index))))
        messages = list(
            s.exec(
                select(Message)
                .where(Message.game_id == game_id)
                .order_by(col(Message.t), col(Message.id))
            )
        )
        votes = list(
            s.exec(select(Vote).where(Vote.game_id == game_id).order_by(col(Vote.t), col(Vote.id)))
        )
        events = list(
            s.exec(select(Event).where(Event.game_id == game_id).order_by(col(Event.seq)))
        )
        calls = list(
            s.exec(
                select(LLMCall)
                .where(LLMCall.game_id == game_id)
                .order_by(col(LLMCall.t), col(LLMCall.id))
            )
        )
        phases = s.exec(select(Phase).where(Phase.game_id == game_id)).all()
    phase_label = {p.seq: f"{_FAMILY.get(p.kind, p.kind)}-{p.number}" for p in phases}
    label = _labels(seats, allowed)
    own_lines: dict[int, list[str]] = {}
    for m in messages:
        if m.seat_index is not None:
            own_lines.setdefault(m.seat_index, []).append(m.text)
    for e in events:
        if e.kind == "message" and isinstance(e.payload.get("seat"), int):
            text = str(e.payload.get("text", ""))
            lines = own_lines.setdefault(int(e.payload["seat"]), [])
            if text not in lines:
                lines.append(text)
    clean = _cleaner(seats, allowed, label, own_lines, identities)
    imported = server.platform == SERVER_PLATFORM or (row.config or {}).get("source") == SOURCE
    return (
        _Game(
            game_id,
            row,
            imported,
            seats,
            allowed,
            label,
            clean,
            own_lines,
            phase_label,
            messages,
            votes,
            events,
            calls,
        ),
        "",
    )


def _labels(seats: list[Seat], allowed: dict[int, bool]) -> dict[str, str]:
    held = [s for s in seats if not allowed[s.index]]
    label = {s.character_name: s.character_name for s in seats}
    for k, s in enumerate(held, 1):
        label[s.character_name] = WITHHELD if len(held) == 1 else f"[withheld-{k}]"
    return label


def _cleaner(
    seats: list[Seat],
    allowed: dict[int, bool],
    label: dict[str, str],
    own_lines: dict[int, list[str]],
    identities: Identities,
) -> Callable[[str], str]:
    """Free text -> text fit for export: quotes of withheld people out, identities out,
    withheld characters' names replaced by their labels."""
    by_user = {s.user_id: label[s.character_name] for s in seats if s.user_id is not None}
    names: dict[str, str] = {}
    mentions: dict[str, str] = {}
    for user_id in {*by_user, *identities}:
        target = by_user.get(user_id, PLAYER)
        mentions[user_id] = target
        for raw in [user_id, *identities.get(user_id, ())]:
            for variant in name_variants(str(raw)):
                names.setdefault(variant, target)
    scrub = Scrubber(names, mentions, protected=[s.character_name for s in seats], links=True)
    held = {s.index: s.character_name for s in seats if not allowed[s.index]}
    quotes = [(held[i], t) for i, texts in own_lines.items() if i in held for t in texts]
    relabel = {name: label[name] for name in held.values()}

    def clean(text: str) -> str:
        return replace_words(scrub(redact_lines(text, quotes, WITHHELD)), relabel)

    return clean


def _all_games(engine: Engine) -> list[str]:
    with Session(engine) as s:
        rows = s.exec(
            select(Game.id)
            .join(Server, col(Server.id) == col(Game.server_id))
            .where(
                col(Game.status).in_(_ENDED),
                col(Game.started_at).is_not(None),
                Server.platform != SERVER_PLATFORM,
            )
            .order_by(col(Game.started_at), col(Game.id))
        ).all()
    return list(rows)


def _formats(formats: Iterable[str]) -> list[str]:
    out = list(dict.fromkeys(f.strip().lower() for f in formats if f.strip()))
    unknown = [f for f in out if f not in FORMATS]
    if unknown or not out:
        raise ValueError(f"unknown export format(s) {unknown}; choose from {', '.join(FORMATS)}")
    return out


def _split(games: Sequence[str]) -> list[str]:
    return [g.strip() for item in games for g in item.split(",") if g.strip()]


def _check_known(engine: Engine, ids: Sequence[str]) -> None:
    with Session(engine) as s:
        known = set(s.exec(select(Game.id).where(col(Game.id).in_(list(ids)))).all())
    missing = [g for g in ids if g not in known]
    if missing:
        raise LookupError(f"no game {missing[0]!r} in the store")
