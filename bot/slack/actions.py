"""Vote and night menus clicked in a booth -> the service.

The menu's block id says which game and phase it was drawn for (``mafia_vote:<game>:<seq>``),
so a menu left over from an earlier phase, or from before a restart, is refused for what it
is. Whom a seat may pick is the engine's to judge: a refusal's text goes to the clicker only.
"""

from __future__ import annotations

from bot.service import GameService, LiveGame, ServiceError
from bot.slack import blocks as B
from games.errors import RuleError


def _menu_id(block_id: str) -> tuple[str, int] | None:
    parts = block_id.split(":")
    if len(parts) != 3 or not parts[2].isdigit():
        return None
    return parts[1], int(parts[2])


def _seat(service: GameService, game_id: str, user: str) -> tuple[LiveGame, int] | str:
    game = service.games.get(game_id)
    if game is None or game.state is None or game.state.over:
        return "That game is over."
    seat = game.seat_of_user(user)
    if seat is None:
        return "You have no seat in this game."
    return game, seat.index


async def cast_vote(service: GameService, user: str, block_id: str, value: str) -> str:
    parsed = _menu_id(block_id)
    if parsed is None:
        return "That menu is out of date."
    game_id, seq = parsed
    found = _seat(service, game_id, user)
    if isinstance(found, str):
        return found
    game, seat = found
    assert game.state is not None
    if game.state.phase.seq != seq:
        return "That vote is closed."
    target = None if value == B.ABSTAIN else value
    try:
        await service.vote(game_id, seat, target)
    except (RuleError, ServiceError) as err:
        return f"Not counted: {err}"
    if target is None:
        return "You abstain. You can still change your mind until the deadline."
    return f"Your vote: {target}. You can change it until the deadline."


async def night_act(service: GameService, user: str, block_id: str, value: str) -> str:
    parsed = _menu_id(block_id)
    if parsed is None:
        return "That menu is out of date."
    game_id, number = parsed
    found = _seat(service, game_id, user)
    if isinstance(found, str):
        return found
    game, seat = found
    assert game.state is not None
    if not game.state.phase.kind.is_night or game.state.phase.number != number:
        return "That night is over."
    try:
        await service.night_act(game_id, seat, value)
    except (RuleError, ServiceError) as err:
        return f"Not done: {err}"
    return f"Noted: {value}. You can change your choice until the night ends."
