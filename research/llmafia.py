"""Read published LLMafia games (the release by Niv Eckhaus et al., MIT) into plain records.

A game folder holds config.json, the three public chats ("[HH:MM:SS] Name: text" lines), one
vote/survey/status/chat file per player and a few one-line state files. The files were written
live by a host process that sometimes crashed and was restarted, so they need repairs; every
repair made is listed in ``LLMafiaGame.repairs`` so an analysis can say what it stands on.

How the reader decides things (see the tests for the per-game numbers):

- Dates. Lines carry only HH:MM:SS. The date comes from the name of the config the game was
  created from (``config140125_1212.json``, ``pilot121224/...``: ddmmyy); without one a nominal
  1970-01-01 is used and a repair says so. A time is placed relative to the game start, modulo a
  day: up to 18 h after the start is the same or the next day (a game crossing midnight), more
  than that means a few hours *before* the start (the agent log begins before the game).
- Start. game_start_time.txt is written each time the host starts, so after a restart it holds
  the restart time. When it is more than a minute off the first manager announcement, the
  announcement's time is the start.
- Going backwards. A timestamp earlier than the line before it has three causes, told apart by
  content: (1) a host restart re-appended every player's whole chat file to the day chat, so
  exact copies of earlier lines reappear; they are removed (and copies of mafia night lines that
  the replay pushed into the day chat are removed from it); (2) midnight, handled by the clock
  above; (3) genuine disorder: the LLM stamps a message when it schedules it and writes it
  seconds later, and messages typed while the host was down first reach the chat in a restart
  replay. Those are kept with their own timestamps, and all lines are ordered by time.
- Phases. The manager chat announces each phase. A phase re-announced before anyone was voted
  out is a host restart of that same phase, not a new one. A line belongs to the phase whose
  span contains its time; at an exact boundary second the phase of the line's own chat (day chat
  -> day, night chat -> night) wins. The host's "X voted for Y" lines belong to the voting that
  the last "... has ended, now it's time to vote!" line of the same chat opened. The host only
  copied messages into a chat while it was open, so a message typed during a vote or the other
  phase shows up when its chat reopens: ``ChatLine.shown_in`` names that phase.
- Votes. Times exist only for the host's "X voted for Y" announcements. ``<Name>_vote.txt``
  holds a player's successive votes without times (in the pilot games only the last one: the
  host overwrote the file); entries no announcement accounts for are kept as untimed votes.
- Survey scale. The pilot games asked for 0–100, later ones for 1–5. Per game: any answer of 0
  or above 5 proves 0–100; otherwise the later survey's extra question ("Was the LLM
  identified") marks 1–5; a game with neither signal is read as 1–5 and flagged ambiguous.

What a folder must hold, or it is not read (:class:`BadGame`, naming the file and the reason;
``import-llmafia`` skips that game and goes on with the others), and how its files are read
safely: `research.llmafia_folder`. Votes and the outcome (winner, roles, status files):
`research.llmafia_outcome`.

Account names. ``real_name`` values of the config and the real names of real_names.txt are read
only to be replaced, wherever a chat line or survey comment names them, by that player's
character name (a repair counts the texts); they are kept nowhere.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any, Literal, cast

from bot.protection.dataset.llmafia_model import (
    MANAGER,
    ChatLine,
    Elimination,
    LLMafiaGame,
    Phase,
    Place,
    Player,
    Repair,
    Role,
    Scale,
    Survey,
    VoteRecord,
    place_time,
)
from bot.protection.dataset.llmafia_survey import (
    SurveyAnswers,
    detect_scale,
    parse_survey_text,
    to_survey,
)
from bot.protection.dataset.llmafia_write import write_game
from bot.protection.dataset.scrub import GAME_WORDS, name_variants, replace_words
from research.llmafia_folder import (
    DAY_FILE,
    MANAGER_FILE,
    MAX_LINE_CHARS,
    NIGHT_FILE,
    BadGame,
    GameFolder,
    RawLine,
)
from research.llmafia_outcome import (
    VOTED_FOR,
    build_votes,
    check_roles,
    check_status_files,
    decide_winner,
    read_vote_files,
)
from research.llmafia_text import BACKSPACE, CONTROL, ESCAPE, HEBREW, TextCleaner

__all__ = [
    "MAX_LINE_CHARS",
    "BadGame",
    "ChatLine",
    "Elimination",
    "LLMafiaGame",
    "Phase",
    "Player",
    "Repair",
    "Survey",
    "VoteRecord",
    "find_game_folders",
    "parse_chat_line",
    "read_game",
    "read_games",
    "write_game",
]

NOMINAL_DATE = date(1970, 1, 1)
ANONYMIZED = "ANONYMIZED"
_FILE_OF: dict[Place, str] = {"stage": DAY_FILE, "den": NIGHT_FILE, "manager": MANAGER_FILE}

_LINE = re.compile(r"^\[(\d{1,2}):(\d{2}):(\d{2})\] ([^:]+?): ?(.*)$")
_ANNOUNCE = re.compile(r"^Now it's (Daytime|Nighttime) for [\d.]+ minutes?\b")
_VOTED_OUT = re.compile(r"^(.+?) was voted out\. Their role was (mafia|bystander)\s*$")
_CUT_TO_VOTE = re.compile(r"^There is only one mafia member left")
_VOTING_STARTS = re.compile(r"^(Daytime|Nighttime) has ended, now it's time to vote!")
_CONFIG_DATE = re.compile(r"(?<!\d)(\d{2})(\d{2})(\d{2})(?:_(\d{2})(\d{2}))?(?!\d)")
_START_SLACK = timedelta(minutes=1)


def parse_chat_line(raw: str) -> tuple[time, str, str] | None:
    """'[HH:MM:SS] Name: text' -> (time, name, text), or None when the line is not one."""
    m = _LINE.match(raw)
    if m is None:
        return None
    hh, mm, ss = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if hh > 23 or mm > 59 or ss > 59:
        return None
    return time(hh, mm, ss), m.group(4), m.group(5)


def find_game_folders(path: Path) -> list[Path]:
    """The game folders under ``path``: itself when it is one, else its sub-folders holding a
    config.json (the release's root, which keeps its games in ``games/``, works too).

    Raises FileNotFoundError (no such path) or ValueError (a file), one line each.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such folder")
    if not path.is_dir():
        raise ValueError(
            f"{path} is a file: give a game folder, a folder of game folders or the release's root"
        )
    if (path / "config.json").exists():
        return [path]
    found = [p for p in sorted(path.iterdir()) if p.is_dir() and (p / "config.json").exists()]
    if not found and (path / "games").is_dir():
        return find_game_folders(path / "games")
    return found


def read_games(path: Path) -> list[LLMafiaGame]:
    """All games under ``path`` (see :func:`find_game_folders`); raises on the first bad one."""
    return [read_game(p) for p in find_game_folders(path)]


def read_game(path: Path) -> LLMafiaGame:
    """Read one game folder, repairing what the release needs repaired (see the module doc)."""
    return _GameReader(Path(path)).read()


# ---------------------------------------------------------------------------------------------


@dataclass
class _PhaseDraft:
    kind: Literal["day", "night"]
    number: int
    start: datetime
    voting_start: datetime | None = None
    voting_seq: dict[str, int] = field(default_factory=dict)  # chat -> seq of its vote call
    restarts: list[datetime] = field(default_factory=list)
    eliminated: bool = False

    @property
    def label(self) -> str:
        return f"{self.kind}-{self.number}"


class _GameReader(GameFolder):
    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.cleaner = TextCleaner()
        self.phases: list[_PhaseDraft] = []
        self.midnight_lines = 0
        self.pregame_lines = 0
        self.config_tod: time | None = None
        self.start = datetime.combine(NOMINAL_DATE, time(0, 0, 0))
        self.phase_starts: list[datetime] = []
        self.accounts: dict[str, str] = {}  # account name (variant) -> character name
        self.character_names: list[str] = []
        self.scrubbed = 0

    # -- the whole read -----------------------------------------------------------------------

    def read(self) -> LLMafiaGame:
        config = self.config()
        players = self.read_players(config)
        day_minutes = float(config.get("daytime_minutes", 0))
        night_minutes = float(config.get("nighttime_minutes", 0))
        config_path = config.get("config_original_path_when_game_created")
        config_path = config_path if isinstance(config_path, str) else None

        manager_raw = self.dedupe(MANAGER_FILE, self.file_lines(MANAGER_FILE))
        night_raw = self.dedupe(NIGHT_FILE, self.file_lines(NIGHT_FILE))
        day_raw = self.dedupe(DAY_FILE, self.file_lines(DAY_FILE))
        day_raw = self.drop_leaked_night_lines(day_raw, night_raw)

        self.start = self.find_start(manager_raw, config_path)
        manager = self.timed(manager_raw, "manager")
        day = self.timed(day_raw, "stage")
        night = self.timed(night_raw, "den")
        eliminations_raw = self.build_phases(manager)
        self.phase_starts = [p.start for p in self.phases]
        self.assign_phases(day, "day", DAY_FILE)
        self.assign_phases(night, "night", NIGHT_FILE)
        self.assign_shown(day, "day", DAY_FILE)
        self.assign_shown(night, "night", NIGHT_FILE)
        if self.midnight_lines:
            self.fix(
                "midnight",
                f"{self.midnight_lines} lines are stamped after midnight; dated the next day",
                self.midnight_lines,
            )
        if self.pregame_lines:
            self.fix(
                "pregame_lines",
                f"{self.pregame_lines} chat lines are stamped before the first phase; "
                "counted in the first phase",
                self.pregame_lines,
            )
        self.report_text_fixes("chat line")

        phases = self.frozen_phases()
        labels = [p.label for p in phases]
        ordered = sorted(
            [*manager, *day, *night],
            key=lambda r: (r.phase, r.t, r.sub, ("manager", "stage", "den").index(r.place), r.seq),
        )
        lines = [
            ChatLine(
                r.t,
                labels[r.phase],
                r.place,
                r.speaker,
                r.text,
                labels[r.phase if r.shown < 0 else r.shown],
                r.raw,
            )
            for r in ordered
        ]

        eliminations = [
            Elimination(name, role, labels[idx], t) for name, role, idx, t in eliminations_raw
        ]
        check_roles(self, eliminations, players)
        elim_phase: dict[str, int] = {}
        for e in eliminations:
            elim_phase.setdefault(e.name, labels.index(e.phase))
        names = {p.name for p in players} | {MANAGER}
        strangers = sorted({r.speaker for r in ordered} - names)
        if strangers:
            self.fix("unknown_speaker", f"speakers not in config: {', '.join(strangers)}")
        vote_files = read_vote_files(self, players)
        votes = build_votes(self, ordered, labels, elim_phase, vote_files)

        remaining = self.file_lines("remaining_players.txt")
        winner, declared = decide_winner(self, players, eliminations, remaining)
        check_status_files(self, players, eliminations)
        phase_status = (self.text_of("phase_status.txt") or "").strip()
        if phase_status.endswith("Voting"):
            self.fix(
                "stalled",
                f"phase_status.txt is {phase_status!r}: the game stopped while waiting for votes",
            )

        surveys, scale = self.read_surveys(players)
        if self.scrubbed:
            self.fix(
                "account_names_scrubbed",
                f"{self.scrubbed} chat lines or survey comments named a player's account "
                "name; replaced by that player's character name",
                self.scrubbed,
            )
        self.compare_upstream_original()
        return LLMafiaGame(
            game_id=self.folder.name,
            players=players,
            day_minutes=day_minutes,
            night_minutes=night_minutes,
            start_time=self.start,
            phases=phases,
            lines=lines,
            votes=votes,
            eliminations=eliminations,
            winner=winner,
            surveys=surveys,
            repairs=self.repairs,
            winner_declared=declared,
            vote_files=vote_files,
            remaining_players=remaining,
            phase_status=phase_status,
            survey_scale=scale,
            config_path=config_path,
        )

    # -- config and privacy -------------------------------------------------------------------

    def read_players(self, config: dict[str, Any]) -> list[Player]:
        players: list[Player] = []
        personal = 0
        with_field = 0
        self.character_names = [str(entry["name"]) for entry in config["players"]]
        for entry in config.get("players", []):
            if "real_name" in entry:
                with_field += 1
                value = entry.get("real_name")
                if value not in (None, "", ANONYMIZED):
                    personal += 1
                    self.account(str(value), str(entry["name"]))
            llm_config = entry.get("llm_config") or {}
            players.append(
                Player(
                    name=str(entry["name"]),
                    is_mafia=bool(entry.get("is_mafia", False)),
                    is_llm=bool(entry.get("is_llm", False)),
                    llm_config=dict(llm_config) if isinstance(llm_config, dict) else {},
                )
            )
        if with_field:
            self.fix(
                "real_name_dropped",
                f"config.json real_name dropped for {with_field} players; it is never stored",
                with_field,
            )
        listed = 0
        for line in self.file_lines("real_names.txt"):
            who, _, character = line.partition(":")
            if line.strip() and who.strip() != ANONYMIZED:
                listed += 1
                if any(p.name == character.strip() for p in players):
                    self.account(who.strip(), character.strip())
        if personal or listed:
            self.fix(
                "personal_data_dropped",
                f"{personal} real_name values in config.json and {listed} entries of "
                "real_names.txt are not ANONYMIZED: personal data, used only to replace them "
                "in the text by the character's name, then discarded",
                personal + listed,
            )
        dropped = [k for k in ("notes", "preparation_command") if config.get(k)]
        if (self.text_of("notes.txt") or "").strip():
            dropped.append("notes.txt")
        if dropped:
            self.fix(
                "free_text_dropped",
                "dropped free text that can name people or local user paths: " + ", ".join(dropped),
                len(dropped),
            )
        return players

    def account(self, real: str, character: str) -> None:
        """Remember an account name of ``character``'s player, to be scrubbed from the text."""
        characters = {n.casefold() for n in self.character_names}
        for variant in name_variants(real):
            folded = variant.casefold()
            if len(variant) >= 2 and folded not in GAME_WORDS and folded not in characters:
                self.accounts.setdefault(variant, character)

    def scrub(self, text: str) -> str:
        """``text`` with the players' account names replaced by their character names."""
        if not self.accounts:
            return text
        out = replace_words(text, self.accounts)
        self.scrubbed += out != text
        return out

    def clean(self, text: str) -> str:
        return self.scrub(self.cleaner.clean(text))

    # -- lines: de-duplication and time ----------------------------------------------------------

    def dedupe(self, name: str, raw: list[str]) -> list[str]:
        seen: set[str] = set()
        kept: list[str] = []
        for line in raw:
            if line in seen:
                continue
            seen.add(line)
            kept.append(line)
        removed = len(raw) - len(kept)
        if removed:
            self.fix(
                "duplicate_lines",
                f"{name}: removed {removed} exact repeats of earlier lines "
                "(a host restart re-appends every player's chat file)",
                removed,
            )
        return kept

    def drop_leaked_night_lines(self, day: list[str], night: list[str]) -> list[str]:
        night_set = set(night)
        kept = [line for line in day if line not in night_set]
        leaked = len(day) - len(kept)
        if leaked:
            self.fix(
                "leaked_night_lines",
                f"{DAY_FILE}: removed {leaked} copies of mafia nighttime lines that a restart "
                "replay pushed into the day chat (kept once, in the night chat)",
                leaked,
            )
        return kept

    def find_start(self, manager_raw: list[str], config_path: str | None) -> datetime:
        base = self.game_date(config_path)
        first: time | None = None
        for raw in manager_raw:
            parsed = parse_chat_line(raw)
            if parsed is not None:
                first = parsed[0]
                break
        file_text = (self.text_of("game_start_time.txt") or "").strip()
        recorded: time | None = None
        try:
            recorded = time.fromisoformat(file_text) if file_text else None
        except ValueError:
            self.fix("start_time", f"game_start_time.txt is not HH:MM:SS: {file_text!r}")
        start_tod = recorded or first or time(0, 0, 0)
        if recorded is not None and first is not None:
            gap = _seconds(first) - _seconds(recorded)
            gap %= 86400
            if gap > _START_SLACK.total_seconds():
                self.fix(
                    "start_time",
                    f"game_start_time.txt says {recorded} (the last host restart); the game "
                    f"started with the first announcement at {first}",
                )
                start_tod = first
        elif recorded is None:
            self.fix("start_time", "game_start_time.txt missing or empty; used the first line")
        start = datetime.combine(base, start_tod)
        if self.config_tod is not None and start_tod < self.config_tod:
            start += timedelta(days=1)  # config made before midnight, game started after it
        return start

    def game_date(self, config_path: str | None) -> date:
        m = _CONFIG_DATE.search(config_path or "")
        if m is not None:
            dd, mo, yy = int(m.group(1)), int(m.group(2)), int(m.group(3))
            try:
                found = date(2000 + yy, mo, dd)
            except ValueError:
                found = None
            if found is not None:
                if m.group(4) is not None:
                    hh, mi = int(m.group(4)), int(m.group(5))
                    if hh < 24 and mi < 60:
                        self.config_tod = time(hh, mi)
                self.fix(
                    "date",
                    f"date {found.isoformat()} read from the config name {config_path!r} "
                    "(ddmmyy); the chat lines carry only times",
                )
                return found
        self.fix("date", "no date in the data; times are placed on nominal day 1970-01-01")
        return NOMINAL_DATE

    def clock(self, tod: time) -> datetime:
        t = place_time(tod, self.start)
        if t.date() > self.start.date():
            self.midnight_lines += 1
        return t

    def timed(self, raw: list[str], place: Place) -> list[RawLine]:
        out: list[RawLine] = []
        bad = 0
        backwards = 0
        for seq, line in enumerate(raw):
            parsed = parse_chat_line(line)
            if parsed is None:
                bad += 1
                continue
            tod, speaker, text = parsed
            t = self.clock(tod)
            if out and t < out[-1].t:
                backwards += 1
            cleaned = self.cleaner.clean(text)
            scrubbed = self.scrub(cleaned)
            # LLMafia's own text is kept (for the LLMafia export) unless it names an account
            unnamed = scrubbed == cleaned and replace_words(text, self.accounts) == text
            own = text if cleaned != text and unnamed else ""
            out.append(RawLine(t, place, speaker.strip(), scrubbed, seq, raw=own))
        name = _FILE_OF[place]
        if bad:
            self.fix("unparsed_lines", f"{name}: skipped {bad} lines that are not chat lines", bad)
        if backwards:
            self.fix(
                "out_of_order",
                f"{name}: {backwards} lines are stamped earlier than the line before them (LLM "
                "messages are stamped when scheduled; restart replays publish late messages); "
                "kept their times and ordered all lines by time",
                backwards,
            )
        return out

    # -- phases -----------------------------------------------------------------------------------

    def build_phases(self, manager: list[RawLine]) -> list[tuple[str, Role, int, datetime]]:
        eliminations: list[tuple[str, Role, int, datetime]] = []
        counts: Counter[str] = Counter()
        for line in manager:
            m = _ANNOUNCE.match(line.text)
            cur = self.phases[-1] if self.phases else None
            if m is not None:
                kind: Literal["day", "night"] = "day" if m.group(1) == "Daytime" else "night"
                if cur is not None and not cur.eliminated:
                    if cur.kind == kind:
                        cur.restarts.append(line.t)
                        line.phase, line.sub = len(self.phases) - 1, 0
                        self.fix(
                            "host_restart",
                            f"{cur.label} re-announced at {line.t.time()} with nobody voted "
                            "out since it began: a host restart, kept as the same phase",
                        )
                        continue
                    self.fix(
                        "phase_without_elimination",
                        f"{cur.label} ended at {line.t.time()} without anyone voted out",
                    )
                counts[kind] += 1
                self.phases.append(_PhaseDraft(kind, counts[kind], line.t))
                line.phase, line.sub = len(self.phases) - 1, 0
                continue
            if cur is None:  # a line before the first announcement
                self.phases.append(_PhaseDraft("day", 1, line.t))
                counts["day"] += 1
                cur = self.phases[-1]
            line.phase = len(self.phases) - 1
            out = _VOTED_OUT.match(line.text)
            if out is not None:
                cur.eliminated = True
                line.sub = 2
                role = cast(Role, out.group(2))
                eliminations.append((out.group(1).strip(), role, line.phase, line.t))
            elif _CUT_TO_VOTE.match(line.text):
                line.sub = 0
        if not self.phases:
            self.phases.append(_PhaseDraft("day", 1, self.start))
        return eliminations

    def phase_at(self, t: datetime, kind: str) -> int:
        idx = bisect_right(self.phase_starts, t) - 1
        if idx < 0:
            self.pregame_lines += 1
            return 0
        if self.phases[idx].kind != kind and self.phases[idx].start == t:
            # a boundary second: the phase just ended may be this chat's own phase
            j = idx - 1
            while j >= 0 and self.phases[j].start == t and self.phases[j].kind != kind:
                j -= 1
            if j >= 0 and self.phases[j].kind == kind:
                return j
        return idx

    def latest_of_kind(self, t: datetime, kind: str) -> int:
        idx = bisect_right(self.phase_starts, t) - 1
        while idx >= 0 and self.phases[idx].kind != kind:
            idx -= 1
        return max(idx, 0)

    def assign_phases(self, lines: list[RawLine], kind: str, chat: str) -> None:
        voting: int | None = None
        for line in lines:
            if line.speaker == MANAGER and _VOTING_STARTS.match(line.text):
                voting = self.latest_of_kind(line.t, kind)
                line.phase = voting
                self.phases[voting].voting_start = line.t
                self.phases[voting].voting_seq[chat] = line.seq
            elif line.speaker == MANAGER and VOTED_FOR.match(line.text) and voting is not None:
                line.phase = voting
            else:
                line.phase = self.phase_at(line.t, kind)

    def assign_shown(self, lines: list[RawLine], kind: str, chat: str) -> None:
        """Find the phase whose open chat published each player line (see ChatLine)."""
        late = 0
        for line in lines:
            if line.speaker == MANAGER:
                continue
            p = self.phases[line.phase]
            vote_t, vote_seq = p.voting_start, p.voting_seq.get(chat)
            is_open = p.kind == kind and (
                vote_t is None
                or line.t < vote_t
                or (line.t == vote_t and vote_seq is not None and line.seq < vote_seq)
            )
            if is_open:
                continue
            later = (
                j for j in range(line.phase + 1, len(self.phases)) if self.phases[j].kind == kind
            )
            line.shown = next(later, line.phase)
            late += line.shown != line.phase
        if late:
            self.fix(
                "late_lines",
                f"{chat}: {late} player lines were typed while this chat was closed (during a "
                "vote or the other phase) and appeared when it next opened; phase follows the "
                "timestamp, shown_in names the phase that published them",
                late,
            )

    def report_text_fixes(self, what: str) -> None:
        labels = {
            BACKSPACE: "backspaces replayed (each deletes the character before it)",
            ESCAPE: "terminal escape sequences (arrow/page keys) removed",
            CONTROL: "other control characters removed",
            HEBREW: "stray Hebrew-layout letters inside Latin text removed",
        }
        for key, label in labels.items():
            n = self.cleaner.counts.pop(key, 0)
            if n:
                self.fix(key, f"{n} {what}s: {label}", n)

    def frozen_phases(self) -> list[Phase]:
        out: list[Phase] = []
        for i, p in enumerate(self.phases):
            end = self.phases[i + 1].start if i + 1 < len(self.phases) else None
            out.append(Phase(p.label, p.kind, p.number, p.start, p.voting_start, end, p.restarts))
        return out

    # -- surveys ----------------------------------------------------------------------------------

    def read_surveys(self, players: list[Player]) -> tuple[list[Survey], Scale | None]:
        about = next((p.name for p in players if p.is_llm), None)
        per_player: list[tuple[str, list[SurveyAnswers]]] = []
        for p in players:
            text = self.text_of(f"{p.name}_survey.txt")
            if text is None:
                continue
            runs, unparsed = parse_survey_text(text, self.clean)
            if unparsed:
                self.fix("survey_unparsed", f"{p.name}_survey.txt: {unparsed} lines not understood")
            per_player.append((p.name, runs))
        self.report_text_fixes("survey comment")
        scale, why = detect_scale(run for _, runs in per_player for run in runs)
        if scale is None:
            return [], None
        self.fix("survey_scale", why)
        surveys: list[Survey] = []
        for name, runs in per_player:
            if len(runs) > 1:
                self.fix(
                    "survey_resubmitted",
                    f"{name} answered the survey {len(runs)} times; all kept, the last has "
                    "final=True",
                )
            for i, run in enumerate(runs):
                surveys.append(to_survey(name, about, run, scale, i + 1, i == len(runs) - 1))
        incomplete = [
            s.player
            for s in surveys
            if s.final and (s.comments is None or None in (s.similarity, s.timing, s.relevance))
        ]
        if incomplete:
            self.fix(
                "survey_incomplete",
                "surveys empty or cut short (missing ratings or no Comments section): "
                + ", ".join(incomplete),
                len(incomplete),
            )
        return surveys, scale

    # -- provenance -------------------------------------------------------------------------------

    def compare_upstream_original(self) -> None:
        original = self.file_lines("public_daytime_chat_original.txt")
        if not original:
            return
        current = self.file_lines(DAY_FILE)
        differ = sum(1 for a, b in zip(original, current, strict=False) if a != b)
        differ += abs(len(original) - len(current))
        self.fix(
            "upstream_cleaned",
            f"the release also ships public_daytime_chat_original.txt; {differ} of its lines "
            f"differ from {DAY_FILE} (the dataset authors removed stray Hebrew-layout letters); "
            f"{DAY_FILE} is used",
            differ,
        )


def _seconds(t: time) -> int:
    return t.hour * 3600 + t.minute * 60 + t.second
