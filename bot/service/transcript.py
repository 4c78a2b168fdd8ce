"""A game's transcript from its stored events: every message and Game-Manager line with its
place, and every vote. Used by ``simulate --json`` and the exports."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from games.events import event_from_dict
from games.narration import MANAGER, manager_line


def transcript(
    events: Iterable[Mapping[str, Any]], *, include_den: bool = True
) -> list[dict[str, Any]]:
    """Entries in game order. Booth-private events (role cards, inspections) are left out.

    A line or vote is labelled with the phase it was made in (its ``phase_seq``): a line typed
    just before a phase ended can be applied, and logged, just after the next one began."""
    out: list[dict[str, Any]] = []
    phase = "day-1"
    labels: dict[int, str] = {1: phase}
    for data in events:
        kind = data["kind"]
        if kind == "phase_started":
            phase = labels[data["seq"]] = f"{data['phase']}-{data['number']}"
        place = data.get("place", "stage")
        if place == "booth" or (place == "den" and not include_den):
            continue
        if kind == "message":
            out.append(
                {
                    "t": data["t"],
                    "phase": labels.get(data["phase_seq"], phase),
                    "place": place,
                    "speaker": data["name"],
                    "text": data["text"],
                }
            )
            continue
        if kind == "vote_cast":
            out.append(
                {
                    "t": data["t"],
                    "phase": labels.get(data["phase_seq"], phase),
                    "voter": data["voter_name"],
                    "target": data["target_name"],
                }
            )
            # the "X voted for Y" line is also a Game-Manager line, as in LLMafia
        line = manager_line(event_from_dict(dict(data)))
        if line is not None:
            out.append(
                {"t": data["t"], "phase": phase, "place": place, "speaker": MANAGER, "text": line}
            )
    return out
