"""The export's ``csv/night_actions.csv``: one row per player's night action a night (the last
they chose), with its actor, role, verb, target and the result the actor learnt at dawn, read
through :func:`games.night_log.night_rows` (the replay page's and the report's reading).

Anonymised as the rest of the export: every name is the exported one (a withheld person's
label); a withheld person's own night actions and results are left out, as in the JSON lines.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bot.store.models import Event
from games.night_log import night_rows

__all__ = ["HEADER", "KINDS", "night_action_rows"]

HEADER = ["game_id", "night", "actor", "role", "verb", "target", "result"]
#: the events a night action and its results are read from (all private to the actor)
KINDS = ("night_action", "inspection_result", "private_note")


def night_action_rows(
    game_id: str,
    events: Sequence[Event],
    labels: Mapping[int, str],
    allowed: Mapping[int, bool],
    name: Callable[[str | None], str | None],
) -> list[list[Any]]:
    """``labels``: seat -> exported name; ``allowed``: seat -> may their data be used;
    ``name``: a character name -> its exported name."""
    read: list[tuple[str, Mapping[str, object]]] = []
    for row in events:
        payload = dict(row.payload)
        if row.kind in KINDS:
            seat = payload.get("seat")
            if not isinstance(seat, int) or not allowed.get(seat, False):
                continue
            target = payload.get("target_name")
            payload["target_name"] = name(target) if isinstance(target, str) else target
            seen = payload.get("names")
            if isinstance(seen, list):
                payload["names"] = [name(n) if isinstance(n, str) else n for n in seen]
        read.append((row.kind, payload))
    return [
        [game_id, f"night-{r.night}", r.actor_name, r.role, r.verb, r.target_name, r.result]
        for r in night_rows(read, labels)
    ]
