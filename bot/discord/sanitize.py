"""Make a relayed line safe to post on Discord, the same way whoever wrote it.

Every line that reaches the stage or the den goes through :func:`relay_chunks`, for humans and
agents alike, so the cleaning itself never tells them apart. Three things are neutralised:

- Pings. ``@everyone``/``@here`` and user/role mentions (``<@1>``, ``<@!1>``, ``<@&1>``) get a
  zero-width space so Discord shows them as plain text. Sends also pass
  ``allowed_mentions=none``: either alone would do, both together survive a mistake in one.
- Impersonating the Game-Manager. "Game-Manager:" (or the bot's name and a colon) anywhere, and
  a line that starts like an announcement ("GM - night falls"), are marked as quotes, so they
  cannot pass for one. (The real announcements are posted by the bot account itself, which no
  player's line can be.)
- Headings. ``# text`` renders huge on Discord; shouting is not a speech act the game has.

Lengths: Discord takes at most 2000 characters a message; longer text is split at line or word
boundaries (the engine caps a line at 1000 characters by default, so this only matters for
Game-Manager summaries of very large games).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

MAX_CONTENT = 2000
ZWSP = "\u200b"
QUOTING = "(quoting the Game-Manager)"

_EVERYONE = re.compile(r"@(everyone|here)\b", re.IGNORECASE)
_MENTION = re.compile(r"<(@[!&]?)(\d+)>")
_HEADING = re.compile(r"^(\s*)(#{1,3}|-#)(\s)", re.MULTILINE)
_MARKUP = r"[\s>*_~`|\-\[\]()\"'“”]*"


def neutralize_mentions(text: str) -> str:
    text = _EVERYONE.sub(lambda m: "@" + ZWSP + m.group(1), text)
    return _MENTION.sub(lambda m: "<" + m.group(1) + ZWSP + m.group(2) + ">", text)


@functools.lru_cache(maxsize=32)
def _manager_patterns(names: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(a line that starts like an announcement, "Game-Manager:" anywhere)."""
    named = [r"game[\s\-_.]*manager"]
    for name in names:
        words = [re.escape(w) for w in name.split() if w]
        if words:
            named.append(r"[\s\-_.]*".join(words))
    joined = "|".join(named)
    start = re.compile(
        rf"^{_MARKUP}(?:{joined}|gm){_MARKUP}(?::|：|-|—|says\b|announces\b)",
        re.IGNORECASE | re.MULTILINE,
    )
    anywhere = re.compile(rf"(?<!\w)[*_~`|]*(?:{joined})[*_~`|\s]*[:：][*_~`|]*", re.IGNORECASE)
    return start, anywhere


def neutralize_manager(text: str, bot_names: Iterable[str] = ()) -> str:
    """Mark what reads like a Game-Manager announcement as a quote."""
    start, anywhere = _manager_patterns(tuple(sorted(n for n in bot_names if n)))
    text = anywhere.sub(QUOTING + ":", text)
    return start.sub(lambda m: QUOTING + " " + m.group(0).strip(" >*_~`|"), text)


def neutralize_headings(text: str) -> str:
    return _HEADING.sub(lambda m: m.group(1) + "\\" + m.group(2) + m.group(3), text)


def clean_line(text: str, bot_names: Iterable[str] = ()) -> str:
    """A player's line (human or agent) as it may appear on the stage or in the den."""
    text = text.replace("\r\n", "\n").strip()
    text = neutralize_mentions(text)
    text = neutralize_manager(text, bot_names)
    return neutralize_headings(text)


def clean_manager(text: str) -> str:
    """A Game-Manager line: built by us from character names, but reasons typed by
    moderators end up in it too."""
    return neutralize_mentions(text.strip())


def chunks(text: str, limit: int = MAX_CONTENT) -> list[str]:
    """Split ``text`` into pieces of at most ``limit`` characters, preferring line breaks,
    then spaces; never returns empty pieces."""
    out: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        cut = rest.rfind("\n", 0, limit + 1)
        if cut < limit // 2:
            cut = rest.rfind(" ", 0, limit + 1)
        if cut < limit // 2:
            cut = limit
        piece, rest = rest[:cut].rstrip(), rest[cut:].lstrip()
        if piece:
            out.append(piece)
    if rest:
        out.append(rest)
    return out


def relay_chunks(text: str, bot_names: Iterable[str] = ()) -> list[str]:
    return chunks(clean_line(text, bot_names))


def plain(text: str, limit: int) -> str:
    """One-line text for labels and names: no line breaks, at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
