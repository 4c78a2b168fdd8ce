"""How a server's stored settings change when a moderator binds a channel or sets defaults:
the rules, apart from the platform's commands that ask for them (``/mafia setup`` and
``/mafia config`` on Discord hand over what was chosen, and answer with what came back)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.table.personas import PERSONA_NOTE

__all__ = ["bind_channel", "set_defaults"]


def bind_channel(
    settings: dict[str, Any], channel: str, by: str, *, remove: bool = False
) -> dict[str, Any]:
    """``settings`` with ``channel`` bound for games (by moderator ``by``), or unbound."""
    channels = dict(settings.get("channels", {}))
    if remove:
        channels.pop(channel, None)
    else:
        channels[channel] = {"by": by}
    settings["channels"] = channels
    return settings


def set_defaults(
    settings: dict[str, Any],
    given: Mapping[str, Any],
    *,
    persona_given: bool = False,
    persona: str | None = None,
    add_moderator_role: int | None = None,
    clear_moderator_roles: bool = False,
) -> dict[str, Any]:
    """``settings`` with the defaults in ``given`` that are not None, the persona (when one
    was given: None goes back to the default), and the moderator roles changed."""
    for key, value in given.items():
        if value is not None:
            settings[key] = value
    if persona_given:
        settings.pop(PERSONA_NOTE, None)  # the moderator has chosen since
        if persona is None:
            settings.pop("persona", None)
        else:
            settings["persona"] = persona
    roles_now = (
        [] if clear_moderator_roles else [int(r) for r in settings.get("moderator_roles", [])]
    )
    if add_moderator_role is not None and add_moderator_role not in roles_now:
        roles_now.append(add_moderator_role)
    settings["moderator_roles"] = [str(r) for r in roles_now]
    return settings
