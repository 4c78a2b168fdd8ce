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
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from typing import cast

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

__all__ = ["BASELINE_NAME", "BaselinePolicy", "BaselineTable", "BaselineTiming", "TableLedger"]

#: how evaluations and logs name this policy
BASELINE_NAME = "baseline"

# Speed notes (a simulation runs this code millions of times): random.uniform(a, b) is
# written out as a + (b - a) * random(), the same draw without the call; timedelta(0, s) is
# timedelta(seconds=s) without the slower keyword parsing.

_NO_VOTE = -2  # "has not voted this phase" (None would be an abstention)
#: a partner's night vote this long after mine was cast knowing mine (agents react in ms)
_DELIBERATE_S = 2.0
_EMPTY: Mapping[int, int] = {}  # read-only stand-in for "no record"
_NOTHING_HEARD: frozenset[str] = frozenset()  # a town seat's record of the den
_NEVER = datetime.max.replace(tzinfo=UTC)
#: the small changes that make a used line new
_VARIANTS = tuple((p, s) for p in PREFIXES for s in SUFFIXES if p or s)

_object_new = object.__new__
_object_setattr = object.__setattr__


def _plain_frozen(cls: type) -> bool:
    """A frozen dataclass whose instances are nothing but their fields in a __dict__."""
    params = getattr(cls, "__dataclass_params__", None)
    return (
        params is not None
        and params.frozen
        and not hasattr(cls, "__post_init__")
        and not hasattr(cls, "__slots__")
        and [f.name for f in fields(cls)] == ["at", "kind", "text", "target"]
    )


if _plain_frozen(Intent):

    def _say_at(at: datetime, text: str | None) -> Intent:
        """``Intent(at, "say", text=text)``, built without the frozen dataclass's __init__
        (one object.__setattr__ per field): a simulation plans a few hundred lines a game.
        The result is the same value: equal, same hash, still frozen."""
        intent: Intent = _object_new(Intent)
        _object_setattr(intent, "__dict__", {"at": at, "kind": "say", "text": text, "target": None})
        return intent

else:  # pragma: no cover - Intent changed shape: build it the ordinary way

    def _say_at(at: datetime, text: str | None) -> Intent:
        return Intent(at, "say", text=text)


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


#: a line worth saying: (weight, template key, its slots, the topic it settles, if any).
#: A plain tuple: one is built for every option considered
_Option = tuple[float, str, Mapping[str, str], tuple[object, ...] | None]


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
        "claimed",
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
        self.talk: dict[int, int] = {}
        self.talk_seen: dict[int, int] = {}
        #: accuser -> accused -> times (indexed by the actor: every question asked of it is
        #: "what did this player do"); the current phase's accusers of each player
        self.accused_by: dict[int, dict[int, int]] = {}
        self.phase_accusers: dict[int, list[int]] = {}
        self.claims: dict[int, tuple[int, str]] = {}  # claimer -> (target, "mafia"/"clean")
        #: the last line taken, for its listeners: how it reads (None when it was not read),
        #: whom it accused or made a claim about, and the speaker's accusations of them so far
        self.reading: Reading | None = None
        self.target: int | None = None
        self.claimed = False  # (a detective claim about ``target``, not an accusation)
        self.times = 0

    def take(self, event: Event) -> None:
        """Record one event (events that carry no talk are ignored)."""
        # (isinstance, not type() and a cast: typing.cast is a Python call)
        if isinstance(event, MessageAccepted):
            self._message(event)
        elif isinstance(event, PhaseStarted):
            self.seq = event.seq
            self.stage = _Room(event.t)
            self.den = _Room(event.t)
            self.phase_accusers = {}
            if event.phase == _DAY:
                self.talk_seen = dict(self.talk)
        elif isinstance(event, PlayerEliminated):
            self.alive.discard(event.seat)
        elif isinstance(event, GameStarted):
            players = tuple(event.players)
            self.lex = lexicon(players)
            self.readings = self.lex.readings
            self.alive = set(range(len(players)))

    def _message(self, event: MessageAccepted) -> None:
        self.reading = None
        self.target = None
        self.claimed = False
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
        talk = self.talk
        talk[s] = talk.get(s, 0) + 1
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
            self.claimed = True
            return
        counts = self.accused_by.get(s)
        if counts is None:
            counts = self.accused_by[s] = {}
        times = self.times = counts.get(n, 0) + 1
        counts[n] = times
        accusers = self.phase_accusers.get(n)
        if accusers is None:
            self.phase_accusers[n] = [s]
        else:
            accusers.append(s)


class BaselinePolicy:
    """Template talk, heuristic votes, human-like timing. See the module docstring.

    ``ledger``: leave it out (the policy then keeps its own), unless every seat of a game runs
    in one process and whoever passes the shared ledger also feeds it every event of the game,
    in order, before any seat observes it (see :class:`TableLedger`, :class:`BaselineTable`).
    """

    # slots: attribute reads and writes are the bulk of this class's work, and a plain
    # instance dict with this many keys makes every one of them slower
    __slots__ = (
        "_accused_me",
        "_act_at",
        "_act_banned",
        "_act_errors",
        "_acted",
        "_activity_memo",
        "_alive",
        "_best",
        "_cache",
        "_change_at",
        "_change_to",
        "_changed",
        "_chat",
        "_chatty",
        "_day",
        "_day_noise",
        "_deadline",
        "_den_heard",
        "_detective_in_play",
        "_dirty",
        "_doctor_in_play",
        "_facts_alive",
        "_facts_partners",
        "_first_prop",
        "_gates",
        "_gone",
        "_hears",
        "_inspections",
        "_issued",
        "_issued_ids",
        "_kind",
        "_last_day_elim",
        "_last_protect",
        "_last_vote_intent",
        "_late_at",
        "_ledger",
        "_liars",
        "_lines",
        "_lines_cap",
        "_mafia",
        "_my_vote_t",
        "_names",
        "_night",
        "_night_act_target",
        "_night_none",
        "_night_victim",
        "_noise",
        "_others_now",
        "_others_set",
        "_over",
        "_own_ledger",
        "_partner_names",
        "_partners",
        "_partners_alive",
        "_place",
        "_promised",
        "_rescore",
        "_restale",
        "_reveal",
        "_revealed",
        "_rng",
        "_role",
        "_room",
        "_said",
        "_say_errors",
        "_seconds",
        "_seq",
        "_speak",
        "_speak_folded",
        "_speak_mode",
        "_speak_off",
        "_speak_topic",
        "_speak_words",
        "_start",
        "_tally_now",
        "_target",
        "_target_banned",
        "_target_rescored",
        "_target_version",
        "_target_votes",
        "_topics",
        "_version",
        "_vote_at",
        "_vote_banned",
        "_vote_errors",
        "_vote_off",
        "_voted",
        "_voted_by",
        "_votes_now",
        "_votes_seen",
        "_voting",
        "_yesterday_votes",
        "character",
        "persona",
        "seat",
        "timing",
    )

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
        self._ledger = ledger if ledger is not None else TableLedger()
        self._own_ledger = ledger is None
        self._names: tuple[str, ...] = ()
        self._alive: set[int] = set()
        self._role: str | None = None
        self._partner_names: tuple[str, ...] = ()
        self._partners: frozenset[int] = frozenset()
        self._revealed: dict[int, str] = {}
        #: who claimed a detective result that a reveal proved false
        self._liars: set[int] = set()
        self._over = False
        self._gone = False
        self._noise: dict[int, float] = {}
        self._day_noise: dict[int, float] = {}
        #: voter -> target -> day votes
        self._voted_by: dict[int, dict[int, int]] = {}
        #: bumped whenever anything the scores depend on changes (scores are cached)
        self._version = 0
        #: kind -> (version, scores, how much of ``_rescore`` they include)
        self._cache: dict[str, tuple[int, dict[int, float], int]] = {}
        #: players whose accusations of me (or a partner) changed their score, in order
        self._rescore: list[int] = []
        #: the day target, and the (version, rescores, votes seen, refusals) it is for
        self._target: int | None = None
        self._target_version = self._target_rescored = -1
        self._target_votes = self._target_banned = -1
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
        self._doctor_in_play = False
        self._detective_in_play = False
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
        self._others_set: frozenset[int] = frozenset()  # the same, to test "may I name them"
        self._facts_alive = -1
        self._facts_partners: frozenset[int] | None = None
        self._partners_alive = 0
        #: the last _activity: for which players (the object), on which talk record, result
        self._activity_memo: (
            tuple[tuple[int, ...] | list[int], dict[int, int], dict[int, float]] | None
        ) = None
        #: from when "running out of time" lines fit (half the vote, 70% of the discussion)
        self._late_at = datetime.min
        self._room = 1
        self._lines_cap = 1
        self._seq = 0
        self._start = datetime.min
        self._deadline = datetime.min
        self._seconds = 0.0
        self._tally_now: Counter[int] = Counter()
        #: the chat of the room I talk in this phase (the ledger's; my own empty one when
        #: I hear nothing, a town seat at night)
        self._chat = _Room(self._start)
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
        self._doctor_in_play = "doctor" in event.extra_roles
        self._detective_in_play = "detective" in event.extra_roles
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
        # (players only ever leave, and partners are set once: a count and an identity)
        if len(alive) != self._facts_alive or partners is not self._facts_partners:
            self._facts_alive, self._facts_partners = len(alive), partners
            others = self._others_now = tuple(
                [s for s in sorted(alive) if s != me and s not in partners]
            )
            self._others_set = frozenset(others)
            self._partners_alive = len(partners & alive)
        kind = self._kind
        night = self._night = kind is _NIGHT_K or kind is _NIGHT_VOTE_K
        mafia = self._mafia
        self._voting = kind is _VOTE_K or (kind is _NIGHT_VOTE_K and mafia)
        # where this seat talks now (None: nowhere), and N, the players in that room
        if kind is None or kind is _OVER_K:
            self._place = None
        elif not night:
            self._place = "stage"
        elif mafia and self._partners_alive:
            self._place = "den"
        else:
            self._place = None
        if night:
            self._room = self._partners_alive + (me in alive)
        else:
            self._room = max(len(alive), 1)

    def _reset_phase(self) -> None:
        self._lines = 0
        self._say_errors = 0
        self._speak: Intent | None = None
        self._speak_words = 0  # words in the planned line (its typing time is redrawn often)
        self._speak_folded = ""  # the planned line, case-folded (valid while _speak is set)
        self._speak_topic: tuple[object, ...] | None = None
        self._speak_mode = "short"
        self._speak_off: str | None = None
        #: another's line may move my plan: my line waits long, or I keep quiet for now
        #: (speak_mode "long", or speak_off "skip"; kept in step wherever those change)
        self._hears = False
        self._restale = False
        self._accused_me: list[int] = []
        self._votes_now: dict[int, int | None] = {}
        self._tally_now.clear()
        self._last_vote_intent: Intent | None = None
        self._vote_at: datetime | None = None
        self._voted: int | None = _NO_VOTE
        self._change_to: int | None = None
        self._change_at: datetime | None = None
        self._my_vote_t: datetime | None = None
        #: whom I said on the stage I would vote for, before voting (I keep my word)
        self._promised: int | None = None
        self._changed = False
        self._vote_errors = 0
        self._vote_banned: set[int] = set()
        self._vote_off = False
        self._first_prop: int | None = None

    def _on_phase_started(self, event: PhaseStarted) -> None:
        kind = _PHASE_KINDS.get(event.phase) or PhaseKind(event.phase)
        old = self._kind
        new_night = kind is _NIGHT_K or (kind is _NIGHT_VOTE_K and old is not _NIGHT_K)
        keep_prop = kind is _NIGHT_VOTE_K and old is _NIGHT_K
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
        if kind is _DAY_K:
            self._chat = self._ledger.stage
            cap = timing.day_cap
            self._late_at = t + timedelta(0, 0.7 * event.seconds)
        elif kind is _VOTE_K:
            self._chat = self._ledger.stage
            cap = timing.vote_cap
            self._late_at = t + timedelta(0, 0.5 * event.seconds)
        else:
            self._chat = self._ledger.den if self._mafia else _Room(t)
            cap = timing.den_cap
            self._late_at = _NEVER if t.tzinfo is UTC else datetime.max.replace(tzinfo=t.tzinfo)
        self._lines_cap = max(1, round(cap * self._chatty))
        if keep_prop:
            self._first_prop = first_prop
        if kind is _DAY_K:
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
                        counts = voted_by[voter] = {}
                    counts[target] = counts.get(target, 0) + 1
        elif event.phase == _NIGHT_VOTE:
            self._last_protect = self._night_act_target if self._acted else None
        self._dirty = True

    def _on_message(self, event: MessageAccepted) -> None:
        # the ledger has recorded the line; here is only how this seat reacts to it
        if event.phase_seq != self._seq:
            return
        reading = self._ledger.reading
        if reading is None:
            return
        if event.seat == self.seat and reading.folded not in self._said:
            self._own_line_from_before(event, reading.folded)
        if event.place == "den":
            self._on_den_line(event, reading)
        else:
            self._on_stage_line(event.seat, event.t)

    def _own_line_from_before(self, event: MessageAccepted, folded: str) -> None:
        """A line of mine that :meth:`done` never reported: said before a restart (the service
        replays the game to a resumed seat) or, rarely, heard back before its own ``done``.
        It counts towards this phase's lines (no second greeting), and a draft planned before
        the replay reached it that repeats it word for word is written again."""
        self._said.add(folded)
        self._lines += 1
        speak = self._speak
        if speak is not None and self._speak_folded == folded and event.t < speak.at:
            self._restale = True
            self._dirty = True

    def _on_stage_line(self, s: int, t: datetime) -> None:
        """``s`` said the line the ledger just took. Only a line that accuses me or a
        partner, claims a result, or (said by another) may make me speak up sooner, because my
        line waits long or I keep quiet for now (``_hears``), changes anything here; a
        BaselineTable hands the line only to those seats."""
        ledger = self._ledger
        changed = False
        target = ledger.target
        if target is not None:
            if ledger.claimed:
                self._version += 1
                changed = True
            elif target == self.seat or target in self._partners:
                changed = self._on_accused(s, target, ledger.times, t)
        if s != self.seat and (self._speak is not None or self._speak_off == "skip"):
            reading = ledger.reading
            if (
                self._speak is not None
                and reading is not None
                and reading.folded == self._speak_folded
            ):
                # someone just said my draft word for word: I say something else instead
                # (two players typing the very same line would give one of them away)
                self._restale = True
                changed = True
            changed = self._on_other_line(t) or changed
        if changed:
            self._dirty = True

    def _on_accused(self, s: int, target: int, times: int, t: datetime) -> bool:
        """``s`` accused me or (for the mafia) a partner. True when plans change."""
        # until the accused is revealed, only accusations of me (or, for the mafia, of a mafia
        # member) move the scores, and those count two accusations at most
        if times <= 2:
            self._rescore.append(s)
        changed = self._voted == _NO_VOTE and self._voting
        if target == self.seat and s != self.seat:
            self._accused_me.append(s)
            changed = True
            speak = self._speak
            if speak is not None:
                self._restale = True
                at = t + self._wait("short", self._speak_words)
                if at < speak.at:
                    self._speak = _say_at(at, speak.text)
            elif self._speak_off == "skip":
                self._speak_off = None
                self._hears = False
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
            self._hears = False
            return True
        if self._speak_mode != "long" or not self._below_share():
            return False
        at = t + self._wait("short", self._speak_words)
        self._speak_mode = "short"
        self._hears = False
        if at < speak.at:
            self._speak = _say_at(at, speak.text)
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
        topic = self._speak_topic
        if self._speak is not None and topic is not None and topic[0] == "tally":
            self._restale = self._dirty = True  # my drafted count is out of date
        if voter == self.seat:
            self._my_vote_t = event.t
            return
        if self._voted == _NO_VOTE:
            self._dirty = True  # the tally moves the choice
        elif event.night:
            self._maybe_follow_partner(event.t, voter, target)
        else:
            self._maybe_bandwagon(event.t)

    def _on_eliminated(self, event: PlayerEliminated) -> None:
        self._version += 1
        self._alive.discard(event.seat)
        self._gone = event.seat == self.seat
        self._phase_facts()
        self._revealed[event.seat] = event.role
        for claimer, (target, kind) in self._ledger.claims.items():
            if target == event.seat and (event.role == "mafia") != (kind == "mafia"):
                self._liars.add(claimer)  # the reveal proved their "detective result" false
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

    def _activity(self, cands: tuple[int, ...] | list[int]) -> dict[int, float]:
        """+ for the very quiet and (less) the very loud, relative to the table."""
        seen = self._ledger.talk_seen
        hit = self._activity_memo
        if hit is not None and hit[0] is cands and hit[1] is seen:
            return hit[2]  # (the same players, judged on the same history)
        out = self._compute_activity(cands)
        self._activity_memo = (cands, seen, out)
        return out

    def _compute_activity(self, cands: tuple[int, ...] | list[int]) -> dict[int, float]:
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
        """Cached until something they depend on changes; callers must not mutate.

        An accusation of me (or a partner) changes only the accuser's score: that one is
        worked out again, with the same code and so to the same float, not all of them."""
        hit = self._cache.get(kind)
        log = self._rescore
        if hit is not None and hit[0] == self._version:
            value = hit[1]
            if hit[2] != len(log):
                todo = [a for a in dict.fromkeys(log[hit[2] :]) if a in value]
                if todo:
                    fresh = self._suspicion(todo) if kind == "suspicion" else self._danger(todo)
                    value.update(fresh)
                self._cache[kind] = (self._version, value, len(log))
            return value
        value = self._suspicion() if kind == "suspicion" else self._danger()
        self._cache[kind] = (self._version, value, len(log))
        return value

    def _my_scores(self) -> dict[int, float]:
        """Danger for the mafia, suspicion for the town (callers must not mutate)."""
        hit = self._cache.get("danger" if self._mafia else "suspicion")
        if hit is not None and hit[0] == self._version and hit[2] == len(self._rescore):
            return hit[1]
        return self._scores("danger" if self._mafia else "suspicion")

    def _suspicion(self, only: list[int] | None = None) -> dict[int, float]:
        """Scores of the living others (or of ``only`` among them)."""
        everyone = self._others_now
        cands = everyone if only is None else only
        noise = self._noise.get
        day_noise = self._day_noise.get
        score: dict[int, float] = {}
        me = self.seat
        town = not self._mafia
        revealed = self._revealed.get
        accused_by = self._ledger.accused_by.get
        voted_by = self._voted_by.get
        for a in cands:
            # (summed in a local, term by term in the same order: the same floats)
            v = noise(a, 0.0) + day_noise(a, 0.0)
            accused = accused_by(a)
            if accused:
                for b, n in accused.items():
                    k = n if n < 2 else 2  # (min(n, 2))
                    if b == me and town:
                        v += 0.9 * k
                    role = revealed(b)
                    if role is not None:
                        v += -0.6 * k if role == "mafia" else 0.6 * k
            voted = voted_by(a)
            if voted:
                for target, n in voted.items():
                    role = revealed(target)
                    if role is not None:
                        v += -0.8 * n if role == "mafia" else 0.8 * n
                    if target == me:
                        v += 0.4 * n
            score[a] = v
        for s, bonus in self._activity(everyone).items():
            if s in score:
                score[s] += bonus
        roles_shown = self._revealed
        for claimer, (target, kind) in self._ledger.claims.items():
            if target == self.seat and kind == "mafia" and claimer in score:
                score[claimer] += 4.0  # a false claim against me: they are lying
                continue
            shown = roles_shown.get(target)
            if (
                not self._detective_in_play
                or claimer in self._liars
                or (shown is not None and (shown == "mafia") != (kind == "mafia"))
            ):
                # a detective claim in a game without one, or one the reveal proved wrong
                if claimer in score:
                    score[claimer] += 4.0
                continue
            if claimer in score:
                score[claimer] -= 0.5
            if target in score:
                score[target] += 2.5 if kind == "mafia" else -1.0
        for target, is_mafia in self._inspections.items():
            if target in score:
                score[target] += 100.0 if is_mafia else -100.0
        return score

    def _danger(self, only: list[int] | None = None) -> dict[int, float]:
        """Threats to the mafia among the living others (or among ``only`` of them)."""
        everyone = self._others_now
        cands = everyone if only is None else only
        mafia = self._partners | {self.seat}
        noise = self._noise.get
        day_noise = self._day_noise.get
        score: dict[int, float] = {}
        accused_by = self._ledger.accused_by.get
        voted_by = self._voted_by.get
        for a in cands:
            v = noise(a, 0.0) + day_noise(a, 0.0)
            accused = accused_by(a)
            if accused:
                for b, n in accused.items():
                    if b in mafia:
                        v += 0.9 * (n if n < 2 else 2)
            voted = voted_by(a)
            if voted:
                for target, n in voted.items():
                    if target in mafia:
                        v += 0.7 * n
            score[a] = v
        for s, bonus in self._activity(everyone).items():
            if s in score:
                score[s] += bonus
        for claimer in self._ledger.claims:
            if claimer in score:
                score[claimer] += 5.0
        return score

    def _day_target(self) -> int | None:
        """Whom to vote out by day. Mafia: never a partner, prefer a forming bandwagon."""
        version, rescored = self._version, len(self._rescore)  # (what the scores depend on)
        votes, banned = self._votes_seen, len(self._vote_banned)
        if (
            version == self._target_version
            and rescored == self._target_rescored
            and votes == self._target_votes
            and banned == self._target_banned
        ):
            return self._target
        target = self._target = self._compute_day_target()
        self._target_version, self._target_rescored = version, rescored
        self._target_votes, self._target_banned = votes, banned
        return target

    def _day_choice(self) -> int | None:
        """The day vote I am about to cast: the one I announced, while it is still allowed."""
        promised = self._promised
        if promised is not None and promised in self._alive and promised not in self._vote_banned:
            return promised
        return self._day_target()

    def _compute_day_target(self) -> int | None:
        base = self._my_scores()
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
        """The kill. Follow the partner who voted first, else the den's first proposal, else
        the most dangerous bystander; so partners (people among them) converge without ties."""
        cands = set(self._others_now) - self._vote_banned
        if not cands:
            return None
        partners = self._partners
        for voter, t in self._votes_now.items():  # (in the order the votes were first cast)
            if voter in partners and t in cands:
                return t
        if self._first_prop in cands:
            return self._first_prop
        danger = self._scores("danger")
        return max(cands, key=lambda s: danger.get(s, 0.0))

    # ==== planning =============================================================================

    def plan(self, now: datetime) -> Intent | None:
        """The next action; the same one until an observed event or ``done`` changes it."""
        if not self._dirty:
            return self._best
        self._dirty = False
        best = self._best = self._refresh(now)
        if best is not None and id(best) not in self._issued_ids:
            self._issued.append(best)
            self._issued_ids.add(id(best))
        return best

    def _refresh(self, now: datetime) -> Intent | None:
        if self._over or self._kind is None or self._role is None or self.seat not in self._alive:
            return None
        best = self._plan_act(now) if self._night else None
        # the vote is settled by its time first: whom it is for (the costly part, and free
        # of chance) is worked out only if it comes first
        vote_at = self._vote_time() if self._voting else None
        if vote_at is not None and (best is None or vote_at < best.at):
            best = None
        else:
            vote_at = None
        if self._place is not None:
            speak = self._plan_speak(now)
            if speak is not None:
                if vote_at is not None:
                    if speak.at < vote_at:
                        return speak  # on a tie the vote or act goes first
                elif best is None or speak.at < best.at:
                    return speak
        if vote_at is not None:
            return self._plan_vote(now)
        return best

    def _margin(self) -> float:
        return min(self.timing.margin, 0.1 * self._seconds)

    def _in_window(self, window: tuple[float, float]) -> datetime:
        lo, hi = window
        latest = self._seconds - self._margin()
        offset = min((lo + (hi - lo) * self._rng.random()) * self._seconds, latest)
        return self._start + timedelta(0, max(offset, 0.0))

    def _latest(self) -> datetime:
        return self._deadline - timedelta(0, self._margin())

    # ---- votes --------------------------------------------------------------------------------

    def _vote_time(self) -> datetime | None:
        """When :meth:`_plan_vote` would vote (drawing the time if it is not drawn yet)."""
        if self._vote_off:
            return None
        if self._voted == _NO_VOTE:
            at = self._vote_at
            if at is None:
                at = self._vote_at = self._in_window(self.timing.vote_window)
            return at
        if self._change_to is not None and self._change_at is not None:
            return self._change_at
        return None

    def _plan_vote(self, now: datetime) -> Intent | None:
        if not self._voting or self._vote_off:
            return None
        if self._voted == _NO_VOTE:
            at = self._vote_at
            if at is None:
                at = self._vote_at = self._in_window(self.timing.vote_window)
            if self._kind is _NIGHT_VOTE_K:
                return self._vote_intent(at, self._night_target())
            return self._vote_intent(at, self._day_choice())
        if self._change_to is not None and self._change_at is not None:
            return self._vote_intent(self._change_at, self._change_to)
        return None

    def _vote_intent(self, at: datetime, target: int | None) -> Intent:
        last = self._last_vote_intent
        name = None if target is None else self._names[target]
        if last is not None and last.target == name and last.at == at:
            return last
        last = self._last_vote_intent = Intent(at, "vote", target=name)
        return last

    def _schedule_change(self, target: int, t: datetime) -> None:
        lo, hi = self.timing.change_delay
        at = t + timedelta(0, lo + (hi - lo) * self._rng.random())
        if at > self._latest():
            return
        self._change_to = target
        self._change_at = at
        self._dirty = True

    def _maybe_bandwagon(self, t: datetime) -> None:
        """Change the day vote once, onto a strong bandwagon (never a partner or a cleared)."""
        if self._voted == _NO_VOTE or self._changed or self._change_to is not None:
            return
        tally = self._tally_now
        if not tally:
            return
        need = max(2, math.ceil(0.4 * len(self._alive)))
        if max(tally.values()) < need:
            return  # (no bandwagon yet: the usual case, decided without finding the leader)
        leader, count = max(tally.items(), key=lambda kv: (kv[1], -kv[0]))
        if count < need or leader == self._voted or leader == self.seat:
            return
        if leader in self._partners or leader not in self._alive or leader in self._vote_banned:
            return
        if not self._mafia and self._inspections.get(leader) is False:
            return
        if not self._mafia and self._voted is not None and self._inspections.get(self._voted):
            return
        mine = tally[self._voted] if self._voted is not None else 0
        if mine > count - 2:
            return
        self._schedule_change(leader, t)

    def _maybe_follow_partner(self, t: datetime, voter: int, target: int | None) -> None:
        """At night, a partner voted after me for someone else: go along once, so the kill is
        not a tie. A partner who voted well after my vote saw it and chose otherwise on
        purpose (a person, most likely: agents follow the first vote), so I follow them;
        two votes cast at almost the same moment are settled by seat, the higher seat follows."""
        if self._voted == _NO_VOTE or self._changed or self._change_to is not None:
            return
        if voter not in self._partners or target is None or target == self._voted:
            return
        if target not in self._others_set or target in self._partners:
            return
        if target in self._vote_banned:
            return
        mine = self._my_vote_t
        deliberate = mine is None or (t - mine).total_seconds() >= _DELIBERATE_S
        if deliberate or voter < self.seat:
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
        return min(others, key=lambda s: score.get(s, 0.0) - 0.1 * talk.get(s, 0))

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

    def _pause(self, mode: str) -> float:
        """Seconds before starting a line: short below one's share of the chat, long above."""
        lo, hi = self.timing.short_delay if mode == "short" else self.timing.long_delay
        return (lo + (hi - lo) * self._rng.random()) / self._chatty

    def _typing(self, words: int) -> float:
        """Seconds to type a line of ``words`` words."""
        return words * (self.timing.seconds_per_word * (0.8 + (1.25 - 0.8) * self._rng.random()))

    def _wait(self, mode: str, words: int) -> timedelta:
        """The pause, then the typing of a line of ``words`` words (one timedelta: they are
        cheap to add as floats and costly to build)."""
        return timedelta(0, self._pause(mode) + self._typing(words))

    def _plan_speak(self, now: datetime) -> Intent | None:
        speak = self._speak
        if speak is not None:
            if self._restale:
                self._restale = False
                composed = self._compose(now)
                if composed is not None:
                    text, opt = composed
                    words = len(text.split())
                    at = speak.at
                    if words > self._speak_words:  # a longer line takes longer to type
                        extra = (words - self._speak_words) * self.timing.seconds_per_word
                        at += timedelta(0, extra)
                        if at >= self._deadline:
                            self._speak = None
                            self._speak_off = "no-time"
                            self._hears = False
                            return None
                    self._speak = speak = _say_at(at, text)
                    self._speak_words = words
                    self._speak_folded = text.casefold()
                    self._speak_topic = opt[3]
            return speak
        self._restale = False
        if self._speak_off is not None or self._lines >= self._lines_cap:
            return None
        # (_below_share, _pause and _typing inlined, the same expressions: the same floats)
        chat = self._chat
        total = chat.total
        below = total == 0 or chat.msgs.get(self.seat, 0) * self._room < total
        rng = self._rng.random
        timing = self.timing
        if not below and rng() < timing.skip_when_loud:
            self._speak_off = "skip"
            self._hears = True
            return None
        mode = self._speak_mode = "short" if below else "long"
        last_t, start = chat.last_t, self._start
        base = now if now >= last_t and now >= start else max(now, last_t, start)
        # the pause is drawn before the line is composed (the same draws as _wait, in another
        # order: the same odds), so a line that could not even start in time is not composed
        lo, hi = timing.short_delay if below else timing.long_delay
        pause = (lo + (hi - lo) * rng()) / self._chatty
        deadline = self._deadline
        if base + timedelta(0, pause) >= deadline:
            self._speak_off = "no-time"
            return None
        composed = self._compose(now)
        if composed is None:
            self._speak_off = "no-text"
            return None
        text, opt = composed
        words = len(text.split())
        typing = words * (timing.seconds_per_word * (0.8 + (1.25 - 0.8) * rng()))
        at = base + timedelta(0, pause + typing)
        if at >= deadline:
            self._speak_off = "no-time"
            return None
        self._speak = speak = _say_at(at, text)
        self._speak_words = words
        self._speak_folded = text.casefold()
        self._speak_topic = opt[3]
        self._hears = mode == "long"
        return speak

    # ---- what to say --------------------------------------------------------------------------

    def _compose(self, now: datetime) -> tuple[str, _Option] | None:
        """Pick a situation by weight, then build and render only that one (cheap)."""
        if self._night:
            ready: list[_Option] = self._den_options()
            while ready:
                opt = ready.pop(self._weighted_index([o[0] for o in ready]))
                text = self._fresh(opt[1], opt[2])
                if text is not None:
                    return text, opt
            return None
        weights, builders = self._stage_choices(now)
        while weights:
            index = self._weighted_index(weights)
            del weights[index]
            built = builders.pop(index)(self)
            if built is None:
                continue
            text = self._fresh(built[1], built[2])
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
        draw = self._rng.random
        first = int(draw() * n)  # (a uniform index, like randrange(n), at a fraction of the cost)
        for k in range(n):
            text = templates[(first + k) % n].format_map(slots)
            folded = text.casefold()
            if folded not in heard and folded not in mine and folded not in den:
                return text
        # all said: the same line with a small change, one of the unused changes at random
        # (drawn one at a time: the first new one of a shuffled list, without the shuffle)
        base = templates[int(draw() * n)].format_map(slots)
        variants = list(_VARIANTS)
        while variants:
            p, s = variants.pop(int(draw() * len(variants)))
            text = f"{p}{base}{s}"
            folded = text.casefold()
            if folded not in heard and folded not in mine and folded not in den:
                return text
        return None

    def _stage_choices(self, now: datetime) -> tuple[list[float], list[_Builder]]:
        """The situations worth a line now: weights, and for each the function that builds
        its line from this policy (only the one picked is built)."""
        day = self._day
        kind = self._kind
        weights: list[float] = []
        builders: list[_Builder] = []
        w = weights.append
        b = builders.append
        if self._accused_me:
            w(6.0)
            b(_DEFEND)
        if self._role == "detective":
            if self._reveal is not None and self._reveal in self._alive:
                w(8.0)
                b(_REVEAL)
            if kind is _VOTE_K and self._votes_now:
                w(6.0)
                b(_DET_CLEAN)
        if day == 1 and kind is _DAY_K:
            if self._lines == 0:
                w(6.0)
                b(_GREET)
            w(1.5)
            b(_OPEN)
        alive = len(self._alive)
        total = self._chat.total
        # news is news early in the day; two minutes later "rip X" sounds like a bot
        if day > 1 and kind is _DAY_K and total < 1.5 * alive:
            topics = self._topics
            if ("night", day) not in topics:
                if self._night_victim is not None:
                    w(5.0)
                    b(_NIGHT_KILL)
                elif self._night_none:
                    w(4.0)
                    b(_NIGHT_NONE)
            elim = self._last_day_elim
            if elim is not None and day == elim[3] + 1 and ("elim", day) not in topics:
                w(2.5)
                b(_ELIM)
            if ("day", day) not in topics:
                w(0.8)
                b(_DAY_COUNT)
        w(3.0)
        b(_ACCUSE)
        if kind is _VOTE_K:
            w(3.0)
            b(_VOTE_STATE)
            if self._votes_now:
                w(1.0)
                b(_TALLY)
        if now >= self._late_at:  # (half the vote, or 70% of the discussion, is gone)
            w(0.8)
            b(_LATE)
        if total >= alive:
            w(1.2)
            b(_QUIET)
        weights += _TAIL_WEIGHTS
        builders += _TAIL_BUILDERS
        return weights, builders

    def _pick(self, options: list[_Option]) -> _Option | None:
        if not options:
            return None
        return options[self._weighted_index([o[0] for o in options])]

    def _opt_defend(self) -> _Option | None:
        accusers = [a for a in self._accused_me if a in self._alive]
        if not accusers:
            return None
        a = accusers[-1]
        topic: tuple[object, ...] = ("defend", a, self._seq, len(accusers))
        opts: list[_Option] = [(3.0, "defend", {}, topic)]
        if a in self._others_set:
            name = self._names[a]
            opts.append((3.0, "defend_back", {"a": name}, topic))
            opts.append((1.5, "accuse_me", {"x": name}, topic))
        return self._pick(opts)

    def _opt_reveal(self) -> _Option | None:
        found = self._reveal
        if found is None or found not in self._alive or ("det", found) in self._topics:
            return None
        return (8.0, "det_mafia", {"x": self._names[found]}, ("det", found))

    def _opt_det_clean(self) -> _Option | None:
        """Save a player I know is clean from a forming lynch; a coin toss, once a day."""
        tally = self._tally_now
        for s, n in tally.most_common(1):
            gate = ("det-clean", s, self._day)
            if self._inspections.get(s) is False and n >= 2 and gate not in self._topics:
                if gate not in self._gates:
                    self._gates[gate] = self._rng.random() < 0.5
                if self._gates[gate]:
                    return (6.0, "det_clean", {"x": self._names[s]}, gate)
        return None

    def _opt_greet(self) -> _Option | None:
        return (6.0, "greet", {}, ("greet",))

    def _opt_open(self) -> _Option | None:
        return (1.5, "open", {}, None)

    def _opt_night_kill(self) -> _Option | None:
        if self._night_victim is None:
            return None
        v, role = self._night_victim
        topic = ("night", self._day)
        name = self._names[v]
        opts: list[_Option] = [(5.0, "night_kill", {"v": name, "role": role}, topic)]
        accused_by = self._ledger.accused_by.get(v, _EMPTY)
        others = self._others_set
        accused = [(n, b) for b, n in accused_by.items() if b in others]
        if accused:
            x = self._names[max(accused)[1]]
            opts.append((2.0, "night_kill_reason", {"v": name, "x": x}, topic))
        return self._pick(opts)

    def _opt_night_none(self) -> _Option | None:
        topic = ("night", self._day)
        if self._doctor_in_play:
            return self._pick([(4.0, "night_none", {}, topic), (2.0, "night_saved", {}, topic)])
        return (4.0, "night_none", {}, topic)

    def _opt_elim(self) -> _Option | None:
        if self._last_day_elim is None:
            return None
        v, role, voters, _d = self._last_day_elim
        if self._mafia and v in self._partners:
            return None
        topic = ("elim", self._day)
        name = self._names[v]
        if role == "mafia":
            return (2.5, "elim_mafia", {"v": name}, topic)
        others = self._others_set
        shown = [self._names[s] for s in voters if s in others]
        if shown and self.seat not in voters:  # (who voted for it too blames nobody)
            slots = {"v": name, "voters": display_list(shown), "r": role}
            return (2.5, "elim_bystander", slots, topic)
        return (2.0, "elim_bystander_plain", {"v": name, "r": role}, topic)

    def _opt_day_count(self) -> _Option | None:
        slots = {"n": str(self._day), "alive": str(len(self._alive))}
        return (0.8, "day_count", slots, ("day", self._day))

    def _opt_accuse(self) -> _Option | None:
        """Point at the top suspect (town) or the deflection target (mafia), with a reason
        when the record gives one."""
        mine_now = self._voted
        # once I voted, the one I voted for is the one I point at
        top = mine_now if mine_now in self._others_set else self._day_target()
        if top is None:
            return None
        names = self._names
        ledger = self._ledger
        x = names[top]
        score = self._my_scores().get(top, 0.0)
        about: tuple[object, ...] = ("vote_state", top)  # (a line naming whom I vote out)
        opts: list[_Option] = [(2.5 if score >= 1.0 else 1.2, "accuse", {"x": x}, about)]
        revealed = self._revealed.get
        voted = self._voted_by.get(top)
        mine = self._voted_by.get(self.seat, _EMPTY)  # (who voted a bystander out blames nobody)
        if voted:
            for victim in voted:
                if revealed(victim, "mafia") != "mafia":
                    if victim not in self._partners and victim not in mine:
                        slots = {"x": x, "v": names[victim], "r": revealed(victim, "bystander")}
                        opts.append((2.5, "accuse_vote", slots, about))
                    break
        accused = ledger.accused_by.get(top)
        if accused:
            for victim in accused:
                if revealed(victim, "mafia") != "mafia":
                    if victim != self.seat and victim not in self._partners and victim not in mine:
                        slots = {"x": x, "v": names[victim], "r": revealed(victim, "bystander")}
                        opts.append((2.0, "accuse_accused", slots, about))
                    break
        # ("accuse_loud" is never offered: its test, _activity([top]) >= 0.2, compares the
        # player with itself and so never holds. Meant was "louder than the table"; turning
        # that on would change how the baseline plays, so it stays off until done on purpose)
        on_top = ledger.phase_accusers.get(top)
        if on_top:
            others = self._others_set
            agree = [a for a in on_top if a in others]
            if agree:
                opts.append((1.5, "agree", {"x": x, "a": names[agree[-1]]}, about))
        return self._pick(opts)

    def _opt_vote_state(self) -> _Option | None:
        if self._voted == _NO_VOTE:
            target = self._day_choice()
        else:
            target = self._change_to if self._change_to is not None else self._voted
        if target is None or target not in self._others_set:
            return None
        return (3.0, "vote_state", {"x": self._names[target]}, ("vote_state", target))

    def _opt_tally(self) -> _Option | None:
        tally = self._tally_now
        if not tally or (self._mafia and any(s in self._partners for s in tally)):
            return None
        # a player counting the votes calls their own "me" ("Drew 2" from Drew reads oddly)
        names, me = self._names, self.seat
        text = ", ".join(f"{'me' if s == me else names[s]} {n}" for s, n in tally.most_common(3))
        return (1.0, "tally", {"tally": text}, ("tally",))

    def _opt_late(self) -> _Option | None:
        return (0.8, "late", {}, None)

    def _opt_quiet(self) -> _Option | None:
        said = self._chat.msgs
        quiet = [s for s in self._others_now if s not in said]
        if not quiet:
            return None
        pick = quiet[int(self._rng.random() * len(quiet))]
        return (1.2, "quiet", {"x": self._names[pick]}, None)

    def _opt_ask(self) -> _Option | None:
        pool = self._others_now
        if not pool:
            return None
        pick = pool[int(self._rng.random() * len(pool))]
        return (1.0, "ask", {"x": self._names[pick]}, None)

    def _opt_filler(self) -> _Option | None:
        return (0.4, "filler", {}, None)

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
            proposals: list[_Option] = [(5.0, "den_propose", {"x": x}, topic)]
            if target in self._ledger.claims:
                proposals.append((6.0, "den_propose_claim", {"x": x}, topic))
            mafia = self._partners | {self.seat}
            hit = [b for b in self._ledger.accused_by.get(target, _EMPTY) if b in mafia]
            if hit:
                # the one under suspicion is "me" when it is the speaker ("X is onto Drew",
                # said by Drew, reads oddly)
                p = "me" if hit[0] == self.seat else names[hit[0]]
                slots = {"x": x, "p": p}
                proposals.append((3.0, "den_propose_reason", slots, topic))
            return proposals
        if first is not None and first in self._alive and not settled:
            return [(6.0, "den_agree", {"x": names[first]}, ("den-agree", day))]
        night = ("den", day)
        opts: list[_Option] = [(0.8, "den_small", {}, night)]
        danger = self._scores("danger")
        later = [s for s in danger if s != target]
        if later:
            push = min(later, key=lambda s: danger[s])  # pin it on someone unthreatening
            opts.append((1.2, "den_plan", {"x": names[push]}, night))
        return opts

    # ==== feedback =============================================================================

    def done(self, intent: Intent, error: str | None) -> None:
        """Record the outcome; on a refusal try something else, never the same thing again."""
        self._dirty = True
        heard_back = False  # the line came back as an event first, and was counted then
        if intent.kind == "say" and intent.text:
            folded = intent.text.casefold()
            heard_back = folded in self._said
            self._said.add(folded)
        if id(intent) not in self._issued_ids and intent not in self._issued:
            return  # planned in an earlier phase: its phase is gone, and so is its meaning
        if intent.kind == "say":
            if self._speak is not None and self._speak.text == intent.text:
                self._speak = None
            if error is None:
                if not heard_back:
                    self._lines += 1
                topic = self._speak_topic
                if topic is not None:
                    self._topics.add(topic)
                    if topic[0] == "defend":
                        self._accused_me.clear()
                    elif topic[0] == "vote_state" and self._voted == _NO_VOTE:
                        self._promised = cast(int, topic[1])
                self._speak_topic = None
            else:
                self._say_errors += 1
                if self._say_errors >= 2:
                    self._speak_off = "refused"
            speak_off, speak = self._speak_off, self._speak
            self._hears = speak_off == "skip" if speak is None else self._speak_mode == "long"
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
            topic = self._speak_topic
            if self._speak is not None and topic is not None and topic[0] == "vote_state":
                # a draft naming someone I did not vote for is written again
                self._restale = self._restale or topic[1] != target
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
        retry = intent.at + timedelta(0, 1.0 + (3.0 - 1.0) * self._rng.random())
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
        retry = intent.at + timedelta(0, 1.0 + (3.0 - 1.0) * self._rng.random())
        self._act_at = retry if retry <= self._deadline else None
        if self._act_at is None:
            self._act_errors = 3


_TIMING = BaselineTiming()

#: builds one kind of line for a policy (None: nothing to say of that kind now)
_Builder = Callable[[BaselinePolicy], _Option | None]
_DEFEND: _Builder = BaselinePolicy._opt_defend
_REVEAL: _Builder = BaselinePolicy._opt_reveal
_DET_CLEAN: _Builder = BaselinePolicy._opt_det_clean
_GREET: _Builder = BaselinePolicy._opt_greet
_OPEN: _Builder = BaselinePolicy._opt_open
_NIGHT_KILL: _Builder = BaselinePolicy._opt_night_kill
_NIGHT_NONE: _Builder = BaselinePolicy._opt_night_none
_ELIM: _Builder = BaselinePolicy._opt_elim
_DAY_COUNT: _Builder = BaselinePolicy._opt_day_count
_ACCUSE: _Builder = BaselinePolicy._opt_accuse
_VOTE_STATE: _Builder = BaselinePolicy._opt_vote_state
_TALLY: _Builder = BaselinePolicy._opt_tally
_LATE: _Builder = BaselinePolicy._opt_late
_QUIET: _Builder = BaselinePolicy._opt_quiet
#: always on offer, last: a question to someone, a filler
_TAIL_WEIGHTS = (1.0, 0.4)
_TAIL_BUILDERS: tuple[_Builder, ...] = (BaselinePolicy._opt_ask, BaselinePolicy._opt_filler)


class BaselineTable:
    """Every seat of one game played by a :class:`BaselinePolicy`, all in one process.

    For simulations (:func:`agent.fastsim.simulate_fast`): the seats share one
    :class:`TableLedger`, :meth:`deliver` records each event once and hands it to every seat
    that may see it (what each seat's ``observe`` would do, minus the per-seat checks and
    dispatch), and :meth:`replan` asks only the seats whose plan may have changed. Each seat
    decides exactly as it would alone.
    """

    def __init__(self) -> None:
        self.ledger = TableLedger()
        self.policies: list[BaselinePolicy] = []

    def seat(self, seat: int, name: str, rng: random.Random) -> BaselinePolicy:
        """Add a seat (in seat order)."""
        policy = BaselinePolicy(seat, name, rng, ledger=self.ledger)
        self.policies.append(policy)
        return policy

    def deliver(self, event: Event) -> None:
        ledger = self.ledger
        ledger.take(event)
        cls = type(event)
        if isinstance(event, MessageAccepted) and event.place == "stage":
            # every line reaches every seat, but most seats have nothing to do about it
            if ledger.reading is None:
                return
            s, t, target, claimed = event.seat, event.t, ledger.target, ledger.claimed
            folded = ledger.reading.folded
            for policy in self.policies:
                # does the line concern this seat (see _on_stage_line)? cheapest test first
                if policy._hears and policy.seat != s and not policy._gone:
                    policy._on_stage_line(s, t)
                    continue
                if (
                    target is not None
                    and (claimed or target == policy.seat or target in policy._partners)
                    and not policy._gone
                ):
                    policy._on_stage_line(s, t)
                    continue
                if (  # it is my planned line, word for word
                    policy._speak_folded == folded
                    and policy._speak is not None
                    and policy.seat != s
                    and not policy._gone
                ):
                    policy._on_stage_line(s, t)
            return
        handler = _HANDLERS.get(cls)
        if handler is None:
            return
        seen = event.visible_to
        over = cls is GameOver
        for policy in self.policies:
            if (seen is None or policy.seat in seen) and (over or not policy._gone):
                handler(policy, event)

    def next_intent(self, now: datetime) -> tuple[Intent | None, int]:
        """The earliest planned intent and its seat (on a tie the lowest seat), after asking
        again only the seats told something new since they last planned."""
        best: Intent | None = None
        who = -1
        for i, policy in enumerate(self.policies):
            if policy._dirty:  # (policy.plan(now), inlined: once per seat and step)
                policy._dirty = False
                intent = policy._best = policy._refresh(now)
                if intent is not None and id(intent) not in policy._issued_ids:
                    policy._issued.append(intent)
                    policy._issued_ids.add(id(intent))
            else:
                intent = policy._best
            if intent is not None and (best is None or intent.at < best.at):
                best, who = intent, i
        return best, who


#: PhaseKind by value, without the enum's (slow) call; and its members as plain globals,
#: because in Python 3.11 ``PhaseKind.DAY`` costs several times a global lookup
_PHASE_KINDS: dict[str, PhaseKind] = {k.value: k for k in PhaseKind}
_DAY_K = PhaseKind.DAY
_VOTE_K = PhaseKind.VOTE
_NIGHT_K = PhaseKind.NIGHT
_NIGHT_VOTE_K = PhaseKind.NIGHT_VOTE
_OVER_K = PhaseKind.OVER
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
