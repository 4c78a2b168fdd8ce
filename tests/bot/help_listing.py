"""The commands a help text lists (its "Commands" section, one `` `usage`: what `` a line), by
the words a person types after ``/mafia`` (`bot.table.help.Command.names`)."""

from __future__ import annotations

import re

from bot.table.help import Command

_LINE = re.compile(r"^`(/[^`]+)`: ")


def commands_listed(text: str) -> list[str]:
    """Every command word of the help's command lines, in order (a word listed twice shows
    twice)."""
    words: list[str] = []
    for line in text.splitlines():
        found = _LINE.match(line)
        if found is not None:
            words += Command(found.group(1), "").names
    return words
