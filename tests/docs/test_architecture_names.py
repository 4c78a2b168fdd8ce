"""What the README, docs/ and the modules' docstrings name exists: every
module path, every dotted name (`bot.service.lanes.Lanes`) and every `Class.member` they mention. A
renamed or removed part fails here until the prose follows it."""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "agent", "games", "research")
#: a name in single backticks (double backticks quote a literal: a column, a command)
_TICKED = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_DOTTED = re.compile(r"(?:bot|agent|games|research)(?:\.\w+)+")
_MEMBER = re.compile(r"([A-Z]\w*)\.(\w+)")
_PATH = re.compile(r"(?:bot|agent|games|research|bench|tools|tests|docs|migrations)/[\w./-]*")


def _texts() -> list[tuple[str, str]]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found = [(str(page.relative_to(ROOT)), page.read_text(encoding="utf-8")) for page in pages]
    for package in PACKAGES:
        for module in sorted((ROOT / package).rglob("*.py")):
            doc = ast.get_docstring(ast.parse(module.read_text(encoding="utf-8")))
            if doc:
                found.append((str(module.relative_to(ROOT)), doc))
    return found


@cache
def _classes() -> dict[str, set[str]]:
    """Class name -> the names it defines or assigns (``self.x = ...``), over the packages."""
    members: dict[str, set[str]] = {}
    for package in PACKAGES:
        for f in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.ClassDef):
                    continue
                names = members.setdefault(node.name, set())
                for sub in ast.walk(node):
                    if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                        names.add(sub.name)
                    elif isinstance(sub, ast.Name):
                        names.add(sub.id)
                    elif (
                        isinstance(sub, ast.Attribute)
                        and isinstance(sub.value, ast.Name)
                        and sub.value.id == "self"
                    ):
                        names.add(sub.attr)
    return members


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            # a dataclass field or an attribute set in __init__ of a class named before it
            owner = parts[i:][-2] if len(parts[i:]) >= 2 else None
            return owner is not None and parts[-1] in _classes().get(owner, set())
        return True
    return False


def _problems(text: str) -> list[str]:
    problems = []
    for ticked in _TICKED.findall(text):
        token = ticked.split("(")[0].strip()
        if _PATH.fullmatch(token):
            if "*" not in token and not (ROOT / token.rstrip("/")).exists():
                problems.append(f"no file {token}")
        elif _DOTTED.fullmatch(token):
            if not _resolves(token):
                problems.append(f"no name {token}")
        elif m := _MEMBER.fullmatch(token):
            cls, member = m.groups()
            if cls in _classes() and member not in _classes()[cls]:
                problems.append(f"no member {token}")
    return problems


@pytest.mark.parametrize(("name", "text"), _texts(), ids=[name for name, _ in _texts()])
def test_what_the_docs_name_exists(name: str, text: str) -> None:
    assert _problems(text) == []


def test_a_renamed_part_is_caught() -> None:
    assert _problems("`GameService.resume_all` and `bot.table.settings`, `bot/nowhere.py`") == [
        "no member GameService.resume_all",
        "no name bot.table.settings",
        "no file bot/nowhere.py",
    ]
