"""What players type: booth lines handed to the service, stray channel lines answered.

A booth is a player's DM with the app; each line goes to the service with the moment it was
typed and its platform id (`bot.slack.moments`): the service places it by the phase current
when it was typed and applies it once. After a restart `catch_up` hands
over, once and in the order typed, what players wrote while the app was down (the table's
rules: `bot.table.booths`), after telling the service the input is back: the service
releases that backlog at the pace it was typed (`bot.service.outages`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import datetime
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.limits import STRAY_NOTE_EVERY, Cooldowns, CoolingDown
from bot.service.port import GameService, ServiceError
from bot.slack.delivery import Failure, error_fields
from bot.slack.games import Games
from bot.slack.graveyard import SlackGraveyard
from bot.slack.links import Booth, LinkStore, SlackGame
from bot.slack.moments import line_id, ts_key, ts_moment
from bot.slack.notify import Notifier
from bot.slack.text import from_slack, to_slack
from bot.slack.workspaces import WorkspaceGone
from bot.table.booths import in_typed_order, late_note
from bot.table.latency import RelayLatency
from games.errors import RuleError

log = logging.getLogger(__name__)

STAGE_REMINDER = (
    "Psst: messages typed straight into this channel are not part of the game. Speak from "
    "your booth, your direct messages with me: I post your lines here under your character's "
    "name."
)
SPECTATOR_REMINDER = (
    "A game of Mafia is running in this channel; only the players' booth lines count. Please "
    "keep the channel for the game until it ends."
)
NOT_PLAYING = (
    "You're not in a running game. Join one from its lobby message in a channel "
    "(`/mafia new` opens one)."
)
#: real seconds between two reminders to the same person in the same channel
REMIND_EVERY = 60.0


class Relay:
    def __init__(
        self,
        service: GameService,
        games: Games,
        out: Notifier,
        store: LinkStore,
        spawn: Any,
        latency: RelayLatency | None = None,
    ) -> None:
        self.service = service
        self.latency = latency or RelayLatency()
        self.games = games
        self.out = out
        self.store = store
        self._spawn = spawn
        #: one line at a time, in the order they arrived
        self._lock = asyncio.Lock()
        self._reminded: dict[tuple[str, str], float] = {}
        #: who was told lately that they are not in a game
        self._not_playing = Cooldowns(STRAY_NOTE_EVERY)
        #: the dead's lines, when the graveyard is on (`bot.slack.graveyard`)
        self.graveyard: SlackGraveyard | None = None

    async def on_dm(self, team: str, user: str, channel: str, ts: str, text: str) -> None:
        target = self.games.booth_of(user, team)
        if target is None:
            try:  # once a minute at most (`bot.limits.STRAY_NOTE_EVERY`)
                self._not_playing.check((team, user), time.monotonic())
            except CoolingDown:
                return
            self.out.post(channel, NOT_PLAYING, team=team, report=False)
            return
        sg, booth = target
        if booth.channel != channel:
            return
        async with self._lock:
            await self._relay(sg, booth, ts, text, timed=True)

    async def _relay(
        self,
        sg: SlackGame,
        booth: Booth,
        ts: str,
        text: str,
        *,
        late: bool = False,
        timed: bool = False,
    ) -> None:
        line = from_slack(text)
        if timed:
            self.latency.received(sg.id, booth.seat)
        said = False
        try:
            if self.graveyard is not None and await self.graveyard.line(sg, booth, line):
                return
            said = await self.service.say(
                sg.id,
                booth.seat,
                line,
                at=ts_moment(ts),
                platform_id=line_id(sg.team, booth.channel, ts),
            )
        except (RuleError, ServiceError) as err:
            note = late_note(line, str(err)) if late else f"That was not passed on: {err}"
            self.out.post(
                booth.channel,
                to_slack(note),
                team=sg.team,
                game_id=sg.id,
                what="write in a player's booth",
            )
        finally:
            if timed and not said:
                self.latency.not_said(sg.id, booth.seat)
            if ts_key(ts) > ts_key(booth.last_ts):
                booth.last_ts = ts
                # not awaited: the store's single writer keeps these in order
                self._spawn(self.store.save_booth(sg.id, Booth(**vars(booth))))

    async def idle(self) -> None:
        """Return once the lines that have arrived so far are relayed (the lock is fair: they
        all queued before this). A graceful stop waits for it once input has stopped."""
        async with self._lock:
            pass

    async def catch_up(self) -> None:
        """Relay once, oldest first across all booths, every booth line typed after the last
        one relayed (the app was down, or Slack never delivered the event). Slack ts are
        times, so lines typed in different booths keep their order too."""
        backlogs = []
        for sg, booth in self.games.booths().values():
            lines = await self._typed_since(sg, booth)
            backlogs.append([(ts, text, sg, booth) for ts, text in lines])
        # the input of these games is back: the service releases what was typed meanwhile at
        # the pace it was typed, the agents answering inside it (bot.service.outages)
        first: dict[str, datetime] = {}
        for backlog in backlogs:
            at = ts_moment(backlog[0][0]) if backlog else None
            if at is not None:
                gid = backlog[0][2].id
                first[gid] = min(at, first.get(gid, at))
        await self.service.input_back(list(self.games.by_id), first)
        for ts, text, sg, booth in in_typed_order(backlogs, key=lambda line: ts_key(line[0])):
            async with self._lock:
                await self._relay(sg, booth, ts, text, late=True)  # platform_id: applied once

    async def _typed_since(self, sg: SlackGame, booth: Booth) -> list[tuple[str, str]]:
        lines: list[tuple[str, str]] = []
        cursor: str | None = None
        while True:
            kwargs: dict[str, Any] = {
                "channel": booth.channel,
                "oldest": booth.last_ts,
                "limit": 200,
            }
            if cursor:
                kwargs["cursor"] = cursor
            try:
                page = await (await self.out.client(sg.team)).conversations_history(**kwargs)
            except WorkspaceGone:
                return []
            except SlackApiError as err:
                error, needed = error_fields(err)
                await self.out.on_failure(
                    Failure(
                        "conversations.history",
                        booth.channel,
                        error,
                        needed,
                        "read what a player typed in their booth while I was offline",
                        sg.id,
                    )
                )
                return []
            for m in page.get("messages") or []:
                if m.get("user") == booth.user and not m.get("subtype") and not m.get("bot_id"):
                    ts = str(m.get("ts"))
                    if ts_key(ts) > ts_key(booth.last_ts):
                        lines.append((ts, str(m.get("text") or "")))
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                break
        return sorted(lines, key=lambda x: ts_key(x[0]))

    async def on_channel_message(self, team: str, user: str, channel: str) -> None:
        """Someone typed straight into a stage: remind them where the game is played."""
        sg = self.games.in_channel(channel)
        game = self.games.running(sg) if sg is not None else None
        if game is None:
            return
        now = time.monotonic()
        if now - self._reminded.get((channel, user), -REMIND_EVERY) < REMIND_EVERY:
            return  # told a moment ago: don't answer every line
        self._reminded[(channel, user)] = now
        player = game.seat_of_user(user) is not None
        self.out.ephemeral(team, channel, user, STAGE_REMINDER if player else SPECTATOR_REMINDER)
