"""Votes, night actions and seat changes (kick, substitute, AFK takeover).

Every refusal is an ephemeral answer only the person sees: not a player, eliminated, a menu
of a phase that is over, a vote that is not open... The service and the engine decide what is
allowed; this module only finds the seat of whoever clicked and words the answer.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import discord

from bot.discord.render import seat_card
from bot.discord.rooms import Room
from bot.service import LiveGame, ServiceError
from games.errors import RuleError

if TYPE_CHECKING:
    from bot.discord.app import MafiaBot

log = logging.getLogger(__name__)

NOT_A_PLAYER = "You're not playing in this game; you can watch the stage, though."
CLOSED = "That menu belongs to a phase that is over."


class Actions:
    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    async def _seat(
        self, interaction: discord.Interaction[Any], game_id: str, seq: int
    ) -> tuple[LiveGame, int] | None:
        game = self.bot.service.games.get(game_id)
        if game is None or game.state is None:
            await self.bot.reply(interaction, "This game is not running.")
            return None
        seat = game.seat_of_user(str(interaction.user.id))
        if seat is None or seat.is_agent:
            await self.bot.reply(interaction, NOT_A_PLAYER)
            return None
        state = game.state
        if state.over:
            await self.bot.reply(interaction, "The game is over.")
            return None
        if not state.seats[seat.index].alive:
            await self.bot.reply(
                interaction,
                "You have been eliminated, so you can no longer vote or act. "
                "You can keep watching.",
            )
            return None
        if state.phase.seq != seq:
            await self.bot.reply(interaction, CLOSED)
            return None
        return game, seat.index

    async def vote(
        self,
        interaction: discord.Interaction[Any],
        game_id: str,
        seq: int,
        target: str | None,
        *,
        night: bool,
    ) -> None:
        found = await self._seat(interaction, game_id, seq)
        if found is None:
            return
        _, seat = found
        try:
            await self.bot.service.vote(game_id, seat, target)
        except (RuleError, ServiceError) as exc:
            await self.bot.reply(interaction, str(exc))
            return
        self.bot.afk.touch(game_id, seat)
        what = "You abstain" if target is None else f"Your vote: {target}"
        await self.bot.reply(interaction, f"{what}. You can change it until the vote ends.")

    async def night_act(
        self, interaction: discord.Interaction[Any], game_id: str, seq: int, target: str
    ) -> None:
        found = await self._seat(interaction, game_id, seq)
        if found is None:
            return
        _, seat = found
        try:
            await self.bot.service.night_act(game_id, seat, target)
        except (RuleError, ServiceError) as exc:
            await self.bot.reply(interaction, str(exc))
            return
        self.bot.afk.touch(game_id, seat)
        await self.bot.reply(interaction, f"Noted: {target}. You can change it until dawn.")

    # --- seat changes ------------------------------------------------------------------------

    async def takeover(self, room: Room, seat: int, *, why: str) -> None:
        """Hand ``seat`` to an agent, quietly (no event, nothing on the stage)."""
        uid = room.humans.get(seat)
        await self.bot.service.replace_seat(room.game_id, seat, agent_kind=self.bot.agent_kind)
        room.humans.pop(seat, None)
        await self.bot.links.incident(
            room.game_id, uid or 0, what=f"seat {seat} to an agent ({why})"
        )
        if uid is None:
            return
        if why == "afk":
            self.bot.renderer.booth_to(
                room,
                seat,
                uid,
                "You were away for a while, so an agent plays your seat now. You can keep "
                "watching the stage. Thanks for playing!",
            )
        await self._leave_threads(room, seat, uid, keep_booth=why == "afk")

    async def substitute(self, room: Room, seat: int, user_id: int) -> None:
        """Give ``seat`` to another person: a new booth with the role card and what they need
        to know. A mafia seat's den posts go to the new booth from now on (the renderer reads
        who holds the seat), and no longer to the old one."""
        old = room.humans.get(seat)
        await self.bot.service.replace_seat(room.game_id, seat, user_id=str(user_id))
        room.humans[seat] = user_id
        await self.bot.links.incident(room.game_id, user_id, what=f"seat {seat} to a substitute")
        if old is not None:
            await self._leave_threads(room, seat, old, keep_booth=False)
        game = self.bot.service.games[room.game_id]
        state = game.state
        assert state is not None
        card = seat_card(state, seat)
        phase = state.phase
        self.bot.renderer.booth(
            room,
            seat,
            f"You are taking over a seat in a game in progress. {card}\n"
            f"Now: {phase.kind.value.replace('_', ' ')} {phase.number}. Type here to talk.",
        )
        self.bot.renderer.seat_menus(room, game, seat)

    async def _leave_threads(self, room: Room, seat: int, uid: int, *, keep_booth: bool) -> None:
        booth = room.booths.get(seat)
        if booth is None or booth.user_id != uid or keep_booth:
            return
        try:
            await self.bot.http.remove_user_from_thread(booth.thread_id, uid)
            await self.bot.rooms.archive(booth.thread_id)
        except discord.HTTPException as exc:
            log.warning("could not close the booth of %s in %s: %s", uid, room.game_id, exc)
        room.booths.pop(seat, None)
        self.bot.rooms.threads.pop(booth.thread_id, None)
        self.bot.relay.queues.pop(booth.thread_id, None)
        await self.bot.links.delete(room.game_id, "booth", seat)
