"""What one baseline seat knows, and what it makes of it: the state the policy's modules share.

:class:`SeatState` holds the seat's record of the game (who is alive, its role and partners,
reveals, votes, its inspections), the current phase (its kind, clock, the room it talks in)
and its plans for that phase (the line drafted, the vote, the night action). The modules that
play the seat work on it: :mod:`~agent.baseline.hearing` takes in events,
:mod:`~agent.baseline.talk` plans lines, :mod:`~agent.baseline.voting` votes and
:mod:`~agent.baseline.acting` acts at night; :class:`~agent.baseline.policy.BaselinePolicy`
is this state with the flow that calls them.

The state also judges (its reads are cached with it): suspicion and danger from
:mod:`~agent.baseline.scores`, the day vote's target and the night's kill, and the
:class:`~agent.baseline.view.SpeechView` speech composes from. Its fields keep a leading
underscore: they belong to the baseline's own modules, not to callers of the policy.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Set as AbstractSet
from datetime import datetime, timedelta

from agent.base import Intent
from agent.baseline.common import _NIGHT_K, _NIGHT_VOTE_K, _NO_VOTE, _OVER_K, _VOTE_K
from agent.baseline.ledger import Room, TableLedger
from agent.baseline.scores import activity, danger, suspicion
from agent.baseline.targets import day_target, night_target
from agent.baseline.timing import DEFAULT_TIMING, BaselineTiming, chattiness
from agent.baseline.view import SpeechView
from games.state import PhaseKind

__all__ = ["NOTHING_HEARD", "SeatState"]

_tuple_new = tuple.__new__

NOTHING_HEARD: frozenset[str] = frozenset()  # a town seat's record of the den
_NO_PARTNERS: frozenset[int] = frozenset()


class SeatState:
    """One seat's knowledge, phase and plans (see the module docstring).

    ``ledger``: leave it out (the seat then keeps its own), unless every seat of a game runs
    in one process and whoever passes the shared ledger also feeds it every event of the game,
    in order, before any seat observes it (see :class:`TableLedger`).
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
        "_bound_day_choice",
        "_bound_day_target",
        "_bound_my_scores",
        "_bound_night_target",
        "_bound_scores",
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
        "_exe_target",
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
        "_night_memo",
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
        "_rate",
        "_rescore",
        "_restale",
        "_retarget",
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
        "_uses_left",
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
        "character",
        "persona",
        "seat",
        "timing",
    )

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
        #: voter -> target -> day votes (the ledger's: every seat still playing saw them all)
        self._voted_by = self._ledger.voted_by
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
        #: uses left of a limited night ability (-1: unlimited); an executioner's target
        self._uses_left = -1
        self._exe_target: int | None = None
        self._reveal: int | None = None
        self._gates: dict[tuple[object, ...], bool] = {}
        #: my own lines (case-folded), refused ones included; the ledger has what I heard
        self._said: set[str] = set()
        self._den_heard: AbstractSet[str] = NOTHING_HEARD  # the ledger's, once I am mafia
        self._topics: set[tuple[object, ...]] = set()
        self._day = 0
        self._last_day_elim: tuple[int, str, tuple[int, ...], int] | None = None
        self._night_victim: tuple[int, str] | None = None
        self._night_none = False
        self._doctor_in_play = False
        self._detective_in_play = False
        self._last_protect: int | None = None
        self._night_act_target: int | None = None
        #: the last night target and what it was worked out from (see ``_night_target``)
        self._night_memo: tuple[tuple[object, ...], int | None] | None = None
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
        #: the chat of the room I talk in this phase (the ledger's; my own empty one when
        #: I hear nothing, a town seat at night)
        self._chat = Room(self._start)
        #: this phase's votes in the room where I vote, and their count: the ledger's, which
        #: takes each vote once for the table (set at each phase's start; none before)
        self._votes_now: dict[int, int | None] = {}
        self._tally_now: Counter[int] = Counter()
        self._reset_phase()
        self._acted = False
        self._act_at: datetime | None = None
        self._act_errors = 0
        self._act_banned: set[int] = set()
        self._dirty = True
        #: only whom my first vote is for may have changed (a vote moved the tally): the plan
        #: stands, its vote's target is worked out again when it is wanted (see ``plan``)
        self._retarget = False
        self._best: Intent | None = None
        #: intents handed out in the current phase; outcomes of older ones arrive late
        self._issued: list[Intent] = []
        self._issued_ids: set[int] = set()  # id()s of ``_issued`` (kept alive by the list)
        #: the heuristics a speech view hands on, bound once (not once per line composed)
        self._bound_day_target = self._day_target
        self._bound_day_choice = self._day_choice
        self._bound_night_target = self._night_target
        self._bound_my_scores = self._my_scores
        self._bound_scores = self._scores

    def _resolve_partners(self) -> None:
        if not self._partner_names:  # (town, or a lone mafia: nobody to look for; one
            self._partners = _NO_PARTNERS  # object, so the facts that depend on it stand)
            return
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
        #: by day: this seat's rate of lines per minute drawn for the phase
        self._rate = 0.0
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
        exe = self._exe_target
        if exe is not None and exe in self._alive and exe not in self._vote_banned:
            return exe  # an executioner votes its target
        if self._role == "jester":  # courts suspicion: votes out the town's most trusted
            scores = self._scores("suspicion")
            cands = [s for s in scores if s not in self._vote_banned]
            return min(cands, key=scores.__getitem__) if cands else None
        return day_target(self._my_scores(), self._tally_now, self._vote_banned, mafia=self._mafia)

    def _night_target(self) -> int | None:
        """The kill (see :func:`~agent.baseline.targets.night_target`), kept until what it
        depends on changes (asked for every den line composed and every re-plan at night)."""
        # (who is alive: a count, as players only leave; the votes: this phase's, and how
        # many seen; the scores: their version and rescores; refusals: a count, per phase)
        key = (
            len(self._alive), self._seq, self._votes_seen, len(self._vote_banned),
            self._first_prop, self._version, len(self._rescore), self._partners,
        )  # fmt: skip
        hit = self._night_memo
        if hit is not None and hit[0] == key:
            return hit[1]
        target = night_target(
            self._others_now, self._vote_banned, self._partners, self._votes_now,
            self._first_prop, self._danger_scores,
        )  # fmt: skip
        self._night_memo = (key, target)
        return target

    def _danger_scores(self) -> dict[int, float]:
        return self._scores("danger")

    def speech_view(self) -> SpeechView:
        """What `agent.baseline.speech` reads of this seat now (positional, in the view's
        field order: a keyword call costs several times more, once per line composed)."""
        # (tuple.__new__, as the named tuple's own __new__ does, minus that call)
        return _tuple_new(SpeechView, (
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
            self._bound_day_target,  # day_target
            self._bound_day_choice,  # day_choice
            self._bound_night_target,  # night_target
            self._bound_my_scores,  # my_scores
            self._bound_scores,  # scores
        ))  # fmt: skip

    def _margin(self) -> float:
        return min(self.timing.margin, 0.1 * self._seconds)

    def _in_window(self, window: tuple[float, float]) -> datetime:
        lo, hi = window
        latest = self._seconds - self._margin()
        offset = min((lo + (hi - lo) * self._rng.random()) * self._seconds, latest)
        return self._start + timedelta(0, max(offset, 0.0))

    def _latest(self) -> datetime:
        return self._deadline - timedelta(0, self._margin())
