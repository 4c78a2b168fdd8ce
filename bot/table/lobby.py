"""Lobby rules, the same on every platform: the roster, how many AI players are seated and
with which persona, who may start or stop a game, and whether it can start.

Where anyone sits is the service's business (`bot.service.live.seating`: everyone is seated in a
seed-drawn order at the start), so the AI players are joined last without giving their place
away; the roster never names them.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.service.live import LiveGame
from bot.service.port import GameService
from bot.table.config import config_summary
from games.config import MAX_PLAYERS, MIN_PLAYERS, GameConfig
from games.errors import ConfigError


def may_manage(game: LiveGame, user: str | None, *, moderator: bool) -> bool:
    """Start, configure, end, remove a player: the game's host, or a server moderator
    (Discord: Manage Server or a moderator role; Slack: a workspace admin)."""
    return moderator or (user is not None and user == game.host_user_id)


def agents_to_seat(game: LiveGame, wanted: int) -> int:
    """AI seats still to add so the table has ``wanted`` of them."""
    return max(0, wanted - sum(1 for s in game.seats if s.is_agent))


def start_problem(game: LiveGame, wanted_agents: int) -> str | None:
    """Why the lobby cannot start yet (one sentence), or None when it can."""
    if game.status != "lobby":
        return "This game has already started (or is closed)."
    try:
        game.config.validate(len(game.seats) + agents_to_seat(game, wanted_agents))
    except ConfigError as err:
        return f"Can't start yet: {err}"
    return None


async def seat_agents(
    service: GameService,
    game: LiveGame,
    wanted: int,
    *,
    agent_kind: str | None,
    persona: str | None = None,
) -> None:
    """Join the AI players the host asked for, each with the lobby's persona."""
    for _ in range(agents_to_seat(game, wanted)):
        await service.join(game.id, None, is_agent=True, agent_kind=agent_kind, persona=persona)


def lobby_text(humans: Sequence[str], agents: int, config: GameConfig, *, host: str) -> str:
    """The lobby roster: who joined (as the platform shows people), how many AI players will
    be seated, and what is still missing. The AI's seat is never among the names."""
    total = len(humans) + agents
    lines = [
        f"Host: {host}",
        f"Players ({len(humans)} joined + {agents} AI): "
        + (", ".join(humans) if humans else "nobody yet"),
    ]
    if total < MIN_PLAYERS:
        missing = MIN_PLAYERS - total
        lines.append(f"{missing} more {'player is' if missing == 1 else 'players are'} needed.")
    elif total > MAX_PLAYERS:
        lines.append(f"At most {MAX_PLAYERS} players in all; {total - MAX_PLAYERS} too many.")
    else:
        lines.append("Ready: the host can start the game.")
    lines.append(config_summary(config, agents))
    lines.append(
        "Everyone plays under a character name. One or more players are an AI agent; "
        "nobody is told which."
    )
    return "\n".join(lines)
