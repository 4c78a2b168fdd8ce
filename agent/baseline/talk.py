"""When the baseline speaks, and which line: its lines planned on people's timing.

By day a seat draws how many lines it will say and when the first comes
(:func:`plan_day_talk`), then one of people's own gaps after each (:func:`after_own_line`); a
question or accusation put to it by name is answered within a person's latency
(:func:`asked_by`). At night, in the den, it speaks in bursts while below its share of the
chat and waits or keeps quiet above it. The words come from :func:`agent.baseline.speech.compose`
over the seat's view; a draft gone stale (someone said it, the count moved) is written again.
Every function works on the seat's :class:`~agent.baseline.seat.SeatState`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import cast

from agent.base import Intent
from agent.baseline.common import (
    _NO_VOTE,
    _VOTE_K,
    Option,
    say_at,
    span,
)
from agent.baseline.seat import SeatState
from agent.baseline.speech import compose
from agent.baseline.timing import ANSWER_S, FIRST_LINE_S, OWN_GAP_S, draw, poisson

__all__ = [
    "after_own_line",
    "asked_by",
    "below_share",
    "done_say",
    "draft",
    "extend_day_talk",
    "on_other_line",
    "pause",
    "plan_day_talk",
    "plan_speak",
    "plan_stage",
    "redraft",
    "redraw_from",
    "spoke",
    "typing_time",
    "wait",
]


_ONE_S = timedelta(0, 1.0)


def _normal(rng: Callable[[], float]) -> float:
    """A standard normal draw (Box-Muller) from ``rng``'s uniform draws."""
    return math.sqrt(-2.0 * math.log(1.0 - rng())) * math.cos(2.0 * math.pi * rng())


def below_share(p: SeatState) -> bool:
    # share < 1/N, without dividing: mine * N < total
    chat = p._chat
    total = chat.total
    return total == 0 or chat.msgs.get(p.seat, 0) * p._room < total


def pause(p: SeatState, mode: str) -> float:
    """Seconds before starting a line: short below one's share of the chat, long above."""
    lo, hi = p.timing.short_delay if mode == "short" else p.timing.long_delay
    return (lo + (hi - lo) * p._rng.random()) / p._chatty


def typing_time(p: SeatState, words: int) -> float:
    """Seconds to type a line of ``words`` words."""
    return words * (p.timing.seconds_per_word * (0.8 + (1.25 - 0.8) * p._rng.random()))


def wait(p: SeatState, mode: str, words: int) -> timedelta:
    """The pause, then the typing of a line of ``words`` words (one timedelta: they are
    cheap to add as floats and costly to build)."""
    return timedelta(0, pause(p, mode) + typing_time(p, words))


def plan_day_talk(p: SeatState, start: datetime, seconds: float, vote: bool) -> None:
    """How much this seat will say this phase and when it starts, drawn like people.

    A discussion: a count around ``day_rate`` per minute (log-normal spread), the first
    line after people's first-line delay (scaled to the discussion's length). A vote: now
    and then one early word; otherwise silence until the result, as people fall silent
    once they have voted."""
    timing, rng = p.timing, p._rng.random
    if vote:
        p._budget = 1 if rng() < timing.vote_talk * p._chatty else 0
        early = max(seconds * timing.vote_talk_window, 1.0)
        p._next_at = start + timedelta(0, 1.0 + (early - 1.0) * rng())
        return
    scale = min(1.0, seconds / timing.people_day_s)
    spread = timing.rate_spread
    mood = math.exp(spread * _normal(rng) - spread * spread / 2)  # (mean 1)
    p._rate = timing.day_rate * p._chatty * mood
    mean = p._rate * seconds / 60.0
    p._budget = poisson(mean, p._rng)
    if p._budget == 0 and rng() >= timing.silent_day:
        p._budget = 1  # people seldom say nothing at all in a day
    p._next_at = start + timedelta(0, draw(FIRST_LINE_S, rng()) * scale)


def extend_day_talk(p: SeatState, seconds: float, t: datetime | None = None) -> None:
    """The discussion was given ``seconds`` more (the platform's input was down; the
    seat's phase already counts them) at ``t``: more to say, at the rate drawn for this day,
    and a cap to match, as people, who go on talking through the time given back. Without it
    a seat that had said its day's share before an outage (a restart) keeps quiet after it.

    Whatever came due while the input was down (a line, the moment of the next one, an
    answer) is drawn again from ``t``: a person's gap, an answer's latency, as after a line
    of their own. Fired at once, every seat's overdue line came out together just after the
    catch-up (a burst people do not make: their lines of the outage came with the backlog)."""
    before = p._seconds - seconds
    if seconds <= 0 or before <= 0:
        return
    p._budget += poisson(p._rate * seconds / 60.0, p._rng)
    p._lines_cap = max(p._lines_cap, round(p._lines_cap * p._seconds / before))
    if t is not None:
        redraw_from(p, t)


def redraw_from(p: SeatState, t: datetime) -> None:
    """Plans that came due before ``t`` (the input back) start again from ``t``."""
    scale = max(min(1.0, p._seconds / p.timing.people_day_s), 0.5)
    gap = t + timedelta(0, draw(OWN_GAP_S, p._rng.random()) * scale)
    speak = p._speak
    if speak is not None and speak.at < gap:
        p._speak = None  # written again when it is due: the talk went on meanwhile
        p._hears = False
    if p._next_at is None or p._next_at < gap:
        p._next_at = gap
    if p._answer_at is not None and p._answer_at < t:
        p._answer_at = t + timedelta(0, draw(ANSWER_S, p._rng.random()))
    if p._speak_off == "no-time":
        p._speak_off = None  # there is time again


def after_own_line(p: SeatState, t: datetime) -> None:
    """The next line is due one of people's own-message gaps after this one."""
    scale = min(1.0, p._seconds / p.timing.people_day_s) if not p._voting else 1.0
    p._next_at = t + timedelta(0, draw(OWN_GAP_S, p._rng.random()) * max(scale, 0.5))


def asked_by(p: SeatState, s: int, t: datetime) -> None:
    """``s`` put a question to me by name: answer within a person's latency, unless the
    vote is well under way (the lull before its result)."""
    at = t + timedelta(0, draw(ANSWER_S, p._rng.random()))
    if p._kind is _VOTE_K and at >= p._start + span(p.timing.answer_until * p._seconds):
        return
    p._answer_from = s
    p._asked = p._ledger.asked
    p._answer_at = at
    speak = p._speak
    if speak is not None:
        p._restale = True  # whatever I was typing, the answer comes first
        if at < speak.at:
            p._speak = say_at(at, speak.text)
    elif p._speak_off is not None and p._speak_off != "refused":
        p._speak_off = None
    p._dirty = True


def spoke(p: SeatState, t: datetime) -> None:
    """A line of mine was said on the stage at ``t``: a pending answer is given, and the
    next line is due one of people's gaps later."""
    if p._answer_at is not None and t >= p._answer_at:
        p._extra += 1
        p._answer_from = p._answer_at = None
    after_own_line(p, t)


def on_other_line(p: SeatState, t: datetime) -> bool:
    """Someone else spoke: if that puts us below our share, speak up sooner."""
    speak = p._speak
    if speak is None:
        if p._speak_off != "skip" or not below_share(p):
            return False
        p._speak_off = None
        p._hears = False
        return True
    if p._speak_mode != "long" or not below_share(p):
        return False
    at = t + wait(p, "short", p._speak_words)
    p._speak_mode = "short"
    p._hears = False
    if at < speak.at:
        p._speak = say_at(at, speak.text)
        return True
    return False


def plan_stage(p: SeatState, now: datetime) -> Intent | None:
    """Day talk on people's timing (see :func:`plan_day_talk`); answers come first."""
    speak = p._speak
    if speak is not None:
        return redraft(p, now, speak)
    p._restale = False
    if p._speak_off is not None:
        return None
    answering = p._answer_from is not None or (
        p._accused_me and p._extra < 2 and p._answer_at is not None
    )
    if not answering and (p._budget_used >= p._budget or p._lines >= p._lines_cap):
        return None
    due = p._answer_at if answering else p._next_at
    if due is None:
        return None
    line = _compose(p, now)
    if line is None:
        return None
    text, opt, words = line
    # nobody types a line in no time: at least half a person's typing of it from now
    at = now + span(0.5 * words * p.timing.seconds_per_word)
    if not at > due:  # (max(due, at): due, unless at is later)
        at = due
    if p._kind is _VOTE_K and not answering:
        # a word early in the vote, or none: then the lull before its result
        early = p.timing.vote_talk_window * p._seconds + 2.0
        if at > p._start + span(early):
            p._speak_off = "no-time"
            return None
    if at >= p._deadline - _ONE_S:
        p._speak_off = "no-time"
        return None
    speak = draft(p, at, text, opt, words)
    p._hears = False
    return speak


def _compose(p: SeatState, now: datetime) -> tuple[str, Option, int] | None:
    """A line for now, its situation and its words; None (and nothing more to say this
    phase, until something changes) when there is nothing to say."""
    composed = compose(p.speech_view(), now)
    if composed is None:
        p._speak_off = "no-text"
        return None
    text, opt = composed
    return text, opt, len(text.split())


def draft(p: SeatState, at: datetime, text: str, opt: Option, words: int = -1) -> Intent:
    """Plan ``text`` for ``at`` (the line of situation ``opt``; ``words``: its words, when
    counted already)."""
    p._speak = speak = say_at(at, text)
    p._speak_words = words if words >= 0 else len(text.split())
    p._speak_folded = text.casefold()
    p._speak_topic = opt[3]
    return speak


def redraft(p: SeatState, now: datetime, speak: Intent) -> Intent | None:
    """The planned line, written again if it went stale (someone said it, the count
    moved): same moment, later by the typing of any extra words."""
    if p._restale:
        p._restale = False
        composed = compose(p.speech_view(), now)
        if composed is not None:
            text, opt = composed
            words = len(text.split())
            at = speak.at
            if words > p._speak_words:  # a longer line takes longer to type
                extra = (words - p._speak_words) * p.timing.seconds_per_word
                at += span(extra)
                if at >= p._deadline:
                    p._speak = None
                    p._speak_off = "no-time"
                    p._hears = False
                    return None
            speak = draft(p, at, text, opt, words)
    return speak


def plan_speak(p: SeatState, now: datetime) -> Intent | None:
    if p._place == "stage":
        return plan_stage(p, now)
    speak = p._speak
    if speak is not None:
        return redraft(p, now, speak)
    p._restale = False
    if p._speak_off is not None or p._lines >= p._lines_cap:
        return None
    # (below_share, pause and typing_time inlined, the same expressions: the same floats)
    chat = p._chat
    total = chat.total
    below = total == 0 or chat.msgs.get(p.seat, 0) * p._room < total
    rng = p._rng.random
    timing = p.timing
    if not below and rng() < timing.skip_when_loud:
        p._speak_off = "skip"
        p._hears = True
        return None
    mode = p._speak_mode = "short" if below else "long"
    last_t, start = chat.last_t, p._start
    base = now if now >= last_t and now >= start else max(now, last_t, start)
    # the pause is drawn before the line is composed (the same draws as wait, in another
    # order: the same odds), so a line that could not even start in time is not composed
    lo, hi = timing.short_delay if below else timing.long_delay
    pause = (lo + (hi - lo) * rng()) / p._chatty
    deadline = p._deadline
    if base + timedelta(0, pause) >= deadline:
        p._speak_off = "no-time"
        return None
    line = _compose(p, now)
    if line is None:
        return None
    text, opt, words = line
    typing = words * (timing.seconds_per_word * (0.8 + (1.25 - 0.8) * rng()))
    at = base + timedelta(0, pause + typing)
    if at >= deadline:
        p._speak_off = "no-time"
        return None
    speak = draft(p, at, text, opt, words)
    p._hears = mode == "long"
    return speak


def done_say(p: SeatState, intent: Intent, error: str | None, heard_back: bool) -> None:
    """A line of mine came out (``error`` None: said; ``heard_back``: it came back as an
    event first, and was counted then) or was refused: twice refused, I stop talking."""
    if p._speak is not None and p._speak.text == intent.text:
        p._speak = None
    if error is None:
        if not heard_back:
            p._lines += 1
            p._budget_used += 1
            if p._place == "stage":
                spoke(p, intent.at)
        topic = p._speak_topic
        if topic is not None:
            p._topics.add(topic)
            if topic[0] == "defend":
                p._accused_me.clear()
            elif topic[0] == "vote_state" and p._voted == _NO_VOTE:
                p._promised = cast(int, topic[1])
        p._speak_topic = None
    else:
        p._say_errors += 1
        if p._say_errors >= 2:
            p._speak_off = "refused"
    speak_off, speak = p._speak_off, p._speak
    p._hears = speak_off == "skip" if speak is None else p._speak_mode == "long"
