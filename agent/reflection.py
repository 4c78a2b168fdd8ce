"""Reflection by answering questions, once per phase; then suspicion, advice and debriefing.

After Xu et al. (Werewolf, 2023): rather than feeding the whole history to the model, a seat
asks itself questions and answers each from the memories retrieved for it. Once per phase (not
per message: that bounds the cost at three calls a phase), when something happened since the
last time:

1. **Pick questions.** The model picks ``L`` questions from a fixed set for its role (shared
   ones plus mafia, bystander, detective or doctor ones) and adds ``M`` of its own.
2. **Answer and reflect.** Each question gets its top ``T`` memories from the seat's retrieval
   memory; one call answers them all and writes a short private note (the reflection), which
   is stored in the memory as kind "reflection".
3. **Suspicion.** One call rates every other living player as JSON (see
   :mod:`agent.suspicion`; the baseline heuristic stands in when the answer can't be read).
4. **Advice from past games** (only when the experience pool holds at least two similar,
   differently scored experiences; see :mod:`agent.experience`).

When the game ends, :meth:`Reflector.debrief` hands the seat's (reflection, response) pairs to
the experience pool and rewrites its role's strategy note from at most three lessons, if the
game may feed the pool.

Every call and every fallback is in the decision log (kinds "reflection", "suspicion",
"experience"). Calls go through the player's own request path, so they count against the
seat's token budget and failure limits like any other call.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from agent.decisions import DecisionKind
from agent.experience import (
    GameDebrief,
    contrast,
    lessons_request,
    parse_lessons,
    parse_strategy,
    parse_suggestion,
    strategy_request,
    suggestion_request,
)
from agent.guard import repeats_words
from agent.knowledge import SeatKnowledge, clock_text
from agent.llm.base import FINISH_REFUSAL, LLMRequest, LLMResponse
from agent.memory.seatmind import SeatMind
from agent.memory.store import MemoryItem
from agent.prompting import (
    PromptBook,
    PromptWindow,
    chat_window,
    memory_field,
    read_json,
    settled_chars,
    system_prompt,
    task_text,
    text_schema,
)
from agent.suspicion import parse_suspicion, suspicion_candidates, suspicion_request

__all__ = [
    "QUESTIONS",
    "Asker",
    "Reflector",
    "answers_request",
    "parse_answers",
    "parse_questions",
    "questions_for",
    "questions_request",
]

log = logging.getLogger(__name__)

#: the predefined questions, by group; a seat's candidates are "all" + its side + its role
QUESTIONS: Mapping[str, tuple[str, ...]] = {
    "all": (
        "What phase of the game is it, and what can I do in it?",
        "What is my role, and what do I need to happen from here on to win?",
        "Which players have said or hinted what their role is?",
        "Who has accused whom so far, and has anyone changed their mind?",
        "How did each player vote, and did anyone's vote not match what they said?",
        "Who has been unusually quiet, and who unusually pushy?",
        "What would happen if I revealed my role now?",
    ),
    "mafia": (
        "Whom are my fellow mafia going after, and should I back them or keep my distance?",
        "Who might be the detective or the doctor, and how could we tell?",
        "Who suspects me or my partners, and where could I turn that suspicion?",
        "Which bystander would the others believe is mafia if we pushed the vote on them?",
    ),
    "bystanders": (
        "Who is most likely to be mafia among the living, and why?",
        "Has someone claimed to be the detective, and can that claim be trusted?",
        "Which players defend each other or always vote together?",
    ),
    "detective": (
        "Whom should I investigate next, and why them?",
        "What have my investigations shown, and should I share it now?",
        "Who keeps pushing suspicion onto players I know are innocent?",
    ),
    "doctor": (
        "Whom are the mafia most likely to kill tonight?",
        "Has anyone credibly claimed to be the detective and so needs protecting?",
        "Should I protect myself tonight, or someone more at risk?",
    ),
}


def questions_for(role: str | None, team: str | None) -> list[str]:
    """The candidate questions of a seat: shared, its side's, its role's."""
    side = "mafia" if team == "mafia" else "bystanders"
    out = [*QUESTIONS["all"], *QUESTIONS[side]]
    if role in ("detective", "doctor"):
        out.extend(QUESTIONS[role])
    return out


class Asker(Protocol):
    """What a reflection needs from its player: a model call through the player's own path
    (budget, failure counting), and the decision log."""

    async def ask(self, req: LLMRequest, kind: DecisionKind) -> LLMResponse | None: ...

    def log_call(
        self,
        kind: DecisionKind,
        req: LLMRequest,
        resp: LLMResponse,
        *,
        decision: str,
        valid: bool,
        fallback: bool = False,
    ) -> None: ...

    def log_note(
        self, decision: str, *, kind: DecisionKind, fallback: bool = False, error: str | None = None
    ) -> None: ...


# --- step 1: questions ---------------------------------------------------------------------------


def questions_request(
    book: PromptBook,
    k: SeatKnowledge,
    persona: str,
    now: datetime,
    window: PromptWindow,
    candidates: Sequence[str],
    *,
    pick: int,
    own: int,
    memory: str = "",
    strategy: str = "",
    max_tokens: int = 80,
) -> LLMRequest:
    listing = "\n".join(f"{i}. {q}" for i, q in enumerate(candidates, start=1))
    chat = chat_window(k, window)
    user = book.user(
        "reflect_questions",
        chat=chat.text,
        task=task_text(book, "reflect_questions", k),
        status=k.status(),
        memory=memory_field(memory),
        now=clock_text(now),
        phase=k.phase_label(),
        candidates=listing,
        pick=pick,
        own=own,
    )
    return LLMRequest(
        system=system_prompt(book, k, persona, strategy),
        messages=[("user", user)],
        settled=settled_chars(user, chat),
        max_tokens=max_tokens,
        temperature=0.3,
        kind="reflect_questions",
        schema=QUESTIONS_SCHEMA,
        schema_name="questions",
    )


_NUMBER = re.compile(r"\d+")

#: the questions step's structured answer: the picked numbers, and questions of its own
QUESTIONS_SCHEMA = {
    "type": "object",
    "properties": {
        "pick": {"type": "array", "items": {"type": "integer"}},
        "ask": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["pick", "ask"],
    "additionalProperties": False,
}
#: the answers step's structured answer: one answer a question, then the note
ANSWERS_SCHEMA = text_schema("note", lists=("answers",))


def _as_text(answer: dict[str, object], lines: Sequence[tuple[str, str]]) -> str:
    """A structured answer written out in the text form the parsers read: for each
    (key, label), ``label: value`` (one line per item of a list; ``#`` numbers them)."""
    out: list[str] = []
    for key, label in lines:
        value = answer.get(key)
        items = value if isinstance(value, list) else [value] if value is not None else []
        for i, item in enumerate(items, start=1):
            text = " ".join(str(item).split())
            out.append(f"{i}. {text}" if label == "#" else f"{label}: {text}")
    return "\n".join(out)


def parse_questions(
    text: str, candidates: Sequence[str], pick: int, own: int
) -> tuple[list[str], bool]:
    """(questions to answer, whether the answer was in the asked form). Falls back to the
    first ``pick`` candidates when no usable number is given. A structured answer
    ``{"pick": [3, 9], "ask": ["..."]}`` reads as its text form."""
    answer = read_json(text)
    if answer is not None and ("pick" in answer or "ask" in answer):
        picks = answer.get("pick")
        numbers = ", ".join(str(n) for n in picks) if isinstance(picks, list) else ""
        text = f"PICK: {numbers}\n" + _as_text(answer, [("ask", "ASK")])
    chosen: list[str] = []
    asked: list[str] = []
    ok = False
    for raw in text.splitlines():
        line = raw.strip().strip("*").strip()
        head, sep, rest = line.partition(":")
        label = head.strip().casefold()
        if sep and label == "pick":
            for number in _NUMBER.findall(rest):
                i = int(number) - 1
                if 0 <= i < len(candidates) and candidates[i] not in chosen:
                    chosen.append(candidates[i])
            ok = bool(chosen)
        elif sep and label in ("ask", "own", "question"):
            question = " ".join(rest.split())
            if len(question) >= 8 and question not in asked:
                asked.append(question if question.endswith("?") else question + "?")
    if not chosen:
        chosen = list(candidates[:pick])
        ok = False
    return chosen[:pick] + asked[:own], ok


# --- step 2: answers and the note ----------------------------------------------------------------


def _recalled(hits: Sequence[tuple[MemoryItem, float]], limit: int = 200) -> str:
    if not hits:
        return "  (nothing in memory)"
    lines = []
    for item, _ in sorted(hits, key=lambda h: h[0].t):
        text = " ".join(item.text.split())
        if len(text) > limit:
            text = text[: limit - 1].rstrip() + "…"
        lines.append(f"  - [{item.t.strftime('%H:%M:%S')}] {text}")
    return "\n".join(lines)


def answers_request(
    book: PromptBook,
    k: SeatKnowledge,
    persona: str,
    now: datetime,
    window: PromptWindow,
    questions: Sequence[str],
    recalled: Sequence[Sequence[tuple[MemoryItem, float]]],
    *,
    memory: str = "",
    strategy: str = "",
    max_tokens: int = 320,
) -> LLMRequest:
    blocks = [
        f"{i}. {q}\n{_recalled(hits)}"
        for i, (q, hits) in enumerate(zip(questions, recalled, strict=True), start=1)
    ]
    chat = chat_window(k, window)
    user = book.user(
        "reflect_answers",
        chat=chat.text,
        task=task_text(book, "reflect_answers", k),
        status=k.status(),
        memory=memory_field(memory),
        now=clock_text(now),
        phase=k.phase_label(),
        questions="\n".join(blocks),
    )
    return LLMRequest(
        system=system_prompt(book, k, persona, strategy),
        messages=[("user", user)],
        settled=settled_chars(user, chat),
        max_tokens=max_tokens,
        temperature=0.3,
        kind="reflect_answers",
        schema=ANSWERS_SCHEMA,
        schema_name="reflection",
    )


_ANSWER = re.compile(r"^\s*(\d+)[.):]\s*(.+)$")
_NOTE = re.compile(r"^\s*\**\s*(?:note|reflection)\s*\**\s*:\s*(.*)$", re.IGNORECASE)


def parse_answers(text: str, count: int, max_chars: int = 600) -> tuple[list[str], str | None]:
    """(answers by question, the note). The note is what follows "NOTE:" (to the end); when
    the model wrote none, the answers joined stand in; None when there is nothing at all.
    A structured answer ``{"answers": [...], "note": "..."}`` reads as its text form."""
    answer = read_json(text)
    if answer is not None and ("answers" in answer or "note" in answer):
        text = _as_text(answer, [("answers", "#"), ("note", "NOTE")])
    answers = [""] * count
    note_lines: list[str] | None = None
    for raw in text.splitlines():
        if note_lines is not None:
            if raw.strip():
                note_lines.append(raw.strip())
            continue
        m = _NOTE.match(raw)
        if m:
            note_lines = [m.group(1).strip()] if m.group(1).strip() else []
            continue
        a = _ANSWER.match(raw)
        if a and 1 <= int(a.group(1)) <= count:
            answers[int(a.group(1)) - 1] = " ".join(a.group(2).split())
    note = " ".join(" ".join(note_lines).split()) if note_lines else ""
    if not note:
        note = " ".join(a for a in answers if a)
    if not note:
        note = " ".join(text.split())
    if len(note) > max_chars:
        note = note[: max_chars - 1].rstrip() + "…"
    return answers, note or None


# --- the orchestration --------------------------------------------------------------------------


@dataclass
class Reflector:
    """Runs a seat's reflection steps through its player's :class:`Asker`."""

    mind: SeatMind
    book: PromptBook
    asker: Asker
    window: PromptWindow
    #: the heuristic suspicion (town) or danger (mafia) scores by seat, for the fallback
    heuristic: Callable[[], Mapping[int, float]]

    def due(self, k: SeatKnowledge) -> bool:
        """A reflection is worth its calls: the seat plays in this phase, something happened
        since the last one, and this phase has none yet."""
        if k.over or not k.me_alive or k.role is None:
            return False
        if k.room() is None and not k.votes_now() and not k.acts_tonight():
            return False
        if self.mind.reflection_for(k.phase_seq) is not None:
            return False
        return self.mind.news >= self.mind.settings.min_news

    def due_at_end(self, k: SeatKnowledge) -> bool:
        """The game is over and the seat's last phase has no reflection though something
        happened since the latest one (see :meth:`debrief`)."""
        if not k.over or k.role is None or self.mind.reflection_for(k.phase_seq) is not None:
            return False
        return self.mind.news >= self.mind.settings.min_news

    async def reflect(
        self,
        k: SeatKnowledge,
        persona: str,
        now: Callable[[], datetime],
        live: Callable[[], bool],
        *,
        final: bool = False,
    ) -> bool:
        """The phase's reflection, suspicion update and advice. ``live()`` says the work is
        still wanted (same phase, seat not closed); it is checked between calls. ``final``:
        the game is over, so the note and the seat's read of the table, but no advice from the
        pool (it only feeds later prompts).
        Returns whether a note was written."""
        mind = self.mind
        s = mind.settings
        seq = k.phase_seq
        strategy = mind.strategy_text()
        candidates = questions_for(k.role, k.team)
        memory = await mind.prompt_block(k, "reflect", self._window_start(k))
        req = questions_request(
            self.book,
            k,
            persona,
            now(),
            self.window,
            candidates,
            pick=s.questions_picked,
            own=s.questions_own,
            memory=memory,
            strategy=strategy,
        )
        resp = await self.asker.ask(req, "reflection")
        text = resp.text if resp is not None and resp.finish_reason != FINISH_REFUSAL else ""
        questions, ok = parse_questions(text, candidates, s.questions_picked, s.questions_own)
        # a question of its own that copies a player's words would carry them unquoted into
        # the next prompt, as the note would (copies_a_line)
        own = [q for q in questions if q not in candidates and copies_a_line(q, k)]
        if own:
            questions = [q for q in questions if q not in own]
            ok = False
        if resp is not None:
            self.asker.log_call(
                "reflection",
                req,
                resp,
                decision="questions: " + " | ".join(questions),
                valid=ok,
                fallback=not ok,
            )
        if not live():
            return False
        recalled = await mind.retrieve_many(questions, s.answers_top)
        req = answers_request(
            self.book,
            k,
            persona,
            now(),
            self.window,
            questions,
            recalled,
            memory=memory,
            strategy=strategy,
        )
        resp = await self.asker.ask(req, "reflection")
        if resp is None or resp.finish_reason == FINISH_REFUSAL or not resp.text.strip():
            if resp is not None:
                self.asker.log_call("reflection", req, resp, decision="no note", valid=False)
            return False
        _, note = parse_answers(resp.text, len(questions), s.reflection_chars)
        if note is None:
            self.asker.log_call("reflection", req, resp, decision="no note", valid=False)
            return False
        if copies_a_line(note, k):
            # a player's words in the seat's own voice would reach every later prompt outside
            # the quotes that mark them as someone's speech (a laundered injection)
            self.asker.log_call(
                "reflection", req, resp, decision="no note: copies a player's line", valid=False
            )
            return False
        self.asker.log_call("reflection", req, resp, decision=f"note: {note}", valid=True)
        await mind.add_reflection(seq, k.phase_label(), note, now())
        if live():
            await self.update_suspicion(k, persona)
        if live() and not final:
            await self.suggest(k, persona, note)
        await mind.save()
        return True

    def _window_start(self, k: SeatKnowledge) -> datetime | None:
        w = self.window
        entries, _ = k.settled_window(w.lines, w.chars, w.keep, w.page)
        return entries[0].t if entries else None

    async def update_suspicion(self, k: SeatKnowledge, persona: str) -> None:
        mind = self.mind
        candidates = suspicion_candidates(k)
        if not candidates:
            return
        memory = await mind.prompt_block(k, "reflect", self._window_start(k))
        note = mind.latest_reflection
        if note is not None:
            memory = f"{memory}\nYour private note ({note.phase}): {note.text}".strip("\n")
        req = suspicion_request(
            self.book, k, persona, candidates, memory=memory, strategy=mind.strategy_text()
        )
        resp = await self.asker.ask(req, "suspicion")
        rated = (
            parse_suspicion(resp.text, candidates)
            if resp is not None and resp.finish_reason != FINISH_REFUSAL
            else {}
        )
        names = k.names
        try:
            raw = self.heuristic()
        except Exception:
            log.exception("seat %s: the heuristic suspicion failed", k.seat)
            raw = {}
        heuristic = {names[seat]: score for seat, score in raw.items() if seat in names}
        mind.suspicion.update(rated, heuristic, candidates, k.inspections, k.phase_seq)
        line = mind.suspicion.log_line()
        if resp is not None:
            self.asker.log_call(
                "suspicion", req, resp, decision=line, valid=bool(rated), fallback=not rated
            )
        else:
            self.asker.log_note(
                line, kind="suspicion", fallback=True, error="no answer: heuristic scores"
            )

    async def suggest(self, k: SeatKnowledge, persona: str, note: str) -> None:
        """Advice from the experience pool, when it has something to contrast."""
        mind = self.mind
        s = mind.settings
        if mind.pool is None or k.team is None:
            return
        vector = (await mind.embed([note]))[0]
        team = k.team if s.experience_same_side else None
        try:
            found = await mind.pool.similar(
                team, vector, mind.embedder.name, s.experience_threshold, s.experience_limit
            )
        except Exception:
            log.exception("seat %s: searching the experience pool failed", k.seat)
            return
        pair = contrast(found, s.experience_band)
        if pair is None:
            return
        bad, good = pair
        basis = (bad.id, *(g.id for g in good))
        if basis == mind.suggestion_basis and mind.suggestion is not None:
            return  # the same examples as last time: the same advice
        req = suggestion_request(
            self.book, k, persona, note, bad, good, strategy=mind.strategy_text()
        )
        resp = await self.asker.ask(req, "experience")
        if resp is None:
            return
        advice = (
            parse_suggestion(resp.text, k.players, s.suggestion_chars)
            if resp.finish_reason != FINISH_REFUSAL
            else None
        )
        self.asker.log_call(
            "experience",
            req,
            resp,
            decision=f"suggestion: {advice}" if advice else "suggestion: none",
            valid=advice is not None,
        )
        mind.suggestion_basis = basis
        if advice is not None:
            mind.suggestion = advice

    # --- after the game ------------------------------------------------------------------------

    async def debrief(
        self,
        k: SeatKnowledge,
        game_id: str,
        *,
        owed: bool = False,
        persona: str = "",
        now: Callable[[], datetime] | None = None,
    ) -> GameDebrief | None:
        """Give the pool this seat's experiences and rewrite its role's strategy note. Nothing
        happens (and nothing is spent) when the game may not feed the pool.

        ``owed``: reflections were skipped in play (background work gives way to decisions and
        is not run past its phase); with no critical call left to delay, the seat reflects
        on its last phase first, so its experience is not lost."""
        mind = self.mind
        pool = mind.pool
        if pool is None or k.winner is None or k.role is None or k.team is None:
            return None
        if not await pool.accepts():
            self.asker.log_note(
                "experience: not kept (the game may not feed the pool)", kind="experience"
            )
            return None
        if owed and now is not None and self.due_at_end(k):
            try:
                await self.reflect(k, persona, now, lambda: True, final=True)
            except Exception as err:  # a spent budget, a failing model: debrief without it
                self.asker.log_note(
                    "reflection at the end: none",
                    kind="reflection",
                    error=f"{type(err).__name__}: {err}",
                )
        steps = tuple(mind.steps())
        vectors = await mind.embed([step.reflection for step in steps]) if steps else None
        won = k.winner == k.team
        days = max(k.phase_number, 1)
        try:
            lessons = await self._lessons(k, won, days)
        except Exception as err:  # a spent budget, a failing model: the experience still counts
            self.asker.log_note(
                "experience: no lessons", kind="experience", error=f"{type(err).__name__}: {err}"
            )
            lessons = []
        debrief = GameDebrief(
            game_id=game_id,
            seat=k.seat,
            role=k.role,
            team=k.team,
            won=won,
            days=days,
            steps=steps,
            vectors=vectors,
            embedder=mind.embedder.name,
            lessons=tuple(lessons),
        )
        stored = await pool.record(debrief)
        self.asker.log_note(
            f"experience: {stored} of {len(steps)} (reflection, response) pairs kept, "
            f"score {debrief.score:g}",
            kind="experience",
        )
        if lessons:
            role = k.role

            async def rewrite(current: str | None) -> str | None:
                return await self._rewrite(role, current, lessons, k.players)

            await pool.update_strategy(role, rewrite, lessons)
        return debrief

    async def _lessons(self, k: SeatKnowledge, won: bool, days: int) -> list[str]:
        role = k.role or "bystander"
        side = "the mafia" if k.team == "mafia" else "the bystanders"
        fate = "you survived" if k.me_alive else "you were eliminated before the end"
        outcome = f"{side} (your side) {'won' if won else 'lost'} after {days} day(s); {fate}."
        notes = [step.reflection for step in self.mind.steps()][-6:]
        acts = self.mind.acts()[-8:]
        req = lessons_request(self.book, role, outcome, notes, acts)
        resp = await self.asker.ask(req, "experience")
        if resp is None or resp.finish_reason == FINISH_REFUSAL:
            return []
        lessons = parse_lessons(resp.text, k.players)
        self.asker.log_call(
            "experience",
            req,
            resp,
            decision="lessons: " + (" | ".join(lessons) or "none"),
            valid=bool(lessons),
        )
        return lessons

    async def _rewrite(
        self, role: str, current: str | None, lessons: Sequence[str], names: Sequence[str]
    ) -> str | None:
        chars = self.mind.settings.strategy_chars
        req = strategy_request(self.book, role, current, lessons, chars=chars)
        resp = await self.asker.ask(req, "experience")
        if resp is None or resp.finish_reason == FINISH_REFUSAL:
            return None
        note = parse_strategy(resp.text, names, chars)
        self.asker.log_call(
            "experience", req, resp, decision=f"strategy note: {note}", valid=note is not None
        )
        return note


#: this many words in a row, as a player typed them, make a note a copy of their line
COPY_RUN = 6


def copies_a_line(note: str, k: SeatKnowledge) -> bool:
    """Whether a private note repeats COPY_RUN or more words in a row of a line another player
    typed (a model fooled into copying an instruction a player wrote). A name or a short quote
    is fine; a run of a player's words is not."""
    others = (e.text for e in k.messages if e.seat is not None and e.seat != k.seat)
    return repeats_words(note, others, COPY_RUN)
