"""The research tools stay out of the live path (issue 25, item 4): no module of `bot/`,
`agent/` or `games/` imports `research/`, except the command line, inside the research
commands; so `mafiabot` starts without loading it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parents[1]
LIVE = ("bot", "agent", "games")
#: the command line's modules that may name research, and then only inside a function (a lazy
#: import: `replay`, and the research commands)
WIRING = ("mafiabot/cli.py", "mafiabot/data_cli.py")


def research_imports(tree: ast.AST) -> list[tuple[int, bool]]:
    """(line, inside a function?) of every import of ``research`` or a module of it."""
    found: list[tuple[int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom) and not child.level:
                names = [child.module or ""]
            if any(n == "research" or n.startswith("research.") for n in names):
                found.append((cast("ast.Import | ast.ImportFrom", child).lineno, in_function))
            visit(
                child,
                in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef),
            )

    visit(tree, False)
    return found


def test_research_imports_are_found_and_placed() -> None:
    code = (
        "import research\n"
        "from research.report import x\n"
        "from bot.research_notes import y\n"
        "def f():\n"
        "    from research import commands\n"
    )
    assert research_imports(ast.parse(code)) == [(1, False), (2, False), (5, True)]


def test_the_live_packages_do_not_import_research() -> None:
    wrong: list[str] = []
    for package in (*LIVE, "mafiabot"):
        for f in sorted((ROOT / package).rglob("*.py")):
            rel = f.relative_to(ROOT).as_posix()
            for line, lazy in research_imports(ast.parse(f.read_text(encoding="utf-8"))):
                if not (rel in WIRING and lazy):
                    wrong.append(f"{rel}:{line}")
    assert not wrong, wrong


def test_the_command_line_starts_without_loading_research() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from mafiabot.cli import app\n"
        "result = CliRunner().invoke(app, ['--help'])\n"
        "assert result.exit_code == 0, result.output\n"
        "loaded = sorted(m for m in sys.modules if m == 'research' or m.startswith('research.'))\n"
        "print(loaded)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout
