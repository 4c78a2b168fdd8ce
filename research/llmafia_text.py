"""Clean what players typed in a raw terminal.

Players typed into a bare terminal, so their messages hold the keys they pressed rather than the
text they meant: backspaces (``\\x08``) after typos, arrow/page keys as ANSI escape sequences,
and letters typed with a Hebrew keyboard layout left on. We replay the backspaces (each deletes
the character before it, which turns ``"heer^H^Here"`` back into ``"here"``), drop escape
sequences and other control characters, and drop Hebrew letters that sit inside Latin text
(layout slips; a message written wholly in Hebrew is kept as is). Typographic characters such as
``’`` are real text and stay.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x07\x09-\x1f\x7f]")
_HEBREW = re.compile(r"[\u0590-\u05ff]")
_LATIN = re.compile(r"[A-Za-z]")

BACKSPACE = "backspaces"
ESCAPE = "escape_sequences"
CONTROL = "control_characters"
HEBREW = "stray_hebrew"


@dataclass
class TextCleaner:
    """Cleans texts and counts, per kind of fix, how many texts needed it."""

    counts: Counter[str]

    def __init__(self) -> None:
        self.counts = Counter()

    def clean(self, text: str) -> str:
        if _ANSI.search(text):
            self.counts[ESCAPE] += 1
            text = _ANSI.sub("", text)
        if "\x08" in text:
            self.counts[BACKSPACE] += 1
            text = apply_backspaces(text)
        if _CONTROL.search(text):
            self.counts[CONTROL] += 1
            text = _CONTROL.sub("", text)
        if _HEBREW.search(text) and _LATIN.search(text):
            self.counts[HEBREW] += 1
            text = _HEBREW.sub("", text)
        return text


def apply_backspaces(text: str) -> str:
    out: list[str] = []
    for ch in text:
        if ch == "\x08":
            if out:
                out.pop()
        else:
            out.append(ch)
    return "".join(out)
