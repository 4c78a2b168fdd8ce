"""How a baseline seat takes in events: one handler per event type (:data:`HANDLERS`), each
updating the seat's :class:`~agent.baseline.seat.SeatState` and marking its plan dirty when
something it planned may change. The ledger has already recorded the event (once for the whole
table, or by the seat's own ``observe``); here is only how this seat reacts to it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import cast

from agent.baseline.common import (
    _DAY_K,
    _NEVER,
    _NIGHT_K,
    _NIGHT_VOTE,
    _NIGHT_VOTE_K,
    _NO_VOTE,
    _PHASE_KINDS,
    _VOTE,
    _VOTE_K,
    MAFIA_ROLES,
    say_at,
    span,
)
from agent.baseline.ledger import Room
from agent.baseline.seat import NOTHING_HEARD, SeatState
from agent.baseline.talk import (
    asked_by,
    extend_day_talk,
    on_other_line,
    plan_day_talk,
    spoke,
    wait,
)
from agent.baseline.voting import maybe_bandwagon, maybe_follow_partner
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
    PrivateNote,
    RoleAssigned,
    VoteCast,
)
from games.roles import get_role
from games.state import PhaseKind

__all__ = ["HANDLERS", "on_accused", "on_stage_line"]


def on_game_started(p: SeatState, event: GameStarted) -> None:
    p._version += 1
    p._names = tuple(event.players)
    p._doctor_in_play = "doctor" in event.extra_roles
    p._detective_in_play = "detective" in event.extra_roles
    p._alive = set(range(len(p._names)))
    p._noise = {i: p._noise_rng.random() * 0.25 for i in p._alive}
    p._resolve_partners()
    p._phase_facts()
    p._dirty = True


def on_role(p: SeatState, event: RoleAssigned) -> None:
    p._version += 1
    if event.seat != p.seat:
        return  # (never visible to this seat anyway)
    p._role = event.role
    p._mafia = event.team == "mafia"
    uses = get_role(event.role).uses
    p._uses_left = -1 if uses is None else uses
    p._den_heard = p._ledger.den_heard if p._mafia else NOTHING_HEARD
    p._partner_names = event.partners
    p._resolve_partners()
    p._phase_facts()
    p._dirty = True


def on_phase_started(p: SeatState, event: PhaseStarted) -> None:
    kind = _PHASE_KINDS.get(event.phase) or PhaseKind(event.phase)
    old = p._kind
    new_night = kind is _NIGHT_K or (kind is _NIGHT_VOTE_K and old is not _NIGHT_K)
    keep_prop = kind is _NIGHT_VOTE_K and old is _NIGHT_K
    first_prop = p._first_prop
    # a question put to me just before the vote is still answered in it
    asked = (p._answer_from, p._answer_at, p._asked) if kind is _VOTE_K else None
    p._kind = kind
    p._seq = event.seq
    t = p._start = event.t
    p._deadline = event.deadline
    p._seconds = event.seconds
    p._reset_phase()
    p._issued = []
    p._issued_ids = set()
    p._phase_facts()
    ledger = p._ledger
    if p._night and p._mafia:  # the den's votes (a town seat sees none at night)
        p._votes_now, p._tally_now = ledger.den_votes, ledger.den_tally
    else:
        p._votes_now, p._tally_now = ledger.votes, ledger.tally
    timing = p.timing
    if kind is _DAY_K:
        p._chat = p._ledger.stage
        cap = timing.day_cap
        p._late_at = t + span(0.7 * event.seconds)
    elif kind is _VOTE_K:
        p._chat = p._ledger.stage
        cap = timing.vote_cap
        p._late_at = t + span(0.5 * event.seconds)
    else:
        p._chat = p._ledger.den if p._mafia else Room(t)
        cap = timing.den_cap
        p._late_at = _NEVER if t.tzinfo is UTC else datetime.max.replace(tzinfo=t.tzinfo)
    p._lines_cap = max(1, round(cap * p._chatty))
    if keep_prop:
        p._first_prop = first_prop
    if kind is _DAY_K:
        p._version += 1
        p._day = event.number
        rng = p._noise_rng
        p._day_noise = {i: rng.random() * 0.15 for i in p._alive}
    if kind is _DAY_K or kind is _VOTE_K:
        plan_day_talk(p, t, event.seconds, kind is _VOTE_K)
    if asked is not None and asked[0] is not None and asked[1] is not None:
        latest = t + span(p.timing.answer_until * event.seconds)
        if asked[1] < latest:
            p._answer_from, p._answer_at, p._asked = asked
    if new_night:
        p._acted = False
        p._act_at = None
        p._act_errors = 0
        p._act_banned = set()
        p._night_act_target = None
        p._night_victim = None
        p._night_none = False
    p._dirty = True


def on_phase_extended(p: SeatState, event: PhaseExtended) -> None:
    """The phase got time back (the platform's input was down): it now ends later."""
    if event.seq == p._seq:
        p._deadline = event.deadline
        p._seconds += event.seconds
        if p._kind is _DAY_K:
            extend_day_talk(p, event.seconds, event.t)
        p._dirty = True


def on_phase_ended(p: SeatState, event: PhaseEnded) -> None:
    if event.phase == _VOTE:
        p._version += 1  # (the ledger has added the vote's votes to voted_by, this seat's)
    elif event.phase == _NIGHT_VOTE:
        p._last_protect = p._night_act_target if p._acted else None
    p._dirty = True


def on_message(p: SeatState, event: MessageAccepted) -> None:
    # the ledger has recorded the line; here is only how this seat reacts to it
    if event.phase_seq != p._seq:
        return
    reading = p._ledger.reading
    if reading is None:
        return
    if event.seat == p.seat and reading.folded not in p._said:
        own_line_from_before(p, event, reading.folded)
    if event.place == "den":
        on_den_line(p, event, reading)
    else:
        on_stage_line(p, event.seat, event.t)


def own_line_from_before(p: SeatState, event: MessageAccepted, folded: str) -> None:
    """A line of mine that `BaselinePolicy.done` never reported: said before a restart (the service
    replays the game to a resumed seat), by whoever had the seat before me (a person who
    left), or heard back before its own ``done``. It counts towards this phase's lines (no
    second greeting) and towards the lines the seat means to say this phase (the count is
    the seat's, whoever typed it: a seat rebuilt after a restart that left its lines from
    before out talked its whole count again, louder after every restart); and a draft
    planned before the replay reached it that repeats it word for word is written again."""
    p._said.add(folded)
    p._lines += 1
    p._budget_used += 1
    if p._place == "stage":
        spoke(p, event.t)
    speak = p._speak
    if speak is not None and p._speak_folded == folded:
        if event.t < speak.at:  # the same words again, later: written anew
            p._restale = True
        else:  # this very line (planned again from the replay before it came)
            p._speak = None
        p._dirty = True


def on_stage_line(p: SeatState, s: int, t: datetime) -> None:
    """``s`` said the line the ledger just took. Only a line that accuses me or a
    partner, claims a result, or (said by another) may make me speak up sooner, because my
    line waits long or I keep quiet for now (``_hears``), changes anything here; a
    BaselineTable hands the line only to those seats."""
    ledger = p._ledger
    changed = False
    target = ledger.target
    if target is not None:
        if ledger.claimed:
            p._version += 1
            changed = True
        elif target == p.seat or target in p._partners:
            changed = on_accused(p, s, target, ledger.times, t)
    if ledger.addressee == p.seat and s != p.seat:
        asked_by(p, s, t)
        changed = True
    if s != p.seat and (p._speak is not None or p._speak_off == "skip"):
        reading = ledger.reading
        if p._speak is not None and reading is not None and reading.folded == p._speak_folded:
            # someone just said my draft word for word: I say something else instead
            # (two players typing the very same line would give one of them away)
            p._restale = True
            changed = True
        changed = on_other_line(p, t) or changed
    if changed:
        p._dirty = True


def on_accused(p: SeatState, s: int, target: int, times: int, t: datetime) -> bool:
    """``s`` accused me or (for the mafia) a partner. True when plans change."""
    # until the accused is revealed, only accusations of me (or, for the mafia, of a mafia
    # member) move the scores, and those count two accusations at most
    if times <= 2:
        p._rescore.append(s)
    changed = p._voted == _NO_VOTE and p._voting
    if target == p.seat and s != p.seat:
        p._accused_me.append(s)
        changed = True
        if p._place == "stage":
            if p._answer_from is None and p._extra < 2:
                asked_by(p, s, t)  # a defence comes as fast as an answer
                p._answer_from = None
            return changed
        speak = p._speak
        if speak is not None:
            p._restale = True
            at = t + wait(p, "short", p._speak_words)
            if at < speak.at:
                p._speak = say_at(at, speak.text)
        elif p._speak_off == "skip":
            p._speak_off = None
            p._hears = False
    return changed


def on_den_line(p: SeatState, event: MessageAccepted, reading: Reading) -> None:
    changed = False
    if p._first_prop is None and "tomorrow" not in reading.folded:
        for named in reading.named:
            if named in p._alive and named not in p._partners and named != p.seat:
                p._first_prop = named
                changed = True
                break
    if event.seat != p.seat:
        if p._speak is not None:
            p._restale = changed = True
        changed = on_other_line(p, event.t) or changed
    if changed:
        p._dirty = True


def on_vote(p: SeatState, event: VoteCast) -> None:
    if event.phase_seq != p._seq:
        return
    # (the ledger has counted the vote into the room's votes and tally, this seat's own)
    voter = event.voter
    target = event.target
    p._votes_seen += 1
    topic = p._speak_topic
    if p._speak is not None and topic is not None and topic[0] == "tally":
        p._restale = p._dirty = True  # my drafted count is out of date
    if voter == p.seat:
        p._my_vote_t = event.t
        return
    if p._voted == _NO_VOTE:
        # the tally moves the choice, and nothing else of the plan: when it was already to
        # vote first, only its target is worked out again (BaselinePolicy._retargeted)
        p._retarget = True
    elif event.night:
        maybe_follow_partner(p, event.t, voter, target)
    else:
        maybe_bandwagon(p, event.t)


def on_eliminated(p: SeatState, event: PlayerEliminated) -> None:
    p._version += 1
    p._alive.discard(event.seat)
    p._gone = event.seat == p.seat
    p._phase_facts()
    p._revealed[event.seat] = event.role
    for claimer, (target, kind) in p._ledger.claims.items():
        if target == event.seat and (event.role in MAFIA_ROLES) != (kind == "mafia"):
            p._liars.add(claimer)  # the reveal proved their "detective result" false
    if event.cause == "vote":  # (who voted them out: the ledger's, from the vote's end)
        p._last_day_elim = (event.seat, event.role, p._ledger.voters, p._day)
    else:
        p._night_victim = (event.seat, event.role)
    if p._reveal == event.seat:
        p._reveal = None
    p._dirty = True


def on_night_result(p: SeatState, event: NightResult) -> None:
    p._night_none = event.victim is None
    p._dirty = True


def on_inspection(p: SeatState, event: InspectionResult) -> None:
    p._version += 1
    if event.seat != p.seat:
        return
    p._inspections[event.target] = event.is_mafia
    # revealing paints a target on the detective: only for a found mafia, and not always
    if event.is_mafia and event.target in p._alive and p._rng.random() < 0.75:
        p._reveal = event.target
    p._dirty = True


def on_note(p: SeatState, event: PrivateNote) -> None:
    """A role's private result: what it proves about a player shapes votes as an
    investigation does (a mafia role found, a lone visitor of the night's victim)."""
    if event.seat != p.seat:
        return
    p._version += 1
    target, verb = event.target, event.verb
    if verb == "target" and target is not None:
        p._exe_target = target
    elif verb == "became":
        p._role, p._exe_target = event.result, None
    elif verb == "investigate" and target is not None:
        bad = event.result in MAFIA_ROLES or event.result == "serial_killer"
        p._inspections[target] = bad
        if bad and target in p._alive and p._rng.random() < 0.75:
            p._reveal = target
    elif verb == "watch" and target not in p._alive and len(event.seats) == 1:
        p._inspections[event.seats[0]] = True  # the only visitor of tonight's victim
    elif verb == "track" and target is not None and any(s not in p._alive for s in event.seats):
        p._inspections[target] = True  # they visited tonight's victim
    p._dirty = True


def on_night_action(p: SeatState, event: NightActionRecorded) -> None:
    if event.seat == p.seat:
        p._acted = True
        p._night_act_target = event.target
        p._dirty = True


def on_game_over(p: SeatState, event: GameOver) -> None:
    p._over = True
    p._dirty = True


_Handler = Callable[[SeatState, Event], None]

#: dispatch by exact event type; each handler takes its own event class, which the table
#: guarantees, so the casts only forget what dispatch already checked
HANDLERS: dict[type[Event], _Handler] = {
    GameStarted: cast(_Handler, on_game_started),
    RoleAssigned: cast(_Handler, on_role),
    PhaseStarted: cast(_Handler, on_phase_started),
    PhaseEnded: cast(_Handler, on_phase_ended),
    PhaseExtended: cast(_Handler, on_phase_extended),
    MessageAccepted: cast(_Handler, on_message),
    VoteCast: cast(_Handler, on_vote),
    PlayerEliminated: cast(_Handler, on_eliminated),
    NightResult: cast(_Handler, on_night_result),
    InspectionResult: cast(_Handler, on_inspection),
    PrivateNote: cast(_Handler, on_note),
    NightActionRecorded: cast(_Handler, on_night_action),
    GameOver: cast(_Handler, on_game_over),
}
