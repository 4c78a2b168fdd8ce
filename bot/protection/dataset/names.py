"""Character names that may name files, and paths that stay inside their folder.

An LLMafia game folder keeps per-player files named ``<Name>_vote.txt``, ``<Name>_survey.txt``
and ``<Name>_status.txt``, and the export writes the same layout back. The names come from the
game's config.json, which is outside data: a name like ``../../x`` or ``a/b`` would read or
write outside the game folder. So a name is accepted only when it is one plain word that is
also a safe file name (see :func:`name_problem`), and every per-player path is checked, after
symbolic links are followed, to lie inside its folder (:func:`inside`). The character names
this product deals itself (``games.names``) pass the same check.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

__all__ = ["MAX_NAME_CHARS", "UnsafePath", "inside", "name_problem"]

MAX_NAME_CHARS = 40
#: characters that a file system or the "[HH:MM:SS] Name: text" format gives a meaning to
_FORBIDDEN = set('/\\:*?"<>|')
_MANAGER = "game-manager"


class UnsafePath(ValueError):
    """A path built from outside data would leave the folder it belongs in."""


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a character name (and so a file name), or None when it can."""
    if not isinstance(name, str):
        return f"is not text ({type(name).__name__})"
    if not name:
        return "is empty"
    if len(name) > MAX_NAME_CHARS:
        return f"is longer than {MAX_NAME_CHARS} characters"
    if name.startswith(".") or ".." in name:
        return "starts with '.' or contains '..'"
    for ch in name:
        if ch in _FORBIDDEN:
            return f"contains {ch!r}"
        category = unicodedata.category(ch)
        if category[0] in "CZ":  # controls (NUL included), format characters, any space
            return f"contains the character U+{ord(ch):04X} (a space or control character)"
    if name.casefold() == _MANAGER:
        return "is the Game-Manager's"
    return None


def inside(folder: Path, name: str) -> Path:
    """``folder / name``, refused with :class:`UnsafePath` unless it resolves inside ``folder``
    (``name`` may hold sub-folders; links are followed before the check)."""
    root = Path(folder).resolve()
    path = (root / name).resolve()
    if path == root or not path.is_relative_to(root):
        raise UnsafePath(f"{Path(folder) / name}: outside {folder}, not read or written")
    return path
