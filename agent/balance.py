"""A setup's balance, measured: N all-baseline games through the fast path, each faction's win
rate with a 95% interval (Wilson score).

Factions: ``town`` (the bystanders' side), ``mafia``, one key per neutral role in the setup
(a jester voted out, a survivor alive at the end, a serial killer's game...; a neutral's win
counts for its role, whoever else won) and ``draw``. Rates of town, mafia, a solo killer and
draw add up to 1; neutral side wins are counted on top.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from agent.fastsim import simulate_fast
from games.config import GameConfig
from games.events import SoloWin
from games.roles import get_role

__all__ = ["Balance", "measure", "wilson"]

Z95 = 1.959963984540054


def wilson(wins: int, games: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (sound near 0 and 1, unlike p ± 1.96 se)."""
    if games <= 0:
        return 0.0, 1.0
    p = wins / games
    denom = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denom
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Balance:
    setup: str
    players: int
    games: int
    #: faction -> games won
    wins: dict[str, int]

    def rate(self, faction: str) -> float:
        return self.wins.get(faction, 0) / self.games if self.games else 0.0

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"setup": self.setup, "players": self.players, "games": self.games}
        for faction, won in self.wins.items():
            low, high = wilson(won, self.games)
            out[faction] = {"wins": won, "rate": won / self.games, "low": low, "high": high}
        return out


def factions(config: GameConfig, players: int) -> list[str]:
    """The keys a balance reports for ``config`` at ``players`` seats, in order."""
    dealt = config.dealt_roles(players) or ()
    neutrals = sorted({r for r in dealt if get_role(r).faction == "neutral"})
    if "executioner" in neutrals and "jester" not in neutrals:
        neutrals.append("jester")  # an executioner may become one
    return ["town", "mafia", *neutrals]


def measure(config: GameConfig, players: int, games: int, seed: int = 0) -> Balance:
    """Play ``games`` games (seeds ``seed`` ...) and count each faction's wins."""
    config.validate(players)
    keys = factions(config, players)
    wins: Counter[str] = Counter(dict.fromkeys(keys, 0))
    for s in range(seed, seed + games):
        result = simulate_fast(config, players, s, keep_events=True)
        winner = result.winner
        if winner == "bystanders":
            wins["town"] += 1
        else:  # "mafia", a solo killer's role, or None: a draw (`games.events.is_draw`)
            wins[winner or "draw"] += 1
        for event in result.events or ():
            if isinstance(event, SoloWin):
                wins[event.role] += 1
    name = config.setup or ("custom" if config.role_list else "llmafia")
    return Balance(name, players, games, dict(wins))
