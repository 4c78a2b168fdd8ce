"""Which games LLMafia's dataset format can hold (`bot.protection.dataset.export` leaves the
others out of ``llmafia/`` and says why in the manifest)."""

from __future__ import annotations

from collections.abc import Iterable

from bot.protection.dataset.llmafia_model import LLMafiaGame
from games.setups import LLMAFIA_ROLES

__all__ = ["llmafia_problem", "setup_problem"]


def setup_problem(roles: Iterable[str | None]) -> str | None:
    """Why LLMafia's format cannot express a game dealt ``roles``, or None."""
    odd = sorted({r for r in roles if r is not None and r not in LLMAFIA_ROLES})
    if not odd:
        return None
    return (
        f"its setup has roles LLMafia's format can't express ({', '.join(odd)}); "
        "the JSONL and CSV exports keep them"
    )


def llmafia_problem(game: LLMafiaGame) -> str | None:
    """Why LLMafia's format cannot hold ``game``, or None: its analysis finds the one LLM player
    of a game by that player's log file, and refuses a game with none or several."""
    agents = len(game.llm_players)
    if agents == 0:
        return "it has no agent (LLMafia's analysis needs exactly one LLM player)"
    if agents > 1:
        return f"it has {agents} agents (LLMafia's analysis needs exactly one LLM player)"
    return None
