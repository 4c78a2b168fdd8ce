"""docs/configuration.md is generated from the settings classes and cannot drift: every
``MAFIABOT_*`` variable the code, the container files, CI or the tests use is documented once,
and every documented one exists."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from bot import config_reference

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"\bMAFIABOT_[A-Z0-9_]*[A-Z0-9]\b")
ROW = re.compile(r"^\| `(MAFIABOT_[A-Z0-9_]+)` \|", re.M)
#: where a variable can be read or set (the reference's generator itself aside)
SCANNED = ["bot", "agent", "games", "migrations", "bench", "tests", "docker", ".ci"]
FILES = ["Dockerfile", "compose.yaml", ".env.example", "Makefile", "pyproject.toml"]


def used_in_code() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    paths = [ROOT / f for f in FILES]
    for folder in SCANNED:
        paths += [p for p in (ROOT / folder).rglob("*") if p.is_file() and p.suffix != ".pyc"]
    for path in paths:
        if path.name == "config_reference.py" or "__pycache__" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        for name in NAME.findall(text):
            found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def documented() -> list[str]:
    return ROW.findall((ROOT / "docs" / "configuration.md").read_text(encoding="utf-8"))


def test_the_reference_is_generated_from_the_settings_classes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot.config_reference", "--check"], cwd=ROOT, capture_output=True,
        text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (ROOT / "docs" / "configuration.md").read_text() == config_reference.render()


def test_every_variable_in_the_code_is_documented_once() -> None:
    rows = documented()
    twice = sorted({v for v in rows if rows.count(v) > 1})
    assert not twice, f"documented more than once: {twice}"
    missing = {v: sorted(w)[:3] for v, w in used_in_code().items() if v not in rows}
    assert not missing, f"used but not in docs/configuration.md: {missing}"


def test_every_documented_variable_exists() -> None:
    settings = {e.variable for _, e in config_reference.entries()}
    used = used_in_code()
    for variable in documented():
        assert variable in settings or variable in used, f"{variable} is read nowhere"
        assert variable in config_reference.variables()


def test_every_setting_says_what_it_does() -> None:
    bare = [e.variable for _, e in config_reference.entries() if not e.description]
    assert not bare, f"give these a #: comment in their settings class: {bare}"


def test_the_docs_name_only_variables_that_exist() -> None:
    known = config_reference.variables()
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        for name in NAME.findall(page.read_text(encoding="utf-8")):
            assert name in known, f"{page.name} names {name}, which no setting reads"
