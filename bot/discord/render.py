"""The GameListener that shows a game on Discord: the service's events, and nothing else.

Players' lines arrive here as `MessageAccepted` events whoever wrote them, human or agent, and
leave through one function (`Rooms.speak`: the stage webhook, the character's name and
avatar, the same cleaning), so nothing in how a line looks says who wrote it.

Where things go, as in the LLMafia games:

- stage (the game channel): every player's day line (webhook), and the Game-Manager's public
  announcements (posted by the bot itself, which players cannot imitate): game start, phase
  starts with their duration, votes, eliminations with the role, the night's result, the
  winner with every role. The day vote's menu hangs under the "Voting is open" announcement.
- booth (private thread per human): role card and partners, phase timers, their own night
  actions and results, notes when a line is refused, the survey at the end.
- den (the mafia's night talk, the night vote and its menu): there is no den thread, whose
  member list would tell a human mafia whether a partner is a person or the agent. Each den
  post goes to the booth of every living human mafia (`Room.den_readers`); a partner's line
  through the same webhook as on the stage (``thread=`` the booth), so an agent's line and a
  person's look the same, and never back into the speaker's own booth, where they typed it.

What goes where is decided by the pure functions of `bot.discord.posts`; this class only
turns their `Post` specs into components and hands them to the `Notifier`. `on_events` is
called in order, for every game, from one task of the service, so it must not wait on Discord:
it only queues jobs on the per-place delivery queue (`bot.discord.delivery`), which keeps
their order.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence

import discord

from bot.discord.delivery import Job
from bot.discord.notify import DEN, MenuFor, Notifier
from bot.discord.posts import (
    STOPPED,
    Menu,
    Post,
    eliminated_posts,
    offer,
    phase_posts,
    resumed_posts,
    role_posts,
    seat_posts,
    track,
)
from bot.discord.relay import RelayMetrics
from bot.discord.rooms import Room, Rooms, real_deadline
from bot.discord.sanitize import relay_chunks
from bot.discord.survey import comment_message, survey_message
from bot.discord.views import night_action_view, night_vote_view, vote_view
from bot.players import survey
from bot.service.live import LiveGame
from games.events import (
    ChoicesOffered,
    Event,
    GameOver,
    InspectionResult,
    MessageAccepted,
    NightActionRecorded,
    PhaseStarted,
    PlayerEliminated,
    PrivateNote,
    RoleAssigned,
)
from games.narration import manager_line

log = logging.getLogger(__name__)


def menu_view(menu: Menu | None) -> discord.ui.View | None:
    """The components of a menu spec (a fresh view: each can be sent once)."""
    if menu is None:
        return None
    names = list(menu.names)
    if menu.kind == "vote":
        return vote_view(menu.game_id, menu.seq, names)
    if menu.kind == "kill":
        return night_vote_view(menu.game_id, menu.seq, names)
    return night_action_view(menu.game_id, menu.seq, menu.verb or "choose", names)


class Renderer:
    def __init__(
        self,
        rooms: Rooms,
        notifier: Notifier,
        *,
        manager_names: Callable[[], list[str]],
        finish_stage: Callable[[Room], Awaitable[None]],
        metrics: RelayMetrics | None = None,
        game_ended: Callable[[str], None] | None = None,
    ) -> None:
        self.rooms = rooms
        self.notify = notifier
        self.manager_names = manager_names
        self.finish_stage = finish_stage
        self.metrics = metrics
        #: told the id of a game that finished with a winner (arms the reveal's window)
        self.game_ended = game_ended

    # --- entry ------------------------------------------------------------------------------

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        room = self.rooms.get(game.id)
        if room is None:
            return  # not a Discord game
        if not room.synced:
            self.rooms.sync(room, game)
        for event in events:  # a phase's menus are built from the choices offered with it
            if isinstance(event, ChoicesOffered):
                offer(room, event)
        for event in events:
            try:
                self.event(room, game, event)
            except Exception:
                log.exception("could not render %s of game %s", event.kind, game.id)

    def event(self, room: Room, game: LiveGame, e: Event) -> None:
        track(room, e)
        if isinstance(e, ChoicesOffered):
            return  # shown as the phase's menus
        if isinstance(e, MessageAccepted):
            self.speech(room, e)
            return
        line = manager_line(e)
        if isinstance(e, RoleAssigned):
            self.send(room, role_posts(room, e, line))
        elif isinstance(e, PhaseStarted):
            when = f"<t:{real_deadline(game, e.deadline)}:R>"
            self.send(room, phase_posts(room, e, line, when))
        elif isinstance(e, NightActionRecorded | InspectionResult | PrivateNote):
            if line is not None:
                self.notify.booth(room, e.seat, line)
        elif isinstance(e, PlayerEliminated):
            self.notify.stage(room, line)
            self.eliminated(room, e)
        elif isinstance(e, GameOver):
            self.notify.stage(room, line)
            self.game_over(room, game, e)
        elif e.place == "den":
            self.notify.den(room, line, audience=e.visible_to)
        elif e.place == "stage":
            self.notify.stage(room, line)

    def send(self, room: Room, posts: Sequence[Post]) -> None:
        """Queue post specs: stage announcements, booth notes, den posts."""
        for post in posts:
            if post.place == "stage":
                self.notify.stage(room, post.text, view=menu_view(post.menu))
            elif post.place == "booth" and post.seat is not None:
                self.notify.booth(room, post.seat, post.text, view=menu_view(post.menu))
            elif post.place == "den":
                menus = post.menus
                self.notify.den(room, post.text, menu=self._menus(menus), audience=post.audience)

    @staticmethod
    def _menus(menus: Mapping[int, Menu]) -> MenuFor | None:
        if not menus:
            return None
        return lambda seat: menu_view(menus.get(seat))

    # --- players' lines -----------------------------------------------------------------------

    def speech(self, room: Room, e: MessageAccepted) -> None:
        metrics = self.metrics
        if metrics is not None and e.place != "den":  # the den's posts depend on who reads it
            metrics.committed(room.game_id, e.seat, e.text)
        pieces = relay_chunks(e.text, self.manager_names())
        rooms = self.rooms
        if e.place != "den":
            for piece in pieces:

                async def go(_: str, piece: str = piece) -> None:
                    if metrics is not None:
                        metrics.sending(room.game_id, e.seat, e.text)
                    await rooms.speak(room, e.name, piece)

                self.notify.put(room, "stage", Job(send=go, lane=e.seat))
            return
        # Den talk: the same webhook post into each other reader's booth, whoever spoke.
        readers = sorted((s, u) for s, u in room.den_readers(e.visible_to).items() if s != e.seat)
        if not readers and metrics is not None:
            metrics.sending(room.game_id, e.seat, e.text)  # nobody to relay it to
        for piece in pieces:
            for seat, uid in readers:

                async def den(_: str, piece: str = piece, seat: int = seat, uid: int = uid) -> None:
                    if metrics is not None:
                        metrics.sending(room.game_id, e.seat, e.text)
                    booth = await self.notify.den_booth(room, seat, uid)
                    if booth is not None:
                        await rooms.speak(room, e.name, piece, thread_id=booth.thread_id)

                self.notify.put(room, "booth", Job(send=den, group=DEN, lane=e.seat), seat)

    # --- deaths and the end -------------------------------------------------------------------

    def eliminated(self, room: Room, e: PlayerEliminated) -> None:
        self.send(room, eliminated_posts(room, e))  # (the graveyard: the dead's booths)

    def game_over(self, room: Room, game: LiveGame, e: GameOver) -> None:
        room.ended = True
        self.rooms.release_channel(room)
        self.notify.after(room, "stage", lambda: self.finish_stage(room))
        if room.graveyard_id is not None:  # a graveyard thread of an older version
            self.notify.after(room, "graveyard", lambda: self._archive(room.graveyard_id))
        for seat in sorted(room.humans):
            if not e.played_out:
                self.notify.booth(room, seat, STOPPED)
                self.notify.archive_booth(room, seat)
                continue
            text, view = survey_message(room.game_id, seat, survey.choices(game.seats, seat))
            self.notify.booth(room, seat, text, view=view)
            text, view = comment_message(room.game_id, seat)
            self.notify.booth(room, seat, text, view=view)
        if e.played_out and self.game_ended is not None:
            self.game_ended(room.game_id)

    async def _archive(self, thread_id: int | None) -> None:
        if thread_id is not None:
            await self.rooms.archive(thread_id)

    # --- after a restart, a new seat holder ---------------------------------------------------

    def resumed(self, room: Room, game: LiveGame) -> None:
        """Tell the table the Game-Manager is back, and put the current phase's menus up
        again."""
        state = game.state
        if state is None or state.over or state.phase.deadline is None:
            return
        when = f"<t:{real_deadline(game, state.phase.deadline)}:R>"
        self.send(room, resumed_posts(room, state, when))

    def seat_menus(self, room: Room, game: LiveGame, seat: int) -> None:
        """The menus of the current phase for one seat's (new) booth."""
        if game.state is not None:
            self.send(room, seat_posts(room, game.state, seat))
