"""How the person at the keyboard runs ``mafiabot``, for the commands we suggest to them.

After ``make play`` (or ``uv run mafiabot ...``) there is no ``mafiabot`` on the shell's PATH:
uv put the virtualenv on the PATH of this process only. A hint saying ``mafiabot play --resume``
would then fail when typed, so we say ``uv run mafiabot play --resume`` instead.
"""

from __future__ import annotations

import os
import shutil


def prog() -> str:
    """``uv run mafiabot`` when uv started this process (its PATH change ends with it) or no
    ``mafiabot`` is on the PATH; plain ``mafiabot`` otherwise (an activated virtualenv, the
    container image)."""
    if os.environ.get("UV_RUN_RECURSION_DEPTH") or shutil.which("mafiabot") is None:
        return "uv run mafiabot"
    return "mafiabot"


def command(args: str) -> str:
    """``command("play --resume")`` -> the line to type, e.g. ``uv run mafiabot play --resume``."""
    return f"{prog()} {args}".strip()
