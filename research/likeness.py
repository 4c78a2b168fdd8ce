"""How much a kind of player's table talk looks like people's: ``mafiabot likeness``.

For the games in a database (played here, simulated or imported) it measures each kind of
player (people of that database, the baseline agent, the LLM agent, LLMafia's own agent in
imported games) against the people of a set of human games read straight from their folder
(default: the shared LLMafia games). Every figure is over *days*:

- A **day** runs from the start of the day's discussion to the vote's result (the moment the
  Game-Manager says who was voted out; when nobody was, the end of the vote). In LLMafia games
  people type while the vote runs, so the vote belongs to the day. A day that never reached a
  result (a stalled or stopped game) is left out.
- A day's **lines** are the stage lines of players alive in it, stamped inside it.
- **rate**: a kind's lines over all days divided by the sum, over days, of that kind's living
  players times the day's minutes (messages per player per minute of day).
- **words**: mean whitespace-separated words per line.
- **gap**: the time between a player's consecutive lines within one day; its median, and the
  two-sample Kolmogorov-Smirnov distance (largest gap between the two empirical distribution
  functions) from people's gaps: 0 = the same distribution, 1 = disjoint.
- **lull**: share of days with no line by the kind in the 30 s before the vote's result,
  over days where the kind holds at least half of the living seats (a lone seat is silent in
  most 30 s windows anyway, so for it the share says nothing and is left out).
- **distinct**: distinct lines / lines, lines compared lower-cased with spaces collapsed.
- **length**: characters per line (whitespace collapsed): median, 90th and 99th percentile
  and longest (the tail: a kind that never writes long, or always does, is marked by it), and
  the KS distance of the lengths from people's.
- **reply**: after a line that names a player (by character name, not their own), the seconds
  until that player's next line in the day: median, and KS distance from people's.
- **vote**: the seconds from the vote's opening to a player's first vote in it: median, and KS
  distance from people's (LLMafia's votes had no deadline; ours do).
- **AUC**: a character n-gram classifier (TF-IDF of 1-4 character n-grams within words,
  case kept, + logistic regression, scikit-learn) telling the kind's lines from people's,
  scored out of fold by 5-fold stratified cross-validation; 0.5 = it can't tell, 1 = always.
  Character names of the line's game are masked first (a name tells which game a line is
  from, not whether a person typed it). At most 3000 lines a side, sampled with a fixed seed.

scikit-learn, not hand-written numpy: the figure is only as credible as the classifier, and a
standard, tested pipeline gives a number others can reproduce.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.store.models import Phase as PhaseRow
from bot.store.models import Seat, Vote
from games.events import (
    Event,
    GameStarted,
    MessageAccepted,
    PhaseStarted,
    PlayerEliminated,
    VoteCast,
    VoteResolved,
)
from research.llmafia import LLMafiaGame

__all__ = [
    "DEFINITIONS",
    "LLMAFIA",
    "PEOPLE",
    "TARGETS",
    "Day",
    "Said",
    "days_from_events",
    "days_from_llmafia",
    "days_from_store",
    "likeness",
    "render",
]

PEOPLE = "people"
LLMAFIA = "llmafia"
HUMAN = "human"  # people at the tables of the database (not the reference people)
LULL_SECONDS = 30.0
FOLDS = 5
MAX_LINES = 3000

LABELS = {
    PEOPLE: "people",
    LLMAFIA: "LLMafia's agent",
    HUMAN: "people here",
    "baseline": "baseline",
    "llm": "LLM agent",
}

DEFINITIONS: dict[str, str] = {
    "day": "from the day's start to the vote's result (votes count as day, as in LLMafia)",
    "rate": "messages per player per minute of day (lines / sum of living players x minutes)",
    "words": "words per message (whitespace split)",
    "gap_median_s": "median seconds between a player's own consecutive lines in a day",
    "gap_ks": "Kolmogorov-Smirnov distance of those gaps from people's (0 = same)",
    "lull": f"share of days with no line in the {LULL_SECONDS:.0f} s before the vote's result "
    "(days where the kind holds at least half the living seats)",
    "distinct": "distinct lines / lines (lower-cased, spaces collapsed)",
    "chars": "characters per message (spaces collapsed): median, p90, p99, max; KS from people's",
    "reply": "seconds from a line naming a player to that player's next line in the day",
    "vote": "seconds from the vote's opening to a player's first vote in it",
    "auc": "AUC of a character 1-4-gram TF-IDF + logistic regression telling its lines from "
    f"people's, {FOLDS}-fold cross-validated, names masked (0.5 = can't tell)",
}

# What the issue asks of an agent, against the people it is compared with.
TARGETS: dict[str, str] = {
    "rate": "within 20% of people's",
    "gap_ks": "at most 0.15",
    "lull": "within 0.15 of people's",
    "distinct": "at least 0.85",
    "auc": "at most 0.90",
}

ROWS: tuple[tuple[str, str], ...] = (
    ("rate", "messages per player per minute of day"),
    ("words", "words per message"),
    ("gap_median_s", "median gap between a player's own messages (s)"),
    ("gap_ks", "KS distance of those gaps from people's"),
    ("lull", f"days with no message in the {LULL_SECONDS:.0f} s before the vote's result"),
    ("distinct", "distinct lines / lines"),
    ("chars_median", "characters per message, median"),
    ("chars_p90", "characters per message, 90th percentile"),
    ("chars_p99", "characters per message, 99th percentile"),
    ("chars_max", "characters per message, longest"),
    ("chars_ks", "KS distance of message lengths from people's"),
    ("reply_median_s", "reply after a line naming the player, median (s)"),
    ("reply_ks", "KS distance of those replies from people's"),
    ("vote_median_s", "first vote after the vote opens, median (s)"),
    ("vote_ks", "KS distance of those vote times from people's"),
    ("auc", "AUC of a char n-gram classifier vs people's lines"),
    ("lines", "lines"),
    ("days", "days"),
)


@dataclass(frozen=True)
class Said:
    """One stage line: who, when (seconds since the day started), what."""

    speaker: str
    t: float
    text: str


@dataclass(frozen=True)
class Day:
    """One day as the measure sees it (see the module doc)."""

    source: str
    seconds: float
    kinds: Mapping[str, str]  # living player -> kind
    lines: tuple[Said, ...]
    names: tuple[str, ...] = ()  # every character name of the game, masked for the classifier
    #: each living player's first vote in the day's vote: (name, seconds after it opened)
    votes: tuple[tuple[str, float], ...] = ()


# --- sources ----------------------------------------------------------------------------------


def days_from_llmafia(games: Iterable[LLMafiaGame]) -> list[Day]:
    """Days of LLMafia games read from their folders: humans are people, the LLM is llmafia."""
    out: list[Day] = []
    for g in games:
        labels = [p.label for p in g.phases]
        out_at: dict[str, int] = {}
        result: dict[str, datetime] = {}
        for e in g.eliminations:
            out_at.setdefault(e.name, labels.index(e.phase))
            result.setdefault(e.phase, e.t)
        kind = {p.name: LLMAFIA if p.is_llm else PEOPLE for p in g.players}
        names = tuple(kind)
        for i, p in enumerate(g.phases):
            end = result.get(p.label, p.end)
            if p.kind != "day" or end is None:
                continue
            alive = {n: k for n, k in kind.items() if out_at.get(n, len(labels)) >= i}
            lines = _said(
                ((x.speaker, x.t, x.text) for x in g.lines if x.place == "stage"),
                alive,
                p.start,
                end,
            )
            cast = (
                (v.voter, v.t)
                for v in g.votes
                if v.phase == p.label and v.t is not None and v.valid is not False
            )
            votes = _first_votes(cast, alive, p.voting_start)
            out.append(Day(f"{g.game_id} {p.label}", (end - p.start).total_seconds(), alive,
                           lines, names, votes))  # fmt: skip
    return out


def days_from_store(engine: Engine, game_ids: Sequence[str] | None = None) -> list[Day]:
    """Days of stored games (finished ones when ``game_ids`` is None), kinds by seat."""
    from bot.protection.dataset.stored import VOTED_OUT
    from research.report import _load

    games = _load(engine, game_ids)
    ids = [g.id for g in games]
    with Session(engine) as s:
        rows = s.exec(select(Seat).where(col(Seat.game_id).in_(ids))).all()
        vote_phases = s.exec(
            select(PhaseRow).where(col(PhaseRow.game_id).in_(ids), PhaseRow.kind == "vote")
        ).all()
        vote_rows = s.exec(
            select(Vote).where(col(Vote.game_id).in_(ids)).order_by(col(Vote.t), col(Vote.id))
        ).all()
    opened = {(p.game_id, p.number): (p.seq, p.started_at) for p in vote_phases}
    cast_in: dict[tuple[str, int], list[Vote]] = {}
    for v in vote_rows:
        cast_in.setdefault((v.game_id, v.phase_seq), []).append(v)
    agent_kind = {(r.game_id, r.index): r.agent_kind or "agent" for r in rows if r.is_agent}
    out: list[Day] = []
    for g in games:
        kind = {
            seat.name: agent_kind.get((g.id, i), "agent") if seat.is_agent else HUMAN
            for i, seat in g.seats.items()
        }
        names = tuple(kind)
        for r, rnd in enumerate(g.rounds):
            if rnd.family != "day":
                continue
            # the vote's result: who was voted out, else the next phase's start
            end = next(
                (x.t for x in g.lines if x.round == r and x.seat is None
                 and VOTED_OUT.match(x.text)),
                g.rounds[r + 1].start if r + 1 < len(g.rounds) else None,
            )  # fmt: skip
            if end is None:
                continue
            alive = {g.seats[i].name: kind[g.seats[i].name] for i in rnd.alive}
            lines = _said(
                ((x.speaker, x.t, x.text) for x in g.lines if x.place == "stage" and x.seat
                 is not None),
                alive, rnd.start, end,
            )  # fmt: skip
            seq, vote_start = opened.get((g.id, rnd.number), (-1, None))
            cast = (
                (g.seats[v.voter_index].name, v.t)
                for v in cast_in.get((g.id, seq), []) if v.voter_index in g.seats
            )  # fmt: skip
            votes = _first_votes(cast, alive, vote_start)
            out.append(Day(f"{g.id} {rnd.label}", (end - rnd.start).total_seconds(), alive,
                           lines, names, votes))  # fmt: skip
    return out


def days_from_events(events: Iterable[Event], kinds: Mapping[int, str] | str) -> list[Day]:
    """Days of one game's engine events (a fast simulation, a test): kinds by seat."""
    out: list[Day] = []
    names: tuple[str, ...] = ()
    alive: dict[int, str] = {}
    start: datetime | None = None
    vote_start: datetime | None = None
    number = 0
    lines: list[tuple[str, datetime, str]] = []
    cast: list[tuple[str, datetime]] = []
    for e in events:
        if isinstance(e, GameStarted):
            names = e.players
            alive = dict(enumerate(names))
        elif isinstance(e, PhaseStarted) and e.phase == "day":
            start, number, lines, cast, vote_start = e.t, e.number, [], [], None
        elif isinstance(e, PhaseStarted) and e.phase == "vote":
            vote_start = e.t
        elif isinstance(e, VoteCast) and not e.night and start is not None:
            cast.append((e.voter_name, e.t))
        elif isinstance(e, MessageAccepted) and e.place == "stage" and start is not None:
            lines.append((e.name, e.t, e.text))
        elif isinstance(e, VoteResolved) and not e.night and start is not None:
            living = {
                n: kinds if isinstance(kinds, str) else kinds.get(i, "agent")
                for i, n in alive.items()
            }
            out.append(Day(f"day-{number}", (e.t - start).total_seconds(), living,
                           _said(lines, living, start, e.t), names,
                           _first_votes(cast, living, vote_start)))  # fmt: skip
            start = None
        elif isinstance(e, PlayerEliminated):
            alive.pop(e.seat, None)
    return out


def _first_votes(
    cast: Iterable[tuple[str, datetime]], alive: Mapping[str, str], opened: datetime | None
) -> tuple[tuple[str, float], ...]:
    """Each living voter's first vote, in seconds after the vote ``opened`` (none without)."""
    if opened is None:
        return ()
    first: dict[str, float] = {}
    for who, t in sorted(cast, key=lambda x: x[1]):
        seconds = (t - opened).total_seconds()
        if who in alive and who not in first and seconds >= 0:
            first[who] = seconds
    return tuple(first.items())


def _said(
    lines: Iterable[tuple[str, datetime, str]],
    alive: Mapping[str, str],
    start: datetime,
    end: datetime,
) -> tuple[Said, ...]:
    return tuple(
        Said(who, (t - start).total_seconds(), text)
        for who, t, text in lines
        if who in alive and start <= t <= end
    )


# --- figures ----------------------------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _gaps(days: Sequence[Day], kind: str) -> list[float]:
    out: list[float] = []
    for d in days:
        last: dict[str, float] = {}
        for x in d.lines:
            if d.kinds[x.speaker] != kind:
                continue
            if x.speaker in last:
                out.append(x.t - last[x.speaker])
            last[x.speaker] = x.t
    return out


def ks_distance(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Two-sample Kolmogorov-Smirnov statistic: the largest gap between the two ECDFs."""
    if not a or not b:
        return None
    xa, xb = np.sort(np.asarray(a, float)), np.sort(np.asarray(b, float))
    grid = np.concatenate([xa, xb])
    fa = np.searchsorted(xa, grid, side="right") / len(xa)
    fb = np.searchsorted(xb, grid, side="right") / len(xb)
    return float(np.max(np.abs(fa - fb)))


def _lengths(days: Sequence[Day], kind: str) -> list[float]:
    return [
        float(len(" ".join(x.text.split()))) for d in days for x in d.lines
        if d.kinds[x.speaker] == kind
    ]  # fmt: skip


def _replies(days: Sequence[Day], kind: str) -> list[float]:
    """Seconds from a line naming a player of ``kind`` to that player's next line."""
    out: list[float] = []
    for d in days:
        players = [n for n, k in d.kinds.items() if k == kind]
        if not players:
            continue
        patterns = {n: re.compile(rf"\b{re.escape(n)}\b", re.IGNORECASE) for n in players}
        for i, x in enumerate(d.lines):
            for name, pattern in patterns.items():
                if name == x.speaker or not pattern.search(x.text):
                    continue
                answer = next((y for y in d.lines[i + 1 :] if y.speaker == name), None)
                if answer is not None:
                    out.append(answer.t - x.t)
    return out


def _vote_times(days: Sequence[Day], kind: str) -> list[float]:
    return [t for d in days for who, t in d.votes if d.kinds.get(who) == kind]


def _pct(values: Sequence[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def _masked(days: Sequence[Day], kind: str) -> list[str]:
    out: list[str] = []
    for d in days:
        mask = (
            re.compile(r"\b(" + "|".join(re.escape(n) for n in d.names) + r")\b", re.IGNORECASE)
            if d.names
            else None
        )
        for x in d.lines:
            if d.kinds[x.speaker] == kind:
                out.append(mask.sub("@", x.text) if mask else x.text)
    return out


def classifier_auc(theirs: Sequence[str], people: Sequence[str], seed: int = 0) -> float | None:
    """Cross-validated AUC of telling ``theirs`` from ``people`` (see the module doc)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline

    rng = random.Random(seed)
    a = rng.sample(list(theirs), min(len(theirs), MAX_LINES))
    b = rng.sample(list(people), min(len(people), MAX_LINES))
    if min(len(a), len(b)) < 2 * FOLDS:
        return None
    texts = a + b
    y = np.array([1] * len(a) + [0] * len(b))
    model = make_pipeline(
        TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), lowercase=False,
                        sublinear_tf=True),
        LogisticRegression(max_iter=2000, class_weight="balanced"),
    )  # fmt: skip
    folds = StratifiedKFold(n_splits=FOLDS, shuffle=True, random_state=seed)
    scores = cross_val_predict(model, texts, y, cv=folds, method="decision_function")
    return float(roc_auc_score(y, scores))


def figures(
    days: Sequence[Day],
    kind: str,
    people_gaps: Sequence[float] | None = None,
    people_lines: Sequence[str] | None = None,
    people_shape: Mapping[str, Sequence[float]] | None = None,
) -> dict[str, Any]:
    """The table's column for ``kind`` over ``days``; KS and AUC need people's gaps/lines,
    and the length, reply and vote KS distances people's ``people_shape`` (`shape`)."""
    mine = [d for d in days if kind in d.kinds.values()]
    lines = [x for d in mine for x in d.lines if d.kinds[x.speaker] == kind]
    seat_minutes = sum(sum(1 for k in d.kinds.values() if k == kind) * d.seconds / 60 for d in mine)
    gaps = _gaps(mine, kind)
    lull_days = [d for d in mine if 2 * sum(k == kind for k in d.kinds.values()) >= len(d.kinds)]
    lulls = [
        not any(d.kinds[x.speaker] == kind and d.seconds - x.t < LULL_SECONDS for x in d.lines)
        for d in lull_days
    ]
    texts = [x.text for x in lines]
    mine_shape = shape(mine, kind)
    theirs = people_shape or {}

    def ks_of(key: str) -> float | None:
        return ks_distance(mine_shape[key], theirs[key]) if key in theirs else None

    chars, replies, votes = mine_shape["chars"], mine_shape["reply"], mine_shape["vote"]
    return {
        "kind": kind,
        "label": LABELS.get(kind, kind),
        "days": len(mine),
        "lines": len(lines),
        "rate": len(lines) / seat_minutes if seat_minutes else None,
        "words": float(np.mean([len(t.split()) for t in texts])) if texts else None,
        "gap_median_s": float(np.median(gaps)) if gaps else None,
        "gap_ks": ks_distance(gaps, people_gaps) if people_gaps is not None else None,
        "lull": float(np.mean(lulls)) if lulls else None,
        "distinct": len({_norm(t) for t in texts}) / len(texts) if texts else None,
        "chars_median": _pct(chars, 50),
        "chars_p90": _pct(chars, 90),
        "chars_p99": _pct(chars, 99),
        "chars_max": max(chars) if chars else None,
        "chars_ks": ks_of("chars"),
        "reply_median_s": _pct(replies, 50),
        "reply_ks": ks_of("reply"),
        "vote_median_s": _pct(votes, 50),
        "vote_ks": ks_of("vote"),
        "auc": (
            classifier_auc(_masked(mine, kind), people_lines)
            if people_lines is not None and kind != PEOPLE
            else None
        ),
    }


def shape(days: Sequence[Day], kind: str) -> dict[str, list[float]]:
    """The samples behind the length, reply and vote rows: ``chars``, ``reply``, ``vote``."""
    return {
        "chars": _lengths(days, kind),
        "reply": _replies(days, kind),
        "vote": _vote_times(days, kind),
    }


def meets(column: Mapping[str, Any], people: Mapping[str, Any]) -> dict[str, bool | None]:
    """Which of the issue's targets ``column`` meets against ``people`` (None: not measured)."""

    def within(key: str, tol: float, relative: bool) -> bool | None:
        a, b = column.get(key), people.get(key)
        if a is None or b is None:
            return None
        return bool(abs(a - b) <= (tol * b if relative else tol) + 1e-12)

    def at_most(key: str, limit: float, below: bool = True) -> bool | None:
        v = column.get(key)
        return None if v is None else bool(v <= limit if below else v >= limit)

    return {
        "rate": within("rate", 0.20, True),
        "gap_ks": at_most("gap_ks", 0.15),
        "lull": within("lull", 0.15, False),
        "distinct": at_most("distinct", 0.85, below=False),
        "auc": at_most("auc", 0.90),
    }


def likeness(days: Sequence[Day], people_days: Sequence[Day]) -> dict[str, Any]:
    """The whole table: people (from ``people_days``), LLMafia's agent in them, and every kind
    of player in ``days``, each against those people."""
    people_gaps = _gaps(people_days, PEOPLE)
    people_lines = _masked(people_days, PEOPLE)
    people_shape = shape(people_days, PEOPLE)
    people = figures(people_days, PEOPLE)
    people.update(gap_ks=0.0, chars_ks=0.0, reply_ks=0.0, vote_ks=0.0)
    columns: list[dict[str, Any]] = [people]
    reference = figures(people_days, LLMAFIA, people_gaps, people_lines, people_shape)
    if reference["lines"]:
        reference["label"] = "LLMafia's agent (in those games)"
        columns.append(reference)
    found: dict[str, None] = {}
    for d in days:
        found.update(dict.fromkeys(sorted(set(d.kinds.values()))))
    for kind in found:
        column = figures(days, kind, people_gaps, people_lines, people_shape)
        if column["lines"]:
            columns.append(column)
    for column in columns[1:]:
        column["meets"] = meets(column, people)
    return {
        "definitions": DEFINITIONS,
        "targets": TARGETS,
        "people_days": len(people_days),
        "columns": columns,
    }


def _cell(key: str, value: Any) -> str:
    if value is None:
        return "-"
    if key in ("lines", "days"):
        return str(value)
    if key == "lull":
        return f"{value:.0%}"
    if key in ("gap_median_s", "reply_median_s", "vote_median_s"):
        return f"{value:.1f}"
    if key.startswith("chars_") and key != "chars_ks":
        return f"{value:.0f}"
    return f"{value:.2f}"


def render(table: Mapping[str, Any]) -> str:
    """The table as Markdown, then whether each agent meets the targets, then definitions."""
    columns = table["columns"]
    head = "| figure | " + " | ".join(c["label"] for c in columns) + " |"
    out = [head, "|---|" + "---|" * len(columns)]
    for key, title in ROWS:
        out.append(f"| {title} | " + " | ".join(_cell(key, c.get(key)) for c in columns) + " |")
    out.append("")
    for c in columns[1:]:
        marks = c.get("meets", {})
        said = ", ".join(
            f"{k} {'ok' if v else 'MISSED'}" for k, v in marks.items() if v is not None
        )
        out.append(f"{c['label']} against people's targets: {said or 'nothing measurable'}")
    out.append("")
    out.append("Targets: " + "; ".join(f"{k} {v}" for k, v in table["targets"].items()) + ".")
    out.append("Definitions:")
    out.extend(f"  {k}: {v}" for k, v in table["definitions"].items())
    return "\n".join(out)


def run_likeness(
    db_url: str | None, people: Path, people_games: Sequence[str] | None = None
) -> dict[str, Any]:
    """Read the people's games from ``people`` (only ``people_games`` when given) and the
    database's finished games (none when ``db_url`` is None); build the table."""
    from bot.store.db import make_engine
    from bot.store.migrate import upgrade
    from research.llmafia import read_games

    if not Path(people).exists():
        raise FileNotFoundError(f"no human games at {people}")
    found = read_games(Path(people))
    if people_games:
        wanted = {x.strip() for g in people_games for x in g.split(",") if x.strip()}
        missing = wanted - {g.game_id for g in found}
        if missing:
            raise LookupError(f"no human game {', '.join(sorted(missing))} in {people}")
        found = [g for g in found if g.game_id in wanted]
    if not found:
        raise FileNotFoundError(f"no LLMafia game folders in {people}")
    days: list[Day] = []
    if db_url is not None:
        upgrade(db_url)
        engine = make_engine(db_url)
        try:
            days = days_from_store(engine)
        finally:
            engine.dispose()
    return likeness(days, days_from_llmafia(found))
