"""What players type: booth lines handed to the service, stray channel lines answered.

A booth is a player's DM with the app; each line goes to the service with the moment it was
typed and its platform id (`bot.slack.moments`): the service places it by the phase current
when it was typed and applies it once. After a restart the booths are read back
(`read_back`) and what players wrote while the app was down is handed over once, in the order
typed (the table's rules: `bot.table.booths`), after telling the service the input is back:
the service releases that backlog at the pace it was typed (`bot.service.outages`), while the
app already receives Slack's events again (a person's live lines wait behind their own
backlog only); what was typed between the read and the connection is read back then
(`read_gap`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass
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
#: a booth line read back: its ts, text, game and booth
Typed = tuple[str, str, SlackGame, Booth]


@dataclass
class Backlog:
    """The lines read back from the booths, oldest first; ``gates``: booth channel -> set once
    that booth's lines are handed over."""

    lines: list[Typed]
    gates: dict[str, asyncio.Event]


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
        #: booth channel -> the ts the last `read_back` read it to (`read_gap` goes on there)
        self._read_to: dict[str, str] = {}
        #: booth channel -> set once the lines read back from it are handed over (its live
        #: lines wait for it)
        self._behind: dict[str, asyncio.Event] = {}

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
        behind = self._behind.get(channel)
        if behind is not None:
            await behind.wait()  # the lines of this booth read back after an outage go first
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
        await self.hand_over(await self.read_back())

    async def read_back(self) -> Backlog:
        """Every booth read back from its watermark, oldest first across all booths, and the
        service told these games' input is back: it releases the lines (`hand_over`) at the
        pace they were typed, the agents answering inside them (bot.service.outages). A live
        line of a booth waits behind that booth's lines read back (each person's lines keep
        the order typed; the others' are not held up). Where each read stopped is kept for
        `read_gap`."""
        backlogs, gates = [], {}
        for sg, booth in self.games.booths().values():
            lines = await self._typed_since(sg, booth, booth.last_ts)
            self._read_to[booth.channel] = lines[-1][0] if lines else booth.last_ts
            if lines:
                gates[booth.channel] = self._behind[booth.channel] = asyncio.Event()
            backlogs.append([(ts, text, sg, booth) for ts, text in lines])
        first: dict[str, datetime] = {}
        for backlog in backlogs:
            at = ts_moment(backlog[0][0]) if backlog else None
            if at is not None:
                gid = backlog[0][2].id
                first[gid] = min(at, first.get(gid, at))
        await self.service.input_back(list(self.games.by_id), first)
        return Backlog(in_typed_order(backlogs, key=lambda line: ts_key(line[0])), gates)

    async def hand_over(self, backlog: Backlog) -> None:
        """Relay read-back lines in order, each once (its platform id): a line waits for its
        place in the release, so this lasts as long as the release."""
        last = {booth.channel: ts for ts, _, _, booth in backlog.lines}
        try:
            for ts, text, sg, booth in backlog.lines:
                async with self._lock:
                    await self._relay(sg, booth, ts, text, late=True)  # applied once
                if last[booth.channel] == ts:
                    backlog.gates[booth.channel].set()  # that booth's live lines go on
        finally:
            for gate in backlog.gates.values():
                gate.set()

    def read_gap(self, until: datetime) -> Coroutine[Any, Any, None]:
        """The app receives Slack's events again since ``until``: what was typed between the
        last `read_back` and then (Slack sends no event while nobody is connected, and the
        read came first) is to be read back from where that read stopped and handed over
        once, each booth's after its backlog. From now on (call it before an event is
        handled) a booth's live lines wait behind it."""
        cursors, self._read_to = self._read_to, {}
        booths = []
        for sg, booth in self.games.booths().values():
            since = cursors.get(booth.channel)
            if since is not None:
                before = self._behind.get(booth.channel)
                gate = self._behind[booth.channel] = asyncio.Event()
                booths.append((sg, booth, since, before, gate))
        return self._gap(booths, until)

    async def _gap(
        self,
        booths: list[tuple[SlackGame, Booth, str, asyncio.Event | None, asyncio.Event]],
        until: datetime,
    ) -> None:
        async def one(
            sg: SlackGame,
            booth: Booth,
            since: str,
            before: asyncio.Event | None,
            gate: asyncio.Event,
        ) -> None:
            try:
                lines = await self._typed_since(sg, booth, since)
                if before is not None:
                    await before.wait()  # its backlog first
                for ts, text in lines:
                    if (ts_moment(ts) or until) < until:  # (later ones came as events)
                        async with self._lock:
                            await self._relay(sg, booth, ts, text, late=True)
            finally:
                gate.set()

        await asyncio.gather(*(one(*b) for b in booths))

    async def _typed_since(self, sg: SlackGame, booth: Booth, oldest: str) -> list[tuple[str, str]]:
        lines: list[tuple[str, str]] = []
        cursor: str | None = None
        while True:
            kwargs: dict[str, Any] = {
                "channel": booth.channel,
                "oldest": oldest,
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
                    if ts_key(ts) > ts_key(oldest):
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
