"""Votes, night actions and seat changes (kick, substitute, AFK takeover).

Every refusal is an ephemeral answer only the person sees: not a player, eliminated, a menu
of a phase that is over, a vote that is not open... The service and the engine decide what is
allowed; this module only finds the seat of whoever clicked (`click_seat`, a pure function of
the game) and words the answer. A click reaches the service with the moment Discord took it
(the interaction's snowflake time) and its id (``discord:ix:<interaction id>``), so a pick made
before the deadline counts and the same interaction delivered twice counts once.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import discord

from bot.discord.notify import Notifier
from bot.discord.posts import open_act, seat_card
from bot.discord.relay import Relay, interaction_id, moment
from bot.discord.rooms import Room, Rooms
from bot.errors import ServiceError
from bot.service.live import LiveGame
from bot.service.port import GameService
from games.errors import RuleError

if TYPE_CHECKING:
    from bot.discord.links import LinkStore

log = logging.getLogger(__name__)

NOT_A_PLAYER = "You're not playing in this game; you can watch the stage, though."
CLOSED = "That menu belongs to a phase that is over."
NOT_RUNNING = "This game is not running."
OVER = "The game is over."
ELIMINATED = "You have been eliminated, so you can no longer vote or act. You can keep watching."
ALREADY = "That choice was already counted."
AWAY = (
    "You were away for a while, so an agent plays your seat now. You can keep watching the "
    "stage. Thanks for playing!"
)

Reply = Callable[[discord.Interaction[Any], str], Awaitable[None]]


def click_seat(
    game: LiveGame | None,
    user_id: int,
    seq: int,
    night_menu: Callable[[int], int | None] | None = None,
) -> int | str:
    """The seat of the person who clicked a menu of phase ``seq``, or why they can't.
    ``night_menu(seat)``: the phase of the night-action menu the seat may still use tonight
    (offered at the night's first phase, valid until dawn)."""
    if game is None or game.state is None:
        return NOT_RUNNING
    seat = game.seat_of_user(str(user_id))
    if seat is None or seat.is_agent:
        return NOT_A_PLAYER
    state = game.state
    if state.over:
        return OVER
    if not state.seats[seat.index].alive:
        return ELIMINATED
    if state.phase.seq != seq and (night_menu is None or night_menu(seat.index) != seq):
        return CLOSED
    return seat.index


class Actions:
    def __init__(
        self,
        client: discord.Client,
        service: GameService,
        rooms: Rooms,
        links: LinkStore,
        notifier: Notifier,
        relay: Relay,
        *,
        reply: Reply,
        agent_kind: str,
        seat_menus: Callable[[Room, LiveGame, int], None],
    ) -> None:
        self.client = client
        self.service = service
        self.rooms = rooms
        self.links = links
        self.notify = notifier
        self.relay = relay
        self.reply = reply
        self.agent_kind = agent_kind
        self.seat_menus = seat_menus

    async def _seat(
        self, interaction: discord.Interaction[Any], game_id: str, seq: int, *, act: bool = False
    ) -> int | None:
        game = self.service.games.get(game_id)
        room = self.rooms.get(game_id)

        def night_menu(seat: int) -> int | None:
            if room is None or game is None or game.state is None:
                return None
            found = open_act(room, game.state, seat)
            return None if found is None else found.phase_seq

        found = click_seat(game, interaction.user.id, seq, night_menu if act else None)
        if isinstance(found, str):
            await self.reply(interaction, found)
            return None
        return found

    async def vote(
        self,
        interaction: discord.Interaction[Any],
        game_id: str,
        seq: int,
        target: str | None,
        *,
        night: bool,
    ) -> None:
        seat = await self._seat(interaction, game_id, seq)
        if seat is None:
            return
        try:
            applied = await self.service.vote(game_id, seat, target, **self._made(interaction))
        except (RuleError, ServiceError) as exc:
            await self.reply(interaction, str(exc))
            return
        if not applied:
            await self.reply(interaction, ALREADY)
            return
        what = "You abstain" if target is None else f"Your vote: {target}"
        await self.reply(interaction, f"{what}. You can change it until the vote ends.")

    async def night_act(
        self, interaction: discord.Interaction[Any], game_id: str, seq: int, target: str
    ) -> None:
        seat = await self._seat(interaction, game_id, seq, act=True)
        if seat is None:
            return
        try:
            applied = await self.service.night_act(game_id, seat, target, **self._made(interaction))
        except (RuleError, ServiceError) as exc:
            await self.reply(interaction, str(exc))
            return
        if not applied:
            await self.reply(interaction, ALREADY)
            return
        await self.reply(interaction, f"Noted: {target}. You can change it until dawn.")

    @staticmethod
    def _made(interaction: discord.Interaction[Any]) -> dict[str, Any]:
        """When and which click: the interaction's snowflake time and id."""
        return {"at": moment(interaction.id), "platform_id": interaction_id(interaction.id)}

    # --- seat changes ------------------------------------------------------------------------

    async def takeover(self, room: Room, seat: int, *, why: str) -> None:
        """Hand ``seat`` to an agent, quietly (no event, nothing on the stage)."""
        uid = room.humans.get(seat)
        await self.service.replace_seat(room.game_id, seat, agent_kind=self.agent_kind)
        room.humans.pop(seat, None)
        await self.links.incident(room.game_id, uid or 0, what=f"seat {seat} to an agent ({why})")
        if uid is None:
            return
        if why == "afk":
            self.notify.booth_to(room, seat, uid, AWAY)
        await self._leave_threads(room, seat, uid, keep_booth=why == "afk")

    async def substitute(self, room: Room, seat: int, user_id: int) -> None:
        """Give ``seat`` to another person: a new booth with the role card and what they need
        to know. A mafia seat's den posts go to the new booth from now on (the notifier reads
        who holds the seat), and no longer to the old one."""
        old = room.humans.get(seat)
        await self.service.replace_seat(room.game_id, seat, user_id=str(user_id))
        room.humans[seat] = user_id
        await self.links.incident(room.game_id, user_id, what=f"seat {seat} to a substitute")
        if old is not None:
            await self._leave_threads(room, seat, old, keep_booth=False)
        game = self.service.games[room.game_id]
        state = game.state
        assert state is not None
        phase = state.phase
        self.notify.booth(
            room,
            seat,
            f"You are taking over a seat in a game in progress. {seat_card(state, seat)}\n"
            f"Now: {phase.kind.value.replace('_', ' ')} {phase.number}. Type here to talk.",
        )
        self.seat_menus(room, game, seat)

    async def _leave_threads(self, room: Room, seat: int, uid: int, *, keep_booth: bool) -> None:
        booth = room.booths.get(seat)
        if booth is None or booth.user_id != uid or keep_booth:
            return
        try:
            await self.client.http.remove_user_from_thread(booth.thread_id, uid)
            await self.rooms.archive(booth.thread_id)
        except discord.HTTPException as exc:
            log.warning("could not close the booth of %s in %s: %s", uid, room.game_id, exc)
        room.booths.pop(seat, None)
        self.rooms.threads.pop(booth.thread_id, None)
        self.relay.queues.pop(booth.thread_id, None)
        await self.links.delete(room.game_id, "booth", seat)
