"""The Slack adapter: Slack conversations mapped onto games, through the service port.

Like every adapter it is two translations, each in its own module:
- platform event -> service call: `bot.slack.inbound` (Bolt listeners) calls `lobby`
  (`bot.slack.lobby`), `relay` (`bot.slack.relay`: booth lines) and the service;
- engine event -> platform post: `on_events` hands each event to `render`
  (`bot.slack.render`), which posts through `out` (`bot.slack.notify`).

What is not translation (lobby rules, settings words, status, booth rules, link stores) is the
table's (`bot.table`). Where each game lives is in `platform_links` (`bot.slack.links`), so
after a restart the service resumes its timers and the relay catches up on the booths.

One adapter serves every workspace the app is in: each game's calls carry its ``team`` and
`bot.slack.workspaces` picks that workspace's token (the one token in .env, or each
installation's own, `bot.slack.oauth`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.players.reveal import Reveals
from bot.protection.privacy import WithdrawalReport
from bot.protection.withdrawals import Withdrawals
from bot.service.clock import utcnow
from bot.service.live import LiveGame
from bot.service.lobbies import IdleLobbies
from bot.service.port import GameService, ServiceError
from bot.settings import Settings
from bot.slack.games import Games
from bot.slack.graveyard import SlackGraveyard
from bot.slack.links import LinkStore, SlackGame
from bot.slack.lobby import PLATFORM, Lobby
from bot.slack.notify import Notifier
from bot.slack.relay import Relay
from bot.slack.render import Renderer
from bot.slack.text import to_slack
from bot.slack.workspaces import OneWorkspace, Workspaces
from bot.table.latency import RelayLatency
from bot.table.text import AVATAR_URL_TEMPLATE
from games.errors import RuleError
from games.events import Event, GameOver

log = logging.getLogger(__name__)

#: why a workspace's games end when its installation turned out to be gone
GONE = "the app is no longer installed in this Slack workspace"

__all__ = ["PLATFORM", "Ctx", "SlackAdapter"]


@dataclass
class Ctx:
    """Who asked, where: what every inbound handler knows."""

    team: str
    user: str
    channel: str | None = None
    trigger_id: str | None = None


class SlackAdapter:
    """The Slack games of every workspace. Subscribes itself to the service on construction,
    so it sees every event of every game from the first (create it before resuming games).

    ``client``: the one workspace's client (token in .env), or `Workspaces` (OAuth installs).
    """

    def __init__(
        self,
        service: GameService,
        client: AsyncWebClient | Workspaces,
        *,
        settings: Settings | None = None,
        allow_test_options: bool = False,
        avatar_template: str = AVATAR_URL_TEMPLATE,
        agent_kind: str | None = None,
    ) -> None:
        self.service = service
        #: the one workspace's client (None with OAuth installs: see `out.client(team)`)
        self.client = client if isinstance(client, AsyncWebClient) else None
        self.workspaces = OneWorkspace(client) if isinstance(client, AsyncWebClient) else client
        self.store = LinkStore(service.engine)
        #: consent withdrawals, run in the background (`bot.protection.withdrawals`)
        self.withdrawals = Withdrawals(service.engine, write=service.write)
        self.idle_lobbies = IdleLobbies(service, lambda: list(self.games.by_id), self._close_idle)
        self.games = Games(service, self.store)
        self.out = Notifier(self.workspaces, self.games, avatar_template=avatar_template)
        self.lobby = Lobby(
            service,
            self.games,
            self.out,
            self.store,
            settings=settings,
            allow_test_options=allow_test_options,
            agent_kind=agent_kind,
        )
        #: a stage line committed -> its post out, every one alike (once `bot.ops` sets observe)
        self.latency = RelayLatency()
        self.render = Renderer(self.out, self.store, self.lobby.refresh, self.latency)
        self.relay = Relay(service, self.games, self.out, self.store, self._spawn, self.latency)
        on = settings is not None and settings.slack_graveyard
        self.graveyard = SlackGraveyard(service, self.games, self.out, on)
        self.render.graveyard = self.relay.graveyard = self.graveyard
        self.out.on_stage_lost = lambda sg, why: self._spawn(self.lobby.stage_lost(sg, why))
        self.out.delivery.on_gone = lambda team: self._spawn(self.leave_workspace(team, GONE))
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False
        #: who the AI was, on the stage once the survey closes (`bot.players.reveal`)
        self.reveals = Reveals(
            service.engine,
            (
                settings.reveal_after_seconds
                if settings is not None
                else Settings.model_fields["reveal_after_seconds"].default
            ),
            self._post_reveal,
            self.store.run,
        )
        service.subscribe(self)

    @property
    def team_id(self) -> str | None:
        return self.out.team_id

    @property
    def bot_user_id(self) -> str | None:
        return self.out.bot_user_id

    # --- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Who we are, then every open Slack game back in memory, then the booths' backlog
        (read back here, released in the background). Call before the app starts receiving
        requests, and `listening` once it does."""
        if self.client is not None:
            await self.out.refresh_identity()  # the one workspace: its team and bot user
        for game_id, _status in await self.store.open_games():
            sg = await self.store.load(game_id)
            if sg is None:
                continue
            self.games.add(sg)
            try:
                # Only Slack games: resuming every game would also wake up, say, a terminal game
                # its player paused to resume later. (Idempotent: a shared service that has
                # already resumed a game just returns it.)
                # input down until the booths are read back (`Relay.catch_up`): the agents
                # and the clock wait for what people typed meanwhile (bot.service.outages)
                await self.service.resume(game_id, input_down=True)
            except Exception:
                log.exception("could not resume Slack game %s", game_id)
        for sg in list(self.games.by_id.values()):
            game = self.games.live(sg)
            if game is not None and game.state is not None and not sg.set_up:
                await self.render.set_up(game, sg)  # crashed between the start and the set-up
        # the backlog is released at the pace it was typed (bot.service.outages) while the app
        # receives again: live lines are not held up behind it (nor lost: `listening`)
        self._spawn(self.relay.hand_over(await self.relay.read_back()))
        await self.reveals.recover(PLATFORM)
        self.idle_lobbies.start()
        # withdrawals a stop cut short: finished now, each person told in a direct message
        await self.withdrawals.resume(PLATFORM, self._tell_withdrawn)

    async def _tell_withdrawn(self, team: str, user: str, report: WithdrawalReport) -> None:
        dm = await self.out.open_dm(team, user, report=False)
        if dm is not None:
            text = "Your withdrawal is done. " + " ".join(report.summary()[1:])
            self.out.post(dm, to_slack(text), team=team, report=False)

    def listening(self) -> None:
        """The app receives Slack's events (first connected after `start`): what people typed
        between `start` reading the booths back and now is read back too."""
        if not self._closed:
            self._spawn(self.relay.read_gap(utcnow()))

    def input_lost(self, since: datetime | None = None) -> None:
        """Slack's input stopped reaching us (the socket dropped, or in HTTP mode Slack can't
        reach the endpoint, `bot.slack.http_watch`) since ``since`` (None: now): the service
        pauses the running Slack games (their agents and clocks) until `input_regained`."""
        self.service.input_down(
            (sg.id for sg in list(self.games.by_id.values()) if self.games.running(sg) is not None),
            since,
        )

    def input_regained(self) -> None:
        """Slack's input reaches us again: what people typed meanwhile is read back from the
        booths and handed over (the service releases it, then runs the games on)."""
        if not self._closed:
            self._spawn(self.relay.catch_up())

    async def _close_idle(self, game_id: str, reason: str) -> None:
        await self.service.end(game_id, reason)
        sg = self.games.by_id.get(game_id)
        if sg is not None:
            sg.done = True
            self.lobby.refresh(sg, note=f"This game was closed: {reason}.")

    async def close(self) -> None:
        """Let pending work (posts, last-ts writes) finish briefly, then stop."""
        self._closed = True
        self.reveals.close()
        await self.idle_lobbies.stop()
        self.withdrawals.close()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)
        await self.out.delivery.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.store.close()

    async def drain(self) -> None:
        """Everything the service has dispatched so far is posted (tests, shutdown)."""
        await self.service.drain()
        await self.out.delivery.drain()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- engine event -> Slack ------------------------------------------------------------------

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        if self._closed:
            return  # shutting down: the service may still flush its queues
        sg = await self.games.known(game.id)
        if sg is None:
            return
        for event in events:
            try:
                await self.render.event(game, sg, event)
            except Exception:
                log.exception("could not show %s of game %s on Slack", event.kind, game.id)
            if isinstance(event, GameOver) and event.played_out:
                self.reveals.game_over(game.id)

    async def _post_reveal(self, game_id: str, text: str) -> None:
        sg = self.games.get(game_id) or await self.store.load(game_id)
        if sg is None:
            return
        self.out.post(
            sg.channel,
            to_slack(text),
            team=sg.team,
            game_id=sg.id,
            what="post in the game channel",
            report=False,
        )

    async def leave_workspace(self, team: str, why: str) -> None:
        """The app left workspace ``team`` (uninstalled, token revoked): each of its open games
        is ended through the service, so the store records it aborted and keeps its data
        (exportable). Its players are told if Slack still lets us (usually it does not)."""
        leaving = [sg for sg in self.games.by_id.values() if sg.team == team and not sg.done]
        for sg in leaving:
            sg.done = True  # no more booth lines or clicks for it (all before the first await)
        for sg in leaving:
            game = self.games.live(sg)
            if game is None or game.status not in ("lobby", "running"):
                continue
            try:
                await self.service.end(sg.id, why)
            except (ServiceError, RuleError) as err:
                log.info("game %s of workspace %s: %s", sg.id, team, err)  # already over

    async def on_channel_gone(self, channel: str, how: str) -> None:
        sg = self.games.in_channel(channel)
        if sg is not None:
            await self.lobby.stage_lost(sg, f"the game channel was {how}")
            return
        old: SlackGame | None = self.games.with_den(channel)
        if old is not None:
            old.den = None  # an older version's den channel: nothing is posted there any more
