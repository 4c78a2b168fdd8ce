"""Put published LLMafia games into the bot's store.

Imported games sit next to games played here so one report covers both. How the LLMafia
records map onto the store's rows:

- Ids. A game becomes ``llmafia-<folder>`` (``llmafia-0013``) under one Server row (platform
  "import", external id "llmafia"). Importing a game again REPLACES the earlier import (its rows
  are deleted and written anew), so a fixed reader can be re-run over a filled database; an
  existing game with that id that did not come from this importer is never touched.
- Time. The release's clock times carry no zone (the host's wall clock, never stated). They are
  stored as if they were UTC, because UTCDateTime needs aware times; read them as the host's
  local time, not as real UTC instants. ``Game.config["time_zone"]`` says so too.
- Phases. The store models a day as a discussion phase ("day") followed by a vote phase
  ("vote"), the night likewise ("night", "night_vote"), because that is how games played here
  run. An LLMafia phase is split at its "... now it's time to vote!" line; a host restart's
  re-announcement opens a new discussion row with the same number (so 0014's day 2 is day,
  day, vote, day, vote). Every line and vote goes to the row open when it was said.
- Messages. Player lines get their seat's index; Game-Manager lines (announcements in the
  manager chat, "X voted for Y" in the day/night chats) have speaker "Game-Manager" and seat
  NULL. ``place`` is the reader's: "stage" (day chat), "den" (night chat), "manager".
- Votes. Only the host's announced votes have times, so only they become Vote rows. Announced
  votes of players already out (re-announced by a restarted host) and untimed vote-file entries
  are skipped and counted; the raw vote files stay in ``config["llmafia"]`` for export.
- Surveys. Each respondent's last answer becomes a SurveyResponse about the LLM's seat; earlier
  answers of a respondent who filled the form twice are skipped and counted. Ratings are the
  reader's 1-5 values (0-100 pilot answers mapped as 1 + 4*v/100) with ``original_scale``.
- Privacy. The reader never keeps ``real_name``, notes or local paths, so none reach the store.

`bot.protection.dataset.stored.game_from_store` turns stored rows back into an LLMafiaGame, so a
game
can be exported in the release's layout with `bot.protection.dataset.llmafia_write.write_game`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.protection.dataset.llmafia_model import (
    MANAGER,
    LLMafiaGame,
    Repair,
)
from bot.protection.dataset.stored import SERVER_EXTERNAL_ID, SERVER_PLATFORM, SOURCE, store_game_id
from bot.store.db import session_scope
from bot.store.models import (
    Action,
    Event,
    Game,
    Message,
    Seat,
    Server,
    SurveyResponse,
    Vote,
)
from bot.store.models import Phase as PhaseRow
from research.llmafia import BadGame, find_game_folders, read_game

__all__ = [
    "ImportReport",
    "ImportResult",
    "SkippedGame",
    "import_game",
    "import_llmafia",
]

AGENT_KIND = "llmafia"
TIME_ZONE_NOTE = "LLMafia clock times have no time zone (the host's wall clock); stored as if UTC"

ANNOUNCE = re.compile(r"^Now it's (Daytime|Nighttime) for ")
VOTED_FOR = re.compile(r"^\S+ voted for \S+\s*$")
VOTING_STARTS = re.compile(r"^(Daytime|Nighttime) has ended, now it's time to vote!")

_TALK_KIND = {"day": "day", "night": "night"}
_VOTE_KIND = {"day": "vote", "night": "night_vote"}
_CHILD_TABLES: tuple[type[Any], ...] = (
    SurveyResponse,
    Action,
    Event,
    Vote,
    Message,
    PhaseRow,
    Seat,
)


@dataclass
class ImportResult:
    """What one game's import did, for the CLI to print and for tests to check."""

    game_id: str
    source_id: str
    replaced: bool
    repairs: list[Repair]
    counts: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> list[str]:
        """Plain-text lines: what was imported, what was skipped, what the reader repaired."""
        verb = "replaced" if self.replaced else "imported"
        counts = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in self.counts.items())
        out = [f"{self.source_id} -> {self.game_id} ({verb}): {counts}"]
        if self.skipped:
            out.append(
                "  skipped: "
                + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in self.skipped.items())
            )
        for note in self.notes:
            out.append(f"  note: {note}")
        for r in self.repairs:
            times = f" (x{r.count})" if r.count != 1 else ""
            out.append(f"  repaired [{r.kind}]{times}: {r.detail}")
        return out


@dataclass
class SkippedGame:
    """A game folder that was not imported, and why (the file and the reason)."""

    folder: Path
    reason: str

    def summary(self) -> str:
        return f"{self.folder.name}: skipped, {self.reason}"


@dataclass
class ImportReport:
    """Every game folder found: imported (``imported``) or skipped with the reason."""

    imported: list[ImportResult] = field(default_factory=list)
    skipped: list[SkippedGame] = field(default_factory=list)


def import_llmafia(engine: Engine, path: Path) -> ImportReport:
    """Import one LLMafia game folder, or every game in a folder of them (or the release root).

    Each game is read and written in its own transaction: a game that cannot be read or
    stored is skipped with the file and the reason, and the others go on. Raises
    FileNotFoundError when ``path`` holds no game folder, ValueError when it is a file.
    """
    folders = find_game_folders(Path(path))
    if not folders:
        raise FileNotFoundError(f"no LLMafia game folders (with config.json) under {path}")
    report = ImportReport()
    root = Path(path).resolve()
    for folder in folders:
        if not folder.resolve().is_relative_to(root):
            report.skipped.append(
                SkippedGame(folder, f"{folder}: a link to a folder outside {path}")
            )
            continue
        try:
            report.imported.append(import_game(engine, read_game(folder)))
        except sa.exc.SQLAlchemyError:
            raise  # the database, not this game: stop
        except Exception as e:  # BadGame, an unreadable file, data the reader chokes on
            report.skipped.append(SkippedGame(folder, _one_line_reason(e)))
    return report


def _one_line_reason(e: Exception) -> str:
    text = " ".join(str(e).split())
    if isinstance(e, BadGame):
        return text
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def import_game(engine: Engine, game: LLMafiaGame) -> ImportResult:
    """Write one game read by ``research.llmafia`` into the store (replacing an old import)."""
    gid = store_game_id(game.game_id)
    with session_scope(engine) as session:
        replaced = _remove_previous(session, gid)
        result = _Writer(session, game, gid).write()
        result.replaced = replaced
    return result


def _remove_previous(session: Session, gid: str) -> bool:
    existing = session.get(Game, gid)
    if existing is None:
        return False
    if (existing.config or {}).get("source") != SOURCE:
        raise ValueError(f"game {gid} exists and was not imported from LLMafia; not replacing it")
    # Explicit deletes instead of relying on ON DELETE CASCADE: SQLite enforces it only when the
    # connection enabled foreign keys, and survey rows have no ORM relationship on Game.
    for model in _CHILD_TABLES:
        session.execute(sa.delete(model).where(model.game_id == gid))
    session.execute(sa.delete(Game).where(col(Game.id) == gid))
    session.flush()
    session.expunge_all()
    return True


def _utc(t: datetime) -> datetime:
    """An LLMafia wall-clock time, stored as if it were UTC (see the module doc)."""
    return t.replace(tzinfo=UTC)


class _Writer:
    def __init__(self, session: Session, game: LLMafiaGame, gid: str) -> None:
        self.s = session
        self.g = game
        self.gid = gid
        self.seat_of = {p.name: i for i, p in enumerate(game.players)}
        self.skipped: Counter[str] = Counter()
        self.counts: dict[str, int] = {}
        self.line_seq: list[int] = []  # the store phase of each of ``game.lines``
        self.first_seq: dict[str, int] = {}  # reader phase label -> its first store phase
        self.vote_line_seq: dict[tuple[str, datetime, str], int] = {}

    def write(self) -> ImportResult:
        g = self.g
        end = max((line.t for line in g.lines), default=g.start_time)
        server = self.server()
        out_names = {e.name for e in g.eliminations}
        row = Game(
            id=self.gid,
            server_id=server.id,
            status="finished" if g.winner is not None else "aborted",
            config=self.config(),
            seed=0,
            created_at=_utc(g.start_time),
            started_at=_utc(g.start_time),
            ended_at=_utc(end),
            winner=g.winner,
            end_reason=self.end_reason(),
        )
        self.s.add(row)
        self.s.flush()
        for i, p in enumerate(g.players):
            self.s.add(
                Seat(
                    game_id=self.gid,
                    index=i,
                    character_name=p.name,
                    role="mafia" if p.is_mafia else "bystander",
                    alive=p.name not in out_names,
                    user_id=None,
                    is_agent=p.is_llm,
                    agent_kind=AGENT_KIND if p.is_llm else None,
                    joined_at=_utc(g.start_time),
                )
            )
        self.counts["seats"] = len(g.players)
        self.counts["phases"] = self.phases(end)
        self.messages()
        self.votes()
        self.surveys()
        return ImportResult(
            game_id=self.gid,
            source_id=g.game_id,
            replaced=False,
            repairs=list(g.repairs),
            counts=self.counts,
            skipped={k: v for k, v in self.skipped.items() if v},
            notes=[TIME_ZONE_NOTE],
        )

    def server(self) -> Server:
        found = self.s.exec(
            select(Server).where(
                Server.platform == SERVER_PLATFORM, Server.external_id == SERVER_EXTERNAL_ID
            )
        ).first()
        if found is not None:
            return found
        server = Server(
            platform=SERVER_PLATFORM,
            external_id=SERVER_EXTERNAL_ID,
            name="LLMafia release (Eckhaus et al., MIT)",
            logging_enabled=True,
        )
        self.s.add(server)
        self.s.flush()
        return server

    def config(self) -> dict[str, Any]:
        g = self.g
        return {
            "source": SOURCE,
            "game_id": g.game_id,
            "day_minutes": g.day_minutes,
            "night_minutes": g.night_minutes,
            "time_zone": TIME_ZONE_NOTE,
            "llm_config": {p.name: p.llm_config for p in g.players if p.is_llm},
            "repairs": [{"kind": r.kind, "detail": r.detail, "count": r.count} for r in g.repairs],
            "llmafia": {
                "winner_declared": g.winner_declared,
                # LLMafia's own text of the lines cleaning changed: (t, place, speaker, text, raw)
                "raw_texts": [
                    [line.t.isoformat(), line.place, line.speaker, line.text, line.raw]
                    for line in g.lines
                    if line.raw
                ],
                "remaining_players": list(g.remaining_players),
                "phase_status": g.phase_status,
                "survey_scale": g.survey_scale,
                "config_path": g.config_path,
                "vote_files": {k: list(v) for k, v in g.vote_files.items()},
            },
        }

    def end_reason(self) -> str:
        g = self.g
        if g.winner is None:
            return "llmafia: the game stalled and neither side had won"
        if g.winner_declared:
            return f"llmafia: who_wins.txt declares the {g.winner}"
        return f"llmafia: who_wins.txt is empty (stalled); {g.winner} inferred from who was left"

    def phases(self, game_end: datetime) -> int:
        """One talk row per (re)opened discussion, one vote row per vote call.

        The host's timeline inside an LLMafia phase: the discussion opens (again after each
        restart re-announcement) and a "time to vote!" line opens a vote. Each opening becomes
        a row, so every line and every vote lands in the row that was open when it was said.
        """
        g = self.g
        by_phase: dict[str, list[int]] = {}
        for i, line in enumerate(g.lines):
            by_phase.setdefault(line.phase, []).append(i)
        self.line_seq = [0] * len(g.lines)
        seq = 0
        for n, p in enumerate(g.phases):
            minutes = g.day_minutes if p.kind == "day" else g.night_minutes
            end = p.end if p.end is not None else (game_end if n + 1 == len(g.phases) else None)
            # (start, is_vote) of each row, and the row each line of the phase falls in
            rows: list[tuple[datetime, bool]] = [(p.start, False)]
            restarts = list(p.restarts)
            opened = False  # the phase's own opening announcement has been seen
            for i in by_phase.get(p.label, []):
                line = g.lines[i]
                if (
                    line.speaker == MANAGER
                    and line.place == "manager"
                    and ANNOUNCE.match(line.text)
                ):
                    if opened and line.t in restarts:
                        restarts.remove(line.t)
                        rows.append((line.t, False))
                    opened = True
                elif (
                    line.speaker == MANAGER
                    and line.place != "manager"
                    and VOTING_STARTS.match(line.text)
                ):
                    rows.append((line.t, True))
                self.line_seq[i] = seq + len(rows)
            for k, (start, is_vote) in enumerate(rows):
                row_end = rows[k + 1][0] if k + 1 < len(rows) else end
                self.s.add(
                    PhaseRow(
                        game_id=self.gid,
                        seq=seq + k + 1,
                        kind=(_VOTE_KIND if is_vote else _TALK_KIND)[p.kind],
                        number=p.number,
                        started_at=_utc(start),
                        # the host waited for every vote; a discussion ran for its minutes
                        deadline=None if is_vote else _utc(start + timedelta(minutes=minutes)),
                        ended_at=None if row_end is None else _utc(row_end),
                    )
                )
            self.first_seq[p.label] = seq + 1
            seq += len(rows)
        return seq

    def messages(self) -> None:
        rows: list[Message] = []
        player = manager = strangers = 0
        for i, line in enumerate(self.g.lines):
            seat = self.seat_of.get(line.speaker) if line.speaker != MANAGER else None
            if line.speaker == MANAGER:
                manager += 1
                if VOTED_FOR.match(line.text):
                    self.vote_line_seq[(line.phase, line.t, line.text)] = self.line_seq[i]
            elif seat is None:
                strangers += 1
            else:
                player += 1
            rows.append(
                Message(
                    game_id=self.gid,
                    phase_seq=self.line_seq[i],
                    place=line.place,
                    seat_index=seat,
                    speaker=line.speaker,
                    text=line.text,
                    t=_utc(line.t),
                )
            )
        # one add_all: rows are inserted, and get ids, in reader order (game_from_store relies
        # on it to break ties between lines stamped in the same second)
        self.s.add_all(rows)
        self.s.flush()
        self.counts["messages"] = len(rows)
        self.counts["player_lines"] = player
        self.counts["manager_lines"] = manager
        if strangers:
            self.skipped["seat_for_unknown_speakers"] = strangers

    def votes(self) -> None:
        kinds = {p.label: p.kind for p in self.g.phases}
        n = 0
        for v in self.g.votes:
            if v.source != "announced" or v.t is None or v.phase is None:
                self.skipped["untimed_vote_file_entries"] += 1
                continue
            if v.valid is False:
                self.skipped["stale_reannounced_votes"] += 1
                continue
            voter, target = self.seat_of.get(v.voter), self.seat_of.get(v.target)
            if voter is None or target is None:
                self.skipped["votes_naming_unknown_players"] += 1
                continue
            # the row its announcement was said in
            key = (v.phase, v.t, f"{v.voter} voted for {v.target}")
            seq = self.vote_line_seq.get(key, self.first_seq[v.phase])
            self.s.add(
                Vote(
                    game_id=self.gid,
                    phase_seq=seq,
                    kind="night" if kinds[v.phase] == "night" else "day",
                    voter_index=voter,
                    target_index=target,
                    t=_utc(v.t),
                )
            )
            n += 1
        self.counts["votes"] = n

    def surveys(self) -> None:
        n = 0
        for s in self.g.surveys:
            if not s.final:
                self.skipped["earlier_survey_attempts"] += 1
                continue
            seat = self.seat_of.get(s.player)
            if seat is None:
                self.skipped["surveys_from_unknown_players"] += 1
                continue
            self.s.add(
                SurveyResponse(
                    game_id=self.gid,
                    seat_index=seat,
                    about_seat_index=None if s.about is None else self.seat_of.get(s.about),
                    identified_ai=s.identified_llm,
                    guessed_name=None,  # the release records only whether the guess was right
                    similarity=s.similarity,
                    timing=s.timing,
                    relevance=s.relevance,
                    original_scale=s.original_scale,
                    comments=s.comments,
                    t=None,
                    source=SOURCE,
                )
            )
            n += 1
        self.counts["surveys"] = n
