"""Who played a seat when (`bot.players.seat_story`): the AI of the reveal, the seat's story in
plain
words, and who wrote each line."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.players import seat_story

T0 = datetime(2026, 5, 1, 20, 0, tzinfo=UTC)


@dataclass
class S:
    is_agent: bool
    handovers: list[dict[str, Any]] | None = field(default=None)


@dataclass
class L:
    t: datetime
    action_seq: int | None


KICKED = S(True, [seat_story.handover("person", "agent", "day 1", 12, T0)])


def test_only_a_seat_an_agent_played_throughout_is_the_ai() -> None:
    assert seat_story.agent_throughout(S(True)) and not seat_story.mixed(S(True))
    assert not seat_story.agent_throughout(S(False))
    assert not seat_story.agent_throughout(KICKED) and seat_story.mixed(KICKED)
    subbed = S(False, [seat_story.handover("person", "person", "night 1", 3, T0)])
    assert not seat_story.mixed(subbed) and seat_story.story("Kai", subbed) == ""
    assert seat_story.the_ai([S(True), KICKED, S(False)]) == [S(True)]


def test_the_story_in_plain_words() -> None:
    assert seat_story.story("Blake", KICKED) == (
        "Blake's player left on day 1; an AI played the seat from then on."
    )
    back = S(False, [seat_story.handover("agent", "person", "day 2", 30, T0)])
    assert seat_story.story("Rory", back) == (
        "An AI played Rory until day 2; a person played the seat from then on."
    )
    assert seat_story.story("Sage", S(True)) == ""


def test_each_line_is_marked_by_who_held_the_seat_when_it_was_said() -> None:
    assert seat_story.wrote(KICKED, L(T0, 12)) == "person"  # the kick came after action 12
    assert seat_story.wrote(KICKED, L(T0, 13)) == "agent"
    # a line with no action number: by time
    assert seat_story.wrote(KICKED, L(T0 - timedelta(seconds=1), None)) == "person"
    assert seat_story.wrote(KICKED, L(T0 + timedelta(seconds=1), None)) == "agent"
    assert seat_story.wrote(S(False), L(T0, 99)) == "person"
    assert seat_story.wrote(S(True), L(T0, 1)) == "agent"
