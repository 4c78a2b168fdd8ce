"""LLMafia games in the store: their ids, and rebuilding one from its rows.

An imported LLMafia game (`research.importer`) is stored as ``llmafia-<folder>`` under one
Server row (platform "import", external id "llmafia"), with ``Game.config["source"]`` =
"llmafia". The export (`bot.protection.dataset.export`) and the research tools both need to know
that
naming, and the export rebuilds stored games in the release's layout with `game_from_store`
(played-here games too, best effort), so both live here, on the live side.

Times: an imported game's clock times were stored as if UTC (the release's wall clock); they
come back naive, as the reader gives them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, cast

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.players import seat_story
from bot.players import survey as survey_rules
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
    Winner,
)
from bot.protection.dataset.llmafia_survey import IDENTIFIED, RELEVANCE, SIMILARITY, TIMING
from bot.store.models import Game, Message, Seat, SurveyResponse, Vote
from bot.store.models import Phase as PhaseRow

__all__ = [
    "ID_PREFIX",
    "KILLED",
    "SERVER_EXTERNAL_ID",
    "SERVER_PLATFORM",
    "SOURCE",
    "VOTED_OUT",
    "game_from_store",
    "resolve_game_ids",
    "store_game_id",
]

SOURCE = "llmafia"
ID_PREFIX = "llmafia-"
SERVER_PLATFORM = "import"
SERVER_EXTERNAL_ID = "llmafia"

#: the Game-Manager's elimination sentences (LLMafia's wording; games played here use it too)
VOTED_OUT = re.compile(r"^(.+?) was voted out\. Their role was (\w+)")
KILLED = re.compile(r"^(.+?) was killed during the night\. Their role was (\w+)")

_FAMILY = {"day": "day", "vote": "day", "night": "night", "night_vote": "night"}


def store_game_id(source_id: str) -> str:
    """The store id of LLMafia game ``source_id`` ("0013" -> "llmafia-0013")."""
    return f"{ID_PREFIX}{source_id}"


def resolve_game_ids(engine: Engine, games: Sequence[str]) -> list[str]:
    """Store ids for the given ids; an LLMafia folder name ("0013") means "llmafia-0013"."""
    with Session(engine) as s:
        wanted = [*games, *(store_game_id(g) for g in games)]
        known = set(s.exec(select(Game.id).where(col(Game.id).in_(wanted))).all())
    out: list[str] = []
    for g in games:
        if g in known:
            out.append(g)
        elif store_game_id(g) in known:
            out.append(store_game_id(g))
        else:
            raise LookupError(f"no game {g!r} in the store")
    return out


def game_from_store(engine: Engine, game_id: str) -> LLMafiaGame:
    """Rebuild an LLMafiaGame from stored rows (an imported game, or one played here).

    For an imported game the public chats come back exactly as the reader gave them (same
    lines, same order) and so do players, phases, eliminations, winner and vote files. What the
    store does not keep comes back empty or simplified: skipped votes, earlier survey attempts,
    ``ChatLine.shown_in`` (set to the line's phase; the reader recomputes it on reading).
    """
    with Session(engine) as s:
        game = s.get(Game, game_id)
        if game is None:
            raise LookupError(f"no game {game_id!r} in the store")
        seats = s.exec(select(Seat).where(Seat.game_id == game_id).order_by(col(Seat.index))).all()
        phase_rows = s.exec(
            select(PhaseRow).where(PhaseRow.game_id == game_id).order_by(col(PhaseRow.seq))
        ).all()
        messages = s.exec(select(Message).where(Message.game_id == game_id)).all()
        votes = s.exec(
            select(Vote).where(Vote.game_id == game_id).order_by(col(Vote.t), col(Vote.id))
        ).all()
        surveys = s.exec(
            select(SurveyResponse)
            .where(SurveyResponse.game_id == game_id)
            .order_by(col(SurveyResponse.seat_index), col(SurveyResponse.id))
        ).all()
    config = dict(game.config or {})
    extra: dict[str, Any] = dict(config.get("llmafia") or {})
    name_of = {seat.index: seat.character_name for seat in seats}
    llm_configs: dict[str, Any] = dict(config.get("llm_config") or {})
    players = [
        Player(
            name=seat.character_name,
            is_mafia=_is_mafia_role(seat.role),
            is_llm=seat_story.agent_throughout(seat),
            llm_config=dict(llm_configs.get(seat.character_name) or {}),
        )
        for seat in seats
    ]
    raws: dict[tuple[str, str, str, str], list[str]] = {}
    for t, place, speaker, text, raw in extra.get("raw_texts") or []:
        raws.setdefault((str(t), str(place), str(speaker), str(text)), []).append(str(raw))
    phases, label_of = _phases_from_rows(phase_rows)
    first_label = phases[0].label if phases else "day-1"
    ordered = sorted(
        (m for m in messages if m.place in ("stage", "den", "manager")),
        key=lambda m: (m.phase_seq or 0, m.t, m.id or 0),
    )
    lines = [
        ChatLine(
            t=_naive(m.t),
            phase=label_of.get(m.phase_seq or 0, first_label),
            place=cast(Place, m.place),
            speaker=m.speaker,
            text=m.text,
            shown_in=label_of.get(m.phase_seq or 0, first_label),
            raw=_raw_text(raws, m),
        )
        for m in ordered
    ]
    start = game.started_at or game.created_at
    return LLMafiaGame(
        game_id=str(config.get("game_id") or game.id),
        players=players,
        day_minutes=_minutes(config, "day"),
        night_minutes=_minutes(config, "night"),
        start_time=_naive(start),
        phases=phases,
        lines=lines,
        votes=[
            VoteRecord(
                name_of.get(v.voter_index, str(v.voter_index)),
                name_of.get(v.target_index, str(v.target_index)),
                label_of.get(v.phase_seq),
                _naive(v.t),
            )
            for v in votes
            if v.target_index is not None
        ],
        eliminations=_eliminations(lines),
        winner=cast(Winner, game.winner) if game.winner in ("mafia", "bystanders") else None,
        surveys=[_survey(r, name_of, game.revealed_at) for r in surveys],
        repairs=[
            Repair(str(r["kind"]), str(r["detail"]), int(r.get("count", 1)))
            for r in config.get("repairs") or []
        ],
        winner_declared=bool(extra.get("winner_declared", game.winner is not None)),
        vote_files={k: list(v) for k, v in (extra.get("vote_files") or {}).items()},
        remaining_players=list(
            extra.get("remaining_players") or [seat.character_name for seat in seats if seat.alive]
        ),
        phase_status=str(extra.get("phase_status") or ""),
        survey_scale=_scale(extra.get("survey_scale"), surveys),
        config_path=extra.get("config_path"),
    )


def _raw_text(raws: dict[tuple[str, str, str, str], list[str]], m: Message) -> str:
    """An imported line's own LLMafia text (`ChatLine.raw`), each used once, in order."""
    found = raws.get((_naive(m.t).isoformat(), m.place, m.speaker, m.text))
    return found.pop(0) if found else ""


def _is_mafia_role(role: str | None) -> bool:
    if role is None:
        return False
    try:
        from games.roles import get_role

        return get_role(role).team == "mafia"
    except Exception:  # an unknown role name: only "mafia" is mafia
        return role == "mafia"


def _minutes(config: dict[str, Any], which: Literal["day", "night"]) -> float:
    if f"{which}_minutes" in config:
        return float(config[f"{which}_minutes"])
    seconds = config.get(f"{which}_seconds")
    return float(seconds) / 60 if seconds is not None else 0.0


def _phases_from_rows(rows: Iterable[PhaseRow]) -> tuple[list[Phase], dict[int, str]]:
    """Merge the talk and vote rows of each day or night back into one LLMafia phase.

    A talk row after the first is a host restart; the last vote row is the vote that counted.
    """
    drafts: list[dict[str, Any]] = []
    label_of: dict[int, str] = {}
    for row in rows:
        family = _FAMILY.get(row.kind)
        if family is None:
            continue
        label = f"{family}-{row.number}"
        cur = drafts[-1] if drafts else None
        if cur is None or cur["label"] != label:
            cur = {"label": label, "kind": family, "number": row.number, "start": row.started_at}
            cur.update(voting_start=None, restarts=[], talks=0)
            drafts.append(cur)
        if row.kind in ("vote", "night_vote"):
            cur["voting_start"] = row.started_at
        else:
            if cur["talks"]:
                cur["restarts"].append(row.started_at)
            cur["talks"] += 1
        label_of[row.seq] = label
    phases: list[Phase] = []
    for i, d in enumerate(drafts):
        end = drafts[i + 1]["start"] if i + 1 < len(drafts) else None
        phases.append(
            Phase(
                label=d["label"],
                kind=d["kind"],
                number=d["number"],
                start=_naive(d["start"]),
                voting_start=None if d["voting_start"] is None else _naive(d["voting_start"]),
                end=None if end is None else _naive(end),
                restarts=[_naive(t) for t in d["restarts"]],
            )
        )
    return phases, label_of


def _eliminations(lines: list[ChatLine]) -> list[Elimination]:
    out: list[Elimination] = []
    for line in lines:
        if line.speaker != MANAGER:
            continue
        m = VOTED_OUT.match(line.text) or KILLED.match(line.text)
        if m is None:
            continue
        role: Role = "mafia" if m.group(2) == "mafia" else "bystander"
        out.append(Elimination(m.group(1).strip(), role, line.phase, line.t))
    return out


def _scale(value: Any, rows: Iterable[SurveyResponse]) -> Scale | None:
    if value in ("1-5", "0-100"):
        return cast(Scale, value)
    scales = {r.original_scale for r in rows}
    if len(scales) == 1:
        only = scales.pop()
        if only in ("1-5", "0-100"):
            return cast(Scale, only)
    return None


def _survey(row: SurveyResponse, name_of: dict[int, str], revealed_at: datetime | None) -> Survey:
    scale = cast(Scale, row.original_scale if row.original_scale == "0-100" else "1-5")
    fields: dict[str, str] = {}
    # only a guess given before the reveal counts (bot.players.survey.guess_counts)
    identified = survey_rules.counted_guess(row, revealed_at)
    if identified is not None:
        fields[IDENTIFIED] = "1" if identified else "0"
    for key, value in (
        (SIMILARITY, row.similarity),
        (TIMING, row.timing),
        (RELEVANCE, row.relevance),
    ):
        if value is not None:
            raw = 25 * (value - 1) if scale == "0-100" else value
            fields[key] = f"{round(raw, 6):g}"
    return Survey(
        player=name_of.get(row.seat_index, str(row.seat_index)),
        about=None if row.about_seat_index is None else name_of.get(row.about_seat_index),
        fields=fields,
        identified_llm=identified,
        similarity=row.similarity,
        timing=row.timing,
        relevance=row.relevance,
        original_scale=scale,
        comments=row.comments,
    )


def _naive(t: datetime) -> datetime:
    return t.astimezone(UTC).replace(tzinfo=None)
