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
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime, timedelta
from typing import cast

from agent.base import Intent
from agent.baseline.common import (
    _DAY_K,
    _NEVER,
    _NIGHT_K,
    _NIGHT_VOTE,
    _NIGHT_VOTE_K,
    _NO_VOTE,
    _OVER_K,
    _PHASE_KINDS,
    _VOTE,
    _VOTE_K,
    Option,
    say_at,
)
from agent.baseline.ledger import Room, TableLedger
from agent.baseline.scores import activity, danger, suspicion
from agent.baseline.speech import compose
from agent.baseline.timing import (
    ANSWER_S,
    DEFAULT_TIMING,
    FIRST_LINE_S,
    OWN_GAP_S,
    VOTE_S,
    BaselineTiming,
    chattiness,
    draw,
    poisson,
)
from agent.baseline.view import SpeechView
from agent.templates import Reading
from games.events import (
    Event,
    GameOver,
    GameStarted,
    InspectionResult,
    MessageAccepted,
    NightActionRecorded,
    NightResult,
    PhaseEnded,
    PhaseExtended,
    PhaseStarted,
    PlayerEliminated,
    RoleAssigned,
    VoteCast,
)
from games.roles import get_role
from games.state import PhaseKind

__all__ = ["BASELINE_NAME", "BaselinePolicy", "BaselineTable"]

#: how evaluations and logs name this policy
BASELINE_NAME = "baseline"


def _normal(rng: Callable[[], float]) -> float:
    """A standard normal draw (Box-Muller) from ``rng``'s uniform draws."""
    return math.sqrt(-2.0 * math.log(1.0 - rng())) * math.cos(2.0 * math.pi * rng())


#: a partner's night vote this long after mine was cast knowing mine (agents react in ms)
_DELIBERATE_S = 2.0
_NOTHING_HEARD: frozenset[str] = frozenset()  # a town seat's record of the den


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
        "_answer_at",
        "_answer_from",
        "_asked",
        "_best",
        "_budget",
        "_budget_used",
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
        "_extra",
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
        "_next_at",
        "_night",
        "_night_act_target",
        "_night_none",
        "_night_victim",
        "_noise",
        "_noise_rng",
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
        self.timing = timing or DEFAULT_TIMING
        self._rng = rng
        #: the small noise on scores comes from a generator of its own, so what else the
        #: seat draws (timing, words) never changes its reads (a SeatRecord draws the same)
        self._noise_rng = random.Random(rng.random())
        self._chatty = chattiness(persona)
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
        self._chat = Room(self._start)
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
        self._noise = {i: self._noise_rng.random() * 0.25 for i in self._alive}
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
        #: by day: lines this seat means to say this phase, and when the next one is due (a
        #: draw from people's timing); a question put to me by name, to answer by then
        self._budget = 0
        self._budget_used = 0  # (lines of this seat it planned itself: not a predecessor's)
        self._next_at: datetime | None = None
        self._answer_from: int | None = None
        self._answer_at: datetime | None = None
        self._asked = ""
        self._extra = 0  # answers and defences said beyond the budget
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
        # a question put to me just before the vote is still answered in it
        asked = (self._answer_from, self._answer_at, self._asked) if kind is _VOTE_K else None
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
            self._chat = self._ledger.den if self._mafia else Room(t)
            cap = timing.den_cap
            self._late_at = _NEVER if t.tzinfo is UTC else datetime.max.replace(tzinfo=t.tzinfo)
        self._lines_cap = max(1, round(cap * self._chatty))
        if keep_prop:
            self._first_prop = first_prop
        if kind is _DAY_K:
            self._version += 1
            self._day = event.number
            rng = self._noise_rng
            self._day_noise = {i: rng.random() * 0.15 for i in self._alive}
        if kind is _DAY_K or kind is _VOTE_K:
            self._plan_day_talk(t, event.seconds, kind is _VOTE_K)
        if asked is not None and asked[0] is not None and asked[1] is not None:
            latest = t + timedelta(0, self.timing.answer_until * event.seconds)
            if asked[1] < latest:
                self._answer_from, self._answer_at, self._asked = asked
        if new_night:
            self._acted = False
            self._act_at = None
            self._act_errors = 0
            self._act_banned = set()
            self._night_act_target = None
            self._night_victim = None
            self._night_none = False
        self._dirty = True

    def _on_phase_extended(self, event: PhaseExtended) -> None:
        """The phase got time back (the platform's input was down): it now ends later."""
        if event.seq == self._seq:
            self._deadline = event.deadline
            self._seconds += event.seconds
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
        replays the game to a resumed seat), by whoever had the seat before me (a person who
        left), or heard back before its own ``done``. It counts towards this phase's lines (no
        second greeting); towards the lines I meant to say only when it is my own draft; and a
        draft planned before the replay reached it that repeats it word for word is written
        again."""
        self._said.add(folded)
        self._lines += 1
        if self._place == "stage":
            self._spoke(event.t)
        speak = self._speak
        if speak is not None and self._speak_folded == folded:
            if event.t < speak.at:  # the same words again, later: written anew
                self._restale = True
            else:  # this very line (planned again from the replay before it came)
                self._speak = None
                self._budget_used += 1
            self._dirty = True

    def _spoke(self, t: datetime) -> None:
        """A line of mine was said on the stage at ``t``: a pending answer is given, and the
        next line is due one of people's gaps later."""
        if self._answer_at is not None and t >= self._answer_at:
            self._extra += 1
            self._answer_from = self._answer_at = None
        self._after_own_line(t)

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
        if ledger.addressee == self.seat and s != self.seat:
            self._asked_by(s, t)
            changed = True
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
            if self._place == "stage":
                if self._answer_from is None and self._extra < 2:
                    self._asked_by(s, t)  # a defence comes as fast as an answer
                    self._answer_from = None
                return changed
            speak = self._speak
            if speak is not None:
                self._restale = True
                at = t + self._wait("short", self._speak_words)
                if at < speak.at:
                    self._speak = say_at(at, speak.text)
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
            self._speak = say_at(at, speak.text)
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
        return activity(self._ledger.talk_seen, cands)

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
        return suspicion(
            self._ledger, everyone if only is None else only, me=self.seat,
            town=not self._mafia, bonus=self._activity(everyone), noise=self._noise,
            day_noise=self._day_noise, revealed=self._revealed, voted_by=self._voted_by,
            liars=self._liars, inspections=self._inspections,
            detective_in_play=self._detective_in_play,
        )  # fmt: skip

    def _danger(self, only: list[int] | None = None) -> dict[int, float]:
        """Threats to the mafia among the living others (or among ``only`` of them)."""
        everyone = self._others_now
        return danger(
            self._ledger, everyone if only is None else only, mafia=self._partners | {self.seat},
            bonus=self._activity(everyone), noise=self._noise, day_noise=self._day_noise,
            voted_by=self._voted_by,
        )  # fmt: skip

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

    def speech_view(self) -> SpeechView:
        """What `agent.baseline.speech` reads of this seat now (positional, in the view's
        field order: a keyword call costs several times more, once per line composed)."""
        return SpeechView(
            self.seat,  # seat
            self._rng,  # rng
            self.timing,  # timing
            self._ledger,  # ledger
            self._chat,  # chat
            self._names,  # names
            self._alive,  # alive
            self._others_now,  # others_now
            self._others_set,  # others_set
            self._role,  # role
            self._mafia,  # mafia
            self._partners,  # partners
            self._doctor_in_play,  # doctor_in_play
            self._night,  # night
            self._kind,  # kind
            self._day,  # day
            self._seq,  # seq
            self._start,  # start
            self._seconds,  # seconds
            self._late_at,  # late_at
            self._lines,  # lines
            self._said,  # said
            self._den_heard,  # den_heard
            self._topics,  # topics
            self._gates,  # gates
            self._accused_me,  # accused_me
            self._answer_from,  # answer_from
            self._asked,  # asked
            self._voted,  # voted
            self._change_to,  # change_to
            self._votes_now,  # votes_now
            self._tally_now,  # tally_now
            self._voted_by,  # voted_by
            self._first_prop,  # first_prop
            self._night_victim,  # night_victim
            self._night_none,  # night_none
            self._last_day_elim,  # last_day_elim
            self._revealed,  # revealed
            self._inspections,  # inspections
            self._reveal,  # reveal
            self._day_target,  # day_target
            self._day_choice,  # day_choice
            self._night_target,  # night_target
            self._my_scores,  # my_scores
            self._scores,  # scores
        )

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
                at = self._vote_at = self._first_vote_time()
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
                at = self._vote_at = self._first_vote_time()
            if self._kind is _NIGHT_VOTE_K:
                return self._vote_intent(at, self._night_target())
            return self._vote_intent(at, self._day_choice())
        if self._change_to is not None and self._change_at is not None:
            return self._vote_intent(self._change_at, self._change_to)
        return None

    def _first_vote_time(self) -> datetime:
        """By day, as long into the vote as people took (their votes had no deadline: the
        draw is scaled to a vote of a minute and kept inside this one); at night, in the
        vote window."""
        if self._kind is not _VOTE_K:
            return self._in_window(self.timing.vote_window)
        latest = self._seconds - self._margin()
        offset = draw(VOTE_S, self._rng.random()) * self._seconds / 60.0
        return self._start + timedelta(0, max(0.0, min(offset, latest)))

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

    def _plan_day_talk(self, start: datetime, seconds: float, vote: bool) -> None:
        """How much this seat will say this phase and when it starts, drawn like people.

        A discussion: a count around ``day_rate`` per minute (log-normal spread), the first
        line after people's first-line delay (scaled to the discussion's length). A vote: now
        and then one early word; otherwise silence until the result, as people fall silent
        once they have voted."""
        timing, rng = self.timing, self._rng.random
        if vote:
            self._budget = 1 if rng() < timing.vote_talk * self._chatty else 0
            early = max(seconds * timing.vote_talk_window, 1.0)
            self._next_at = start + timedelta(0, 1.0 + (early - 1.0) * rng())
            return
        scale = min(1.0, seconds / timing.people_day_s)
        spread = timing.rate_spread
        mood = math.exp(spread * _normal(rng) - spread * spread / 2)  # (mean 1)
        mean = timing.day_rate * self._chatty * mood * seconds / 60.0
        self._budget = poisson(mean, self._rng)
        if self._budget == 0 and rng() >= timing.silent_day:
            self._budget = 1  # people seldom say nothing at all in a day
        self._next_at = start + timedelta(0, draw(FIRST_LINE_S, rng()) * scale)

    def _after_own_line(self, t: datetime) -> None:
        """The next line is due one of people's own-message gaps after this one."""
        scale = min(1.0, self._seconds / self.timing.people_day_s) if not self._voting else 1.0
        self._next_at = t + timedelta(0, draw(OWN_GAP_S, self._rng.random()) * max(scale, 0.5))

    def _asked_by(self, s: int, t: datetime) -> None:
        """``s`` put a question to me by name: answer within a person's latency, unless the
        vote is well under way (the lull before its result)."""
        at = t + timedelta(0, draw(ANSWER_S, self._rng.random()))
        if self._kind is _VOTE_K and at >= self._start + timedelta(
            0, self.timing.answer_until * self._seconds
        ):
            return
        self._answer_from = s
        self._asked = self._ledger.asked
        self._answer_at = at
        speak = self._speak
        if speak is not None:
            self._restale = True  # whatever I was typing, the answer comes first
            if at < speak.at:
                self._speak = say_at(at, speak.text)
        elif self._speak_off is not None and self._speak_off != "refused":
            self._speak_off = None
        self._dirty = True

    def _plan_stage(self, now: datetime) -> Intent | None:
        """Day talk on people's timing (see :meth:`_plan_day_talk`); answers come first."""
        speak = self._speak
        if speak is not None:
            return self._redraft(now, speak)
        self._restale = False
        if self._speak_off is not None:
            return None
        answering = self._answer_from is not None or (
            self._accused_me and self._extra < 2 and self._answer_at is not None
        )
        if not answering and (self._budget_used >= self._budget or self._lines >= self._lines_cap):
            return None
        due = self._answer_at if answering else self._next_at
        if due is None:
            return None
        composed = compose(self.speech_view(), now)
        if composed is None:
            self._speak_off = "no-text"
            return None
        text, opt = composed
        words = len(text.split())
        # nobody types a line in no time: at least half a person's typing of it from now
        at = max(due, now + timedelta(0, 0.5 * words * self.timing.seconds_per_word))
        if self._kind is _VOTE_K and not answering:
            # a word early in the vote, or none: then the lull before its result
            early = self.timing.vote_talk_window * self._seconds + 2.0
            if at > self._start + timedelta(0, early):
                self._speak_off = "no-time"
                return None
        if at >= self._deadline - timedelta(0, 1.0):
            self._speak_off = "no-time"
            return None
        speak = self._draft(at, text, opt)
        self._hears = False
        return speak

    def _draft(self, at: datetime, text: str, opt: Option) -> Intent:
        """Plan ``text`` for ``at`` (the line of situation ``opt``)."""
        self._speak = speak = say_at(at, text)
        self._speak_words = len(text.split())
        self._speak_folded = text.casefold()
        self._speak_topic = opt[3]
        return speak

    def _redraft(self, now: datetime, speak: Intent) -> Intent | None:
        """The planned line, written again if it went stale (someone said it, the count
        moved): same moment, later by the typing of any extra words."""
        if self._restale:
            self._restale = False
            composed = compose(self.speech_view(), now)
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
                speak = self._draft(at, text, opt)
        return speak

    def _plan_speak(self, now: datetime) -> Intent | None:
        if self._place == "stage":
            return self._plan_stage(now)
        speak = self._speak
        if speak is not None:
            return self._redraft(now, speak)
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
        composed = compose(self.speech_view(), now)
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
        speak = self._draft(at, text, opt)
        self._hears = mode == "long"
        return speak

    # ---- what to say --------------------------------------------------------------------------

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
                    self._budget_used += 1
                    if self._place == "stage":
                        self._spoke(intent.at)
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
            addressee = ledger.addressee
            folded = ledger.reading.folded
            for policy in self.policies:
                # does the line concern this seat (see _on_stage_line)? cheapest test first
                if policy._hears and policy.seat != s and not policy._gone:
                    policy._on_stage_line(s, t)
                    continue
                if (
                    (target is not None or addressee is not None)
                    and (
                        claimed
                        or target == policy.seat
                        or target in policy._partners
                        or addressee == policy.seat
                    )
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


_Handler = Callable[["BaselinePolicy", Event], None]

#: dispatch by exact event type; each handler takes its own event class, which the table
#: guarantees, so the casts only forget what dispatch already checked
_HANDLERS: dict[type[Event], _Handler] = {
    GameStarted: cast(_Handler, BaselinePolicy._on_game_started),
    RoleAssigned: cast(_Handler, BaselinePolicy._on_role),
    PhaseStarted: cast(_Handler, BaselinePolicy._on_phase_started),
    PhaseEnded: cast(_Handler, BaselinePolicy._on_phase_ended),
    PhaseExtended: cast(_Handler, BaselinePolicy._on_phase_extended),
    MessageAccepted: cast(_Handler, BaselinePolicy._on_message),
    VoteCast: cast(_Handler, BaselinePolicy._on_vote),
    PlayerEliminated: cast(_Handler, BaselinePolicy._on_eliminated),
    NightResult: cast(_Handler, BaselinePolicy._on_night_result),
    InspectionResult: cast(_Handler, BaselinePolicy._on_inspection),
    NightActionRecorded: cast(_Handler, BaselinePolicy._on_night_action),
    GameOver: cast(_Handler, BaselinePolicy._on_game_over),
}
