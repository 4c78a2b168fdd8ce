"""Where the LLMafia games live: ``MAFIABOT_LLMAFIA_DIR``, else ``shared/data/llmafia/games``
beside the repository (how the project's machines and CI lay it out)."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def llmafia_games_dir(configured: str = "") -> Path:
    """``configured`` (`Settings.llmafia_dir`), else MAFIABOT_LLMAFIA_DIR, else the default."""
    configured = configured or os.environ.get("MAFIABOT_LLMAFIA_DIR", "")
    if configured:
        return Path(configured)
    return REPO_ROOT.parent / "shared" / "data" / "llmafia" / "games"
