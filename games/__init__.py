"""mafiabot's rules engine: pure, deterministic, no I/O.

``new_game`` deals roles and opens day 1; ``apply`` takes one action and returns the new state
and the events it caused. Time is always passed in; randomness comes from the game's seed.
"""

from games.actions import Abort, Action, NightAct, Say, Tick, Vote
from games.config import GameConfig, default_mafia_count
from games.engine import apply, new_game
from games.errors import ConfigError, RuleError
from games.state import GameState, Phase, PhaseKind, SeatState

__all__ = [
    "Abort",
    "Action",
    "ConfigError",
    "GameConfig",
    "GameState",
    "NightAct",
    "Phase",
    "PhaseKind",
    "RuleError",
    "Say",
    "SeatState",
    "Tick",
    "Vote",
    "apply",
    "default_mafia_count",
    "new_game",
]
