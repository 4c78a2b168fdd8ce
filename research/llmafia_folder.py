"""One LLMafia game folder on disk: its files, read safely, and the repairs made reading it.

What a folder must hold, or it is not read (:class:`BadGame`, naming the file and the reason):
a config.json holding an object whose ``players`` is a list of objects, each with a ``name``
that is a safe one-word file name (`bot.protection.dataset.names`) and unique; the three public chat
files. No file is read from outside the game folder (names and links are checked), no file
over ``MAX_FILE_BYTES`` is read, and a line longer than ``MAX_LINE_CHARS`` is cut there (a
repair says how many). `research.llmafia` reads the games on top of this.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.protection.dataset.llmafia_model import Place, Repair
from bot.protection.dataset.names import UnsafePath, inside, name_problem

__all__ = [
    "DAY_FILE",
    "MANAGER_FILE",
    "MAX_FILE_BYTES",
    "MAX_LINE_CHARS",
    "NIGHT_FILE",
    "REQUIRED_FILES",
    "BadGame",
    "GameFolder",
    "RawLine",
]

DAY_FILE = "public_daytime_chat.txt"
NIGHT_FILE = "public_nighttime_chat.txt"
MANAGER_FILE = "public_manager_chat.txt"
REQUIRED_FILES = ("config.json", MANAGER_FILE, DAY_FILE, NIGHT_FILE)
#: no file of a game is read past this size (the release's largest is well under 1 MB)
MAX_FILE_BYTES = 32 * 1024 * 1024
#: a longer chat line is cut here (the release's longest is about 300 characters)
MAX_LINE_CHARS = 4000


class BadGame(ValueError):
    """A game folder that cannot be read: the message names the file and the reason."""


@dataclass
class RawLine:
    """A chat line before it becomes a ChatLine: parsed, cleaned, timed, not yet phased."""

    t: datetime
    place: Place
    speaker: str
    text: str
    seq: int
    phase: int = 0
    shown: int = -1  # phase whose chat published the line; -1: same as ``phase``
    sub: int = 1  # order among lines of one second: 0 phase start, 1 chat, 2 elimination
    raw: str = ""  # the text as the file has it, when cleaning changed it (see ChatLine.raw)


class GameFolder:
    """The files of one game folder, and the list of repairs (``fix``) made while reading it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.repairs: list[Repair] = []

    def fix(self, kind: str, detail: str, count: int = 1) -> None:
        self.repairs.append(Repair(kind, detail, count))

    def text_of(self, name: str) -> str | None:
        try:
            p = inside(self.folder, name)
        except UnsafePath as e:
            raise BadGame(str(e)) from None
        if not p.is_file():
            return None
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise BadGame(f"{self.folder / name}: {size} bytes, more than {MAX_FILE_BYTES}")
        return p.read_bytes().decode("utf-8", errors="replace")

    def file_lines(self, name: str) -> list[str]:
        text = self.text_of(name)
        if text is None:
            return []
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        long = sum(len(line) > MAX_LINE_CHARS for line in lines)
        if long:
            lines = [line[:MAX_LINE_CHARS] for line in lines]
            self.fix(
                "long_lines",
                f"{name}: {long} lines longer than {MAX_LINE_CHARS} characters were cut there",
                long,
            )
        return lines

    def config(self) -> dict[str, Any]:
        """config.json as an object, with every file the reader needs present."""
        for required in REQUIRED_FILES:
            if self.text_of(required) is None:
                raise BadGame(f"{self.folder / required}: missing")
        where = self.folder / "config.json"
        try:
            config = json.loads(self.text_of("config.json") or "")
        except ValueError as e:
            raise BadGame(f"{where}: not JSON ({e})") from None
        if not isinstance(config, dict):
            raise BadGame(f"{where}: holds a {type(config).__name__}, not an object")
        players = config.get("players")
        if not isinstance(players, list) or not players:
            raise BadGame(f"{where}: 'players' is not a list of players")
        seen: set[str] = set()
        for i, entry in enumerate(players):
            if not isinstance(entry, dict):
                raise BadGame(f"{where}: player {i + 1} is not an object")
            if "name" not in entry:
                raise BadGame(f"{where}: player {i + 1} has no name")
            problem = name_problem(entry["name"])
            if problem is not None:
                raise BadGame(f"{where}: player {i + 1}'s name {entry['name']!r} {problem}")
            if entry["name"].casefold() in seen:
                raise BadGame(f"{where}: the name {entry['name']!r} is used twice")
            seen.add(entry["name"].casefold())
        for key in ("daytime_minutes", "nighttime_minutes"):
            value = config.get(key, 0)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if not number or not math.isfinite(value) or value < 0:
                raise BadGame(f"{where}: {key} is {value!r}, not a number of minutes")
        return config
