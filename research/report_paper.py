"""What the report compares: the two player types and roles its tables split by, the survey's
ratings, and the LLMafia paper's published figures to set beside ours."""

from __future__ import annotations

from typing import Any

__all__ = ["PAPER", "RATINGS", "ROLES", "TYPES"]

TYPES = ("human", "agent")
ROLES = ("mafia", "bystander")
RATINGS = ("similarity", "timing", "relevance")

# The paper's published figures (21 games with Llama-3.1-8B), for side-by-side tables.
PAPER: dict[str, Any] = {
    "games": 21,
    "phases_per_game": 4.86,
    "players_per_game": 7.86,
    "messages_per_game": 121.81,
    "agent_messages_per_game": 10.05,
    "messages_per_player_per_day_phase": {
        "human": {"mean": 4.54, "std": 3.44},
        "agent": {"mean": 4.28, "std": 2.50},
    },
    "words_per_message": {
        "human": {"mean": 4.19, "std": 1.89},
        "agent": {"mean": 10.67, "std": 3.46},
    },
    "repeated_messages": {
        "human": {"mean": 0.44, "std": 1.14},
        "agent": {"mean": 1.00, "std": 2.56},
    },
    "unique_words": {
        "human": {"mean": 31.56, "std": 22.34},
        "agent": {"mean": 66.67, "std": 37.74},
    },
    "separability_f1": {"agent_vs_human": 0.98, "mafia_vs_bystander": 0.88, "day_vs_night": 0.91},
    "survey": {
        "identified_rate": 0.596,
        "similarity": {"mean": 2.63, "std": 1.32},
        "timing": {"mean": 3.19, "std": 1.33},
        "relevance": {"mean": 2.99, "std": 1.37},
    },
}
