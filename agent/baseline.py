"""The baseline player: templates for words, a suspicion score for votes, random human delays.

It is the offline default when no LLM is configured and the yardstick every evaluation
compares against, so it has to play a believable, not a clever, game. It learns only from
the events its seat may see (it drops any other event it is handed) and never needs the
game state.

Timing follows the LLMafia finding that people speak in bursts and fall silent once they
have said their share: while this seat's share of the phase's messages is below 1/N it
answers within seconds, above it waits longer and may stay quiet. Every planned action is
kept until something relevant changes, so ``plan`` is stable and a busy chat never
postpones a line forever. All delays are game seconds.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple, cast

from agent.base import Intent
from agent.templates import PREFIXES, SUFFIXES, TEMPLATES, Lexicon, Reading, lexicon
from games.events import (
    Event,
    GameOver,
    GameStarted,
    InspectionResult,
    MessageAccepted,
    NightActionRecorded,
    NightResult,
    PhaseEnded,
    PhaseStarted,
    PlayerEliminated,
    RoleAssigned,
    VoteCast,
)
from games.names import display_list
from games.roles import get_role
from games.state import PhaseKind

__all__ = ["BASELINE_NAME", "BaselinePolicy", "BaselineTiming"]

#: how evaluations and logs name this policy
BASELINE_NAME = "baseline"

_NO_VOTE = -2  # "has not voted this phase" (None would be an abstention)
_EMPTY: Counter[int] = Counter()  # read-only stand-in for "no record"
_NOTHING_HEARD: frozenset[str] = frozenset()  # a town seat's record of the den
#: the small changes that make a used line new, in the order they are shuffled from
_VARIANTS = tuple((p, s) for p in PREFIXES for s in SUFFIXES if p or s)


@dataclass(frozen=True)
class BaselineTiming:
    """Timing knobs, all in game seconds (so ``--speed`` scales them for free)."""

    #: wait after the last message (or the phase start) while below one's share of the chat
    short_delay: tuple[float, float] = (3.0, 12.0)
    #: wait after the last message while above one's share
    long_delay: tuple[float, float] = (15.0, 45.0)
    #: typing time per word of the line
    seconds_per_word: float = 0.35
    #: most lines per phase on the stage by day, in the vote, and in the den at night
    day_cap: int = 5
    vote_cap: int = 2
    den_cap: int = 2
    #: chance to stay silent for a while when already above one's share
    skip_when_loud: float = 0.35
    #: when to vote / act, as fractions of the phase
    vote_window: tuple[float, float] = (0.08, 0.6)
    act_window: tuple[float, float] = (0.15, 0.7)
    #: never act later than this before the deadline (capped at 10% of short phases)
    margin: float = 3.0
    #: how long a change of mind takes
    change_delay: tuple[float, float] = (2.0, 6.0)


def _chattiness(persona: str | None) -> float:
    """The baseline can't act a persona out; it only borrows its temperament."""
    if not persona:
        return 1.0
    text = persona.casefold()
    if any(w in text for w in ("quiet", "shy", "reserved", "terse", "laconic", "calm")):
        return 0.65
    if any(w in text for w in ("chatty", "talkative", "loud", "outgoing", "energetic")):
        return 1.4
    return 1.0


class _Option(NamedTuple):
    weight: float
    key: str
    slots: Mapping[str, str]
    topic: tuple[object, ...] | None = None


class _Room:
    """The chat of one room (the stage, or the den) in the current phase."""

    __slots__ = ("last_t", "msgs", "total")

    def __init__(self, start: datetime) -> None:
        #: lines per seat, lines in all, and when the last one came (the phase start if none)
        self.msgs: dict[int, int] = {}
        self.total = 0
        self.last_t = start


class TableLedger:
    """What the seats at one table hear, recorded once for all of them.

    A :class:`BaselinePolicy` keeps the public record of the talk here: the lines said, who
    talks how much, who accused whom, detective claims, and the current phase's chat. By
    default every policy has a ledger of its own and feeds it the events it sees. A simulation
    that runs every seat of a game in one process may give all of them one ledger and
    :meth:`take` each event into it, once and in order, before handing the event to any policy
    (:func:`agent.fastsim.simulate_fast` does): the record is then read, not rebuilt, eight
    times over. That changes nothing a seat decides, because a seat that is still playing has
    heard every stage line so far, a living mafia every den line, and a town seat never looks
    at the den's record; what differs between seats (scores, plans, reactions) stays in each
    policy.
    """

    __slots__ = (
        "accused_by",
        "alive",
        "claims",
        "den",
        "den_heard",
        "heard",
        "lex",
        "phase_accusers",
        "reading",
        "readings",
        "seq",
        "stage",
        "talk",
        "talk_seen",
        "target",
        "times",
    )

    def __init__(self) -> None:
        self.lex: Lexicon | None = None
        self.readings: Mapping[str, Reading] = {}  # the lexicon's memo, read without a call
        self.alive: set[int] = set()
        self.seq = 0
        self.stage = _Room(datetime.min)
        self.den = _Room(datetime.min)
        #: every line heard (case-folded), on the stage and in the den: never say one again
        self.heard: set[str] = set()
        self.den_heard: set[str] = set()
        #: stage lines per seat over the game, and as of the start of the current day
        #: ("quiet" and "loud" are judged on history)
        self.talk: Counter[int] = Counter()
        self.talk_seen: Counter[int] = Counter()
        #: accuser -> accused -> times (indexed by the actor: every question asked of it is
        #: "what did this player do"); the current phase's accusers of each player
        self.accused_by: dict[int, Counter[int]] = {}
        self.phase_accusers: dict[int, list[int]] = {}
        self.claims: dict[int, tuple[int, str]] = {}  # claimer -> (target, "mafia"/"clean")
        #: the last line taken, for its listeners: how it reads (None when it was not read),
        #: whom it accused or made a claim about, and the speaker's accusations of them so far
        self.reading: Reading | None = None
        self.target: int | None = None
        self.times = 0

    def take(self, event: Event) -> None:
        """Record one event (events that carry no talk are ignored)."""
        cls = type(event)
        if cls is MessageAccepted:
            self._message(cast(MessageAccepted, event))
        elif cls is PhaseStarted:
            phase = cast(PhaseStarted, event)
            self.seq = phase.seq
            self.stage = _Room(phase.t)
            self.den = _Room(phase.t)
            self.phase_accusers = {}
            if phase.phase == _DAY:
                self.talk_seen = Counter(self.talk)
        elif cls is PlayerEliminated:
            self.alive.discard(cast(PlayerEliminated, event).seat)
        elif cls is GameStarted:
            players = tuple(cast(GameStarted, event).players)
            self.lex = lexicon(players)
            self.readings = self.lex.readings
            self.alive = set(range(len(players)))

    def _message(self, event: MessageAccepted) -> None:
        self.reading = None
        self.target = None
        if event.phase_seq != self.seq:
            return
        s = event.seat
        den = event.place == "den"
        room = self.den if den else self.stage
        msgs = room.msgs
        msgs[s] = msgs.get(s, 0) + 1
        room.total += 1
        room.last_t = event.t
        lex = self.lex
        if lex is None:
            return
        text = event.text
        reading = self.readings.get(text)
        if reading is None:
            reading = lex.read(text)
        self.reading = reading
        if den:
            self.den_heard.add(reading.folded)
            return
        self.heard.add(reading.folded)
        self.talk[s] += 1
        if not reading.pointed:
            return
        alive = self.alive
        for n in reading.named:
            if n != s and n in alive:
                break
        else:
            return
        self.target = n
        if reading.claim is not None:
            self.claims[s] = (n, reading.claim)
            return
        counts = self.accused_by.get(s)
        if counts is None:
            counts = self.accused_by[s] = Counter()
        times = self.times = counts.get(n, 0) + 1
        counts[n] = times
        accusers = self.phase_accusers.get(n)
        if accusers is None:
            self.phase_accusers[n] = [s]
        else:
            accusers.append(s)


class BaselinePolicy:
    """Template talk, heuristic votes, human-like timing. See the module docstring.

    ``ledger``: leave it out, unless you run every seat of a game in one process and feed the
    shared ledger yourself (see :class:`TableLedger`).
    """

    name = BASELINE_NAME

    def __init__(
        self,
        seat: int,
        name: str,
        rng: random.Random,
        persona: str | None = None,
        timing: BaselineTiming | None = None,
        *,
        ledger: TableLedger | None = None,
    ) -> None:
        self.seat = seat
        self.character = name
        self.persona = persona
        self.timing = timing or _TIMING
        self._rng = rng
        self._chatty = _chattiness(persona)
        # --- what the seat knows about the game
        self._ledger = ledger or TableLedger()
        self._own_ledger = ledger is None
        self._names: tuple[str, ...] = ()
        self._alive: set[int] = set()
        self._role: str | None = None
        self._partner_names: tuple[str, ...] = ()
        self._partners: frozenset[int] = frozenset()
        self._revealed: dict[int, str] = {}
        self._over = False
        self._gone = False
        self._noise: dict[int, float] = {}
        self._day_noise: dict[int, float] = {}
        #: voter -> target -> day votes
        self._voted_by: dict[int, Counter[int]] = {}
        #: bumped whenever anything the scores depend on changes (scores are cached)
        self._version = 0
        self._cache: dict[str, tuple[int, dict[int, float]]] = {}
        self._target_cache: tuple[object, int | None] = (None, None)
        self._votes_seen = 0
        self._inspections: dict[int, bool] = {}
        self._reveal: int | None = None
        self._gates: dict[tuple[object, ...], bool] = {}
        #: my own lines (case-folded), refused ones included; the ledger has what I heard
        self._said: set[str] = set()
        self._den_heard: AbstractSet[str] = _NOTHING_HEARD  # the ledger's, once I am mafia
        self._topics: set[tuple[object, ...]] = set()
        self._day = 0
        self._last_day_elim: tuple[int, str, tuple[int, ...], int] | None = None
        self._yesterday_votes: dict[int, int | None] = {}
        self._night_victim: tuple[int, str] | None = None
        self._night_none = False
        self._last_protect: int | None = None
        self._night_act_target: int | None = None
        # --- the current phase
        self._kind: PhaseKind | None = None
        #: facts derived from the phase, the role and who is alive, kept up to date by the
        #: handlers because planning asks for them on every re-plan
        self._mafia = False
        self._night = False
        self._voting = False
        self._place: str | None = None
        self._others_now: tuple[int, ...] = ()
        #: from when "running out of time" lines fit (half the vote, 70% of the discussion)
        self._late_at = datetime.min
        self._room = 1
        self._lines_cap = 1
        self._seq = 0
        self._start = datetime.min
        self._deadline = datetime.min
        self._seconds = 0.0
        self._tally_now: Counter[int] = Counter()
        self._reset_phase()
        self._acted = False
        self._act_at: datetime | None = None
        self._act_errors = 0
        self._act_banned: set[int] = set()
        self._dirty = True
        self._best: Intent | None = None
        #: intents handed out in the current phase; outcomes of older ones arrive late
        self._issued: list[Intent] = []
        self._issued_ids: set[int] = set()  # id()s of ``_issued`` (kept alive by the list)

    @property
    def ledger(self) -> TableLedger:
        """The record of the talk this policy reads (its own unless one was shared)."""
        return self._ledger

    @property
    def needs_plan(self) -> bool:
        """Something happened since the last :meth:`plan`, so its answer may change (when
        False, ``plan`` returns the same intent again: a simulation may skip the call)."""
        return self._dirty

    # ==== observing ============================================================================

    def observe(self, event: Event) -> None:
        """Take in one event. Events this seat may not see are ignored, never learned from."""
        seen = event.visible_to
        if seen is not None and self.seat not in seen:  # games.events.visible, inlined
            return
        cls = type(event)
        if self._gone and cls is not GameOver:
            return  # eliminated: nothing left to decide, so nothing left to learn
        if self._own_ledger:
            self._ledger.take(event)
        handler = _HANDLERS.get(cls)
        if handler is not None:
            handler(self, event)

    def _on_game_started(self, event: GameStarted) -> None:
        self._version += 1
        self._names = tuple(event.players)
        self._alive = set(range(len(self._names)))
        self._noise = {i: self._rng.random() * 0.25 for i in self._alive}
        self._resolve_partners()
        self._phase_facts()
        self._dirty = True

    def _on_role(self, event: RoleAssigned) -> None:
        self._version += 1
        if event.seat != self.seat:
            return  # (never visible to this seat anyway)
        self._role = event.role
        self._mafia = event.role == "mafia"
        self._den_heard = self._ledger.den_heard if self._mafia else _NOTHING_HEARD
        self._partner_names = event.partners
        self._resolve_partners()
        self._phase_facts()
        self._dirty = True

    def _resolve_partners(self) -> None:
        wanted = {n.casefold() for n in self._partner_names}
        self._partners = frozenset(i for i, n in enumerate(self._names) if n.casefold() in wanted)

    def _phase_facts(self) -> None:
        """Recompute what depends on the phase kind, the role and who is alive."""
        me, partners, alive = self.seat, self._partners, self._alive
        self._others_now = tuple(s for s in sorted(alive) if s != me and s not in partners)
        kind = self._kind
        night = self._night = kind is PhaseKind.NIGHT or kind is PhaseKind.NIGHT_VOTE
        mafia = self._mafia
        self._voting = kind is PhaseKind.VOTE or (kind is PhaseKind.NIGHT_VOTE and mafia)
        # where this seat talks now (None: nowhere), and N, the players in that room
        if kind is None or kind is PhaseKind.OVER:
            self._place = None
        elif not night:
            self._place = "stage"
        elif mafia and any(p in alive for p in partners):
            self._place = "den"
        else:
            self._place = None
        if night:
            self._room = len((partners | {me}) & alive)
        else:
            self._room = max(len(alive), 1)

    def _reset_phase(self) -> None:
        self._chat = _Room(self._start)  # the ledger's room, once the phase has one for me
        self._lines = 0
        self._say_errors = 0
        self._speak: Intent | None = None
        self._speak_words = 0  # words in the planned line (its typing time is redrawn often)
        self._speak_topic: tuple[object, ...] | None = None
        self._speak_mode = "short"
        self._speak_off: str | None = None
        self._restale = False
        self._accused_me: list[int] = []
        self._votes_now: dict[int, int | None] = {}
        self._tally_now.clear()
        self._last_vote_intent: Intent | None = None
        self._vote_at: datetime | None = None
        self._voted: int | None = _NO_VOTE
        self._change_to: int | None = None
        self._change_at: datetime | None = None
        self._changed = False
        self._vote_errors = 0
        self._vote_banned: set[int] = set()
        self._vote_off = False
        self._first_prop: int | None = None

    def _on_phase_started(self, event: PhaseStarted) -> None:
        kind = _PHASE_KINDS.get(event.phase) or PhaseKind(event.phase)
        old = self._kind
        new_night = kind is PhaseKind.NIGHT or (
            kind is PhaseKind.NIGHT_VOTE and old is not PhaseKind.NIGHT
        )
        keep_prop = kind is PhaseKind.NIGHT_VOTE and old is PhaseKind.NIGHT
        first_prop = self._first_prop
        self._kind = kind
        self._seq = event.seq
        t = self._start = event.t
        self._deadline = event.deadline
        self._seconds = event.seconds
        self._reset_phase()
        self._issued = []
        self._issued_ids = set()
        self._phase_facts()
        timing = self.timing
        if kind is PhaseKind.DAY:
            self._chat = self._ledger.stage
            cap = timing.day_cap
            self._late_at = t + timedelta(seconds=0.7 * event.seconds)
        elif kind is PhaseKind.VOTE:
            self._chat = self._ledger.stage
            cap = timing.vote_cap
            self._late_at = t + timedelta(seconds=0.5 * event.seconds)
        else:
            if self._mafia:  # (a town seat hears nothing at night)
                self._chat = self._ledger.den
            cap = timing.den_cap
            self._late_at = datetime.max.replace(tzinfo=t.tzinfo)  # (no such line at night)
        self._lines_cap = max(1, round(cap * self._chatty))
        if keep_prop:
            self._first_prop = first_prop
        if kind is PhaseKind.DAY:
            self._version += 1
            self._day = event.number
            rng = self._rng
            self._day_noise = {i: rng.random() * 0.15 for i in self._alive}
        if new_night:
            self._acted = False
            self._act_at = None
            self._act_errors = 0
            self._act_banned = set()
            self._night_act_target = None
            self._night_victim = None
            self._night_none = False
        self._dirty = True

    def _on_phase_ended(self, event: PhaseEnded) -> None:
        if event.phase == _VOTE:
            self._version += 1
            self._yesterday_votes = dict(self._votes_now)
            voted_by = self._voted_by
            for voter, target in self._votes_now.items():
                if target is not None:
                    counts = voted_by.get(voter)
                    if counts is None:
                        counts = voted_by[voter] = Counter()
                    counts[target] += 1
        elif event.phase == _NIGHT_VOTE:
            self._last_protect = self._night_act_target if self._acted else None
        self._dirty = True

    def _on_message(self, event: MessageAccepted) -> None:
        # the hottest code of a simulation (every line, times every listener): the ledger has
        # recorded the line; here is only how this seat reacts to it
        if event.phase_seq != self._seq:
            return
        ledger = self._ledger
        reading = ledger.reading
        if reading is None:
            return
        if event.place == "den":
            self._on_den_line(event, reading)
            return
        s = event.seat
        changed = False
        target = ledger.target
        if target is not None:
            if reading.claim is not None:
                self._version += 1
                changed = True
            elif target == self.seat or target in self._partners:
                changed = self._on_accused(s, target, ledger.times, event.t)
        if s != self.seat and (self._speak is not None or self._speak_off == "skip"):
            changed = self._on_other_line(event.t) or changed
        if changed:
            self._dirty = True

    def _on_accused(self, s: int, target: int, times: int, t: datetime) -> bool:
        """``s`` accused me or (for the mafia) a partner. True when plans change."""
        # until the accused is revealed, only accusations of me (or, for the mafia, of a mafia
        # member) move the scores, and those count two accusations at most
        if times <= 2:
            self._version += 1
        changed = self._voted == _NO_VOTE and self._voting
        if target == self.seat and s != self.seat:
            self._accused_me.append(s)
            changed = True
            speak = self._speak
            if speak is not None:
                self._restale = True
                at = t + self._delay("short") + self._typing_words(self._speak_words)
                if at < speak.at:
                    self._speak = Intent(at, "say", text=speak.text)
            elif self._speak_off == "skip":
                self._speak_off = None
        return changed

    def _on_den_line(self, event: MessageAccepted, reading: Reading) -> None:
        changed = False
        if self._first_prop is None and "tomorrow" not in reading.folded:
            for named in reading.named:
                if named in self._alive and named not in self._partners and named != self.seat:
                    self._first_prop = named
                    changed = True
                    break
        if event.seat != self.seat:
            if self._speak is not None:
                self._restale = changed = True
            changed = self._on_other_line(event.t) or changed
        if changed:
            self._dirty = True

    def _on_other_line(self, t: datetime) -> bool:
        """Someone else spoke: if that puts us below our share, speak up sooner."""
        speak = self._speak
        if speak is None:
            if self._speak_off != "skip" or not self._below_share():
                return False
            self._speak_off = None
            return True
        if self._speak_mode != "long" or not self._below_share():
            return False
        at = t + self._delay("short") + self._typing_words(self._speak_words)
        self._speak_mode = "short"
        if at < speak.at:
            self._speak = Intent(at, "say", text=speak.text)
            return True
        return False

    def _on_vote(self, event: VoteCast) -> None:
        if event.phase_seq != self._seq:
            return
        voter = event.voter
        tally = self._tally_now
        old = self._votes_now.get(voter, _NO_VOTE)
        if old is not None and old != _NO_VOTE:
            left = tally[old] - 1
            if left > 0:
                tally[old] = left
            else:
                del tally[old]
        target = event.target
        if target is not None:
            tally[target] = tally.get(target, 0) + 1
        self._votes_now[voter] = target
        self._votes_seen += 1
        if voter == self.seat:
            return
        if self._voted == _NO_VOTE:
            self._dirty = True  # the tally moves the choice
        elif event.night:
            self._maybe_follow_partner(event.t)
        else:
            self._maybe_bandwagon(event.t)

    def _on_eliminated(self, event: PlayerEliminated) -> None:
        self._version += 1
        self._alive.discard(event.seat)
        self._gone = event.seat == self.seat
        self._phase_facts()
        self._revealed[event.seat] = event.role
        if event.cause == "vote":
            votes = self._yesterday_votes
            voters = tuple(v for v, t in sorted(votes.items()) if t == event.seat)
            self._last_day_elim = (event.seat, event.role, voters, self._day)
        else:
            self._night_victim = (event.seat, event.role)
        if self._reveal == event.seat:
            self._reveal = None
        self._dirty = True

    def _on_night_result(self, event: NightResult) -> None:
        self._night_none = event.victim is None
        self._dirty = True

    def _on_inspection(self, event: InspectionResult) -> None:
        self._version += 1
        if event.seat != self.seat:
            return
        self._inspections[event.target] = event.is_mafia
        # revealing paints a target on the detective: only for a found mafia, and not always
        if event.is_mafia and event.target in self._alive and self._rng.random() < 0.75:
            self._reveal = event.target
        self._dirty = True

    def _on_night_action(self, event: NightActionRecorded) -> None:
        if event.seat == self.seat:
            self._acted = True
            self._night_act_target = event.target
            self._dirty = True

    def _on_game_over(self, event: GameOver) -> None:
        self._over = True
        self._dirty = True

    # ==== who is who ===========================================================================

    @property
    def role(self) -> str | None:
        return self._role

    @property
    def is_mafia(self) -> bool:
        return self._role == "mafia"

    def _others(self) -> tuple[int, ...]:
        """Living players this seat may talk about or vote for (never itself, never partners)."""
        return self._others_now

    def _activity(self, cands: tuple[int, ...] | list[int]) -> dict[int, float]:
        """+ for the very quiet and (less) the very loud, relative to the table."""
        if not cands:
            return {}
        talk = self._ledger.talk_seen.get
        mean = sum([talk(s, 0) for s in cands]) / len(cands)
        out: dict[int, float] = {}
        if mean < 2:
            return out
        for s in cands:
            n = talk(s, 0)
            if n < 0.4 * mean:
                out[s] = 0.3
            elif n > 2.0 * mean:
                out[s] = 0.2
        return out

    def suspicion(self) -> dict[int, float]:
        """Town's view: how likely each living other player is mafia (higher = more)."""
        return dict(self._scores("suspicion"))

    def danger(self) -> dict[int, float]:
        """Mafia's view: how much each living bystander threatens the mafia."""
        return dict(self._scores("danger"))

    def _scores(self, kind: str) -> dict[int, float]:
        """Cached until something they depend on changes; callers must not mutate."""
        hit = self._cache.get(kind)
        if hit is not None and hit[0] == self._version:
            return hit[1]
        value = self._suspicion() if kind == "suspicion" else self._danger()
        self._cache[kind] = (self._version, value)
        return value

    def _suspicion(self) -> dict[int, float]:
        cands = self._others_now
        noise = self._noise.get
        day_noise = self._day_noise.get
        score = {s: noise(s, 0.0) + day_noise(s, 0.0) for s in cands}
        me = self.seat
        town = not self._mafia
        revealed = self._revealed.get
        accused_by = self._ledger.accused_by.get
        voted_by = self._voted_by.get
        for a in cands:
            accused = accused_by(a)
            if accused:
                for b, n in accused.items():
                    k = n if n < 2 else 2  # (min(n, 2))
                    if b == me and town:
                        score[a] += 0.9 * k
                    role = revealed(b)
                    if role is not None:
                        score[a] += -0.6 * k if role == "mafia" else 0.6 * k
            voted = voted_by(a)
            if voted:
                for target, n in voted.items():
                    role = revealed(target)
                    if role is not None:
                        score[a] += -0.8 * n if role == "mafia" else 0.8 * n
                    if target == me:
                        score[a] += 0.4 * n
        for s, bonus in self._activity(cands).items():
            score[s] += bonus
        for claimer, (target, kind) in self._ledger.claims.items():
            if target == self.seat and kind == "mafia" and claimer in score:
                score[claimer] += 4.0  # a false claim against me: they are lying
                continue
            if claimer in score:
                score[claimer] -= 0.5
            if target in score:
                score[target] += 2.5 if kind == "mafia" else -1.0
        for target, is_mafia in self._inspections.items():
            if target in score:
                score[target] += 100.0 if is_mafia else -100.0
        return score

    def _danger(self) -> dict[int, float]:
        cands = self._others_now
        mafia = self._partners | {self.seat}
        noise = self._noise.get
        day_noise = self._day_noise.get
        score = {s: noise(s, 0.0) + day_noise(s, 0.0) for s in cands}
        accused_by = self._ledger.accused_by.get
        voted_by = self._voted_by.get
        for a in cands:
            accused = accused_by(a)
            if accused:
                for b, n in accused.items():
                    if b in mafia:
                        score[a] += 0.9 * (n if n < 2 else 2)
            voted = voted_by(a)
            if voted:
                for target, n in voted.items():
                    if target in mafia:
                        score[a] += 0.7 * n
        for s, bonus in self._activity(cands).items():
            score[s] += bonus
        for claimer in self._ledger.claims:
            if claimer in score:
                score[claimer] += 5.0
        return score

    def _tally(self) -> Counter[int]:
        """Votes per player in the current vote so far (callers must not mutate)."""
        return self._tally_now

    def _day_target(self) -> int | None:
        """Whom to vote out by day. Mafia: never a partner, prefer a forming bandwagon."""
        key = (self._version, self._votes_seen, len(self._vote_banned))
        if self._target_cache[0] == key:
            return self._target_cache[1]
        target = self._compute_day_target()
        self._target_cache = (key, target)
        return target

    def _compute_day_target(self) -> int | None:
        base = self._scores("danger" if self._mafia else "suspicion")
        tally = self._tally_now
        banned = self._vote_banned
        if not tally and not banned:  # (the discussion): the top score, first one on a tie
            return max(base, key=base.__getitem__) if base else None
        pull = 0.6 if self._mafia else 0.35
        votes = tally.get
        best: int | None = None
        best_score = -math.inf
        for s, v in base.items():
            if s in banned:
                continue
            value = v + pull * votes(s, 0)
            if value > best_score:
                best, best_score = s, value
        return best

    def _night_target(self) -> int | None:
        """The kill. Follow the lowest-seat mafia that already voted, else the den's first
        proposal, else the most dangerous bystander; so partners converge without ties."""
        cands = set(self._others()) - self._vote_banned
        if not cands:
            return None
        led = [
            (voter, t)
            for voter, t in self._votes_now.items()
            if voter in self._partners and voter < self.seat and t in cands
        ]
        if led:
            return min(led)[1]
        if self._first_prop in cands:
            return self._first_prop
        danger = self._scores("danger")
        return max(cands, key=lambda s: danger.get(s, 0.0))

    def _stage_target(self) -> int | None:
        """Whom to point at in chat: the top suspect (town) or the deflection target (mafia)."""
        return self._day_target()

    # ==== planning =============================================================================

    def plan(self, now: datetime) -> Intent | None:
        """The next action; the same one until an observed event or ``done`` changes it."""
        if self._dirty:
            self._dirty = False
            best = self._best = self._refresh(now)
            if best is not None and id(best) not in self._issued_ids:
                self._issued.append(best)
                self._issued_ids.add(id(best))
            return best
        return self._best

    def _refresh(self, now: datetime) -> Intent | None:
        if self._over or self._kind is None or self._role is None or self.seat not in self._alive:
            return None
        best = self._plan_act(now) if self._night else None
        vote = self._plan_vote(now) if self._voting else None
        if vote is not None and (best is None or vote.at < best.at):
            best = vote
        speak = self._plan_speak(now)
        if speak is not None and (best is None or speak.at < best.at):
            best = speak  # on a tie the vote or act goes first
        return best

    def _margin(self) -> float:
        return min(self.timing.margin, 0.1 * self._seconds)

    def _in_window(self, window: tuple[float, float]) -> datetime:
        lo, hi = window
        latest = self._seconds - self._margin()
        offset = min((lo + (hi - lo) * self._rng.random()) * self._seconds, latest)
        return self._start + timedelta(seconds=max(offset, 0.0))

    def _latest(self) -> datetime:
        return self._deadline - timedelta(seconds=self._margin())

    # ---- votes --------------------------------------------------------------------------------

    def _voting_now(self) -> bool:
        return self._voting

    def _plan_vote(self, now: datetime) -> Intent | None:
        if not self._voting or self._vote_off:
            return None
        night = self._kind is PhaseKind.NIGHT_VOTE
        if self._voted == _NO_VOTE:
            if self._vote_at is None:
                self._vote_at = self._in_window(self.timing.vote_window)
            target = self._night_target() if night else self._day_target()
            return self._vote_intent(self._vote_at, target)
        if self._change_to is not None and self._change_at is not None:
            return self._vote_intent(self._change_at, self._change_to)
        return None

    def _vote_intent(self, at: datetime, target: int | None) -> Intent:
        last = self._last_vote_intent
        name = self._name(target)
        if last is not None and last.at == at and last.target == name:
            return last
        self._last_vote_intent = Intent(at, "vote", target=name)
        return self._last_vote_intent

    def _name(self, seat: int | None) -> str | None:
        return None if seat is None else self._names[seat]

    def _schedule_change(self, target: int, t: datetime) -> None:
        lo, hi = self.timing.change_delay
        at = t + timedelta(seconds=lo + (hi - lo) * self._rng.random())
        if at > self._latest():
            return
        self._change_to = target
        self._change_at = at
        self._dirty = True

    def _maybe_bandwagon(self, t: datetime) -> None:
        """Change the day vote once, onto a strong bandwagon (never a partner or a cleared)."""
        if self._voted == _NO_VOTE or self._changed or self._change_to is not None:
            return
        tally = self._tally()
        if not tally:
            return
        leader, count = max(tally.items(), key=lambda kv: (kv[1], -kv[0]))
        need = max(2, math.ceil(0.4 * len(self._alive)))
        if count < need or leader == self._voted or leader == self.seat:
            return
        if leader in self._partners or leader not in self._alive or leader in self._vote_banned:
            return
        if not self.is_mafia and self._inspections.get(leader) is False:
            return
        if not self.is_mafia and self._voted is not None and self._inspections.get(self._voted):
            return
        mine = tally[self._voted] if self._voted is not None else 0
        if mine > count - 2:
            return
        self._schedule_change(leader, t)

    def _maybe_follow_partner(self, t: datetime) -> None:
        """At night, align with the lowest-seat partner once, so the kill is not a tie."""
        if self._voted == _NO_VOTE or self._changed or self._change_to is not None:
            return
        target = self._night_target()
        if target is not None and target != self._voted:
            self._schedule_change(target, t)

    # ---- night actions ------------------------------------------------------------------------

    def _plan_act(self, now: datetime) -> Intent | None:
        if not self._night or self._acted:
            return None
        role = self._role
        if role is None or get_role(role).night_verb is None or self._act_errors >= 3:
            return None
        if self._act_at is None:
            self._act_at = self._in_window(self.timing.act_window)
        target = self._act_target()
        if target is None:
            return None
        return Intent(self._act_at, "night_act", target=self._names[target])

    def _act_target(self) -> int | None:
        if self._role == "detective":
            score = self._scores("suspicion")
            cands = [s for s in score if s not in self._inspections and s not in self._act_banned]
            if not cands:
                cands = [s for s in score if s not in self._act_banned]
            return max(cands, key=lambda s: score[s]) if cands else None
        if self._role == "doctor":
            return self._protect_target()
        # an unknown town role with a night action: act on the least suspicious player
        score = self._scores("suspicion")
        cands = [s for s in score if s not in self._act_banned]
        return min(cands, key=lambda s: score[s]) if cands else None

    def _protect_target(self) -> int | None:
        allowed = [
            s for s in sorted(self._alive) if s != self._last_protect and s not in self._act_banned
        ]
        if not allowed:
            return None
        for claimer, (_target, kind) in self._ledger.claims.items():
            if kind == "mafia" and claimer in allowed and claimer != self.seat:
                return claimer  # a claimed detective is the next kill
        gate = ("protect-self", self._seq)
        if gate not in self._gates:
            self._gates[gate] = self._rng.random() < 0.45
        if self.seat in allowed and self._gates[gate]:
            return self.seat
        score = self._scores("suspicion")
        others = [s for s in allowed if s != self.seat]
        if not others:
            return self.seat if self.seat in allowed else None
        # most valuable: trusted and vocal (the mafia kill whoever leads the town)
        talk = self._ledger.talk
        return min(others, key=lambda s: score.get(s, 0.0) - 0.1 * talk[s])

    # ---- speaking -----------------------------------------------------------------------------

    def share(self) -> float:
        """This seat's share of the current phase's player messages."""
        chat = self._chat
        if chat.total == 0:
            return 0.0
        return chat.msgs.get(self.seat, 0) / chat.total

    def _below_share(self) -> bool:
        # share < 1/N, without dividing: mine * N < total
        chat = self._chat
        total = chat.total
        return total == 0 or chat.msgs.get(self.seat, 0) * self._room < total

    # random.uniform(a, b) is a + (b - a) * random(), written out below: same draws, no call

    def _delay(self, mode: str) -> timedelta:
        lo, hi = self.timing.short_delay if mode == "short" else self.timing.long_delay
        return timedelta(seconds=(lo + (hi - lo) * self._rng.random()) / self._chatty)

    def _typing(self, text: str | None) -> timedelta:
        return self._typing_words(len(text.split()) if text else 0)

    def _typing_words(self, words: int) -> timedelta:
        per = self.timing.seconds_per_word * (0.8 + (1.25 - 0.8) * self._rng.random())
        return timedelta(seconds=words * per)

    def _plan_speak(self, now: datetime) -> Intent | None:
        if self._place is None:
            return None
        speak = self._speak
        if speak is not None:
            if self._restale:
                self._restale = False
                composed = self._compose(now)
                if composed is not None:
                    text, opt = composed
                    self._speak = speak = Intent(speak.at, "say", text=text)
                    self._speak_words = len(text.split())
                    self._speak_topic = opt.topic
            return speak
        self._restale = False
        if self._speak_off is not None or self._lines >= self._lines_cap:
            return None
        below = self._below_share()
        if not below and self._rng.random() < self.timing.skip_when_loud:
            self._speak_off = "skip"
            return None
        self._speak_mode = "short" if below else "long"
        base = max(now, self._chat.last_t, self._start)
        composed = self._compose(now)
        if composed is None:
            self._speak_off = "no-text"
            return None
        text, opt = composed
        words = len(text.split())
        at = base + self._delay(self._speak_mode) + self._typing_words(words)
        if at >= self._deadline:
            self._speak_off = "no-time"
            return None
        self._speak = speak = Intent(at, "say", text=text)
        self._speak_words = words
        self._speak_topic = opt.topic
        return speak

    # ---- what to say --------------------------------------------------------------------------

    def _compose(self, now: datetime) -> tuple[str, _Option] | None:
        """Pick a situation by weight, then build and render only that one (cheap)."""
        if self._night:
            ready: list[_Option] = self._den_options()
            while ready:
                opt = ready.pop(self._weighted_index([o.weight for o in ready]))
                text = self._fresh(opt.key, opt.slots)
                if text is not None:
                    return text, opt
            return None
        weights, builders = self._stage_choices(now)
        while weights:
            index = self._weighted_index(weights)
            del weights[index]
            built = builders.pop(index)()
            if built is None:
                continue
            text = self._fresh(built.key, built.slots)
            if text is not None:
                return text, built
        return None

    def _weighted_index(self, weights: list[float]) -> int:
        pick = self._rng.random() * sum(weights)
        for index, w in enumerate(weights):
            pick -= w
            if pick <= 0:
                return index
        return len(weights) - 1

    def _fresh(self, key: str, slots: Mapping[str, str]) -> str | None:
        """A rendering of ``key`` this seat has never said nor heard."""
        mine, heard, den = self._said, self._ledger.heard, self._den_heard
        templates = TEMPLATES[key]
        n = len(templates)
        first = self._rng.randrange(n)
        for k in range(n):
            text = templates[(first + k) % n].format_map(slots)
            folded = text.casefold()
            if folded not in heard and folded not in mine and folded not in den:
                return text
        base = templates[self._rng.randrange(len(templates))].format_map(slots)
        variants = list(_VARIANTS)
        self._rng.shuffle(variants)
        for p, s in variants:
            text = f"{p}{base}{s}"
            folded = text.casefold()
            if folded not in heard and folded not in mine and folded not in den:
                return text
        return None

    def _done_topic(self, topic: tuple[object, ...]) -> bool:
        return topic in self._topics

    def _stage_choices(
        self, now: datetime
    ) -> tuple[list[float], list[Callable[[], _Option | None]]]:
        """The situations worth a line now: weights, and for each a builder of its line (only
        the one picked is built)."""
        day = self._day
        kind = self._kind
        topics = self._topics
        weights: list[float] = []
        builders: list[Callable[[], _Option | None]] = []
        w = weights.append
        b = builders.append
        if self._accused_me:
            w(6.0)
            b(self._opt_defend)
        if self._role == "detective":
            if self._reveal is not None and self._reveal in self._alive:
                w(8.0)
                b(self._opt_reveal)
            if kind is PhaseKind.VOTE and self._votes_now:
                w(6.0)
                b(self._opt_det_clean)
        if day == 1 and kind is PhaseKind.DAY:
            if self._lines == 0:
                w(6.0)
                b(self._opt_greet)
            w(1.5)
            b(self._opt_open)
        # news is news early in the day; two minutes later "rip X" sounds like a bot
        early = kind is PhaseKind.DAY and self._chat.total < 1.5 * len(self._alive)
        if early and day > 1:
            if ("night", day) not in topics:
                if self._night_victim is not None:
                    w(5.0)
                    b(self._opt_night_kill)
                elif self._night_none:
                    w(4.0)
                    b(self._opt_night_none)
            elim = self._last_day_elim
            if elim is not None and day == elim[3] + 1 and ("elim", day) not in topics:
                w(2.5)
                b(self._opt_elim)
            if ("day", day) not in topics:
                w(0.8)
                b(self._opt_day_count)
        w(3.0)
        b(self._opt_accuse)
        if kind is PhaseKind.VOTE:
            w(3.0)
            b(self._opt_vote_state)
            if self._votes_now:
                w(1.0)
                b(self._opt_tally)
        if now >= self._late_at:  # (half the vote, or 70% of the discussion, is gone)
            w(0.8)
            b(self._opt_late)
        if self._chat.total >= len(self._alive):
            w(1.2)
            b(self._opt_quiet)
        w(1.0)
        b(self._opt_ask)
        w(0.4)
        b(self._opt_filler)
        return weights, builders

    def _pick(self, options: list[_Option]) -> _Option | None:
        if not options:
            return None
        return options[self._weighted_index([o.weight for o in options])]

    def _talkable(self, seat: int) -> bool:
        return seat != self.seat and seat in self._alive and seat not in self._partners

    def _opt_defend(self) -> _Option | None:
        accusers = [a for a in self._accused_me if a in self._alive]
        if not accusers:
            return None
        a = accusers[-1]
        topic: tuple[object, ...] = ("defend", a, self._seq, len(accusers))
        opts = [_Option(3.0, "defend", {}, topic)]
        if self._talkable(a):
            name = self._names[a]
            opts.append(_Option(3.0, "defend_back", {"a": name}, topic))
            opts.append(_Option(1.5, "accuse_me", {"x": name}, topic))
        return self._pick(opts)

    def _opt_reveal(self) -> _Option | None:
        found = self._reveal
        if found is None or found not in self._alive or ("det", found) in self._topics:
            return None
        return _Option(8.0, "det_mafia", {"x": self._names[found]}, ("det", found))

    def _opt_det_clean(self) -> _Option | None:
        """Save a player I know is clean from a forming lynch; a coin toss, once a day."""
        tally = self._tally()
        for s, n in tally.most_common(1):
            gate = ("det-clean", s, self._day)
            if self._inspections.get(s) is False and n >= 2 and gate not in self._topics:
                if gate not in self._gates:
                    self._gates[gate] = self._rng.random() < 0.5
                if self._gates[gate]:
                    return _Option(6.0, "det_clean", {"x": self._names[s]}, gate)
        return None

    def _opt_greet(self) -> _Option | None:
        return _Option(6.0, "greet", {}, ("greet",))

    def _opt_open(self) -> _Option | None:
        return _Option(1.5, "open", {})

    def _opt_night_kill(self) -> _Option | None:
        if self._night_victim is None:
            return None
        v, role = self._night_victim
        topic = ("night", self._day)
        name = self._names[v]
        opts = [_Option(5.0, "night_kill", {"v": name, "role": role}, topic)]
        accused_by = self._ledger.accused_by.get(v, _EMPTY)
        accused = [(n, b) for b, n in accused_by.items() if self._talkable(b)]
        if accused:
            x = self._names[max(accused)[1]]
            opts.append(_Option(2.0, "night_kill_reason", {"v": name, "x": x}, topic))
        return self._pick(opts)

    def _opt_night_none(self) -> _Option | None:
        return _Option(4.0, "night_none", {}, ("night", self._day))

    def _opt_elim(self) -> _Option | None:
        if self._last_day_elim is None:
            return None
        v, role, voters, _d = self._last_day_elim
        if self.is_mafia and v in self._partners:
            return None
        topic = ("elim", self._day)
        name = self._names[v]
        if role == "mafia":
            return _Option(2.5, "elim_mafia", {"v": name}, topic)
        shown = [self._names[s] for s in voters if self._talkable(s)]
        if shown:
            return _Option(2.5, "elim_bystander", {"v": name, "voters": display_list(shown)}, topic)
        return _Option(2.0, "elim_bystander_plain", {"v": name}, topic)

    def _opt_day_count(self) -> _Option | None:
        slots = {"n": str(self._day), "alive": str(len(self._alive))}
        return _Option(0.8, "day_count", slots, ("day", self._day))

    def _opt_accuse(self) -> _Option | None:
        """Point at the top suspect (town) or the deflection target (mafia), with a reason
        when the record gives one."""
        top = self._stage_target()
        if top is None:
            return None
        names = self._names
        ledger = self._ledger
        x = names[top]
        score = self._scores("danger" if self._mafia else "suspicion").get(top, 0.0)
        opts = [_Option(2.5 if score >= 1.0 else 1.2, "accuse", {"x": x})]
        for victim in self._voted_by.get(top, _EMPTY):
            if self._revealed.get(victim, "mafia") != "mafia":
                if victim not in self._partners:
                    opts.append(_Option(2.5, "accuse_vote", {"x": x, "v": names[victim]}))
                break
        for victim in ledger.accused_by.get(top, _EMPTY):
            if self._revealed.get(victim, "mafia") != "mafia":
                if victim != self.seat and victim not in self._partners:
                    opts.append(_Option(2.0, "accuse_accused", {"x": x, "v": names[victim]}))
                break
        if ledger.talk_seen[top] > 3 and self._activity([top]).get(top, 0.0) >= 0.2:
            opts.append(_Option(0.8, "accuse_loud", {"x": x}))
        others_on_top = [a for a in ledger.phase_accusers.get(top, ()) if self._talkable(a)]
        if others_on_top:
            opts.append(_Option(1.5, "agree", {"x": x, "a": names[others_on_top[-1]]}))
        return self._pick(opts)

    def _opt_vote_state(self) -> _Option | None:
        if self._voted == _NO_VOTE:
            target = self._day_target()
        else:
            target = self._change_to if self._change_to is not None else self._voted
        if target is None or not self._talkable(target):
            return None
        return _Option(3.0, "vote_state", {"x": self._names[target]})

    def _opt_tally(self) -> _Option | None:
        tally = self._tally()
        if not tally or (self.is_mafia and any(s in self._partners for s in tally)):
            return None
        text = ", ".join(f"{self._names[s]} {n}" for s, n in tally.most_common(3))
        return _Option(1.0, "tally", {"tally": text})

    def _opt_late(self) -> _Option | None:
        return _Option(0.8, "late", {})

    def _opt_quiet(self) -> _Option | None:
        said = self._chat.msgs
        quiet = [s for s in self._others_now if s not in said]
        if not quiet:
            return None
        return _Option(1.2, "quiet", {"x": self._names[quiet[self._rng.randrange(len(quiet))]]})

    def _opt_ask(self) -> _Option | None:
        pool = self._others()
        if not pool:
            return None
        return _Option(1.0, "ask", {"x": self._names[pool[self._rng.randrange(len(pool))]]})

    def _opt_filler(self) -> _Option | None:
        return _Option(0.4, "filler", {})

    def _den_options(self) -> list[_Option]:
        """Night talk: propose a kill if nobody has, agree with the first proposal if a partner
        made it, otherwise plan tomorrow or chat."""
        names = self._names
        day = self._day
        target = self._night_target()
        first = self._first_prop
        settled = ("den-agree", day) in self._topics or ("den-prop", day) in self._topics
        if first is None and target is not None:
            topic = ("den-prop", day)
            x = names[target]
            opts = [_Option(5.0, "den_propose", {"x": x}, topic)]
            if target in self._ledger.claims:
                opts.append(_Option(6.0, "den_propose_claim", {"x": x}, topic))
            mafia = self._partners | {self.seat}
            hit = [b for b in self._ledger.accused_by.get(target, _EMPTY) if b in mafia]
            if hit:
                slots = {"x": x, "p": names[hit[0]]}
                opts.append(_Option(3.0, "den_propose_reason", slots, topic))
            return opts
        if first is not None and first in self._alive and not settled:
            return [_Option(6.0, "den_agree", {"x": names[first]}, ("den-agree", day))]
        night = ("den", day)
        opts = [_Option(0.8, "den_small", {}, night)]
        danger = self._scores("danger")
        later = [s for s in danger if s != target]
        if later:
            push = min(later, key=lambda s: danger[s])  # pin it on someone unthreatening
            opts.append(_Option(1.2, "den_plan", {"x": names[push]}, night))
        return opts

    # ==== feedback =============================================================================

    def done(self, intent: Intent, error: str | None) -> None:
        """Record the outcome; on a refusal try something else, never the same thing again."""
        self._dirty = True
        if intent.kind == "say" and intent.text:
            self._said.add(intent.text.casefold())
        if id(intent) not in self._issued_ids and intent not in self._issued:
            return  # planned in an earlier phase: its phase is gone, and so is its meaning
        if intent.kind == "say":
            if self._speak is not None and self._speak.text == intent.text:
                self._speak = None
            if error is None:
                self._lines += 1
                topic = self._speak_topic
                if topic is not None:
                    self._topics.add(topic)
                    if topic[0] == "defend":
                        self._accused_me.clear()
                self._speak_topic = None
            else:
                self._say_errors += 1
                if self._say_errors >= 2:
                    self._speak_off = "refused"
            return
        target = self._seat_of(intent.target)
        if intent.kind == "vote":
            self._done_vote(intent, target, error)
        else:
            self._done_act(intent, target, error)

    def _seat_of(self, name: str | None) -> int | None:
        if name is None:
            return None
        folded = name.casefold()
        for i, n in enumerate(self._names):
            if n.casefold() == folded:
                return i
        return None

    def _done_vote(self, intent: Intent, target: int | None, error: str | None) -> None:
        if error is None:
            was_change = self._voted != _NO_VOTE
            self._voted = target
            self._vote_at = None
            if was_change or (self._change_to is not None and self._change_to == target):
                self._changed = True
                self._change_to = None
                self._change_at = None
            return
        self._vote_errors += 1
        if target is not None:
            self._vote_banned.add(target)
        if self._change_to is not None:
            self._change_to = None  # a refused change of mind is dropped, not retried
            self._change_at = None
            self._changed = True
            return
        if self._vote_errors >= 3:
            self._vote_off = True
            return
        retry = intent.at + timedelta(seconds=1.0 + (3.0 - 1.0) * self._rng.random())
        if retry > self._deadline:
            self._vote_off = True
        else:
            self._vote_at = retry

    def _done_act(self, intent: Intent, target: int | None, error: str | None) -> None:
        if error is None:
            self._acted = True
            self._night_act_target = target
            return
        self._act_errors += 1
        if target is not None:
            self._act_banned.add(target)
        retry = intent.at + timedelta(seconds=1.0 + (3.0 - 1.0) * self._rng.random())
        self._act_at = retry if retry <= self._deadline else None
        if self._act_at is None:
            self._act_errors = 3


_TIMING = BaselineTiming()

#: PhaseKind by value, without the enum's (slow) call
_PHASE_KINDS: dict[str, PhaseKind] = {k.value: k for k in PhaseKind}
_DAY = PhaseKind.DAY.value
_VOTE = PhaseKind.VOTE.value
_NIGHT_VOTE = PhaseKind.NIGHT_VOTE.value

_Handler = Callable[["BaselinePolicy", Event], None]

#: dispatch by exact event type; each handler takes its own event class, which the table
#: guarantees, so the casts only forget what dispatch already checked
_HANDLERS: dict[type[Event], _Handler] = {
    GameStarted: cast(_Handler, BaselinePolicy._on_game_started),
    RoleAssigned: cast(_Handler, BaselinePolicy._on_role),
    PhaseStarted: cast(_Handler, BaselinePolicy._on_phase_started),
    PhaseEnded: cast(_Handler, BaselinePolicy._on_phase_ended),
    MessageAccepted: cast(_Handler, BaselinePolicy._on_message),
    VoteCast: cast(_Handler, BaselinePolicy._on_vote),
    PlayerEliminated: cast(_Handler, BaselinePolicy._on_eliminated),
    NightResult: cast(_Handler, BaselinePolicy._on_night_result),
    InspectionResult: cast(_Handler, BaselinePolicy._on_inspection),
    NightActionRecorded: cast(_Handler, BaselinePolicy._on_night_action),
    GameOver: cast(_Handler, BaselinePolicy._on_game_over),
}
