"""Which persona the AI players get, the same on every platform: chosen by key, never written.

Hosts and moderators pick one of the built-in personas (`agent.personas`) or one the operator
configured (``MAFIABOT_PERSONAS_FILE``) by its key; a command's menu offers those keys. Free
text typed in a chat command is refused: it would go into the agent's prompt, and whoever wrote
it would know how the AI talks for the whole game.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from agent.personas import PERSONA_KEYS, Persona, operator_personas, persona_key
from bot.settings import Settings, SettingsError

__all__ = [
    "ANY",
    "PERSONA_NOTE",
    "PersonaError",
    "choose_persona",
    "configured_personas",
    "persona_choices",
    "persona_summary",
    "read_personas_file",
    "server_persona",
]

#: a server setting: what the moderator should know about their default persona (set when an
#: old free-text default was replaced by a key or dropped; cleared once they choose one)
PERSONA_NOTE = "persona_note"
#: what a command takes for "no persona: draw one per seat" (and what clears a default)
ANY = "any"


class PersonaError(ValueError):
    """A persona a command asked for that is not one of the keys; the message says which are."""


@cache
def _read(path: str, mtime: float) -> tuple[Persona, ...]:
    try:
        raw = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError) as err:
        raise SettingsError(f"MAFIABOT_PERSONAS_FILE: can't read {path}: {err}") from err
    if not isinstance(raw, dict):
        raise SettingsError(f"MAFIABOT_PERSONAS_FILE: {path} must hold a JSON object")
    try:
        return operator_personas(raw)
    except ValueError as err:
        raise SettingsError(f"MAFIABOT_PERSONAS_FILE: {err}") from err


def read_personas_file(path: Path | None) -> tuple[Persona, ...]:
    """The operator's personas (none without a file); a bad file is a `SettingsError`."""
    if path is None:
        return ()
    try:
        mtime = path.stat().st_mtime
    except OSError as err:
        raise SettingsError(f"MAFIABOT_PERSONAS_FILE: can't read {path}: {err}") from err
    return _read(str(path), mtime)


def configured_personas(settings: Settings) -> tuple[Persona, ...]:
    return read_personas_file(settings.personas_file)


def keys(extra: tuple[Persona, ...] = ()) -> list[str]:
    return [*PERSONA_KEYS, *(p.key for p in extra)]


def choose_persona(value: str | None, extra: tuple[Persona, ...] = ()) -> str | None:
    """The persona key a command asked for; None for none given or "any" (drawn per seat).
    Anything else is a `PersonaError` saying which keys there are."""
    if value is None or not value.strip() or value.strip().casefold() in (ANY, "-"):
        return None
    key = persona_key(value, extra)
    if key is None:
        raise PersonaError(
            f"There is no persona {value.strip()[:40]!r}. Choose one of: "
            f"{', '.join(keys(extra))} (or {ANY})."
        )
    return key


def persona_choices(current: str, extra: tuple[Persona, ...] = ()) -> list[str]:
    """The keys a command's menu offers for what was typed so far (at most 25)."""
    typed = current.strip().casefold()
    found = [k for k in [ANY, *keys(extra)] if typed in k]
    return found[:25]


def server_persona(settings: Mapping[str, Any], extra: tuple[Persona, ...] = ()) -> str | None:
    """The server's default persona key, if it still names a persona."""
    value = settings.get("persona")
    return persona_key(value, extra) if isinstance(value, str) else None


def persona_summary(settings: Mapping[str, Any]) -> str:
    """The persona line of a server's settings summary, with the moderator's note if any."""
    value = settings.get("persona")
    line = f"Persona: {value if isinstance(value, str) and value else ANY}."
    note = settings.get(PERSONA_NOTE)
    return f"{line} Note: {note}" if isinstance(note, str) and note else line
