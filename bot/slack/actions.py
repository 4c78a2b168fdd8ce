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

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.errors import ServiceError
from bot.service.live import LiveGame
from bot.service.port import GameService
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


@dataclass(frozen=True)
class Menu:
    """What tells the vote menu from the night-action menu; everything else is one path."""

    #: was a menu with this block-id key (the vote's phase seq, the night's number) drawn for
    #: this phase
    drawn_for: Callable[[Phase, int], bool]
    #: the answer to a click on a menu whose phase is over
    closed: str
    #: the service call: (service, game id, seat, value, at, platform id) -> applied?
    apply: Callable[[GameService, str, int, str, datetime | None, str | None], Awaitable[bool]]
    #: before the rules' refusal ("Not counted: ...")
    refused: str
    #: the answer once it is taken into account
    done: Callable[[str], str]


VOTE = Menu(
    drawn_for=lambda phase, seq: phase.seq == seq,
    closed="That vote is closed.",
    apply=lambda service, game_id, seat, value, at, pid: service.vote(
        game_id, seat, None if value == B.ABSTAIN else value, at=at, platform_id=pid
    ),
    refused="Not counted",
    done=lambda value: (
        "You abstain. You can still change your mind until the deadline."
        if value == B.ABSTAIN
        else f"Your vote: {value}. You can change it until the deadline."
    ),
)
NIGHT_ACT = Menu(
    drawn_for=lambda phase, number: phase.kind.is_night and phase.number == number,
    closed="That night is over.",
    apply=lambda service, game_id, seat, value, at, pid: service.night_act(
        game_id, seat, value, at=at, platform_id=pid
    ),
    refused="Not done",
    done=lambda value: f"Noted: {value}. You can change your choice until the night ends.",
)


async def choose(
    menu: Menu, service: GameService, user: str, block_id: str, value: str, action_ts: str
) -> str:
    """A choice picked from ``menu`` in a booth, to the service; the answer for the clicker."""
    found = _menu(service, user, block_id)
    if isinstance(found, str):
        return found
    game, seat, key = found
    at = ts_moment(action_ts)
    if not _made_in(game, lambda phase: menu.drawn_for(phase, key), at):
        return menu.closed
    try:
        applied = await menu.apply(service, game.id, seat, value, at, action_id(user, action_ts))
    except (RuleError, ServiceError) as err:
        return f"{menu.refused}: {err}"
    return menu.done(value) if applied else ALREADY
