"""Vote and night menus clicked in a booth -> the service.

Each choice goes to the service with the moment Slack says it was made (``action_ts``) and
its platform id (`bot.slack.moments`): a vote clicked just before the deadline counts, and a
replayed request (Bolt accepts a signed one for five minutes) is applied once only, so it can
never undo the player's later change. The menu's block id says which game and phase it was
drawn for (``mafia_vote:<game>:<phase seq>``, ``mafia_act:<game>:<night number>``): a menu
left over from an earlier phase is refused for what it is. Whom a seat may pick is the
engine's to judge (the menus come from its `ChoicesOffered`); a refusal goes to the clicker.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from bot.errors import ServiceError
from bot.service import GameService, LiveGame
from bot.slack import blocks as B
from bot.slack.moments import action_id, ts_moment
from games.errors import RuleError
from games.state import Phase

ALREADY = "That choice was already taken into account."


def _menu(service: GameService, user: str, block_id: str) -> tuple[LiveGame, int, int] | str:
    """(game, the clicker's seat, the menu's phase key) from a menu's block id
    (``<action>:<game>:<key>``), or why the click goes nowhere."""
    parts = block_id.split(":")
    if len(parts) != 3 or not parts[2].isdigit():
        return "That menu is out of date."
    game = service.games.get(parts[1])
    if game is None or game.state is None or game.state.over:
        return "That game is over."
    seat = game.seat_of_user(user)
    if seat is None:
        return "You have no seat in this game."
    return game, seat.index, int(parts[2])


def _made_in(game: LiveGame, menu: Callable[[Phase], bool], at: datetime | None) -> bool:
    """Was a choice made at ``at`` made while the ``menu``'s phase was on? The current phase,
    or the one just before it when the click left before the change (on its way at the
    deadline)."""
    state = game.state
    assert state is not None
    if menu(state.phase):
        return True
    if state.prior is None or not menu(state.prior.phase) or at is None:
        return False
    ago = (datetime.now(UTC) - at).total_seconds() * game.clock.speed
    return game.clock.now().timestamp() - ago < state.opened_at().timestamp()


async def cast_vote(
    service: GameService, user: str, block_id: str, value: str, action_ts: str
) -> str:
    found = _menu(service, user, block_id)
    if isinstance(found, str):
        return found
    game, seat, seq = found
    at = ts_moment(action_ts)
    if not _made_in(game, lambda p: p.seq == seq, at):
        return "That vote is closed."
    target = None if value == B.ABSTAIN else value
    try:
        applied = await service.vote(
            game.id, seat, target, at=at, platform_id=action_id(user, action_ts)
        )
    except (RuleError, ServiceError) as err:
        return f"Not counted: {err}"
    if not applied:
        return ALREADY
    if target is None:
        return "You abstain. You can still change your mind until the deadline."
    return f"Your vote: {target}. You can change it until the deadline."


async def night_act(
    service: GameService, user: str, block_id: str, value: str, action_ts: str
) -> str:
    found = _menu(service, user, block_id)
    if isinstance(found, str):
        return found
    game, seat, number = found
    at = ts_moment(action_ts)
    if not _made_in(game, lambda p: p.kind.is_night and p.number == number, at):
        return "That night is over."
    try:
        applied = await service.night_act(
            game.id, seat, value, at=at, platform_id=action_id(user, action_ts)
        )
    except (RuleError, ServiceError) as err:
        return f"Not done: {err}"
    if not applied:
        return ALREADY
    return f"Noted: {value}. You can change your choice until the night ends."
