"""LLMafia's own analysis code, run as a researcher would: Python 3.12 (what it needs) in a
virtual environment of its own with numpy, matplotlib, scikit-learn and termcolor (its imports),
on the analysis files vendored under tests/vendor/llmafia (MIT, unmodified).

The interpreter: ``MAFIABOT_LLMAFIA_PYTHON``, else a ``python3.12`` on PATH that runs, else
pyenv's 3.12 (``pyenv root``/versions/3.12.*), else what ``uv python find 3.12`` knows (all
offline). The environment is built once per set of pins under the user's cache folder (uv
when it is there, else venv and pip; packages come from the package index) and reused.
`environment` returns None with the reason when no 3.12 can be found; the tests skip on that,
except on CI (``CI=true``), where they fail instead.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
VENDOR = REPO / "tests" / "vendor"
FIGURES = VENDOR / "llmafia_figures.py"
SHARED_GAMES = REPO.parent / "shared" / "data" / "llmafia" / "games"
# LLMafia's requirements.txt pins for what analyze.py imports
PINS = ["numpy~=2.2.4", "matplotlib==3.10.1", "scikit-learn~=1.6.1", "termcolor==2.5.0"]
ON_CI = os.environ.get("CI", "").lower() == "true"


def _runs_312(exe: str | Path) -> bool:
    try:
        out = subprocess.run(
            [str(exe), "-c", "import sys; print(sys.version_info[:2] == (3, 12))"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.strip() == "True"


def find_python312() -> Path | None:
    configured = os.environ.get("MAFIABOT_LLMAFIA_PYTHON")
    candidates: list[str | Path] = [configured] if configured else []
    on_path = shutil.which("python3.12")
    if on_path:
        candidates.append(on_path)
    roots = [Path.home() / ".pyenv"]
    if shutil.which("pyenv"):
        out = subprocess.run(["pyenv", "root"], capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip():
            roots.insert(0, Path(out.stdout.strip()))
    for root in roots:
        candidates.extend(sorted((root / "versions").glob("3.12*/bin/python3.12"), reverse=True))
    if shutil.which("uv"):
        out = subprocess.run(
            ["uv", "python", "find", "3.12"],
            capture_output=True,
            text=True,
            env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"},
        )
        if out.returncode == 0 and out.stdout.strip():
            candidates.append(out.stdout.strip())
    for exe in candidates:
        if _runs_312(exe):
            return Path(exe)
    return None


def environment() -> tuple[Path | None, str]:
    """(the environment's python, "") or (None, why there is none)."""
    base = find_python312()
    if base is None:
        return None, (
            "no Python 3.12 found (LLMafia's analysis needs it): set MAFIABOT_LLMAFIA_PYTHON, "
            "or install it (pyenv install 3.12)"
        )
    key = hashlib.sha256(json.dumps([str(base), PINS]).encode()).hexdigest()[:12]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mafiabot"
    venv = cache / f"llmafia-py312-{key}"
    python = venv / "bin" / "python"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time; the others wait and reuse it
        if (venv / "ready").exists():
            return python, ""
        shutil.rmtree(venv, ignore_errors=True)
        uv = shutil.which("uv")
        if uv:
            _run([uv, "venv", "-q", "--python", str(base), str(venv)])
            _run([uv, "pip", "install", "-q", "--python", str(python), *PINS])
        else:
            _run([str(base), "-m", "venv", str(venv)])
            _run([str(python), "-m", "pip", "install", "-q", *PINS])
        (venv / "ready").write_text(" ".join(PINS))
    return python, ""


def _run(cmd: list[str]) -> None:
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {out.stderr.strip()[-2000:]}")


def figures(python: Path, games: Path, workdir: Path, *, main: bool = False) -> dict[str, Any]:
    """analyze.py's per-game figures for the game folders in ``games`` (run from ``workdir``,
    where ``games`` is linked as ./games, its DIRS_PREFIX); with ``main``, also what its
    ``main()`` prints over them all (under "main")."""
    workdir.mkdir(parents=True, exist_ok=True)
    link = workdir / "games"
    if not link.exists():
        link.symlink_to(games.resolve(), target_is_directory=True)
    out = subprocess.run(
        [str(python), str(FIGURES), *(["--main"] if main else [])],
        cwd=workdir,
        capture_output=True,
        text=True,
        # analyze.py orders same-second lines by iterating a set of strings: fix the hash seed so
        # that its tie order (and so its timing figures) is the same from run to run
        env={**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": "", "PYTHONHASHSEED": "0"},
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def python_for_tests() -> Path:
    """The environment, or skip (fail on CI) saying why there is none."""
    import pytest

    python, why = environment()
    if python is None:
        if ON_CI:
            pytest.fail(why)
        pytest.skip(why)
    return python


if __name__ == "__main__":  # CI builds the environment before the tests: `python -m ...`
    ready, reason = environment()
    print(f"LLMafia analysis environment: {ready or reason}")
    sys.exit(0 if ready else 1)
