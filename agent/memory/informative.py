"""What a seat observed, as memory items, and which of them are worth keeping in every prompt.

The recent chat window scrolls; some facts must not scroll away with it. Following the
"informativeness" idea of Xu et al. (Werewolf, 2023), every observation gets a rule-based
importance score, and the top N by score (newest first among equals) go into prompts beside
the window. Our rules, for Mafia:

====  ==========================================================================
5     the seat's own role card, partners, and its own investigation results
4     eliminations (a role is revealed) and the end of the game
3.5   role claims ("i'm the detective"), detective-result claims, a vote's outcome
3     accusations naming a player
2.5   defences naming a player; a night without a kill (the doctor saved someone)
2     single votes; the seat's own night actions
1     any other chat line
0.5   phase announcements
====  ==========================================================================

A line that names this seat gets +0.5: what people say about you matters more to you. The
scores rank; they are not probabilities. Lines are read with the same lexicon the baseline
agent uses (:mod:`agent.templates`), so an accusation means the same thing to both.

Only events the seat was given ever get here (the caller observes what the service delivered),
and den lines carry ``place="den"`` so prompts shown on the public stage can leave them out.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime

from agent.prompting import speech
from agent.templates import read_line
from games.events import (
    Event,
    GameOver,
    InspectionResult,
    MessageAccepted,
    NightActionRecorded,
    NightResult,
    PhaseEnded,
    PlayerEliminated,
    RoleAssigned,
    VoteCast,
    VoteResolved,
)
from games.names import display_list
from games.narration import MANAGER, manager_line, role_card

__all__ = [
    "SCORES",
    "InformativeIndex",
    "Observation",
    "claims_role",
    "read_event",
]

SCORES: Mapping[str, float] = {
    "role": 5.0,
    "elimination": 4.0,
    "claim": 3.5,
    "result": 3.5,
    "accusation": 3.0,
    "defence": 2.5,
    "night": 2.5,
    "vote": 2.0,
    "action": 2.0,
    "chat": 1.0,
    "announcement": 0.5,
}
#: extra weight for a line that names the observing seat
ABOUT_ME = 0.5
#: longest text kept per observation (a wall of text is cut, not allowed to dominate)
MAX_TEXT = 400
#: a quoted line (agent.prompting.speech) short enough for every prompt that shows memory
#: uncut (they cut at 160 characters with the time stamp), so its closing quote stays
MAX_SPEECH = 145

_CLAIM = re.compile(
    r"\b(?:i'?m|i\s+am|im|as\s+the|claiming|claim|i\s+was)\s+(?:the\s+|a\s+|an\s+)?"
    r"(detective|doctor|doc|cop|medic|bystander|villager|townie|town|mafia)\b"
    r"|\b(detective|doctor|doc)\s+here\b",
    re.IGNORECASE,
)


def claims_role(text: str) -> str | None:
    """The role a chat line claims for its speaker ("i'm the detective"), or None."""
    m = _CLAIM.search(text)
    if m is None:
        return None
    role = (m.group(1) or m.group(2)).casefold()
    return {"doc": "doctor", "medic": "doctor", "cop": "detective", "townie": "town"}.get(
        role, role
    )


@dataclass(frozen=True, slots=True)
class Observation:
    """One thing the seat saw, ready to be remembered and ranked.

    ``text`` reads on its own (speaker first) because it is what gets embedded; ``speaker`` is
    the seat that said it (None for the game's own announcements).
    """

    text: str
    t: datetime
    phase: str
    phase_seq: int
    kind: str
    place: str
    importance: float
    tag: str
    source_key: str
    speaker: int | None = None

    def render(self) -> str:
        """As a prompt line: ``[HH:MM:SS] text``."""
        return f"[{self.t.strftime('%H:%M:%S')}] {self.text}"


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class _Where:
    """Where and when an observation is made: shared by everything read from one event."""

    event: Event
    phase: str
    phase_seq: int
    source_key: str

    def make(
        self, text: str, kind: str, tag: str, speaker: int | None = None, bonus: float = 0.0
    ) -> Observation:
        return Observation(
            text=_cut(text),
            t=self.event.t,
            phase=self.phase,
            phase_seq=self.phase_seq,
            kind=kind,
            place=self.event.place,
            importance=SCORES[tag] + bonus,
            tag=tag,
            source_key=self.source_key,
            speaker=speaker,
        )


def read_event(
    event: Event,
    *,
    seat: int,
    names: tuple[str, ...],
    phase: str,
    phase_seq: int,
    source_key: str,
    votes: Mapping[str, str | None] | None = None,
) -> Observation | None:
    """The observation ``seat`` makes of ``event``, or None when there is nothing to keep.

    ``votes`` are the final votes of the phase a :class:`VoteResolved` closes (voter name ->
    target name), for the one-line summary of who voted for whom.
    """
    at = _Where(event, phase, phase_seq, source_key)
    if isinstance(event, MessageAccepted):
        reading = read_line(event.text, names)
        about_me = ABOUT_ME if seat in reading.named and event.seat != seat else 0.0
        where = "(mafia chat) " if event.place == "den" else ""
        text = f"{where}{event.name}: {speech(event.text, MAX_SPEECH - len(where + event.name))}"
        if reading.claim is not None:
            tag = "result"
        elif claims_role(event.text) is not None:
            tag = "claim"
        elif reading.named and reading.accuses:
            tag = "accusation"
        elif reading.named and reading.defends:
            tag = "defence"
        else:
            tag = "chat"
        return at.make(text, "message", tag, event.seat, about_me)
    if isinstance(event, RoleAssigned):
        return at.make(role_card(event), "role", "role") if event.seat == seat else None
    if isinstance(event, InspectionResult):
        verdict = "IS mafia" if event.is_mafia else "is NOT mafia"
        return at.make(f"My investigation: {event.target_name} {verdict}.", "role", "role")
    if isinstance(event, PlayerEliminated):
        line = manager_line(event) or f"{event.name} is out ({event.role})"
        return at.make(f"{MANAGER}: {line}", "elimination", "elimination", event.seat)
    if isinstance(event, GameOver):
        line = manager_line(event) or "The game is over."
        return at.make(f"{MANAGER}: {line}", "manager", "elimination")
    if isinstance(event, VoteResolved):
        return _vote_summary(at, event, votes or {})
    if isinstance(event, VoteCast):
        cast = manager_line(event)
        if cast is None:
            return None
        bonus = ABOUT_ME if event.target == seat else 0.0
        return at.make(cast, "vote", "vote", event.voter, bonus)
    if isinstance(event, NightActionRecorded):
        act = f"I chose to {event.verb} {event.target_name} that night."
        return at.make(act, "action", "action")
    if isinstance(event, NightResult):
        if event.victim is not None:
            return None  # the elimination says it
        return at.make(f"{MANAGER}: Nobody was killed during the night.", "manager", "night")
    if isinstance(event, PhaseEnded):
        return None
    said = manager_line(event)
    return None if said is None else at.make(f"{MANAGER}: {said}", "manager", "announcement")


def _vote_summary(at: _Where, event: VoteResolved, votes: Mapping[str, str | None]) -> Observation:
    who = "Night kill vote" if event.night else "Vote"
    if event.chosen_name is not None:
        outcome = f"{event.chosen_name} chosen"
    elif event.tied:
        outcome = f"tie between {display_list(list(event.tied))}, nobody chosen"
    else:
        outcome = "no votes, nobody chosen"
    by_target: dict[str, list[str]] = {}
    for voter, target in votes.items():
        by_target.setdefault(target or "abstain", []).append(voter)
    detail = "; ".join(
        f"{display_list(voters)} -> {target}" for target, voters in sorted(by_target.items())
    )
    text = f"{who} result: {outcome}" + (f" ({detail})" if detail else "") + "."
    return at.make(text, "vote", "result" if event.chosen_name is not None else "vote")


class InformativeIndex:
    """Observations ranked by importance (newest first among equals), top ``capacity`` kept.

    Observations are only ever added, so the top N of everything is always among the kept
    ones; asking for the top N is a walk over at most ``capacity`` entries, whatever the
    length of the game (it runs on every prompt).
    """

    def __init__(self, capacity: int = 256) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.capacity = capacity
        self._keys: list[tuple[float, int]] = []
        self._items: list[Observation] = []
        self._seen: set[str] = set()
        self._n = 0

    def __len__(self) -> int:
        return len(self._items)

    def add(self, item: Observation) -> None:
        if item.source_key in self._seen:
            return
        self._seen.add(item.source_key)
        self._n += 1
        key = (-item.importance, -self._n)
        at = bisect.bisect(self._keys, key)
        if at >= self.capacity:
            return
        self._keys.insert(at, key)
        self._items.insert(at, item)
        if len(self._items) > self.capacity:
            self._keys.pop()
            self._items.pop()

    def top(
        self,
        n: int,
        *,
        before: datetime | None = None,
        den: bool = True,
        tags: Collection[str] | None = None,
        exclude_tags: Collection[str] = (),
    ) -> list[Observation]:
        """The ``n`` most informative observations, oldest first.

        ``before`` keeps only observations older than that (what the chat window no longer
        shows); ``den=False`` leaves out mafia-chat lines (prompts for the public stage).
        """
        picked: list[Observation] = []
        if n <= 0:
            return picked
        for item in self._items:
            if before is not None and item.t >= before:
                continue
            if not den and item.place == "den":
                continue
            if tags is not None and item.tag not in tags:
                continue
            if item.tag in exclude_tags:
                continue
            picked.append(item)
            if len(picked) >= n:
                break
        picked.sort(key=lambda o: o.t)
        return picked
