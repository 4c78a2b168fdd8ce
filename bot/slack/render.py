"""The game on Slack, drawn from the service's events and nothing else.

- The *stage* is the channel where ``/mafia new`` ran. Every line said there (human or agent)
  is posted by the app under the character's name and picture; the Game-Manager speaks as the
  app itself. The agent's lines take exactly the humans' path.
- A player's *booth* is their direct-message conversation with the app: role card, private
  results, the survey, and the vote and night menus, each drawn from the engine's
  `ChoicesOffered` for that seat (whom it may pick is never worked out here).
- The *den* (the mafia's night talk) has no channel of its own: a channel's member list would
  show which partners are people. Each den event goes into the booths the table's rule names
  (`bot.table.booths.den_audience`); a line is posted the stage's way (character name and
  picture) into every such booth but the speaker's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.service.live import LiveGame
from bot.slack import blocks as B
from bot.slack.graveyard import YOU_ARE_IN, SlackGraveyard
from bot.slack.links import Booth, LinkStore, SlackGame
from bot.slack.notify import Notifier
from bot.slack.text import to_slack
from bot.slack.workspaces import WorkspaceGone
from bot.table.booths import den_audience
from bot.table.latency import RelayLatency
from games.events import (
    ChoicesOffered,
    Event,
    GameOver,
    GameStarted,
    MessageAccepted,
    PhaseEnded,
    PhaseStarted,
    PlayerEliminated,
    RoleAssigned,
)
from games.narration import manager_line, role_card

log = logging.getLogger(__name__)

BOOTH_HELP = (
    "This conversation is your *booth*. Type here to talk: your lines appear in {stage} under "
    "your character's name. At night, if you are mafia, what you type goes to your partners "
    "only, and their lines appear here. Vote and night menus arrive here. Nobody sees who "
    "types what."
)


class Renderer:
    def __init__(
        self,
        out: Notifier,
        store: LinkStore,
        refresh_lobby: Callable[..., None],
        latency: RelayLatency | None = None,
    ) -> None:
        self.out = out
        #: the relay's timing of each person's line (`bot.table.latency`)
        self.latency = latency or RelayLatency()
        self.store = store
        self.refresh_lobby = refresh_lobby
        #: the dead's booths as a graveyard, when it is on (`bot.slack.graveyard`)
        self.graveyard: SlackGraveyard | None = None
        #: (game, phase seq) -> the PhaseStarted of each game's current phase (number, deadline)
        self._phases: dict[tuple[str, int], PhaseStarted] = {}

    async def event(self, game: LiveGame, sg: SlackGame, event: Event) -> None:
        if isinstance(event, GameStarted):
            await self.set_up(game, sg)
        if isinstance(event, MessageAccepted):
            self.speech(game, sg, event)
            return
        text = None if isinstance(event, ChoicesOffered) else manager_line(event)
        if event.place == "booth":
            if isinstance(event, RoleAssigned):
                text = role_card(event)
            if text:
                for seat in sorted(event.visible_to or ()):
                    self.out.booth_note(sg, seat, to_slack(text))
        elif event.place == "den":
            if text:
                for channel in self.den_booths(game, sg, event):
                    self.out.post(
                        channel,
                        to_slack(text),
                        team=sg.team,
                        game_id=sg.id,
                        what="write in a player's booth",
                    )
        elif text:
            self.out.post(
                sg.channel,
                to_slack(text),
                team=sg.team,
                game_id=sg.id,
                what="post in the game channel",
            )
        if isinstance(event, PhaseStarted):
            self._phases = {k: v for k, v in self._phases.items() if k[0] != sg.id}
            self._phases[(sg.id, event.seq)] = event
        elif isinstance(event, ChoicesOffered):
            self.choices(game, sg, event)
        elif isinstance(event, PhaseEnded) and event.phase in ("vote", "night_vote"):
            self.close_menus(sg, night=event.phase == "night_vote")
        elif isinstance(event, PlayerEliminated):
            self.eliminated(game, sg, event)
        elif isinstance(event, GameOver):
            self.finish(game, sg, event)

    def speech(self, game: LiveGame, sg: SlackGame, event: MessageAccepted) -> None:
        # stage lines only, every one: a den line's posts depend on which partners have booths
        received = self.latency.posting(sg.id, event.seat) if event.place != "den" else None
        if event.place != "den":
            posts = [
                self.out.say_as(
                    sg,
                    sg.channel,
                    event.name,
                    event.text,
                    what="post a line in the game channel",
                    speaker=event.seat,
                )
            ]
        else:
            posts = [
                self.out.say_as(
                    sg,
                    channel,
                    event.name,
                    event.text,
                    what="write in a player's booth",
                    speaker=event.seat,
                )
                for channel in self.den_booths(game, sg, event, skip=event.seat)
            ]
        if received is not None and posts:
            # the relay's latency: until the (first) post of the line is out
            def out(done: asyncio.Future[Any]) -> None:
                if not done.cancelled() and done.exception() is None:
                    self.latency.posted(received)

            posts[0].add_done_callback(out)

    @staticmethod
    def den_booths(
        game: LiveGame, sg: SlackGame, event: Event, *, skip: int | None = None
    ) -> list[str]:
        """The booth channels of a den event's audience (see `den_audience`)."""
        holders = {
            seat: booth.channel
            for seat, booth in sg.booths.items()
            if 0 <= seat < len(game.seats)
            and not game.seats[seat].is_agent
            and game.seats[seat].user_id == booth.user
        }
        return list(den_audience(event.visible_to, holders, skip=skip).values())

    async def set_up(self, game: LiveGame, sg: SlackGame) -> None:
        """At the start: close the lobby, open every human's booth (the mafia's den lives in
        their booths: no channel is made for it)."""
        if sg.set_up:
            return
        sg.set_up = True
        self.refresh_lobby(
            sg, note="The game has started. Players: check your direct messages with me."
        )
        stage = f"<#{sg.channel}>"
        for seat in game.seats:
            if seat.is_agent or not seat.user_id:
                continue
            dm = await self.out.open_dm(sg.team, seat.user_id, game_id=sg.id)
            if dm is None:
                continue
            last_ts = f"{time.time():.6f}"
            with contextlib.suppress(SlackApiError, WorkspaceGone):
                welcome = await self.out.post(
                    dm,
                    f"*Game `{sg.id}` is starting.* " + BOOTH_HELP.format(stage=stage),
                    team=sg.team,
                    game_id=sg.id,
                    what="write in a player's booth",
                )
                last_ts = str(welcome.get("ts") or last_ts)
            booth = Booth(seat.index, seat.user_id, dm, last_ts)
            sg.booths[seat.index] = booth
            await self.store.save_booth(sg.id, booth)

    # --- menus --------------------------------------------------------------------------------

    def choices(self, game: LiveGame, sg: SlackGame, event: ChoicesOffered) -> None:
        """A seat's menu, drawn from what the engine offers it (targets, abstaining)."""
        state = game.state
        started = self._phases.get((sg.id, event.phase_seq))
        if state is None or started is None:
            return
        number = started.number
        night_act = event.verb not in ("vote", "kill")
        current = state.phase.seq == event.phase_seq or (
            night_act and state.phase.kind.is_night and state.phase.number == number
        )
        if not current:
            return  # that phase is already over: a menu would only mislead
        until = B.deadline_text(game.clock.real_delay_until(started.deadline), time.time())
        names = list(event.target_names)
        if event.verb == "vote":
            kind, action, block = "vote", B.VOTE, f"{B.VOTE}:{sg.id}:{event.phase_seq}"
            prompt = (
                f"*Day {number} vote:* who should be voted out? "
                f"You can change your vote until {until}."
            )
            placeholder = "Vote for..."
        elif event.verb == "kill":
            kind, action, block = "night", B.VOTE, f"{B.VOTE}:{sg.id}:{event.phase_seq}"
            prompt = (
                f"*Night {number}:* who do the mafia kill? You can change your vote until {until}."
            )
            placeholder = "Kill..."
        else:
            kind, action, block = "night", B.NIGHT_ACT, f"{B.NIGHT_ACT}:{sg.id}:{number}"
            prompt = (
                f"*Night {number}:* who do you {event.verb}? You can change your choice until "
                f"the night ends (at the latest {until})."
            )
            placeholder = f"{event.verb.capitalize()}..."
        blocks = B.target_menu(
            action_id=action,
            block_id=block,
            prompt=prompt,
            names=names,
            placeholder=placeholder,
            abstain=event.can_abstain,
        )
        self.menu(game, sg, event.seat, kind, blocks)

    def menu(
        self, game: LiveGame, sg: SlackGame, seat: int, kind: str, blocks: list[B.Block]
    ) -> None:
        if game.seats[seat].is_agent:
            return
        future = self.out.booth_note(sg, seat, "Make your choice:", blocks=blocks)
        if future is None:
            return

        def remember(f: asyncio.Future[dict[str, Any]]) -> None:
            if not f.cancelled() and f.exception() is None:
                result = f.result()
                sg.menus.append((kind, str(result.get("channel")), str(result.get("ts"))))

        future.add_done_callback(remember)

    def close_menus(self, sg: SlackGame, *, night: bool) -> None:
        keep: list[tuple[str, str, str]] = []
        for kind, channel, ts in sg.menus:
            if kind == "vote" or night:
                text = "This vote is closed." if kind == "vote" else "The night is over."
                self.out.delivery.submit(
                    channel,
                    "chat.update",
                    team=sg.team,
                    what="close a vote menu",
                    game_id=sg.id,
                    report=False,
                    channel=channel,
                    ts=ts,
                    text=text,
                    blocks=[B.section(text)],
                )
            else:
                keep.append((kind, channel, ts))
        sg.menus = keep

    # --- the end of a seat, of the game -------------------------------------------------------

    def eliminated(self, game: LiveGame, sg: SlackGame, event: PlayerEliminated) -> None:
        grave = self.graveyard
        if grave is not None:
            grave.joined(game, sg, event)
        seat = game.seats[event.seat]
        if seat.is_agent or not seat.user_id:
            return
        on = grave is not None and grave.on
        talk = f"you can no longer vote. {YOU_ARE_IN}" if on else "you can no longer talk or vote."
        self.out.booth_note(
            sg,
            event.seat,
            f"You are out of the game. You can keep watching <#{sg.channel}>, but {talk}",
        )

    def finish(self, game: LiveGame, sg: SlackGame, event: GameOver) -> None:
        sg.done = True
        self.close_menus(sg, night=True)
        if sg.den is not None:
            # A den channel made by an older version for a game still running: nothing is
            # posted there any more; archive it as that version did, as far as the app's
            # permissions still allow (groups:write is no longer asked for).
            self.out.post(
                sg.den,
                "The game is over; this den is now archived.",
                team=sg.team,
                game_id=sg.id,
                report=False,
            )
            self.out.delivery.submit(
                sg.den,
                "conversations.archive",
                team=sg.team,
                what="archive the den",
                game_id=sg.id,
                report=False,
                channel=sg.den,
            )
        if not event.played_out:  # stopped: no survey
            return
        for seat in game.seats:
            if not seat.is_agent and seat.user_id and seat.index in sg.booths:
                self.out.booth_note(
                    sg,
                    seat.index,
                    "How did it go? One short survey.",
                    blocks=B.survey_invite(sg.id),
                )
