"""Plain, frozen records for one LLMafia game (the MIT-licensed release by Eckhaus et al.).

They carry only what analysis and replay need. Personal data never gets in: the config's
``real_name``, its free-text ``notes`` and ``preparation_command`` (local user paths) are not
fields anywhere, so nothing built from these records can leak them.

Times are naive datetimes on the host's wall clock (its time zone is not in the data).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from typing import Any, Literal

Place = Literal["stage", "den", "manager"]
"""stage = public daytime chat, den = mafia nighttime chat, manager = game-manager announcements."""

Role = Literal["mafia", "bystander"]
Winner = Literal["mafia", "bystanders"]
Scale = Literal["0-100", "1-5"]
VoteSource = Literal["announced", "file"]

MANAGER = "Game-Manager"

# A time more than this far "after" the start, modulo a day, lies before the start instead.
LATE_WINDOW = timedelta(hours=18)


def place_time(tod: time, start: datetime) -> datetime:
    """Date a wall-clock time seen during a game that began at ``start``.

    The files hold only HH:MM:SS. Games last well under an hour, so the time is taken as the
    nearest one to the start: up to 18 h later (crossing midnight if needed), else up to 6 h
    earlier (the agent log starts before the game does).
    """
    tod_s = tod.hour * 3600 + tod.minute * 60 + tod.second
    start_s = start.hour * 3600 + start.minute * 60 + start.second
    offset = timedelta(seconds=(tod_s - start_s) % 86400)
    if offset > LATE_WINDOW:
        offset -= timedelta(days=1)
    return start.replace(microsecond=0) + offset


@dataclass(frozen=True)
class Player:
    name: str
    is_mafia: bool
    is_llm: bool
    # The LLM player's generation settings from config.json (model name, sampling); {} for humans.
    llm_config: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Phase:
    """One day or night. ``label`` is "day-1", "night-1", "day-2", ...

    ``voting_start`` is when the host posted "... has ended, now it's time to vote!" (None when it
    cut straight to voting or never got there); ``end`` is the next phase's start, or None for
    the last phase. ``restarts`` are times the host re-announced this phase after a crash.
    """

    label: str
    kind: Literal["day", "night"]
    number: int
    start: datetime
    voting_start: datetime | None
    end: datetime | None
    restarts: list[datetime] = field(default_factory=list)


@dataclass(frozen=True)
class ChatLine:
    """A chat line. ``phase`` is the phase its timestamp falls in.

    The host copied a player's new messages into a chat only while that chat was open (a day's
    or night's discussion, before its vote). A message typed while its chat was closed (during a
    vote, the other phase, or by the LLM stamping it before writing it) reached the chat when
    the chat next opened: ``shown_in`` names that phase; for every other line it equals
    ``phase``.
    """

    t: datetime
    phase: str
    place: Place
    speaker: str
    text: str
    shown_in: str = ""
    #: an imported line's text as LLMafia's file has it (typed backspaces, escape sequences),
    #: when cleaning changed it: the LLMafia export writes it back, so LLMafia's analysis counts
    #: what it counted on the original; "" otherwise
    raw: str = ""


@dataclass(frozen=True)
class VoteRecord:
    """A vote. ``source`` says where it comes from:

    - "announced": the host's "X voted for Y" line in the public chat; ``t`` and ``phase`` known.
      ``valid`` is False when the voter or the target had already been eliminated at ``t`` (after
      a host restart the host re-announced old votes of every player, dead ones included).
    - "file": an entry of ``<Name>_vote.txt`` that no announcement accounts for (a changed vote
      or one cast after the count). The file has no times, so ``t`` is None and ``phase`` is set
      only when the announced votes around it pin it to one phase; ``valid`` is None.
    """

    voter: str
    target: str
    phase: str | None
    t: datetime | None
    source: VoteSource = "announced"
    valid: bool | None = True


@dataclass(frozen=True)
class Elimination:
    name: str
    role: Role
    phase: str
    t: datetime


@dataclass(frozen=True)
class Survey:
    """One post-game questionnaire about the LLM player (``about``).

    ``fields`` are the raw "metric - value" pairs in file order, on the original scale.
    ``similarity``, ``timing`` and ``relevance`` are on 1–5 (0–100 answers mapped linearly,
    1 + 4·v/100). ``identified_llm`` is the later survey's "Was the LLM identified" (0/1); the
    data holds no guessed name, only this flag. ``comments`` is None when the survey has no
    "Comments:" section. A player who answered twice has two records; ``final`` marks the last.
    """

    player: str
    about: str | None
    fields: dict[str, str]
    identified_llm: bool | None
    similarity: float | None
    timing: float | None
    relevance: float | None
    original_scale: Scale
    comments: str | None
    attempt: int = 1
    final: bool = True


@dataclass(frozen=True)
class Repair:
    """Something the reader fixed, or noticed and handled, while loading a game."""

    kind: str
    detail: str
    count: int = 1


@dataclass(frozen=True)
class LLMafiaGame:
    game_id: str
    players: list[Player]
    day_minutes: float
    night_minutes: float
    start_time: datetime
    phases: list[Phase]
    lines: list[ChatLine]
    votes: list[VoteRecord]
    eliminations: list[Elimination]
    winner: Winner | None
    surveys: list[Survey]
    repairs: list[Repair]
    # who_wins.txt was empty (stalled game): ``winner`` is then inferred, or None.
    winner_declared: bool = True
    # Raw per-player vote files (successive votes, oldest first), kept for write-back.
    vote_files: dict[str, list[str]] = field(default_factory=dict)
    remaining_players: list[str] = field(default_factory=list)
    phase_status: str = ""
    survey_scale: Scale | None = None
    # config.json's "config_original_path_when_game_created" (its name holds the game's date).
    config_path: str | None = None

    @property
    def llm_players(self) -> list[str]:
        return [p.name for p in self.players if p.is_llm]

    def place_lines(self, place: Place) -> list[ChatLine]:
        return [line for line in self.lines if line.place == place]

    def repairs_of(self, kind: str) -> list[Repair]:
        return [r for r in self.repairs if r.kind == kind]
