"""Chat lines for the offline baseline, grouped by the situation they answer.

The style copies the human players of the LLMafia games: short, casual, mostly lowercase,
names as typed. Every line that points at a player puts that player's name first and carries
one of the words :data:`ACCUSE_WORDS` recognises, so baseline players read each other's
accusations the same way they read a human's. Defences use :data:`DEFEND_WORDS` and no
accusing word.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import NamedTuple

#: words that make a line naming a player an accusation of the first player named
ACCUSE_WORDS = re.compile(
    r"\b(sus|suspicious|mafia|vote|voting|lying|liar|shady|fishy|sketchy|kill|guilty|"
    r"off|weird|lynch|push)\b",
    re.IGNORECASE,
)
#: words that make a line naming a player a defence (when no accusing word is present)
DEFEND_WORDS = re.compile(
    r"\b(clean|innocent|trust|fine|safe|cleared|not mafia|town)\b", re.IGNORECASE
)
DETECTIVE_WORD = re.compile(r"\bdetective\b", re.IGNORECASE)
#: the one pattern that reads "X is mafia" as a claim of a result, not an opinion
IS_MAFIA = re.compile(r"\b(is|they're|theyre|are)\s+mafia\b", re.IGNORECASE)


TEMPLATES: dict[str, tuple[str, ...]] = {
    "greet": (
        "hi all",
        "hey everyone",
        "hello",
        "hi! good luck everyone",
        "ok let's find them",
        "hey. who's mafia lol",
        "hi, let's do this",
        "good luck all",
        "helloo",
        "ok here we go",
        "hi guys",
        "let's get started i guess",
    ),
    "open": (
        "no info yet, just vibes",
        "anyone got a read yet?",
        "ok who's acting weird so far",
        "hard to say anything on day 1",
        "let's hear from everyone first",
        "so how do we start",
        "idk yet, watching",
        "first impressions anyone?",
        "someone say something suspicious pls",
        "i'm a bystander btw, for what it's worth",
    ),
    "ask": (
        "{x} what do you think?",
        "{x} who's your top suspect?",
        "{x} thoughts?",
        "{x} who are you looking at?",
        "what about you {x}",
        "{x} what's your read",
        "{x} anything to add?",
        "{x} who would you pick",
    ),
    "quiet": (
        "{x} hasn't said a word",
        "{x} is awfully quiet",
        "why is {x} so quiet",
        "{x} u there?",
        "{x} is hiding a bit, kinda sus",
        "{x} you're quiet today. weird",
        "not hearing much from {x}",
        "{x} say something",
    ),
    "accuse": (
        "i think it's {x}",
        "{x} is sus",
        "{x} feels off to me",
        "something about {x} is fishy",
        "{x} is acting weird",
        "pretty sure {x} is mafia",
        "{x} is dodging everything. sus",
        "{x} is the one imo, vote them",
        "my money's on {x} being mafia",
        "{x} seems sketchy",
        "honestly {x} is my top suspect, sus",
        "{x}... kinda sus ngl",
        "{x} is mafia, calling it",
        "i don't buy {x} at all. sus",
    ),
    "accuse_vote": (
        "{x} voted {v} and {v} was a {r}. sus",
        "{x} pushed {v} out and {v} was a {r}. that's shady",
        "{x} was on {v} yesterday and we lost a {r}. sus",
        "{x} voting {v} yesterday looks really bad now",
        "remember {x} voted {v}. fishy",
    ),
    "accuse_accused": (
        "{x} was all over {v} and {v} turned out a {r}. sus",
        "{x} kept pointing at {v}, who was a {r}. shady",
        "{x} went after {v} hard and {v} wasn't mafia. weird",
    ),
    "accuse_loud": (
        "{x} is talking a lot and saying nothing, sus",
        "{x} is way too eager. sus",
        "{x} is pushing hard on everyone, weird",
    ),
    "accuse_me": (
        "{x} came at me for no reason, sus",
        "{x} keeps pushing on me. that's what mafia does",
        "{x} why push me so hard? sus",
    ),
    "agree": (
        "{x} is sus, agree with {a}",
        "{x} yeah, {a} has a point. sus",
        "{x} is weird, with {a} on this",
        "{x} for me too, {a} is right. vote",
        "{x} is sketchy, same as {a} said",
    ),
    "defend": (
        "why me? i'm just a bystander",
        "lol no, not me",
        "i'm not mafia, relax",
        "what did i even do",
        "wait why me",
        "not me, i'm town",
        "me?? no",
    ),
    "defend_back": (
        "{a} you're just throwing names around. sus",
        "{a} why push me? that's mafia behaviour",
        "{a} is deflecting, i'm not mafia",
        "{a} is pushing me to save themselves, sus",
        "{a} that's a weird push, vote {a} instead",
    ),
    "night_kill": (
        "rip {v}",
        "{v} was {role}, damn",
        "they got {v}... {v} was {role}",
        "why {v} though",
        "ugh, {v} was {role}",
        "so {v} is gone. {role}",
        "rip {v}, they were {role}",
        "poor {v}",
    ),
    "night_kill_reason": (
        "rip {v}. {v} was onto {x} yesterday, just saying. sus",
        "{x} is sus, {v} was suspecting them and now {v} is dead",
        "they killed {v} right after {v} went after {x}. fishy",
    ),
    "night_none": (
        "no kill last night, nice",
        "quiet night huh",
        "nobody died, lucky us",
        "wait nobody died?",
    ),
    # (only when a doctor is in play: a "doc" in a game without one is a bluff nobody makes)
    "night_saved": (
        "nobody died? doc must've saved someone",
        "no kill? nice save doc",
        "doc came through last night",
    ),
    "elim_bystander": (
        "{v} was a {r}... {voters} voted for that",
        "we got {v} wrong. {voters} pushed it",
        "{v} was innocent. {voters}, explain?",
        "so {v} was a {r}. {voters} voted {v}. hmm",
    ),
    "elim_bystander_plain": (
        "{v} was a {r}. we messed up",
        "ugh, {v} was innocent",
        "well {v} wasn't mafia",
        "damn, wrong call on {v}",
    ),
    "elim_mafia": (
        "{v} was mafia! nice",
        "got one, {v} was mafia",
        "one down. good call on {v}",
        "{v} was mafia, told you",
        "nice, {v}. one more to go?",
        "{v} mafia, good job everyone",
    ),
    "day_count": (
        "day {n}, {alive} of us left",
        "ok day {n}. we need to get this right",
        "{alive} left. can't afford a miss",
        "day {n}. let's think before voting",
        "only {alive} of us now",
    ),
    "vote_state": (
        "voting {x}",
        "i'm voting {x}",
        "my vote is {x}",
        "{x} gets my vote",
        "going with {x}, sus",
        "{x} for me, vote",
        "{x}. final vote",
    ),
    "tally": (
        "{tally} so far",
        "{tally} right now",
        "tally is {tally}",
        "{tally}. anyone changing?",
        "ok {tally}",
    ),
    "vote_change": (
        "ok switching to {x}, vote",
        "changing my vote to {x}",
        "fine, vote {x}",
        "i'll go {x} too, vote",
    ),
    "late": (
        "running out of time, who are we voting",
        "ok we need to decide",
        "clock's ticking guys",
        "let's pick someone",
    ),
    "det_mafia": (
        "ok i'm the detective. checked {x}, {x} is mafia",
        "detective here. {x} is mafia, vote them",
        "i'm the detective and {x} is mafia. trust me",
        "claiming detective: {x} is mafia",
    ),
    "det_clean": (
        "i'm the detective. {x} is clean, leave them",
        "detective here, checked {x}, clean",
        "{x} is not mafia, i'm the detective",
    ),
    "filler": (
        "hmm",
        "idk",
        "thinking",
        "this is hard",
        "hmm ok",
        "lol",
        "wait what",
        "interesting",
    ),
    "den_propose": (
        "lets get {x}",
        "{x} tonight?",
        "i say we kill {x}",
        "{x} is getting too close, kill them",
        "kill {x}?",
        "how about {x}",
    ),
    "den_propose_reason": (
        "{x} was pushing on {p} today, let's take them out",
        "{x} suspects {p}, kill {x}",
        "{x} is onto {p}. get {x} tonight",
    ),
    "den_propose_claim": (
        "{x} claimed detective. has to be {x} tonight",
        "kill {x}, the detective claim is dangerous",
        "{x} says detective. get rid of them",
    ),
    "den_agree": (
        "ok {x}",
        "yeah {x}",
        "fine by me, {x}",
        "agreed, {x}",
        "{x} works",
    ),
    "den_plan": (
        "tomorrow let's push {x}",
        "we both go for {x} tomorrow",
        "let's pin it on {x}",
        "blame {x} tomorrow",
    ),
    "den_small": (
        "careful tomorrow",
        "act normal lol",
        "so far so good",
        "don't defend each other too much",
        "gg so far",
    ),
}

#: small changes that make a line new when its plain form was already used
PREFIXES: tuple[str, ...] = ("", "ok ", "hm ", "honestly ", "ngl ", "so ")
SUFFIXES: tuple[str, ...] = ("", " tbh", "...", " honestly", " lol", " imo")


class Reading(NamedTuple):
    """What a chat line says about the players it names (a tuple: one is built per line)."""

    #: seats named, in order of first appearance
    named: tuple[int, ...]
    accuses: bool
    defends: bool
    #: "mafia" or "clean" when the line claims a detective result about the first named
    claim: str | None
    #: the line case-folded, to compare lines
    folded: str
    #: it names someone and accuses or claims: what a listener has to weigh
    pointed: bool = False


class Lexicon:
    """Reads chat lines for one table of names. Shared by every seat at the table (see
    :func:`lexicon`), so each line is read once however many players hear it."""

    _LIMIT = 4096

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self._seats = {n.casefold(): i for i, n in enumerate(names)}
        self._ascii_seats = {k.encode(): i for k, i in self._seats.items() if k.isascii()}
        self._memo: dict[str, Reading] = {}
        #: the lines read so far (read only): a hot caller's hit costs a lookup, not a call
        self.readings: Mapping[str, Reading] = self._memo
        # one-word names (the usual case) are found by splitting into words, which is far
        # cheaper than compiling a pattern per table; other names need the pattern
        self._pattern: re.Pattern[str] | None = None
        if not all(_WORD.fullmatch(n) for n in names):
            ordered = sorted(names, key=len, reverse=True)
            alternation = "|".join(re.escape(n) for n in ordered)
            self._pattern = re.compile(r"(?<![\w])(" + alternation + r")(?![\w])", re.I)

    def _named(self, text: str) -> list[int]:
        named: list[int] = []
        seats = self._seats
        if self._pattern is None:
            for word in _WORDS.findall(text.casefold()):
                seat = seats.get(word)
                if seat is not None and seat not in named:
                    named.append(seat)
            return named
        for m in self._pattern.finditer(text):
            seat = seats.get(m.group(1).casefold())
            if seat is not None and seat not in named:
                named.append(seat)
        return named

    def read(self, text: str) -> Reading:
        """Names, accusation, defence and detective claims in ``text``."""
        hit = self._memo.get(text)
        if hit is not None:
            return hit
        folded = text.casefold()
        if self._pattern is None and text.isascii():
            # the usual line: one split into words answers every question (the patterns are
            # all whole words, so on ASCII this finds exactly what they would)
            words = folded.encode().translate(_NON_WORD_TO_SPACE).split()
            named: list[int] = []
            seats = self._ascii_seats
            for word in words:
                seat = seats.get(word)
                if seat is not None and seat not in named:
                    named.append(seat)
            accuses = not _ACCUSE_SET.isdisjoint(words)
            # ("not mafia" holds an accusing word, so a defence is one of the single words)
            defends = not accuses and not _DEFEND_SET.isdisjoint(words)
            detective = bool(named) and b"detective" in words
        else:
            named = self._named(text)
            accuses = bool(ACCUSE_WORDS.search(text))
            defends = not accuses and bool(DEFEND_WORDS.search(text))
            detective = bool(named) and bool(DETECTIVE_WORD.search(text))
        claim: str | None = None
        if detective:
            if IS_MAFIA.search(text):
                claim = "mafia"
            elif defends or _CLEAN.search(text):
                claim = "clean"
        pointed = bool(named) and (accuses or claim is not None)
        reading = _new_reading(Reading, (tuple(named), accuses, defends, claim, folded, pointed))
        if len(self._memo) >= self._LIMIT:
            self._memo.clear()
        self._memo[text] = reading
        return reading


_WORD = re.compile(r"\w+")
_new_reading = tuple.__new__  # Reading(...) without the namedtuple's Python-level __new__
_WORDS = re.compile(r"\w+")
_CLEAN = re.compile(r"\b(clean|not mafia)\b", re.IGNORECASE)
# The fast path of Lexicon.read, for ASCII lines: bytes.translate turns every non-word byte
# into a space and split() then gives what re.findall(r"\w+") would, several times faster.
# The sets are ACCUSE_WORDS and DEFEND_WORDS word by word: keep them in step.
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_NON_WORD_TO_SPACE = bytes(c if c in _WORD_BYTES else 32 for c in range(256))
_ACCUSE_SET = frozenset(
    b"sus suspicious mafia vote voting lying liar shady fishy sketchy kill guilty off weird "
    b"lynch push".split()
)
_DEFEND_SET = frozenset(b"clean innocent trust fine safe cleared town".split())


@lru_cache(maxsize=64)
def lexicon(names: tuple[str, ...]) -> Lexicon:
    return Lexicon(names)


def read_line(text: str, names: tuple[str, ...]) -> Reading:
    """Read one line against a table of names (see :class:`Lexicon`)."""
    return lexicon(names).read(text)
