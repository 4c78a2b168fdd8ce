"""``mafiabot report``'s night actions: how often each role used its night ability, by the
agent and by people, and how many of those actions told their actor something at dawn; read
from the stored events through :func:`games.night_log.night_rows` (the replay page's and the
export's reading). Games without night actions (the LLMafia game without a detective or a
doctor, the LLMafia imports) count nothing."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.store.models import Event, Seat
from games.night_log import night_rows

__all__ = ["night_action_counts", "night_markdown"]

#: the stored events a night action and its result are read from
_KINDS = ("phase_started", "night_action", "inspection_result", "private_note")


def night_action_counts(engine: Engine, game_ids: Sequence[str]) -> dict[str, Any]:
    """``{"total": n, "by_role": {role: {"verb", "actions", "agent", "human", "with_result",
    "games"}}}``, roles in name order."""
    with Session(engine) as s:
        events = s.exec(
            select(Event)
            .where(col(Event.game_id).in_(list(game_ids)), col(Event.kind).in_(_KINDS))
            .order_by(col(Event.game_id), col(Event.seq))
        ).all()
        seats = s.exec(select(Seat).where(col(Seat.game_id).in_(list(game_ids)))).all()
    agents = {(r.game_id, r.index) for r in seats if r.is_agent}
    names: dict[str, dict[int, str]] = defaultdict(dict)
    for r in seats:
        names[r.game_id][r.index] = r.character_name
    by_game: dict[str, list[tuple[str, dict[str, object]]]] = defaultdict(list)
    for e in events:
        by_game[e.game_id].append((e.kind, dict(e.payload)))
    roles: dict[str, dict[str, Any]] = {}
    for game_id, read in by_game.items():
        for row in night_rows(read, names[game_id]):
            one = roles.setdefault(
                row.role,
                {"verb": row.verb, "actions": 0, "agent": 0, "human": 0, "with_result": 0},
            )
            one.setdefault("_games", set()).add(game_id)
            one["actions"] += 1
            one["agent" if (game_id, row.actor) in agents else "human"] += 1
            one["with_result"] += bool(row.result)
    out: dict[str, dict[str, Any]] = {}
    for role in sorted(roles):
        one = dict(roles[role])
        one["games"] = len(one.pop("_games"))
        out[role] = one
    return {"total": sum(r["actions"] for r in out.values()), "by_role": out}


def night_markdown(counts: dict[str, Any]) -> list[str]:
    """The report's section (nothing when no game had a night action)."""
    if not counts.get("total"):
        return []
    out = ["## Night actions by role", ""]
    out += ["| role | verb | actions | by the agent | by people | told a result | games |"]
    out += ["|---|---|---|---|---|---|---|"]
    for role, r in counts["by_role"].items():
        out.append(
            f"| {role} | {r['verb']} | {r['actions']} | {r['agent']} | {r['human']} "
            f"| {r['with_result']} | {r['games']} |"
        )
    return [*out, ""]
