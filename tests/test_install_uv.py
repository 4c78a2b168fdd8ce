"""``make``'s uv step (tools/install-uv.sh) on a Python that can't make a virtual environment
(Debian without python3-venv): one line saying what to add, nothing left behind. Its
working path, on Debian's own /usr/bin/python3, is a CI step (.ci/run)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

NO_VENV = """#!/bin/sh
# a Debian python3 without python3-venv: `-m venv` fails with several lines
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin"
    echo "The virtual environment was not created successfully because ensurepip is not" >&2
    echo "available.  On Debian/Ubuntu systems, you need to install the python3-venv" >&2
    exit 1
fi
exit 0
"""


def test_a_python_without_venv_gets_one_line_with_the_command(tmp_path: Path) -> None:
    python = tmp_path / "python3"
    python.write_text(NO_VENV, encoding="utf-8")
    python.chmod(0o755)
    venv = tmp_path / "project" / ".tools" / "uv-venv"
    done = subprocess.run(
        ["sh", str(ROOT / "tools" / "install-uv.sh"), str(venv)],
        env={"PATH": "/usr/bin:/bin", "PYTHON": str(python)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "apt-get install python3-venv" in lines[0]
    assert not venv.exists()  # no half-made venv for the next try to trip over


def test_make_never_pip_installs_into_the_system_python() -> None:
    makefile = (ROOT / "Makefile").read_text("utf-8")
    assert "python3 -m pip install" not in makefile
    assert "tools/install-uv.sh" in makefile
