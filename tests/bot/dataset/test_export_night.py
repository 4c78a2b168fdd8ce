"""The JSON lines of a night's private results: a withheld person's own notes are left out
like their night actions, the names a note holds are the exported ones, and seat indexes
never leave (before, a tracker's or lookout's note went out with plain character names, a
withheld person's included, and the seats it named)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.protection.dataset.export import _Game
from bot.store.models import Event, Game

T = datetime(2026, 1, 1, tzinfo=UTC)


def event(seq: int, kind: str, **payload: Any) -> Event:
    return Event(game_id="g", seq=seq, kind=kind, payload={"kind": kind, **payload}, t=T)


def exported(events: list[Event]) -> list[dict[str, Any]]:
    label = {"Kai": "Kai", "Lee": "Lee", "Avery": "[withheld]"}
    g = _Game(
        id="g",
        row=Game(id="g", seed=1),
        imported=False,
        seats=[],
        allowed={0: True, 1: True, 2: False},
        label=label,
        clean=lambda text: text,
        own_lines={},
        phase_label={},
        messages=[],
        votes=[],
        event_rows=events,
        llm_calls=[],
    )
    return g.events()


def test_night_notes_are_anonymised_and_a_withheld_person_s_left_out() -> None:
    note = {"verb": "watch", "target": 0, "target_name": "Kai", "result": "visitors"}
    rows = exported(
        [
            event(1, "private_note", seat=1, **note, seats=[2], names=["Avery"]),
            event(2, "private_note", seat=2, **note, seats=[1], names=["Lee"]),
            event(
                3, "night_action", seat=2, role="escort", verb="block", target=0, target_name="Kai"
            ),
        ]
    )
    assert len(rows) == 1  # the withheld person's note and action: left out
    row = rows[0]
    assert row["names"] == ["[withheld]"] and row["target_name"] == "Kai"
    assert "seats" not in row and "seat" not in row
