"""The research commands' dependencies are an optional extra (issue 22, item 10): a running bot
installs without scipy, scikit-learn or matplotlib, and a research command started without them
says in one line what to install."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESEARCH_ONLY = {"scipy", "scikit-learn", "matplotlib"}


def _closure(lock: dict[str, Any], roots: list[str]) -> set[str]:
    """Every package the lock file installs for ``roots`` (markers ignored: a superset)."""
    packages = {p["name"]: p for p in lock["package"]}
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += [d["name"] for d in packages[name].get("dependencies", [])]
    return seen


def test_the_bot_installs_without_the_research_packages() -> None:
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    (me,) = [p for p in lock["package"] if p["name"] == "mafiabot"]
    bot = _closure(lock, [d["name"] for d in me["dependencies"]])
    assert not bot & RESEARCH_ONLY, sorted(bot & RESEARCH_ONLY)
    research = _closure(lock, [d["name"] for d in me["optional-dependencies"]["research"]])
    assert research >= RESEARCH_ONLY


BLOCKED = """
import sys
for name in ("sklearn", "matplotlib", "scipy"):
    sys.modules[name] = None  # as if not installed: find_spec is None, import fails
sys.argv[0] = "mafiabot"
from mafiabot.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize(
    ("command", "package"), [("likeness", "scikit-learn"), ("report", "matplotlib")]
)
def test_a_research_command_without_the_extra_says_what_to_install(
    command: str, package: str, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    subprocess.run(
        [sys.executable, "-m", "mafiabot.cli", "db", "upgrade", "--db", db], cwd=ROOT, check=True,
        capture_output=True,
    )  # fmt: skip
    args = [command, "--db", db] + (["--out", str(tmp_path / "out")] if command == "report" else [])
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED, *args], cwd=ROOT, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"mafiabot {command}: needs {package}"), lines[0]
    assert "uv sync --extra research" in lines[0] and "mafiabot[research]" in lines[0]
    assert not (tmp_path / "out").exists()
