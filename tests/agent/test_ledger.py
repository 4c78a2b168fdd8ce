"""The table ledger (agent.baseline.ledger): what it records once for every seat at a table."""

from __future__ import annotations

from datetime import timedelta

from agent.baseline import ledger
from agent.baseline.ledger import TableLedger
from agent.fastsim import EPOCH
from games.events import (
    GameStarted,
    PhaseEnded,
    PhaseStarted,
    PlayerEliminated,
    VoteCast,
)

NAMES = ("Ari", "Blake", "Casey", "Drew", "Eden", "Finley")


def _phase(ledger_: TableLedger, phase: str, seq: int) -> None:
    t = EPOCH + timedelta(minutes=seq)
    ledger_.take(
        PhaseStarted(
            t=t, phase=phase, number=1, seq=seq, deadline=t + timedelta(seconds=60), seconds=60.0
        )
    )


def _vote(ledger_: TableLedger, voter: int, target: int | None, seq: int, night: bool) -> None:
    ledger_.take(
        VoteCast(
            t=EPOCH + timedelta(minutes=seq, seconds=voter + 1),
            place="den" if night else "stage",
            visible_to=frozenset({0, 1}) if night else None,
            voter=voter,
            voter_name=NAMES[voter],
            target=target,
            target_name=None if target is None else NAMES[target],
            changed=False,
            night=night,
            phase_seq=seq,
        )
    )


def test_votes_are_counted_once_by_room_and_phase_and_summed_over_the_days() -> None:
    """The phase's votes and tally (a changed vote moves its count, an abstention counts for
    nobody, a vote of another phase is not counted), the den's apart from the stage's; the
    day vote's votes summed by voter at its end, and who voted the eliminated player out."""
    table = TableLedger()
    table.take(GameStarted(t=EPOCH, players=NAMES, mafia_count=2, extra_roles=()))
    _phase(table, "vote", 1)
    _vote(table, 2, 4, 1, night=False)
    _vote(table, 3, 4, 1, night=False)
    _vote(table, 4, 2, 1, night=False)
    _vote(table, 5, 2, 1, night=False)
    _vote(table, 5, None, 1, night=False)  # changed to an abstention
    _vote(table, 0, 3, 0, night=False)  # meant for an earlier phase
    assert table.votes == {2: 4, 3: 4, 4: 2, 5: None}
    assert dict(table.tally) == {4: 2, 2: 1}
    assert not table.den_votes and not table.den_tally
    table.take(PhaseEnded(t=EPOCH, phase="vote", number=1, seq=1, reason="all_voted"))
    table.take(PlayerEliminated(t=EPOCH, seat=4, name="Eden", role="bystander", cause="vote"))
    assert table.voters == (2, 3)
    assert table.voted_by == {2: {4: 1}, 3: {4: 1}, 4: {2: 1}}
    _phase(table, "night_vote", 2)
    assert not table.votes and not table.tally  # a new phase: nothing counted yet
    _vote(table, 0, 3, 2, night=True)
    _vote(table, 1, 3, 2, night=True)
    assert table.den_votes == {0: 3, 1: 3} and dict(table.den_tally) == {3: 2}
    assert not table.votes and not table.tally  # (the stage's, a town seat's at night)
    table.take(PhaseEnded(t=EPOCH, phase="night_vote", number=1, seq=2, reason="all_voted"))
    assert table.voted_by == {2: {4: 1}, 3: {4: 1}, 4: {2: 1}}  # day votes only


def test_a_question_is_read_word_by_word_alike_in_ascii_and_beyond() -> None:
    """The ledger splits an ASCII line into words by a byte table, anything else by a
    pattern: every ASCII character between two words splits them, or not, as the pattern
    does, and a question reads the same either way."""
    for c in map(chr, range(128)):
        text = f"drew{c}why{c}you"
        fast = text.encode().translate(ledger._NOT_IN_WORD).decode().split()
        assert fast == ledger._WORDS.findall(text), repr(c)
    seat_of = {n.casefold(): i for i, n in enumerate(NAMES)}
    alive = set(range(len(NAMES)))
    asked = ledger.addressed("Drew why do you think so?", 0, seat_of, alive)
    assert asked == seat_of["drew"]
    # (a non-ASCII character sends the line down the pattern's way: the same answer)
    assert ledger.addressed("Drew why do you think so? \u00e9", 0, seat_of, alive) == asked
    assert ledger.addressed("drew is mafia?", 0, seat_of, alive) is None
