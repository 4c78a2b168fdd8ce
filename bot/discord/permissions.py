"""What the bot needs in a game channel, in plain words, and who counts as a moderator.

The stage is kept to the bot during a game by two channel overwrites: @everyone may not send
messages there (threads stay open, which is where the booths are), and the bot allows itself
what it needs. Both are saved first and put back exactly at the end (``perms`` link).
"""

from __future__ import annotations

from typing import Any

import discord

#: permission attribute -> why, in the words shown to moderators
REQUIRED: dict[str, str] = {
    "view_channel": "View Channel (to see the game channel)",
    "send_messages": "Send Messages (Game-Manager announcements and the lobby)",
    "embed_links": "Embed Links (the lobby and the consent notice)",
    "read_message_history": "Read Message History (to catch up on booths after a restart)",
    "manage_webhooks": "Manage Webhooks (every player speaks through one webhook)",
    "create_private_threads": "Create Private Threads (a private booth per player)",
    "send_messages_in_threads": "Send Messages in Threads (the booths)",
    "manage_threads": "Manage Threads (to close the booths at the end)",
    "manage_roles": "Manage Permissions (to keep the stage to the bot during a game)",
    "manage_messages": "Manage Messages (to remove lines typed straight into the stage)",
}

#: what the bot can still play without (it says so, and plays on)
OPTIONAL = ("manage_roles", "manage_messages")

#: the permissions integer of the invite URL in docs/discord.md (all of REQUIRED)
INVITE_PERMISSIONS = discord.Permissions(**dict.fromkeys(REQUIRED, True)).value


def missing(perms: discord.Permissions, names: Any = None) -> list[str]:
    """The plain-words lines for every needed permission ``perms`` lacks."""
    wanted = REQUIRED if names is None else {n: REQUIRED[n] for n in names}
    return [why for name, why in wanted.items() if not getattr(perms, name, False)]


def blocking(perms: discord.Permissions) -> list[str]:
    """Missing permissions a game cannot start without."""
    return missing(perms, [n for n in REQUIRED if n not in OPTIONAL])


def describe_missing(lines: list[str]) -> str:
    return "\n".join(f"- {line}" for line in lines)


def is_moderator(
    user: discord.abc.User, perms: discord.Permissions, settings: dict[str, Any]
) -> bool:
    """Manage Server (or Administrator), or one of the server's moderator roles."""
    if perms.administrator or perms.manage_guild:
        return True
    roles = {int(r) for r in settings.get("moderator_roles", [])}
    if roles and isinstance(user, discord.Member):
        return any(role.id in roles for role in user.roles)
    return False


def bound_reply(lacking: list[str], everyone: discord.Permissions) -> str:
    """What ``/mafia setup`` answers once the channel is bound: the permissions the bot still
    lacks there (``lacking``, from `missing`), and whether @everyone can talk in threads."""
    if lacking:
        text = (
            "This channel is now a Mafia channel, but I'm missing permissions here:\n"
            + describe_missing(lacking)
            + "\nGive them to my role (or in this channel's settings), then run "
            "/mafia setup again to check."
        )
    else:
        text = (
            "This channel is now a Mafia channel, and I have every permission I need. "
            "Anyone can open a game here with /mafia new."
        )
    if not everyone.send_messages_in_threads:
        text += (
            "\nNote: @everyone can't send messages in threads here; players type in "
            "private threads (their booths), so allow Send Messages in Threads."
        )
    return text
