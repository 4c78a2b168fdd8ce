"""The LLMafia paper's analysis (Tables 1-5, Figures 4-7), human against agent players, for any
games in the store: imported LLMafia games and games played here alike.

Everything is computed from store rows, so the same code covers both. Definitions (the paper's,
checked against the study's analysis script; where we differ, it says so):

- A player chat line is a message with a seat (``seat_index`` not NULL). Game-Manager lines,
  including the host's "X voted for Y" announcements, are never player lines.
- A *phase* is the paper's phase: a day, or a night. The store splits each into a discussion
  phase and a vote phase ("day" + "vote", "night" + "night_vote", see research.importer);
  here they count as one, numbered "day N" / "night N", starting when the discussion starts.
- A player is *alive* in a phase if nobody voted them out (or killed them) in an earlier phase.
  Eliminations are read from the Game-Manager's "X was voted out" / "X was killed during the
  night" lines, which both the importer and the live service store.
- Messages per player per day phase: one number per (day phase, player alive in it), zeros
  included (Table 2). Figure 4: the day's player lines divided by its alive players, by day.
- Content (Table 3), per player per game, over players with at least one line: mean words per
  line (whitespace split), repeated lines (lines minus distinct lines, exact text), distinct
  words (lower-cased, punctuation stripped from both ends). Then mean and std across players.
- Timing (Figure 5), within one phase, ordered by time:
  (1) time since the previous player line in the same chat (stage or den) by anyone, the phase
      start for the first one;
  (2) time since the same player's previous line in the phase, the phase start for their first
      one ("(bug-fixed)": the study's script meant this but subtracted the time of the phase's
      line at the player's own line count instead, i.e. for a player's k-th line the k-th line
      of the whole phase counting the opening announcement as the first; that variant is given
      separately as "study's buggy variant" so the two can be compared).
  Each as every line's value and as each player's mean per game (what Figure 5 plots).
- Win rate (Figure 6): share of players of that type and role whose team won; games without a
  winner are left out. Roles other than mafia count as bystanders (town).
- Voted-out rank (Figure 7): for each player voted out by day, their rank among the players
  alive in that day by number of lines in it, 1 = most talkative; ties share the mean of the
  ranks they span. Normalised as (alive - rank) / (alive - 1): 1 = most talkative, as the
  paper's histogram.
- Survey (Table 5): identification rate over answers that asked it; ratings on 1-5. 0-100 pilot
  answers are converted by dividing by 20 (the study's intended conversion; its script picked
  the pilot games by a game-number threshold that does not fit the released numbering, so it
  converted the wrong games); the stored ``original_scale`` says which answers were 0-100. The
  linear mapping the importer stores (1 + 4*v/100) is reported alongside.
- Separability (Table 4), optional: linear discriminant analysis on sentence embeddings of the
  player lines, F1 for agent/human, mafia/bystander and day/night (stage/den). The paper used
  BGE-M3 and scored the classifier on its own training data; we report that in-sample F1 and a
  5-fold cross-validated one, with whatever embedder is given (MiniLM by default in the CLI).

Standard deviations are population ones (numpy's default, as in the study's script).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.players.spotrate import spot_rates
from bot.protection.dataset.stored import KILLED, SOURCE, VOTED_OUT
from bot.store.models import GAME_MANAGER, Game, Message, Seat, SurveyResponse
from bot.store.models import Phase as PhaseRow
from games.events import is_draw
from research.report_markdown import render_markdown
from research.report_night import night_action_counts
from research.report_paper import PAPER, RATINGS, ROLES, TYPES

__all__ = [
    "PAPER",
    "TYPES",
    "Embedder",
    "build_report",
    "render_markdown",
    "write_report",
]

BIN_SECONDS = 5
BIN_MAX = 120
RANK_BINS = 10
_FAMILY = {"day": "day", "vote": "day", "night": "night", "night_vote": "night"}
_WORD_EDGES = re.compile(r"^[\W_]+|[\W_]+$")


class Embedder(Protocol):
    """What Table 4 needs from a sentence embedder (agent.memory.embeddings fits)."""

    @property
    def name(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> Any: ...


# --- loading ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Seat:
    index: int
    name: str
    is_agent: bool
    team: str  # "mafia" | "bystander"

    @property
    def kind(self) -> str:
        return "agent" if self.is_agent else "human"


@dataclass(frozen=True)
class _Line:
    seat: int | None
    speaker: str
    text: str
    t: datetime
    place: str
    round: int | None  # index into _GameData.rounds
    order: int


@dataclass
class _Round:
    family: str
    number: int
    start: datetime
    alive: set[int] = field(default_factory=set)
    voted_out: list[int] = field(default_factory=list)  # by vote (day) or the mafia (night)
    killed: list[int] = field(default_factory=list)  # night kills of games played here

    @property
    def label(self) -> str:
        return f"{self.family}-{self.number}"


@dataclass
class _GameData:
    id: str
    source: str
    winner: str | None
    seats: dict[int, _Seat]
    rounds: list[_Round]
    lines: list[_Line]  # every message, Game-Manager ones included, in time order
    surveys: list[SurveyResponse]
    #: ended in a draw (the quiet-days rule): no winner, a finished game
    draw: bool = False

    def player_lines(self) -> list[_Line]:
        return [x for x in self.lines if x.seat is not None and x.seat in self.seats]


def _team(role: str | None) -> str:
    if role is None:
        return "bystander"
    try:
        from games.roles import get_role

        return "mafia" if get_role(role).team == "mafia" else "bystander"
    except Exception:  # a role this code base does not know
        return "mafia" if role == "mafia" else "bystander"


def _load(engine: Engine, game_ids: Sequence[str] | None) -> list[_GameData]:
    with Session(engine) as s:
        if game_ids is None:
            games = list(
                s.exec(select(Game).where(Game.status == "finished").order_by(col(Game.id))).all()
            )
        else:
            found = {g.id: g for g in s.exec(select(Game).where(col(Game.id).in_(game_ids)))}
            missing = [g for g in game_ids if g not in found]
            if missing:
                raise LookupError(f"no such games in the store: {', '.join(missing)}")
            games = [found[g] for g in dict.fromkeys(game_ids)]
        ids = [g.id for g in games]
        seats = s.exec(select(Seat).where(col(Seat.game_id).in_(ids))).all()
        phases = s.exec(
            select(PhaseRow).where(col(PhaseRow.game_id).in_(ids)).order_by(col(PhaseRow.seq))
        ).all()
        messages = s.exec(
            select(Message)
            .where(col(Message.game_id).in_(ids))
            .order_by(col(Message.t), col(Message.id))
        ).all()
        surveys = s.exec(
            select(SurveyResponse)
            .where(col(SurveyResponse.game_id).in_(ids))
            .order_by(col(SurveyResponse.id))
        ).all()
    by_game: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for kind, rows in (("seats", seats), ("phases", phases), ("messages", messages)):
        for row in rows:
            by_game[row.game_id][kind].append(row)
    for sv in surveys:
        by_game[sv.game_id]["surveys"].append(sv)
    return [_game_data(g, by_game[g.id]) for g in games]


def _game_data(game: Game, rows: dict[str, list[Any]]) -> _GameData:
    seats = {
        r.index: _Seat(r.index, r.character_name, r.is_agent, _team(r.role)) for r in rows["seats"]
    }
    rounds: list[_Round] = []
    round_of_seq: dict[int, int] = {}
    for p in rows["phases"]:
        family = _FAMILY.get(p.kind)
        if family is None:
            continue
        if not rounds or (rounds[-1].family, rounds[-1].number) != (family, p.number):
            rounds.append(_Round(family, p.number, p.started_at))
        round_of_seq[p.seq] = len(rounds) - 1
    lines = [
        _Line(
            seat=m.seat_index,
            speaker=m.speaker,
            text=m.text,
            t=m.t,
            place=m.place,
            round=None if m.phase_seq is None else round_of_seq.get(m.phase_seq),
            order=i,
        )
        for i, m in enumerate(rows["messages"])
    ]
    by_name = {s.name: s.index for s in seats.values()}
    for x in lines:
        if x.seat is not None or x.speaker != GAME_MANAGER or x.round is None:
            continue
        out = VOTED_OUT.match(x.text)
        killed = KILLED.match(x.text)
        m = out or killed
        if m is None or m.group(1).strip() not in by_name:
            continue
        seat = by_name[m.group(1).strip()]
        target = rounds[x.round].voted_out if out else rounds[x.round].killed
        if seat not in target:
            target.append(seat)
    out_before: set[int] = set()
    for r in rounds:
        r.alive = set(seats) - out_before
        out_before |= set(r.voted_out) | set(r.killed)
    source = str((game.config or {}).get("source") or "played here")
    data = _GameData(game.id, source, game.winner, seats, rounds, lines, list(rows["surveys"]))
    data.draw = is_draw(game.winner, game.end_reason)
    return data


# --- small statistics -------------------------------------------------------------------------


def _stats(values: Iterable[float]) -> dict[str, Any]:
    v = [float(x) for x in values]
    if not v:
        return {"mean": None, "std": None, "n": 0}
    arr = np.asarray(v, dtype=float)
    return {"mean": float(arr.mean()), "std": float(arr.std()), "n": len(v)}


def _hist(
    values: Iterable[float], width: float = BIN_SECONDS, top: float = BIN_MAX
) -> dict[str, Any]:
    edges = [i * width for i in range(int(top / width) + 1)]
    counts = [0] * (len(edges) - 1)
    over = 0
    for x in values:
        if x >= top:
            over += 1
        else:
            counts[max(0, int(x // width))] += 1
    return {"edges": edges, "counts": counts, "over": over}


def _unit_hist(values: Iterable[float], bins: int = RANK_BINS) -> dict[str, Any]:
    """Counts over [0, 1] in equal bins; 1.0 goes in the last bin."""
    counts = [0] * bins
    for x in values:
        counts[min(max(int(x * bins + 1e-9), 0), bins - 1)] += 1
    return {"edges": [i / bins for i in range(bins + 1)], "counts": counts}


def _by_type(pairs: Iterable[tuple[str, float]]) -> dict[str, dict[str, Any]]:
    grouped: dict[str, list[float]] = {k: [] for k in TYPES}
    for kind, value in pairs:
        grouped[kind].append(value)
    return {k: _stats(v) for k, v in grouped.items()}


def _words(text: str) -> list[str]:
    return text.split()


def _vocabulary(texts: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for text in texts:
        for w in text.lower().split():
            w = _WORD_EDGES.sub("", w)
            if w:
                out.add(w)
    return out


# --- the measures -----------------------------------------------------------------------------


def _overview(games: list[_GameData]) -> dict[str, Any]:
    lines = [len(g.player_lines()) for g in games]
    agent = [
        sum(g.seats[x.seat].is_agent for x in g.player_lines() if x.seat is not None) for g in games
    ]
    players = [len(g.seats) for g in games]
    return {
        "games": len(games),
        "phases_per_game": _stats(len(g.rounds) for g in games),
        "players_per_game": {
            **_stats(players),
            "min": min(players, default=None),
            "max": max(players, default=None),
        },
        "messages_per_game": _stats(lines),
        "agent_messages_per_game": _stats(agent),
        "human_messages_per_game": _stats(a - b for a, b in zip(lines, agent, strict=True)),
        # the paper's Table 1 "Avg # Msg" counted every line, the Game-Manager's included
        "lines_per_game_with_game_manager": _stats(len(g.lines) for g in games),
    }


def _day_counts(g: _GameData) -> list[tuple[_Round, Counter[int]]]:
    counts: dict[int, Counter[int]] = defaultdict(Counter)
    for x in g.player_lines():
        if x.round is not None and x.seat is not None:
            counts[x.round][x.seat] += 1
    return [(r, counts[i]) for i, r in enumerate(g.rounds) if r.family == "day"]


def _messages_per_day_phase(games: list[_GameData]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    pairs: list[tuple[str, float]] = []
    by_day: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for g in games:
        for r, counts in _day_counts(g):
            if not r.alive:
                continue
            total = 0
            for seat in sorted(r.alive):
                n = counts.get(seat, 0)
                total += n
                kind = g.seats[seat].kind
                pairs.append((kind, n))
                by_day[r.number][kind].append(n)
            by_day[r.number]["per_player"].append(total / len(r.alive))
            by_day[r.number]["alive"].append(len(r.alive))
    table = _by_type(pairs)
    table["all"] = _stats(v for _, v in pairs)
    figure = [
        {
            "day": day,
            "games": len(d["per_player"]),
            "per_player": _stats(d["per_player"]),
            "alive_mean": float(np.mean(d["alive"])),
            "human": _stats(d["human"]),
            "agent": _stats(d["agent"]),
        }
        for day, d in sorted(by_day.items())
    ]
    return table, figure


def _content(games: list[_GameData]) -> dict[str, dict[str, dict[str, Any]]]:
    words: list[tuple[str, float]] = []
    repeated: list[tuple[str, float]] = []
    vocab: list[tuple[str, float]] = []
    for g in games:
        texts: dict[int, list[str]] = defaultdict(list)
        for x in g.player_lines():
            if x.seat is not None:
                texts[x.seat].append(x.text)
        for seat, mine in sorted(texts.items()):
            kind = g.seats[seat].kind
            words.append((kind, float(np.mean([len(_words(t)) for t in mine]))))
            repeated.append((kind, len(mine) - len(set(mine))))
            vocab.append((kind, len(_vocabulary(mine))))
    return {
        "words_per_message": _by_type(words),
        "repeated_messages": _by_type(repeated),
        "unique_words": _by_type(vocab),
    }


@dataclass
class _Timing:
    """Per-line values and per-(game, player) means of one timing measure, by player type."""

    values: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in TYPES})
    player_means: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in TYPES})

    def add_game(self, g: _GameData, per_seat: dict[int, list[float]]) -> None:
        for seat, vals in sorted(per_seat.items()):
            if not vals:
                continue
            kind = g.seats[seat].kind
            self.values[kind].extend(vals)
            self.player_means[kind].append(float(np.mean(vals)))

    def summary(self, label: str) -> dict[str, Any]:
        return {
            "label": label,
            "per_message": {k: {**_stats(v), **_hist(v)} for k, v in self.values.items()},
            "per_player_mean": {k: {**_stats(v), **_hist(v)} for k, v in self.player_means.items()},
        }


def _seconds(a: datetime, b: datetime) -> float:
    return (a - b).total_seconds()


def _timing(games: list[_GameData]) -> dict[str, Any]:
    any_prev, own_prev, bug = _Timing(), _Timing(), _Timing()
    for g in games:
        d_any: dict[int, list[float]] = defaultdict(list)
        d_own: dict[int, list[float]] = defaultdict(list)
        d_bug: dict[int, list[float]] = defaultdict(list)
        by_round: dict[int, list[_Line]] = defaultdict(list)
        for x in g.lines:
            if x.round is not None:
                by_round[x.round].append(x)
        for ri, everything in sorted(by_round.items()):
            players = [x for x in everything if x.seat is not None and x.seat in g.seats]
            if not players:
                continue
            start = min(g.rounds[ri].start, everything[0].t)
            last_in_chat: dict[str, datetime] = {}
            last_own: dict[int, datetime] = {}
            kth: Counter[int] = Counter()
            for x in players:
                assert x.seat is not None
                d_any[x.seat].append(_seconds(x.t, last_in_chat.get(x.place, start)))
                d_own[x.seat].append(_seconds(x.t, last_own.get(x.seat, start)))
                last_in_chat[x.place] = x.t
                last_own[x.seat] = x.t
                # the study's script: the player's k-th line minus the phase's (k-1)-th line,
                # counting from 0 with the opening announcement first
                kth[x.seat] += 1
                d_bug[x.seat].append(_seconds(x.t, everything[kth[x.seat] - 1].t))
        any_prev.add_game(g, d_any)
        own_prev.add_game(g, d_own)
        bug.add_game(g, d_bug)
    return {
        "bins": {"width_seconds": BIN_SECONDS, "max_seconds": BIN_MAX},
        "since_previous_message": any_prev.summary(
            "time since the previous player line in the same chat and phase (anyone's)"
        ),
        "since_own_previous_message": own_prev.summary(
            "time since the same player's previous line in the phase (bug-fixed)"
        ),
        "since_own_previous_message_study_bug": bug.summary(
            "study's buggy variant: player's k-th line minus the phase's k-th line "
            "(opening announcement first), not the player's own previous line"
        ),
    }


def _win_rates(games: list[_GameData]) -> dict[str, Any]:
    won: dict[str, dict[str, list[bool]]] = {k: {r: [] for r in ROLES} for k in TYPES}
    skipped: list[str] = []
    for g in games:
        if g.winner not in ("mafia", "bystanders"):
            skipped.append(g.id)
            continue
        winning = "mafia" if g.winner == "mafia" else "bystander"
        for seat in g.seats.values():
            won[seat.kind][seat.team].append(seat.team == winning)
    return {
        "win_rate": {
            k: {r: (float(np.mean(v)) if v else None) for r, v in roles.items()}
            for k, roles in won.items()
        },
        "win_counts": {
            k: {r: {"won": int(sum(v)), "n": len(v)} for r, v in roles.items()}
            for k, roles in won.items()
        },
        "games_without_winner": skipped,
        "draws": [g.id for g in games if g.draw],
    }


def _voted_out_ranks(games: list[_GameData]) -> dict[str, Any]:
    events: list[dict[str, Any]] = []
    for g in games:
        for r, counts in _day_counts(g):
            alive = sorted(r.alive)
            for seat in r.voted_out:
                if seat not in r.alive or len(alive) < 2:
                    continue
                mine = counts.get(seat, 0)
                more = sum(1 for s in alive if counts.get(s, 0) > mine)
                tied = sum(1 for s in alive if s != seat and counts.get(s, 0) == mine)
                rank = 1 + more + tied / 2
                events.append(
                    {
                        "game": g.id,
                        "day": r.number,
                        "seat": seat,
                        "name": g.seats[seat].name,
                        "is_agent": g.seats[seat].is_agent,
                        "lines": mine,
                        "alive": len(alive),
                        "rank": rank,
                        "normalized": (len(alive) - rank) / (len(alive) - 1),
                    }
                )
    ranks = Counter(e["rank"] for e in events)
    norm = [e["normalized"] for e in events]
    return {
        "n": len(events),
        "rank_counts": {f"{k:g}": v for k, v in sorted(ranks.items())},
        "normalized": {**_stats(norm), **_unit_hist(norm)},
        "most_talkative_share": (
            sum(e["rank"] == 1 for e in events) / len(events) if events else None
        ),
        "events": events,
    }


def _survey(games: list[_GameData]) -> dict[str, Any]:
    rows = [s for g in games for s in g.surveys]
    flags = [s.identified_ai for s in rows if s.identified_ai is not None]
    study: dict[str, list[float]] = {k: [] for k in RATINGS}
    linear: dict[str, list[float]] = {k: [] for k in RATINGS}
    native: dict[str, list[float]] = {k: [] for k in RATINGS}
    for s in rows:
        for k in RATINGS:
            x = getattr(s, k)
            if x is None:
                continue
            linear[k].append(x)
            if s.original_scale == "0-100":
                study[k].append(round(25 * (x - 1), 6) / 20)
            else:
                study[k].append(x)
                native[k].append(x)
    scales = Counter(s.original_scale for s in rows)
    return {
        "responses": len(rows),
        "by_scale": dict(sorted(scales.items())),
        "identified_rate": float(np.mean(flags)) if flags else None,
        "identified_n": len(flags),
        "identified_count": int(sum(flags)),
        "conversion": "0-100 answers divided by 20 (the study's conversion); 1-5 answers as given",
        **{k: _stats(study[k]) for k in RATINGS},
        "linear": {
            "conversion": "0-100 answers mapped to 1 + 4*v/100 (as stored)",
            **{k: _stats(linear[k]) for k in RATINGS},
        },
        "only_1_5_answers": {k: _stats(native[k]) for k in RATINGS},
    }


# --- Table 4: separability of embeddings ------------------------------------------------------

FloatArray = npt.NDArray[np.float64]


def _lda_fit(x: FloatArray, y: npt.NDArray[np.bool_], ridge: float) -> tuple[FloatArray, float]:
    """Two-class LDA with a pooled covariance (plus a small ridge: 384 dims, few lines)."""
    pos, neg = x[y], x[~y]
    mu1, mu0 = pos.mean(axis=0), neg.mean(axis=0)
    centred = np.vstack([pos - mu1, neg - mu0])
    cov = centred.T @ centred / max(len(x) - 2, 1)
    cov += ridge * np.trace(cov) / cov.shape[0] * np.eye(cov.shape[0])
    w = np.linalg.solve(cov, mu1 - mu0)
    b = -0.5 * float((mu1 + mu0) @ w) + math.log(len(pos) / len(neg))
    return w, b


def _f1(y: npt.NDArray[np.bool_], pred: npt.NDArray[np.bool_]) -> dict[str, float]:
    def one(pos: bool) -> float:
        tp = int(np.sum((pred == pos) & (y == pos)))
        fp = int(np.sum((pred == pos) & (y != pos)))
        fn = int(np.sum((pred != pos) & (y == pos)))
        return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)

    f_pos, f_neg = one(True), one(False)
    n_pos = int(np.sum(y))
    weighted = (f_pos * n_pos + f_neg * (len(y) - n_pos)) / len(y)
    return {"f1_positive": f_pos, "f1_macro": (f_pos + f_neg) / 2, "f1_weighted": weighted}


def _separate(x: FloatArray, y: npt.NDArray[np.bool_], folds: int, ridge: float) -> dict[str, Any]:
    n_pos = int(np.sum(y))
    if n_pos < folds or len(y) - n_pos < folds:
        return {"n": len(y), "positive": n_pos, "in_sample": None, "cross_validated": None}
    w, b = _lda_fit(x, y, ridge)
    in_sample = _f1(y, x @ w + b > 0)
    pred = np.zeros(len(y), dtype=bool)
    rng = np.random.default_rng(0)
    fold_of = np.empty(len(y), dtype=int)
    for cls in (True, False):  # stratified folds
        idx = np.flatnonzero(y == cls)
        rng.shuffle(idx)
        fold_of[idx] = np.arange(len(idx)) % folds
    for f in range(folds):
        test = fold_of == f
        w, b = _lda_fit(x[~test], y[~test], ridge)
        pred[test] = x[test] @ w + b > 0
    return {
        "n": len(y),
        "positive": n_pos,
        "in_sample": in_sample,
        "cross_validated": _f1(y, pred),
    }


def _separability(
    games: list[_GameData], embedder: Embedder | None, folds: int = 5, ridge: float = 1e-3
) -> dict[str, Any] | None:
    if embedder is None:
        return None
    texts: list[str] = []
    agent: list[bool] = []
    mafia: list[bool] = []
    night: list[bool] = []
    for g in games:
        for x in g.player_lines():
            assert x.seat is not None
            texts.append(x.text)
            agent.append(g.seats[x.seat].is_agent)
            mafia.append(g.seats[x.seat].team == "mafia")
            night.append(x.place == "den")
    if not texts:
        return None
    emb = np.asarray(embedder.embed(texts), dtype=float)
    return {
        "embedder": embedder.name,
        "classifier": f"two-class LDA, pooled covariance + {ridge:g} ridge",
        "folds": folds,
        "agent_vs_human": _separate(emb, np.array(agent), folds, ridge),
        "mafia_vs_bystander": _separate(emb, np.array(mafia), folds, ridge),
        "day_vs_night": _separate(emb, np.array(night), folds, ridge),
    }


# --- the report -------------------------------------------------------------------------------


def build_report(
    engine: Engine, game_ids: Sequence[str] | None = None, embedder: Embedder | None = None
) -> dict[str, Any]:
    """Every figure of the analysis as plain JSON-able numbers (see the module doc).

    ``game_ids`` None means every finished game in the store. ``embedder`` enables Table 4.
    """
    games = _load(engine, game_ids)
    overview = _overview(games)
    per_day, by_day = _messages_per_day_phase(games)
    player_lines = [x for g in games for x in g.player_lines()]
    agent_lines = sum(
        1
        for g in games
        for x in g.player_lines()
        if x.seat is not None and g.seats[x.seat].is_agent
    )
    report: dict[str, Any] = {
        "game_ids": [g.id for g in games],
        "sources": dict(Counter(g.source for g in games)),
        "games": len(games),
        "phases": sum(len(g.rounds) for g in games),
        "players": sum(len(g.seats) for g in games),
        "messages": len(player_lines),
        "all_lines": sum(len(g.lines) for g in games),
        "agent_messages": agent_lines,
        "human_messages": len(player_lines) - agent_lines,
        "table1": overview,
        "messages_per_player_per_day_phase": per_day,
        "messages_per_player_by_day": by_day,
        **_content(games),
        "timing": _timing(games),
        **_win_rates(games),
        "voted_out_rank": _voted_out_ranks(games),
        "survey": _survey(games),
        "spot_the_ai": spot_rates(engine, [g.id for g in games]).as_dict(),
        "separability": _separability(games, embedder),
        "night_actions": night_action_counts(engine, [g.id for g in games]),
        "paper": PAPER,
        "notes": _notes(games),
    }
    return report


def _notes(games: list[_GameData]) -> list[str]:
    notes = [
        "Phases are the paper's: a day (discussion and vote) or a night; std is the "
        "population std.",
    ]
    if any(g.source == SOURCE for g in games):
        notes.append(
            "LLMafia times have no time zone; they were stored as if UTC. Durations are unaffected."
        )
    return notes


def write_report(
    report: dict[str, Any], out_dir: Path | None = None, json_file: Path | None = None
) -> list[Path]:
    """Write the JSON (``json_file``) and/or PNG figures plus ``report.md`` (``out_dir``)."""
    written: list[Path] = []
    if json_file is not None:
        json_file = Path(json_file)
        json_file.parent.mkdir(parents=True, exist_ok=True)
        json_file.write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
        written.append(json_file)
    if out_dir is not None:
        from research.report_plots import plot_all

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        figures = plot_all(report, out)
        md = out / "report.md"
        md.write_text(render_markdown(report, {k: p.name for k, p in figures.items()}), "utf-8")
        written.extend([*figures.values(), md])
    return written
