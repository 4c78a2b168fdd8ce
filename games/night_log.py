"""The night's actions and their results, read back from a game's events: one row per player's
action a night (actor, role, verb, target, and the result the actor learnt at dawn) and each
action or result as a sentence ("Kai (escort) blocked Avery.", "Lee (tracker) saw Avery visit
Blake."). The replay page, the export's ``night_actions`` table, ``mafiabot report`` and
``mafiabot replay`` all read the night through here, so they say the same thing.

Works on stored events: ``(kind, payload)`` pairs, the payload being the event's fields as
stored (:func:`games.events.event_to_dict`); pure, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["NightRow", "night_rows", "night_sentence", "result_text"]

#: a night verb as done, said of its target ("Kai (escort) blocked Avery.")
DONE: dict[str, str] = {
    "protect": "protected",
    "investigate": "investigated",
    "guard": "guarded",
    "shoot": "shot at",
    "attack": "attacked",
    "block": "blocked",
    "track": "followed",
    "watch": "watched the house of",
    "swap with": "swapped places with",
    "frame": "framed",
    "clean": "cleaned",
    "kill": "chose to kill",
}
#: a self-only night verb as done ("Sam (veteran) went on alert.")
DONE_SELF: dict[str, str] = {"alert": "went on alert", "vest": "put on a vest"}


@dataclass
class NightRow:
    """One player's action in one night (the last they chose), and what it told them."""

    night: int
    actor: int
    actor_name: str
    role: str
    verb: str
    target: int
    target_name: str
    #: what the actor learnt at dawn ("mafia", "not mafia", "visited Blake", "blocked", a
    #: role...), "" when nothing
    result: str = ""


def _int(value: object) -> int:
    return value if isinstance(value, int) else -1


def _names(payload: Mapping[str, object]) -> list[str]:
    raw = payload.get("names")
    return [str(n) for n in raw] if isinstance(raw, (list, tuple)) else []


def _a(role: str) -> str:
    """A role with its article: "mafia" as it is, "a lookout", "an escort"."""
    if role == "mafia":
        return role
    return f"{'an' if role[:1] in 'aeiou' else 'a'} {role.replace('_', ' ')}"


def _list(names: Sequence[str]) -> str:
    if not names:
        return "nobody"
    if len(names) == 1:
        return names[0]
    return f"{', '.join(names[:-1])} and {names[-1]}"


def result_text(kind: str, payload: Mapping[str, object]) -> str:
    """A dawn result in a few words, for a table ("" for what is not a night result)."""
    if kind == "inspection_result":
        return "mafia" if payload.get("is_mafia") else "not mafia"
    if kind != "private_note":
        return ""
    verb, result = str(payload.get("verb") or ""), str(payload.get("result") or "")
    if result == "blocked":
        return "blocked"
    if verb == "track":
        return f"visited {_list(_names(payload))}"
    if verb == "watch":
        return f"visited by {_list(_names(payload))}"
    if verb in ("investigate", "clean"):
        return result
    return ""


def night_sentence(
    kind: str,
    payload: Mapping[str, object],
    names: Mapping[int, str],
    roles: Mapping[int, str] | None = None,
) -> str:
    """A night action or result as a sentence ("" for an event that is neither)."""
    seat = _int(payload.get("seat"))
    who = names.get(seat, "someone")
    role = str(payload.get("role") or (roles or {}).get(seat) or "")
    actor = f"{who} ({role})" if role else who
    target = str(payload.get("target_name") or "?")
    if kind == "night_action":
        verb = str(payload.get("verb") or "act on")
        if verb in DONE_SELF:
            return f"{actor} {DONE_SELF[verb]}."
        return f"{actor} {DONE.get(verb, f'chose to {verb}')} {target}."
    if kind == "inspection_result":
        what = "is mafia" if payload.get("is_mafia") else "is not mafia"
        return f"{actor} learned that {target} {what}."
    if kind == "night_result":
        victim = payload.get("victim_name")
        return f"The night's kill: {victim}." if victim else "Nobody was killed in the night."
    if kind == "private_note":
        return _note_sentence(actor, target, payload)
    if kind == "solo_win":
        name, won = payload.get("name", "?"), payload.get("role", "?")
        return f"{name} ({won}) won: {payload.get('reason', '')}."
    found = payload.get("target_name") or payload.get("victim_name")
    if found is None:
        return ""
    what = kind.replace("_", " ")  # an event this module does not know: said plainly
    return f"{who}: {what}: {found}." if "seat" in payload else f"{what.capitalize()}: {found}."


def _note_sentence(actor: str, target: str, payload: Mapping[str, object]) -> str:
    verb, result = str(payload.get("verb") or ""), str(payload.get("result") or "")
    seen = _names(payload)
    if result == "blocked":
        return f"{actor} was blocked: their action did nothing."
    if verb == "track":
        if not seen:
            return f"{actor} saw {target} go nowhere."
        return f"{actor} saw {target} visit {_list(seen)}."
    if verb == "watch":
        if not seen:
            return f"{actor} saw nobody visit {target}."
        return f"{actor} saw {_list(seen)} visit {target}."
    if verb == "investigate":
        return f"{actor} learned that {target} is {_a(result)}."
    if verb == "clean":
        return f"{actor} cleaned up after {target}, {_a(result)}."
    if verb == "target":
        return f"{actor} was given a target: {target}."
    if verb == "became":
        return f"{actor} became {_a(result)}: {target} died another way."
    return f"{actor}: {verb}: {target} ({result})."


def night_rows(
    events: Iterable[tuple[str, Mapping[str, object]]], names: Mapping[int, str]
) -> list[NightRow]:
    """Every player's night action, night by night (a changed mind: the last choice), with
    the result its actor learnt at dawn. ``events``: the game's, in order; ``names``: seat ->
    name."""
    rows: dict[tuple[int, int], NightRow] = {}
    night = 0
    for kind, payload in events:
        if kind == "phase_started":
            if str(payload.get("phase", "")).startswith("night"):
                night = _int(payload.get("number"))
            continue
        seat = _int(payload.get("seat"))
        if kind == "night_action":
            rows[(night, seat)] = NightRow(
                night,
                seat,
                names.get(seat, ""),
                str(payload.get("role") or ""),
                str(payload.get("verb") or ""),
                _int(payload.get("target")),
                str(payload.get("target_name") or ""),
            )
        elif kind in ("inspection_result", "private_note"):
            row = rows.get((night, seat))
            said = result_text(kind, payload)
            if row is not None and said:
                row.result = said
    return sorted(rows.values(), key=lambda r: (r.night, r.actor))
