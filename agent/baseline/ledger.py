"""The table ledger: what the seats at one table hear, recorded once for all of them."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Set
from datetime import datetime

from agent.baseline.common import _DAY, _NO_VOTE, _VOTE
from agent.templates import Lexicon, Reading, lexicon
from games.events import (
    ChoicesOffered,
    Event,
    GameStarted,
    MessageAccepted,
    PhaseEnded,
    PhaseStarted,
    PlayerEliminated,
    RoleAssigned,
    VoteCast,
    VoteResolved,
)

__all__ = ["Room", "TableLedger", "addressed"]


class Room:
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
    talks how much, who accused whom, detective claims, the current phase's chat and votes,
    and the day votes so far. By default every policy has a ledger of its own and feeds it the
    events it sees. A simulation
    that runs every seat of a game in one process may give all of them one ledger and
    :meth:`take` each event into it, once and in order, before handing the event to any policy
    (:func:`agent.fastsim.simulate_fast` does): the record is then read, not rebuilt, eight
    times over. That changes nothing a seat decides, because a seat that is still playing has
    heard every stage line and day vote so far, a living mafia every den line and night vote,
    and a town seat never looks at the den's record; what differs between seats (scores,
    plans, reactions) stays in each policy.
    """

    __slots__ = (
        "accused_by",
        "addressee",
        "alive",
        "asked",
        "claimed",
        "claims",
        "den",
        "den_heard",
        "den_tally",
        "den_votes",
        "heard",
        "lex",
        "phase_accusers",
        "reading",
        "readings",
        "seat_of",
        "seq",
        "stage",
        "talk",
        "talk_seen",
        "tally",
        "target",
        "times",
        "voted_by",
        "voters",
        "votes",
        "yesterday",
    )

    def __init__(self) -> None:
        self.lex: Lexicon | None = None
        self.readings: Mapping[str, Reading] = {}  # the lexicon's memo, read without a call
        self.alive: set[int] = set()
        self.seq = 0
        self.stage = Room(datetime.min)
        self.den = Room(datetime.min)
        #: the current phase's votes (voter -> target, None an abstention, in the order first
        #: cast) and their count by target: on the stage, and in the den. Every seat that sees
        #: the room's votes reads these, so each vote is counted once for the table.
        self.votes: dict[int, int | None] = {}
        self.tally: Counter[int] = Counter()
        self.den_votes: dict[int, int | None] = {}
        self.den_tally: Counter[int] = Counter()
        #: the last day vote's votes (as they stood at its end), and over the game:
        #: voter -> target -> day votes
        self.yesterday: dict[int, int | None] = {}
        self.voted_by: dict[int, dict[int, int]] = {}
        #: who voted for the player the last elimination took out, in seat order (after an
        #: elimination by the day vote)
        self.voters: tuple[int, ...] = ()
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
        #: the last stage line was a question put to this player by name ("rowan why do you
        #: think quinn is mafia?"), and its text: it accuses nobody, it asks for an answer
        self.addressee: int | None = None
        self.asked = ""
        self.seat_of: dict[str, int] = {}

    def take(self, event: Event) -> None:
        """Record one event (events that carry no talk are ignored)."""
        # (isinstance, not type() and a cast: typing.cast is a Python call; lines first, and
        # the many events without talk in them let through at one set lookup)
        if isinstance(event, MessageAccepted):
            self._message(event)
        elif type(event) is VoteCast:
            if event.phase_seq == self.seq:
                self._vote(event)
        elif type(event) in _SILENT:
            return
        elif isinstance(event, PhaseStarted):
            self.seq = event.seq
            self.stage = Room(event.t)
            self.den = Room(event.t)
            self.votes, self.tally = {}, Counter()
            self.den_votes, self.den_tally = {}, Counter()
            self.phase_accusers = {}
            if event.phase == _DAY:
                self.talk_seen = dict(self.talk)
        elif isinstance(event, PlayerEliminated):
            self.alive.discard(event.seat)
            if event.cause == "vote":
                out = event.seat
                self.voters = tuple([v for v, t in sorted(self.yesterday.items()) if t == out])
        elif isinstance(event, PhaseEnded):
            if event.phase == _VOTE:
                self.yesterday = dict(self.votes)
                voted_by = self.voted_by
                for voter, target in self.votes.items():
                    if target is not None:
                        counts = voted_by.get(voter)
                        if counts is None:
                            counts = voted_by[voter] = {}
                        counts[target] = counts.get(target, 0) + 1
        elif isinstance(event, GameStarted):
            players = tuple(event.players)
            self.lex = lexicon(players)
            self.readings = self.lex.readings
            self.alive = set(range(len(players)))
            self.seat_of = {n.casefold(): i for i, n in enumerate(players)}

    def _vote(self, event: VoteCast) -> None:
        votes, tally = (self.den_votes, self.den_tally) if event.night else (self.votes, self.tally)
        voter = event.voter
        old = votes.get(voter, _NO_VOTE)
        if old is not None and old != _NO_VOTE:
            left = tally[old] - 1
            if left > 0:
                tally[old] = left
            else:
                del tally[old]
        target = event.target
        if target is not None:
            tally[target] = tally.get(target, 0) + 1
        votes[voter] = target

    def _message(self, event: MessageAccepted) -> None:
        self.reading = None
        self.target = None
        self.claimed = False
        self.addressee = None
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
        if reading.named and self.seat_of:
            asked = self.addressee = addressed(text, s, self.seat_of, self.alive)
            if asked is not None:
                self.asked = text
                return  # a question put to someone accuses nobody, not even its addressee
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


#: events the ledger has nothing to take from (the hot one: a seat's choices)
_SILENT = frozenset([ChoicesOffered, RoleAssigned, VoteResolved])
_WORDS = re.compile(r"[\w']+")
#: for ASCII text, _WORDS.findall's words at a fraction of its cost: every byte that is not a
#: word character (or an apostrophe) becomes a space, then a split (\w on ASCII is [A-Za-z0-9_])
_NOT_IN_WORD = bytes(
    c if chr(c).isascii() and (chr(c).isalnum() or chr(c) in "_'") else 32 for c in range(256)
)
#: after a name, these make the line a question put to that player ("drew why...")
_ASKING = frozenset(
    [
        "why",
        "who",
        "what",
        "whats",
        "how",
        "hows",
        "do",
        "did",
        "does",
        "can",
        "could",
        "would",
        "where",
        "when",
        "which",
        "wdym",
        "thoughts",
        "are",
        "r",
    ]
)
_YOU = frozenset(["you", "u", "your", "ur"])


def addressed(text: str, speaker: int, seat_of: Mapping[str, int], alive: Set[int]) -> int | None:
    """The living player a question is put to by name, first or last ("rowan why do you think
    quinn is mafia?", "what do you think rowan?"), or None: not a question, or not to anyone.
    "drew is mafia?" asks nobody anything: it is an accusation put as a question."""
    folded = text.casefold()
    if folded.isascii():  # (the usual line: the words _WORDS finds, found faster)
        words = folded.encode().translate(_NOT_IN_WORD).decode().split()
    else:
        words = _WORDS.findall(folded)
    if len(words) < 2:
        return None
    who = seat_of.get(words[0])
    if who is not None:
        rest = words[1:]
        if rest[0] not in _ASKING and _YOU.isdisjoint(rest):
            return None
    else:
        who = seat_of.get(words[-1])
        if who is None:
            return None
        rest = words[:-1]
        if rest[0] not in _ASKING and _YOU.isdisjoint(rest):
            return None
    if who == speaker or who not in alive:
        return None
    if "?" not in text and rest[0] not in _ASKING:
        return None
    return who
