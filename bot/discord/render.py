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

`on_events` is called in order, for every game, from one task of the service, so it must not
wait on Discord: it only queues jobs on the per-place outbox, which keeps their order.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from collections.abc import Set as AbstractSet
from datetime import timedelta
from typing import TYPE_CHECKING

import discord

from bot.discord.outbox import Job
from bot.discord.rooms import Booth, Room, real_deadline
from bot.discord.sanitize import clean_manager, relay_chunks
from bot.discord.survey import survey_message
from bot.discord.views import night_action_view, night_vote_view, vote_view
from bot.service import LiveGame
from bot.table.status import phase_label
from games.events import (
    Event,
    GameOver,
    GameStarted,
    InspectionResult,
    MessageAccepted,
    NightActionRecorded,
    PhaseStarted,
    PlayerEliminated,
    RoleAssigned,
    VoteCast,
)
from games.narration import manager_line, role_card
from games.roles import get_role
from games.state import GameState, PhaseKind

if TYPE_CHECKING:
    from bot.discord.app import MafiaBot

log = logging.getLogger(__name__)

BOOTH_INTRO = (
    "This is your booth: only you and the Game-Manager can see it. Type here to talk. By day "
    "your lines appear on the stage (the game channel) under your character name; at night, if "
    "you are mafia, in your partners' booths (and theirs in yours). Nobody sees your account "
    "name, and one of the players is an AI."
)
DEN_INTRO = (
    "As mafia, your booth is also your den: what you type here at night reaches your partners, "
    "and their night lines appear here under their character names."
)
#: outbox group of den posts in a booth (they never merge with the booth's own notes)
DEN = "den"


def seat_card(state: GameState, seat: int) -> str:
    """The role card of ``seat`` as the game stands (for a new booth mid-game: a substitute's,
    or one that replaced a deleted booth), with the den note for the mafia."""
    me = state.seats[seat]
    partners = (
        tuple(s.name for s in state.seats if s.is_mafia and s.index != seat) if me.is_mafia else ()
    )
    card = role_card(
        RoleAssigned(
            t=state.phase.started_at,
            seat=seat,
            name=me.name,
            role=me.role,
            team=get_role(me.role).team,
            partners=partners,
        )
    )
    return f"{card}\n\n{DEN_INTRO}" if me.is_mafia else card


ViewFactory = Callable[[], discord.ui.View]


class Renderer:
    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    # --- entry ------------------------------------------------------------------------------

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        room = self.bot.rooms.get(game.id)
        if room is None:
            return  # not a Discord game
        if not room.synced:
            self.bot.rooms.sync(room, game)
        for event in events:
            try:
                self.event(room, game, event)
            except Exception:
                log.exception("could not render %s of game %s", event.kind, game.id)

    def event(self, room: Room, game: LiveGame, e: Event) -> None:
        if isinstance(e, MessageAccepted):
            self.speech(room, e)
            return
        line = manager_line(e)
        if isinstance(e, GameStarted):
            room.started = True
            room.alive = set(range(len(e.players)))
            room.names = dict(enumerate(e.players))
            self.stage_line(room, line)
        elif isinstance(e, RoleAssigned):
            room.roles[e.seat] = e.role
            if line is not None:
                den = f"\n\n{DEN_INTRO}" if e.team == "mafia" else ""
                self.booth(room, e.seat, f"{line}\n\n{BOOTH_INTRO}{den}")
        elif isinstance(e, PhaseStarted):
            self.phase(room, game, e, line)
        elif isinstance(e, VoteCast):
            self.line_at(room, e, line)
            self.bot.afk.touch(game.id, e.voter)
        elif isinstance(e, NightActionRecorded | InspectionResult):
            if line is not None:
                self.booth(room, e.seat, line)
            if isinstance(e, NightActionRecorded):
                self.bot.afk.touch(game.id, e.seat)
        elif isinstance(e, PlayerEliminated):
            self.stage_line(room, line)
            self.eliminated(room, e)
        elif isinstance(e, GameOver):
            self.stage_line(room, line)
            self.game_over(room, game, e)
        else:
            self.line_at(room, e, line)

    # --- helpers ------------------------------------------------------------------------------

    def put(self, room: Room, place: str, job: Job, seat: int | None = None) -> None:
        job.game_id = room.game_id
        job.place = place
        job.seat = seat
        self.bot.outbox.put(room.key(place, seat), job)

    def stage_line(self, room: Room, line: str | None, view: discord.ui.View | None = None) -> None:
        if line is None:
            return
        text = clean_manager(line)

        async def send(merged: str) -> None:
            await self.bot.rooms.post(room, room.channel_id, merged, thread=False, view=view)

        self.put(room, "stage", Job(send=send, text=text, merge=view is None))

    def den_line(
        self,
        room: Room,
        line: str | None,
        view: ViewFactory | None = None,
        audience: AbstractSet[int] | None = None,
    ) -> None:
        """A Game-Manager post for the den: into the booth of each of its readers (the humans
        among ``audience``, an event's ``visible_to``, when given; ``view`` makes a fresh menu
        for each booth)."""
        if line is None:
            return
        text = clean_manager(line)
        for seat, uid in sorted(room.den_readers(audience).items()):

            async def send(merged: str, seat: int = seat, uid: int = uid) -> None:
                booth = await self._den_booth(room, seat, uid)
                if booth is not None:
                    made = view() if view is not None else None
                    await self.bot.rooms.post(room, booth.thread_id, merged, view=made)

            # (merged only with den posts for the same person: a post queued for a player
            # who has since been replaced must not carry the substitute's along with it)
            job = Job(send=send, text=text, merge=view is None, group=f"{DEN}:{uid}")
            self.put(room, "booth", job, seat)

    async def _den_booth(self, room: Room, seat: int, uid: int) -> Booth | None:
        """The booth a den post queued for ``uid`` goes to; None when the seat has changed
        hands since (a removed player gets no more den posts)."""
        if room.humans.get(seat) != uid:
            return None
        return await self.bot.rooms.booth(room, seat, uid)

    def line_at(self, room: Room, e: Event, line: str | None) -> None:
        if e.place == "den":
            self.den_line(room, line, audience=e.visible_to)
        elif e.place == "stage":
            self.stage_line(room, line)

    def booth(
        self,
        room: Room,
        seat: int,
        text: str,
        view: discord.ui.View | None = None,
        *,
        after: Callable[[], None] | None = None,
    ) -> None:
        """A Game-Manager note in a human's booth (nothing for agent seats)."""
        uid = room.humans.get(seat)
        if uid is not None:
            self.booth_to(room, seat, uid, text, view, after=after)

    def booth_to(
        self,
        room: Room,
        seat: int,
        uid: int,
        text: str,
        view: discord.ui.View | None = None,
        *,
        after: Callable[[], None] | None = None,
    ) -> None:

        async def send(merged: str) -> None:
            booth = await self.bot.rooms.booth(room, seat, uid)
            await self.bot.rooms.post(room, booth.thread_id, merged, view=view)

        job = Job(send=send, text=clean_manager(text), merge=view is None)
        if after is not None:
            job.on_done.append(after)
        self.put(room, "booth", job, seat)

    # --- players' lines -----------------------------------------------------------------------

    def speech(self, room: Room, e: MessageAccepted) -> None:
        self.bot.afk.touch(room.game_id, e.seat)
        metrics = self.bot.metrics
        pieces = relay_chunks(e.text, self.bot.manager_names())
        if e.place != "den":
            for piece in pieces:

                async def go(_: str, piece: str = piece) -> None:
                    if metrics is not None:
                        metrics.sending(room.game_id, e.seat, e.text)
                    await self.bot.rooms.speak(room, e.name, piece)

                self.put(room, "stage", Job(send=go))
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
                    booth = await self._den_booth(room, seat, uid)
                    if booth is not None:
                        await self.bot.rooms.speak(room, e.name, piece, thread_id=booth.thread_id)

                self.put(room, "booth", Job(send=den, group=DEN), seat)

    # --- phases -------------------------------------------------------------------------------

    def phase(self, room: Room, game: LiveGame, e: PhaseStarted, line: str | None) -> None:
        kind = PhaseKind(e.phase)
        alive = sorted(room.alive)
        names = [room.names[s] for s in alive]
        if kind is PhaseKind.VOTE:
            self.stage_line(room, line, view=vote_view(room.game_id, e.seq, names))
        else:
            self.stage_line(room, line)
        ends = real_deadline(game, e.deadline)
        when = f"<t:{ends}:R>"
        label = phase_label(e.phase, e.number)
        first_night_phase = kind is PhaseKind.NIGHT or (
            kind is PhaseKind.NIGHT_VOTE and e.talk_skipped
        )
        for seat in alive:
            if seat not in room.humans:
                continue
            role = get_role(room.roles.get(seat, "bystander"))
            mafia = role.team == "mafia"
            if kind is PhaseKind.DAY:
                hint = "Type here to talk."
            elif kind is PhaseKind.VOTE:
                hint = "Vote with the menu under the Game-Manager's message on the stage."
            elif mafia:
                hint = (
                    "Type here to talk with your partners; their lines appear here."
                    if kind is PhaseKind.NIGHT
                    else "Vote with the mafia's menu here."
                )
            else:
                hint = "Only the mafia talk at night."
            self.booth(room, seat, f"{label}, ends {when}. {hint}")
            if first_night_phase and role.night_verb is not None and not mafia:
                targets = [room.names[s] for s in alive if s != seat]
                self.booth(
                    room,
                    seat,
                    f"Choose who to {role.night_verb} tonight:",
                    view=night_action_view(room.game_id, e.seq, role.night_verb, targets),
                )
        # After the booth notes above, so a mafia's booth reads: the phase, then the den.
        if kind is PhaseKind.NIGHT:
            self.den_line(room, f"Den, night {e.number}: talk with your partners until {when}.")
        elif kind is PhaseKind.NIGHT_VOTE:
            victims = self._victims(room)
            seq = e.seq
            self.den_line(
                room,
                f"Den, night {e.number}: choose who to kill, until {when}. A split vote kills "
                "nobody.",
                view=lambda: night_vote_view(room.game_id, seq, victims),
            )

    # --- deaths and the end -------------------------------------------------------------------

    def eliminated(self, room: Room, e: PlayerEliminated) -> None:
        room.alive.discard(e.seat)
        uid = room.humans.get(e.seat)
        if uid is None:
            return
        grave = " and join the others in the graveyard thread" if room.graveyard else ""
        self.booth(
            room,
            e.seat,
            f"You have been eliminated. You can keep watching the stage{grave}; from now on your "
            "lines are not relayed. Thanks for playing!",
        )
        if room.graveyard:
            self.put(room, "graveyard", Job(send=lambda _: self.bot.rooms.graveyard(room, uid)))

    def game_over(self, room: Room, game: LiveGame, e: GameOver) -> None:
        room.ended = True
        self.bot.rooms.release_channel(room)
        self.put(room, "stage", Job(send=lambda _: self.bot.finish_stage(room)))
        if room.graveyard:
            self.put(room, "graveyard", Job(send=lambda _: self._archive(room, room.graveyard_id)))
        names = dict(room.names)
        agents = {s for s in names if s not in room.humans}
        for seat in sorted(room.humans):
            if e.winner is None:
                self.booth(room, seat, "The game was stopped. Thanks for playing!")
                self.put(room, "booth", Job(send=self._archive_booth(room, seat)), seat)
                continue
            text, view = survey_message(room.game_id, seat, names, agents)
            self.booth(room, seat, text, view=view)
        self.bot.afk.forget(game.id)

    async def _archive(self, room: Room, thread_id: int | None) -> None:
        if thread_id is not None:
            await self.bot.rooms.archive(thread_id)

    def _archive_booth(self, room: Room, seat: int) -> Callable[[str], Awaitable[None]]:
        async def send(_: str) -> None:
            booth = room.booths.get(seat)
            if booth is not None:
                await self.bot.rooms.archive(booth.thread_id, lock=False)

        return send

    # --- after a restart ----------------------------------------------------------------------

    def resumed(self, room: Room, game: LiveGame) -> None:
        """Tell the table the Game-Manager is back, and put the current phase's menus up again
        (their announcement may have been lost with the old process)."""
        state = game.state
        if state is None or state.over or state.phase.deadline is None:
            return
        p = state.phase
        label = phase_label(p.kind, p.number)
        ends = real_deadline(game, p.deadline)
        alive = sorted(room.alive)
        names = [room.names[s] for s in alive]
        text = f"The Game-Manager is back after a restart. {label} goes on, ends <t:{ends}:R>."
        view = vote_view(room.game_id, p.seq, names) if p.kind is PhaseKind.VOTE else None
        self.stage_line(room, text, view=view)
        if p.kind is PhaseKind.NIGHT_VOTE:
            victims = self._victims(room)
            self.den_line(
                room,
                "The night vote goes on:",
                view=lambda: night_vote_view(room.game_id, p.seq, victims),
            )
        for seat in alive:
            self._night_action_menu(room, game, seat)

    def seat_menus(self, room: Room, game: LiveGame, seat: int) -> None:
        """The menus of the current phase for one seat's booth (a substitute's new booth:
        the old booth's menus are gone with it)."""
        state = game.state
        if state is None or state.over or seat not in room.alive:
            return
        p = state.phase
        if p.kind is PhaseKind.NIGHT_VOTE and get_role(room.roles.get(seat, "")).team == "mafia":
            victims = self._victims(room)
            self.booth(
                room,
                seat,
                "The night vote goes on:",
                view=night_vote_view(room.game_id, p.seq, victims),
            )
        self._night_action_menu(room, game, seat)

    @staticmethod
    def _victims(room: Room) -> list[str]:
        return [
            room.names[s]
            for s in sorted(room.alive)
            if get_role(room.roles.get(s, "")).team != "mafia"
        ]

    def _night_action_menu(self, room: Room, game: LiveGame, seat: int) -> None:
        """A human detective's or doctor's menu, at night, if they have not acted yet."""
        state = game.state
        if state is None or not state.phase.kind.is_night:
            return
        role = get_role(room.roles.get(seat, "bystander"))
        if (
            seat in room.humans
            and role.night_verb
            and role.team != "mafia"
            and seat not in state.night_actions
        ):
            targets = [room.names[s] for s in sorted(room.alive) if s != seat]
            self.booth(
                room,
                seat,
                f"Choose who to {role.night_verb} tonight:",
                view=night_action_view(room.game_id, state.phase.seq, role.night_verb, targets),
            )


def seconds_left(game: LiveGame) -> float | None:
    state = game.state
    if state is None or state.phase.deadline is None:
        return None
    return max(0.0, (state.phase.deadline - game.clock.now()) / timedelta(seconds=1))
