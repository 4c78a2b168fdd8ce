"""tools/import_cycles.py: finds circles however the import is written, and only real ones."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import import_cycles


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        f = tmp_path / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")
    return tmp_path / "pkg"


def _circles(root: Path) -> list[list[str]]:
    found: list[list[str]] = import_cycles.circles(
        import_cycles.import_graph(import_cycles.modules([root]))
    )
    return found


@pytest.mark.parametrize(
    "a_imports",
    [
        "from pkg.b import B",
        "import pkg.b",
        "from . import b",
        "from .b import B",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B",
        "def f():\n    from pkg.b import B\n    return B",
    ],
)
def test_a_circle_is_found_however_the_import_is_written(tmp_path: Path, a_imports: str) -> None:
    root = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": a_imports + "\n",
            "pkg/b.py": "from pkg.c import C\nB = 1\n",
            "pkg/c.py": "from pkg import a\nC = 1\n",
            "pkg/d.py": "from pkg.a import f\n",  # imports into the circle, not part of it
        },
    )
    assert _circles(root) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_a_chain_and_a_package_importing_its_own_modules_are_no_circle(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.a import A\n",
            "pkg/a.py": "from pkg.b import B\nA = 1\n",
            "pkg/b.py": "import os\nB = 1\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/x.py": "from pkg.sub import y\n",
            "pkg/sub/y.py": "from .. import b\n",
        },
    )
    assert _circles(root) == []


def test_the_command_exits_1_on_a_circle_and_0_without(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from pkg import b\n", "pkg/b.py": ""})
    monkeypatch.chdir(tmp_path)
    assert import_cycles.main(["pkg"]) == 0
    (tmp_path / "pkg/b.py").write_text("from pkg import a\n", encoding="utf-8")
    assert import_cycles.main(["pkg"]) == 1
    assert "circle: pkg.a pkg.b" in capsys.readouterr().out
    assert import_cycles.main(["nowhere"]) == 2
