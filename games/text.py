"""One line of chat stays one line: the normal form of what a player types.

Every transcript this product writes or reads is line based (the terminal's and the LLMafia
release's ``[HH:MM:SS] Name: text`` lines, the agent's chat window, JSON lines, CSV rows), so
a line break inside a message would let a player start a line of their own that reads as
somebody else's, or as the Game-Manager's. The engine therefore turns every character that
any of those readers treats as a line end (``\\n``, ``\\r``, vertical tab, form feed, the
file/group/record separators, NEL, U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR), and a
tab, into a space (a run of them becomes one space), and drops every other control character
(a backspace, an escape), before anything is stored or shown. Writers of older stored text
apply the same function on output.
"""

from __future__ import annotations

import re

__all__ = ["LINE_BREAKS", "one_line"]

#: every character ``str.splitlines`` (and so most line readers) ends a line at
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_BREAKS = re.compile(r"[\t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]+")
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def one_line(text: str) -> str:
    """``text`` with each run of line breaks (and tabs) turned into one space and the other
    control characters removed."""
    if text.isascii() and text.isprintable():
        return text  # the common case, without a regular expression
    return _CONTROLS.sub("", _BREAKS.sub(" ", text))
