"""Suspicion tracking: one score per living player, with its reason, updated once per phase.

After the "sensors" of PLAYER* (Ma et al., 2024): the agent keeps an explicit, numeric
suspicion state about every other player and narrows its attention to the few most suspected
(the "pruner"), so talk and votes stay focused on them instead of re-deriving everything from
the chat each time. The state is updated after each phase's reflection from the model's JSON
answer; when that answer cannot be read, the baseline agent's heuristic scores (votes,
accusations, claims, inspections; :meth:`BaselinePolicy.suspicion`) stand in, squashed to the
same 0..1 scale, and the record says so.

A bystander rates how likely each player is to be mafia. A mafia seat already knows that, so
it rates *threat* instead: how dangerous each bystander is to the team (onto them, a likely
detective), which is what its kills and votes need. The seat's own investigation results
always win over any rating: 1 for "is mafia", 0 for "is not".
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent.knowledge import SeatKnowledge
from agent.llm.base import LLMRequest
from agent.prompting import PromptBook, memory_field, system_prompt, task_text
from games.names import display_list

__all__ = [
    "Suspect",
    "SuspicionTracker",
    "parse_suspicion",
    "squash",
    "suspicion_candidates",
    "suspicion_request",
]

#: longest reason kept per player
MAX_WHY = 80


@dataclass(frozen=True)
class Suspect:
    name: str
    score: float
    why: str
    #: "model", "heuristic" or "investigation"
    source: str

    def render(self) -> str:
        why = f": {self.why}" if self.why else ""
        return f"{self.name} {self.score:.1f}{why}"


def squash(raw: float) -> float:
    """A heuristic score (any real) onto 0..1: the logistic function."""
    if raw >= 40:
        return 1.0
    if raw <= -40:
        return 0.0
    return 1.0 / (1.0 + math.exp(-raw))


def suspicion_candidates(k: SeatKnowledge) -> list[str]:
    """Whom this seat rates: the other living players (for the mafia, bystanders only)."""
    banned = {k.seat} | (k.partner_seats() if k.is_mafia else set())
    return [k.players[i] for i in sorted(k.alive) if i not in banned]


_JSON_SHAPES = (("{", re.compile(r"\{.*\}", re.DOTALL)), ("[", re.compile(r"\[.*\]", re.DOTALL)))


def _json_in(text: str) -> Any:
    """The JSON object or array spanning the answer (whichever opens first), or None."""

    def opens_at(shape: tuple[str, re.Pattern[str]]) -> int:
        at = text.find(shape[0])
        return len(text) if at < 0 else at

    for _, pattern in sorted(_JSON_SHAPES, key=opens_at):
        found = pattern.search(text)
        if found is None:
            continue
        try:
            return json.loads(found.group(0))
        except json.JSONDecodeError:
            continue
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and math.isfinite(value):
        return min(max(float(value), 0.0), 1.0)
    if isinstance(value, str):
        try:
            return _number(float(value.strip().rstrip("%")) / (100 if "%" in value else 1))
        except ValueError:
            return None
    return None


def parse_suspicion(text: str, candidates: Sequence[str]) -> dict[str, tuple[float, str]]:
    """``{name: (score, why)}`` for the candidates the answer rates (names matched whole and
    case-insensitively; scores clamped to 0..1). Empty when nothing usable is in it.

    Accepts ``{"Name": 0.7}``, ``{"Name": {"score": 0.7, "why": "..."}}`` and a list of
    ``{"name": ..., "score": ..., "why": ...}``, inside code fences or prose.
    """
    data = _json_in(text)
    entries: list[tuple[str, Any]] = []
    if isinstance(data, dict):
        entries = [(str(k), v) for k, v in data.items()]
    elif isinstance(data, list):
        entries = [(str(e.get("name", "")), e) for e in data if isinstance(e, dict) and "name" in e]
    by_fold = {c.casefold(): c for c in candidates}
    out: dict[str, tuple[float, str]] = {}
    for key, value in entries:
        name = by_fold.get(key.strip().strip("@").casefold())
        if name is None:
            continue
        why = ""
        if isinstance(value, dict):
            score = _number(value.get("score", value.get("suspicion", value.get("threat"))))
            raw_why = value.get("why", value.get("reason", ""))
            why = " ".join(str(raw_why).split()) if raw_why else ""
        else:
            score = _number(value)
        if score is None:
            continue
        if len(why) > MAX_WHY:
            why = why[: MAX_WHY - 1].rstrip() + "…"
        out[name] = (score, why)
    return out


class SuspicionTracker:
    """The seat's current scores, kept with their reasons; the top few are its focus."""

    def __init__(self, mafia: bool = False) -> None:
        self.mafia = mafia
        self.scores: dict[str, Suspect] = {}
        #: phase seq of the last update (None: never updated)
        self.phase_seq: int | None = None

    @property
    def label(self) -> str:
        return "threat" if self.mafia else "suspicion"

    def update(
        self,
        rated: Mapping[str, tuple[float, str]],
        heuristic: Mapping[str, float],
        candidates: Sequence[str],
        inspections: Mapping[str, bool],
        phase_seq: int,
    ) -> None:
        """New scores for exactly ``candidates``: the model's where it rated, else the
        heuristic's; investigation results override both."""
        fresh: dict[str, Suspect] = {}
        for name in candidates:
            if name in inspections and not self.mafia:
                verdict = inspections[name]
                why = "my investigation: mafia" if verdict else "my investigation: not mafia"
                fresh[name] = Suspect(name, 1.0 if verdict else 0.0, why, "investigation")
            elif name in rated:
                score, why = rated[name]
                fresh[name] = Suspect(name, score, why, "model")
            else:
                score = squash(heuristic.get(name, 0.0))
                fresh[name] = Suspect(name, score, "", "heuristic")
        self.scores = fresh
        self.phase_seq = phase_seq

    def focus(self, n: int = 3) -> list[Suspect]:
        """The ``n`` highest-scored players, highest first (ties by name, for stable prompts).
        Scores the seat reasoned out (the model's, its investigations) rank before heuristic
        stand-ins for players the model left out."""
        reasoned = any(s.source != "heuristic" for s in self.scores.values())
        ranked = sorted(
            self.scores.values(),
            key=lambda s: (reasoned and s.source == "heuristic", -s.score, s.name),
        )
        return ranked[:n]

    def prompt_line(self, n: int = 3) -> str:
        focus = self.focus(n)
        if not focus:
            return ""
        head = "Biggest threats to your team (0-1)" if self.mafia else "Your top suspects (0-1)"
        return f"{head}: " + "; ".join(s.render() for s in focus) + "."

    def log_line(self) -> str:
        ranked = sorted(self.scores.values(), key=lambda s: (-s.score, s.name))
        return ", ".join(f"{s.name} {s.score:.2f} ({s.source}: {s.why or '-'})" for s in ranked)

    def to_record(self) -> dict[str, Any]:
        return {
            "mafia": self.mafia,
            "phase_seq": self.phase_seq,
            "scores": [[s.name, s.score, s.why, s.source] for s in self.scores.values()],
        }

    def restore(self, record: Mapping[str, Any]) -> None:
        self.phase_seq = record.get("phase_seq")
        scores: dict[str, Suspect] = {}
        for entry in record.get("scores", []):
            name, score, why, source = entry
            scores[str(name)] = Suspect(str(name), float(score), str(why), str(source))
        self.scores = scores


def suspicion_request(
    book: PromptBook,
    k: SeatKnowledge,
    persona: str,
    candidates: Sequence[str],
    *,
    memory: str = "",
    strategy: str = "",
    max_tokens: int = 220,
) -> LLMRequest:
    """Ask for a 0..1 rating of every candidate as JSON (suspicion, or threat for the mafia)."""
    if k.is_mafia:
        question = (
            "You are mafia, so you know who the mafia are. Rate how dangerous each bystander is "
            "to your team: 1 if they are onto you or your partners, or may be the detective or "
            "the doctor; 0 if they are harmless or useful to you."
        )
    else:
        question = (
            "Rate how likely each of them is to be mafia: 0 means surely not, 1 means surely "
            "mafia. Go by what they said, how they voted and who died."
        )
    user = book.user(
        "suspicion",
        task=task_text(book, "suspicion", k),
        status=k.status(),
        memory=memory_field(memory),
        question=question,
        players=display_list(list(candidates)),
        example=candidates[0] if candidates else "Name",
    )
    return LLMRequest(
        system=system_prompt(book, k, persona, strategy),
        messages=[("user", user)],
        max_tokens=max_tokens,
        temperature=0.3,
        kind="suspicion",
        schema=suspicion_schema(candidates),
        schema_name="ratings",
    )


def suspicion_schema(candidates: Sequence[str]) -> dict[str, Any]:
    """The structured rating: every candidate by name, a 0..1 score and why."""
    rating = {
        "type": "object",
        "properties": {"score": {"type": "number"}, "why": {"type": "string"}},
        "required": ["score", "why"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {name: rating for name in candidates},
        "required": list(candidates),
        "additionalProperties": False,
    }
