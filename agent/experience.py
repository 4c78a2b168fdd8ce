"""Learning across games without training: an experience pool and per-role strategy notes.

Two mechanisms, both prompt-only:

* **Experience pool** (Xu et al., Werewolf, 2023). At the end of a game every agent seat
  contributes its (reflection, response) pairs, one per phase it reflected in, scored
  ``1000 - days`` if its side won and ``days`` if it lost: win, and win fast; or at least lose
  slowly. In a later game, after each reflection, the pool is searched for reflections similar
  to the current one (cosine above a threshold; like the paper, from either side unless
  configured otherwise: similar thinking is the filter); the lowest-scored of those is
  likely a bad example and the ones around the median score likely good ones (the paper found
  the top-scored ones unreliable: a winner's every move was not a good move). The model
  contrasts the two and writes one sentence of advice, which goes into the seat's prompts.
* **Strategy notes** (Lan et al., Avalon, 2023, "self-role strategy learning"). After a game
  each seat writes at most three lessons for its role, and the role's note is rewritten to take
  them in, keeping what was good in it. The note sits in the static part of the seat's prompts
  in every later game in that role.

Lessons and notes must never name a player: players change between games, and a note that
quoted someone would carry their words into other games. Every model answer here goes through
:func:`strip_names` (this game's names, any case; every character name the game can deal,
capitalised), and a note that still names someone is refused.

Storage is behind :class:`ExperiencePool` (the bot keeps it in the database, scoped per server
or globally, and only feeds it from games whose people consented: see
``bot.seats.experience_store``). :class:`InMemoryExperiencePool` serves tests and offline runs.
"""

from __future__ import annotations

import asyncio
import re
import statistics
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from agent.guard import check_note
from agent.knowledge import SeatKnowledge
from agent.llm.base import LLMRequest
from agent.memory.embeddings import l2_normalize
from agent.prompting import PromptBook, read_json, system_prompt, task_text, text_schema
from games.names import CHARACTER_NAMES

__all__ = [
    "NAME_PLACEHOLDER",
    "Experience",
    "ExperiencePool",
    "ExperienceStep",
    "GameDebrief",
    "InMemoryExperiencePool",
    "contrast",
    "experience_score",
    "lessons_request",
    "named_players",
    "parse_lessons",
    "parse_strategy",
    "parse_suggestion",
    "strategy_request",
    "strip_names",
    "suggestion_request",
]

NAME_PLACEHOLDER = "a player"
WIN_SCORE = 1000
#: longest reflection kept per experience
MAX_REFLECTION = 600
#: each example shown to the model when extracting a suggestion
MAX_EXAMPLE = 300
NO_USE = re.compile(r"no useful experience", re.IGNORECASE)

Vector = npt.NDArray[np.float32]


def experience_score(won: bool, days: int) -> float:
    """The paper's score: 1000 - days for the winners, days for the losers."""
    days = max(int(days), 0)
    return float(WIN_SCORE - days if won else days)


@dataclass(frozen=True)
class Experience:
    """One (reflection, response, score) from an earlier game, as retrieved."""

    reflection: str
    response: str
    score: float
    role: str = ""
    similarity: float = 0.0
    id: int | None = None


@dataclass(frozen=True)
class ExperienceStep:
    """What a seat thought at the start of one phase, and what it then said and did."""

    phase_seq: int
    phase: str
    reflection: str
    response: str


@dataclass(frozen=True)
class GameDebrief:
    """Everything one seat hands to the pool when its game ends."""

    game_id: str
    seat: int
    role: str
    team: str
    won: bool
    days: int
    steps: tuple[ExperienceStep, ...]
    #: one unit vector per step (its reflection), from ``embedder``
    vectors: Vector | None = None
    embedder: str = ""
    lessons: tuple[str, ...] = ()

    @property
    def score(self) -> float:
        return experience_score(self.won, self.days)


Rewrite = Callable[[str | None], Awaitable[str | None]]


class ExperiencePool(Protocol):
    """The pool as one game's seats see it (scope and consent are the implementation's)."""

    async def accepts(self) -> bool:
        """May this game's experiences and lessons enter the pool (consent, logging)?"""
        ...

    async def similar(
        self, team: str | None, vector: Vector, embedder: str, threshold: float, limit: int
    ) -> list[Experience]:
        """Experiences (of ``team``'s seats, or everyone's when None) whose reflection has
        cosine > ``threshold`` with ``vector`` (same embedder only), most similar first, at
        most ``limit``."""
        ...

    async def record(self, debrief: GameDebrief) -> int:
        """Store the debrief's steps; returns how many were stored (0 without consent)."""
        ...

    async def strategy_note(self, role: str) -> str | None: ...

    async def update_strategy(
        self, role: str, rewrite: Rewrite, lessons: Sequence[str]
    ) -> str | None:
        """Replace the role's note with ``await rewrite(current)`` (None: keep it), one
        rewrite at a time per role. Returns the note now in force."""
        ...


# --- retrieval and contrast ----------------------------------------------------------------------


def contrast(
    experiences: Sequence[Experience], band: int = 3
) -> tuple[Experience, list[Experience]] | None:
    """(the lowest-scored experience, up to ``band`` others closest to the median score), or
    None when there is nothing to contrast (fewer than two, or every score the same)."""
    if len(experiences) < 2:
        return None
    scores = [e.score for e in experiences]
    if min(scores) == max(scores):
        return None
    worst = min(experiences, key=lambda e: (e.score, -e.similarity))
    median = statistics.median(scores)
    others = [e for e in experiences if e is not worst]
    others.sort(key=lambda e: (abs(e.score - median), -e.similarity))
    return worst, others[:band]


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _example(e: Experience) -> str:
    outcome = "their side won" if e.score >= WIN_SCORE / 2 else "their side lost"
    thought = _cut(e.reflection, MAX_EXAMPLE // 2)
    did = _cut(e.response, MAX_EXAMPLE // 2) or "(said and did nothing)"
    return f"- They thought: {thought}\n  They did: {did}\n  ({outcome})"


def suggestion_request(
    book: PromptBook,
    k: SeatKnowledge,
    persona: str,
    reflection: str,
    bad: Experience,
    good: Sequence[Experience],
    *,
    strategy: str = "",
    max_tokens: int = 80,
) -> LLMRequest:
    user = book.user(
        "suggestion",
        task=task_text(book, "suggestion", k),
        reflection=_cut(reflection, MAX_REFLECTION),
        bad=_example(bad),
        good="\n".join(_example(e) for e in good),
    )
    return LLMRequest(
        system=system_prompt(book, k, persona, strategy),
        messages=[("user", user)],
        max_tokens=max_tokens,
        temperature=0.3,
        kind="suggestion",
        schema=text_schema("advice"),
        schema_name="suggestion",
    )


def _field(text: str, key: str) -> str:
    """The text of a structured answer's ``key`` (a list: one item a line), else ``text``."""
    answer = read_json(text)
    if answer is None or key not in answer:
        return text
    value = answer[key]
    items = value if isinstance(value, list) else [value]
    return "\n".join(" ".join(str(v).split()) for v in items if v is not None)


def parse_suggestion(text: str, names: Iterable[str] = (), max_chars: int = 240) -> str | None:
    """The advice as one name-free line, or None ("No useful experience", or nothing left).
    A structured answer ``{"advice": "..."}`` reads as its text."""
    text = _field(text, "advice")
    if NO_USE.search(text):
        return None
    lines = [ln.strip(" -*•\"'") for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return None
    line = strip_names(" ".join(lines), names)
    line = _cut(line, max_chars)
    if line and check_note(line) is not None:
        return None  # advice, never an instruction or a tell (agent.guard.check_note)
    return line or None


# --- names ----------------------------------------------------------------------------------------


def _name_pattern(names: Iterable[str], *, ignore_case: bool) -> re.Pattern[str] | None:
    unique = sorted({n for n in names if n.strip()}, key=len, reverse=True)
    if not unique:
        return None
    alternation = "|".join(re.escape(n) for n in unique)
    return re.compile(
        rf"(?<![\w@])@?(?:{alternation})(?![\w])", re.IGNORECASE if ignore_case else 0
    )


_ANY_CHARACTER = _name_pattern(CHARACTER_NAMES, ignore_case=False)


def named_players(text: str, names: Iterable[str] = ()) -> list[str]:
    """Player names in ``text``: ``names`` in any case, any dealt character name capitalised."""
    found: list[str] = []
    table = _name_pattern(names, ignore_case=True)
    for pattern in (table, _ANY_CHARACTER):
        if pattern is not None:
            found.extend(m.group(0) for m in pattern.finditer(text))
    return found


def strip_names(text: str, names: Iterable[str] = ()) -> str:
    """``text`` with every player name replaced by "a player" (see :func:`named_players`)."""
    table = _name_pattern(names, ignore_case=True)
    for pattern in (table, _ANY_CHARACTER):
        if pattern is not None:
            text = pattern.sub(NAME_PLACEHOLDER, text)
    return text


# --- lessons and strategy notes -----------------------------------------------------------------

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def lessons_request(
    book: PromptBook,
    role: str,
    outcome: str,
    notes: Sequence[str],
    actions: Sequence[str],
    *,
    max_tokens: int = 200,
) -> LLMRequest:
    """Ask for at most three role-level lessons from the game just played (Avalon, step 1)."""
    notes_text = "\n".join(f"- {_cut(n, 300)}" for n in notes) or "(no notes)"
    actions_text = "\n".join(f"- {_cut(a, 200)}" for a in actions) or "(nothing)"
    user = book.user("lessons", role=role, outcome=outcome, notes=notes_text, actions=actions_text)
    return LLMRequest(
        system=book.system("lessons", name=""),
        messages=[("user", user)],
        max_tokens=max_tokens,
        temperature=0.3,
        kind="lessons",
        schema=text_schema(lists=("lessons",)),
        schema_name="lessons",
    )


def parse_lessons(text: str, names: Iterable[str] = (), limit: int = 3) -> list[str]:
    """At most ``limit`` name-free lessons, one per bullet or line (or one per item of a
    structured ``{"lessons": [...]}``). A lesson that would plant a tell in later games
    (:func:`agent.guard.check_note`: an instruction to say a marker, a quoted word,
    self-reference) is left out."""
    text = _field(text, "lessons")
    out: list[str] = []
    for raw in text.splitlines():
        line = _BULLET.sub("", raw).strip()
        if len(line) < 8 or line.endswith(":"):
            continue
        line = _cut(strip_names(line, names), 240)
        if line and line not in out and check_note(line) is None:
            out.append(line)
        if len(out) >= limit:
            break
    return out


def strategy_request(
    book: PromptBook,
    role: str,
    note: str | None,
    lessons: Sequence[str],
    *,
    chars: int = 600,
    max_tokens: int = 220,
) -> LLMRequest:
    """Ask for the role's note rewritten to take ``lessons`` in (Avalon, step 2)."""
    user = book.user(
        "strategy",
        role=role,
        note=note or "(none yet: this is your first game in this role)",
        lessons="\n".join(f"- {lesson}" for lesson in lessons),
        chars=chars,
    )
    return LLMRequest(
        system=book.system("strategy", role=role),
        messages=[("user", user)],
        max_tokens=max_tokens,
        temperature=0.3,
        kind="strategy",
        schema=text_schema("note"),
        schema_name="strategy",
    )


def parse_strategy(text: str, names: Iterable[str] = (), chars: int = 600) -> str | None:
    """The note as plain name-free text of at most ``chars`` characters, or None. A
    structured answer ``{"note": "..."}`` reads as its text."""
    text = _field(text, "note")
    lines = [_BULLET.sub("", ln).strip() for ln in text.strip().splitlines()]
    note = " ".join(ln for ln in lines if ln).strip().strip("\"'")
    note = strip_names(note, names)
    if not note or named_players(note, names) or check_note(note) is not None:
        return None
    if len(note) > chars:
        cut = note[:chars]
        end = cut.rfind(". ")
        note = cut[: end + 1] if end > chars // 2 else cut.rstrip() + "…"
    return note


# --- an in-memory pool ----------------------------------------------------------------------------


@dataclass
class _Row:
    id: int
    team: str
    role: str
    reflection: str
    response: str
    score: float
    vector: Vector
    embedder: str


@dataclass
class InMemoryExperiencePool:
    """A pool in a Python object: tests, benchmarks, offline simulations."""

    consent: bool = True
    rows: list[_Row] = field(default_factory=list)
    notes: dict[str, list[tuple[str, tuple[str, ...]]]] = field(default_factory=dict)
    debriefs: list[GameDebrief] = field(default_factory=list)
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    def add(
        self,
        team: str,
        role: str,
        reflection: str,
        response: str,
        score: float,
        vector: npt.NDArray[np.floating[Any]],
        embedder: str,
    ) -> None:
        """One experience, as if an earlier game had left it."""
        self.rows.append(
            _Row(
                len(self.rows) + 1,
                team,
                role,
                reflection,
                response,
                score,
                np.asarray(vector, dtype=np.float32),
                embedder,
            )
        )

    async def accepts(self) -> bool:
        return self.consent

    async def similar(
        self, team: str | None, vector: Vector, embedder: str, threshold: float, limit: int
    ) -> list[Experience]:
        rows = [r for r in self.rows if r.embedder == embedder and (team is None or r.team == team)]
        if not rows:
            return []
        return rank_similar(
            [(r.id, r.role, r.reflection, r.response, r.score) for r in rows],
            np.stack([r.vector for r in rows]),
            vector,
            threshold,
            limit,
        )

    async def record(self, debrief: GameDebrief) -> int:
        if not self.consent or debrief.vectors is None:
            return 0
        self.debriefs.append(debrief)
        for step, vector in zip(debrief.steps, debrief.vectors, strict=True):
            self.add(
                debrief.team,
                debrief.role,
                step.reflection,
                step.response,
                debrief.score,
                vector,
                debrief.embedder,
            )
        return len(debrief.steps)

    async def strategy_note(self, role: str) -> str | None:
        history = self.notes.get(role)
        return history[-1][0] if history else None

    async def update_strategy(
        self, role: str, rewrite: Rewrite, lessons: Sequence[str]
    ) -> str | None:
        if not self.consent:
            return await self.strategy_note(role)
        lock = self._locks.setdefault(role, asyncio.Lock())
        async with lock:
            current = await self.strategy_note(role)
            new = await rewrite(current)
            if new is not None and new != current:
                self.notes.setdefault(role, []).append((new, tuple(lessons)))
                return new
            return current


def rank_similar(
    rows: Sequence[tuple[Any, str, str, str, float]],
    matrix: npt.NDArray[np.floating[Any]],
    vector: npt.NDArray[np.floating[Any]],
    threshold: float,
    limit: int,
) -> list[Experience]:
    """Rows (id, role, reflection, response, score) whose vector (row of ``matrix``) has cosine
    above ``threshold`` with ``vector``, most similar first, at most ``limit``."""
    if not rows or limit <= 0:
        return []
    unit = l2_normalize(np.asarray(matrix, dtype=np.float32))
    query = l2_normalize(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]
    sims = unit @ query
    order = np.argsort(-sims, kind="stable")
    out: list[Experience] = []
    for i in order[:limit]:
        sim = float(sims[i])
        if sim <= threshold:
            break
        ident, role, reflection, response, score = rows[int(i)]
        out.append(Experience(reflection, response, float(score), role, sim, ident))
    return out
