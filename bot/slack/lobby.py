"""The Slack lobby: ``/mafia new`` opens a game in a channel, its message carries Join / Leave
/ Start, the host configures, starts, ends and removes players.

What a lobby needs before it starts, who may start it and how AI seats are added are the
table's rules (`bot.table.lobby`); the settings words are `bot.table.config`'s. Before a
person's first game on the workspace the service refuses their join with `ConsentRequired`:
the notice opens in a modal and, once agreed, they are seated.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.protection.consent import CONSENT_VERSION, ConsentRequired, record_consent
from bot.service.live import LiveGame
from bot.service.port import GameService, ServiceError
from bot.settings import Settings
from bot.slack import blocks as B
from bot.slack.delivery import error_fields, why
from bot.slack.games import Games
from bot.slack.links import LinkStore, SlackGame
from bot.slack.notify import Notifier
from bot.slack.problems import explain, missing_scopes, scope_words
from bot.slack.workspaces import TokenRefreshFailed, WorkspaceGone
from bot.table import balance_estimate
from bot.table.config import (
    SettingsTextError,
    apply_settings,
    config_summary,
    default_config,
    parse_settings,
)
from bot.table.lobby import lobby_text, may_manage, seat_agents, start_problem
from games.config import GameConfig
from games.errors import ConfigError, RuleError

log = logging.getLogger(__name__)

PLATFORM = "slack"
OPEN_NOTE = "A game of Mafia is open: click Join to play."
HOSTS_ONLY = "Only the host (or a workspace admin) can {what}."


class Lobby:
    def __init__(
        self,
        service: GameService,
        games: Games,
        out: Notifier,
        store: LinkStore,
        *,
        settings: Settings | None = None,
        allow_test_options: bool = False,
        agent_kind: str | None = None,
    ) -> None:
        self.service = service
        self.games = games
        self.out = out
        self.store = store
        self.settings = settings
        self.allow_test_options = allow_test_options
        self.agent_kind = agent_kind
        self._locks: dict[str, asyncio.Lock] = {}

    def _lock(self, game_id: str) -> asyncio.Lock:
        return self._locks.setdefault(game_id, asyncio.Lock())

    async def may_manage(self, sg: SlackGame, user: str) -> bool:
        game = self.games.live(sg)
        if game is not None and may_manage(game, user, moderator=False):
            return True
        return user == sg.host or await self.out.is_admin(sg.team, user)

    # --- open -----------------------------------------------------------------------------

    async def new_game(self, team: str, user: str, channel: str | None, args: str) -> str:
        if channel is None or channel.startswith("D"):
            return "Run `/mafia new` in the channel where you want to play (not in a DM)."
        current = self.games.in_channel(channel)
        if current is not None:
            return (
                f"There is already a game here (`{current.id}`). "
                "Finish it or `/mafia end` it first."
            )
        try:
            parsed = parse_settings(args, allow_hidden=self.allow_test_options)
            config = apply_settings(default_config(self.settings), parsed.config)
        except (SettingsTextError, ConfigError) as err:
            return str(err)
        warn = await self._scope_warning(team)
        seed = parsed.hidden.get("seed")
        speed = parsed.hidden.get("speed")
        try:
            game_id = await self.service.create_game(
                config,
                platform=PLATFORM,
                server_external_id=team,
                channel_id=channel,
                host_user_id=user,
                seed=None if seed is None else int(seed),
                speed=float(speed) if speed is not None else self._clock_speed(),
            )
        except ServiceError as err:  # the bot is restarting
            return str(err)
        sg = SlackGame(game_id, team, channel, user, agents=parsed.agents or 1)
        self.games.add(sg)
        try:
            posted = await self.out.post(
                channel,
                OPEN_NOTE,
                team=team,
                blocks=self.blocks(sg),
                game_id=game_id,
                what="post the lobby",
                report=False,
            )
        except (SlackApiError, WorkspaceGone) as err:
            sg.done = True
            await self.service.end(game_id, "the lobby could not be posted")
            if isinstance(err, TokenRefreshFailed):
                return "Slack would not renew my access to this workspace just now; try again."
            if isinstance(err, WorkspaceGone):
                return "The app is not installed in this workspace any more."
            error, needed = error_fields(err)
            return explain(error, what="post the lobby here", channel=channel, needed=needed) + (
                " Invite me to this channel (/invite) and try again."
                if error in ("not_in_channel", "channel_not_found")
                else ""
            )
        sg.lobby_ts = str(posted["ts"])
        await self.store.save_game(sg)
        game = self.games.live(sg)
        if game is not None:
            self.show_balance(sg, game)
        return f"Game `{game_id}` is open. Players click *Join*; you click *Start*.{warn}"

    def _clock_speed(self) -> float:
        return self.settings.clock_speed if self.settings is not None else 1.0

    async def _scope_warning(self, team: str) -> str:
        with contextlib.suppress(SlackApiError, WorkspaceGone):
            await self.out.refresh_identity(team)
        scopes = self.out.scopes.get(team)
        missing = missing_scopes(scopes) if scopes is not None else []
        if not missing:
            return ""
        return (
            "\nHeads-up: the app is missing permissions, so parts of the game will "
            f"fail: {scope_words(missing)}. A workspace admin can add them and "
            "reinstall the app (see slack_manifest.yaml)."
        )

    # --- the lobby message ------------------------------------------------------------------

    def blocks(self, sg: SlackGame, *, note: str | None = None) -> list[B.Block]:
        game = self.games.live(sg)
        if note is not None or game is None:
            return B.lobby(sg.id, note or "This game is closed.", open_=False)
        humans = [f"<@{s.user_id}>" for s in game.seats if not s.is_agent and s.user_id]
        roster = lobby_text(
            humans, sg.agents, game.config, host=f"<@{sg.host}>" if sg.host else "nobody"
        )
        if game.status == "lobby":
            line = balance_estimate.shared().line(game.config)
            roster = f"{roster}\n{line}" if line else roster
        return B.lobby(sg.id, roster, open_=game.status == "lobby")

    def show_balance(self, sg: SlackGame, game: LiveGame) -> None:
        """Redraw the lobby when its setup's balance estimate comes in (measured off the loop)."""

        def redraw() -> None:
            if game.status == "lobby" and not sg.done:
                self.refresh(sg)

        balance_estimate.shared().watch(game.config, redraw)

    def refresh(self, sg: SlackGame, *, note: str | None = None) -> None:
        if sg.lobby_ts is None:
            return
        self.out.delivery.submit(
            sg.channel,
            "chat.update",
            team=sg.team,
            what="update the lobby",
            game_id=sg.id,
            channel=sg.channel,
            ts=sg.lobby_ts,
            text=note or OPEN_NOTE,
            blocks=self.blocks(sg, note=note),
        )

    # --- join, consent, leave ---------------------------------------------------------------

    async def join(self, user: str, game_id: str, trigger_id: str | None) -> str | None:
        """Join, or open the consent notice first. Returns the reply for the user."""
        sg = await self.games.known(game_id)
        if sg is None or sg.done:
            return "This game is closed."
        async with self._lock(game_id):
            try:
                await self.service.join(game_id, user)
            except ConsentRequired as need:
                if trigger_id is None:
                    return f"{need} Click *Join* on the lobby message to read it."
                await self.open_consent(
                    sg.team,
                    trigger_id,
                    need.text,
                    version=need.version,
                    research=need.research,
                    game_id=game_id,
                )
                return None
            except ServiceError as err:
                return str(err)
        self.refresh(sg)
        return (
            f"You're in game `{game_id}`. When the host starts it, I'll send your role "
            "in a direct message: that conversation is your booth."
        )

    async def open_consent(
        self,
        team: str,
        trigger_id: str,
        text: str,
        *,
        version: str,
        research: bool,
        game_id: str | None,
    ) -> None:
        view = B.consent_modal(text, version=version, research=research, game_id=game_id)
        try:
            await (await self.out.client(team)).views_open(trigger_id=trigger_id, view=view)
        except (SlackApiError, WorkspaceGone) as err:
            log.warning("consent modal failed: %s", why(err))

    async def consent_given(self, team: str, user: str, meta: dict[str, Any]) -> None:
        """The consent modal was submitted: record it, then join the game it came from."""
        version = str(meta.get("version") or CONSENT_VERSION)
        research = bool(meta.get("research", True))
        engine = self.service.engine
        await self.store.run(
            lambda: record_consent(engine, PLATFORM, team, user, True, version, research=research)
        )
        game_id = meta.get("game")
        if not game_id:
            dm = await self.out.open_dm(team, user, report=False)
            if dm:
                self.out.post(
                    dm,
                    f"Thanks: your answer (notice version {version}) is recorded.",
                    team=team,
                    report=False,
                )
            return
        reply = await self.join(user, str(game_id), None)
        sg = self.games.get(str(game_id))
        if reply and sg is not None:
            self.out.ephemeral(
                sg.team,
                sg.channel,
                user,
                f"Thanks, your consent (version {version}) is recorded. " + reply,
            )

    async def leave(self, user: str, game_id: str) -> str:
        sg = await self.games.known(game_id)
        if sg is None or sg.done:
            return "This game is closed."
        async with self._lock(game_id):
            try:
                await self.service.leave(game_id, user)
            except ServiceError as err:
                return str(err)
        self.refresh(sg)
        return f"You left game `{game_id}`."

    # --- the host's commands ----------------------------------------------------------------

    async def start(self, user: str, sg: SlackGame) -> str:
        if not await self.may_manage(sg, user):
            return HOSTS_ONLY.format(what="start the game")
        async with self._lock(sg.id):
            game = self.games.live(sg)
            if game is None:
                return "This game has already started (or is closed)."
            problem = start_problem(game, sg.agents)
            if problem is not None:
                return problem
            # The service seats everyone in a seed-drawn order at the start; booths are keyed
            # by the final seats (`Renderer.set_up`, on GameStarted).
            try:
                await seat_agents(self.service, game, sg.agents, agent_kind=self.agent_kind)
                await self.service.start(sg.id)
            except (ConfigError, ServiceError) as err:
                return f"Can't start: {err}"
        return f"Game `{sg.id}` has started. Good luck!"

    async def end(self, user: str, sg: SlackGame) -> str:
        if not await self.may_manage(sg, user):
            return HOSTS_ONLY.format(what="end the game")
        game = self.games.live(sg)
        if game is None:
            return "This game is not running here."
        if game.state is None:
            await self.service.end(sg.id, "cancelled by the host")
            sg.done = True
            self.refresh(sg, note="This game was cancelled by the host.")
            return f"Game `{sg.id}` cancelled."
        await self.service.end(sg.id, "ended by the host")
        return f"Game `{sg.id}` ended."

    async def stage_lost(self, sg: SlackGame, why: str) -> None:
        """The stage channel was deleted or archived: nobody can follow the game any more."""
        if sg.done:
            return
        game = self.games.live(sg)
        await self.out.tell_host(
            sg,
            f"The game channel <#{sg.channel}> ({sg.channel}) can't be "
            "used any more (deleted or archived), so I stopped the game.",
        )
        sg.done = True
        if game is not None and game.status in ("lobby", "running"):
            with contextlib.suppress(ServiceError, RuleError):
                await self.service.end(sg.id, why)

    async def configure(self, user: str, sg: SlackGame, args: str) -> str:
        game = self.games.live(sg)
        if game is None:
            return "This game is not running here."
        if not args.strip():
            return f"Settings of game `{sg.id}`: {config_summary(game.config, sg.agents)}"
        if not await self.may_manage(sg, user):
            return HOSTS_ONLY.format(what="change the settings")
        if game.status != "lobby":
            return "The settings can only change before the start."
        try:
            parsed = parse_settings(args)
            config = apply_settings(game.config, parsed.config)
        except (SettingsTextError, ConfigError) as err:
            return str(err)
        await self._set_config(game, config)
        if parsed.agents is not None:
            sg.agents = parsed.agents
            await self.store.save_game(sg)
        self.refresh(sg)
        self.show_balance(sg, game)
        line = balance_estimate.shared().line(config)
        return f"Settings updated: {config_summary(config, sg.agents)}" + (
            f"\n{line}" if line else ""
        )

    async def _set_config(self, game: LiveGame, config: GameConfig) -> None:
        """Stopgap until the service has ``configure(game_id, config)``: the lobby's config
        in memory and in the games row, under the game's lock."""
        configure = getattr(self.service, "configure", None)
        if configure is not None:
            await configure(game.id, config)
            return
        from bot.store.db import session_scope
        from bot.store.models import Game

        async with game.lock:
            if game.status != "lobby":
                raise ServiceError("The game has started.")

            def work() -> None:
                with session_scope(self.service.engine) as s:
                    row = s.get(Game, game.id)
                    assert row is not None
                    row.config = config.to_dict()

            await self.store.run(work)
            game.config = config

    async def kick(self, user: str, sg: SlackGame, target: str) -> str:
        if not await self.may_manage(sg, user):
            return HOSTS_ONLY.format(what="remove a player")
        game = self.games.live(sg)
        if game is None:
            return "This game is not running here."
        seat = game.seat_of_user(target)
        if seat is None:
            return f"<@{target}> has no seat in game `{sg.id}`."
        if game.state is None:
            async with self._lock(sg.id):
                await self.service.leave(sg.id, target)
            self.refresh(sg)
            return f"<@{target}> was removed from the lobby."
        await self.service.replace_seat(sg.id, seat.index, agent_kind=self.agent_kind or "baseline")
        booth = sg.booths.pop(seat.index, None)
        await self.store.drop_booth(sg.id, seat.index)
        if booth is not None:  # gone from sg.booths: no more den lines reach it either
            self.out.post(
                booth.channel,
                f"The host took you out of game `{sg.id}`; an AI plays "
                "your character from now on. Thanks for playing!",
                team=sg.team,
                game_id=sg.id,
            )
        return f"<@{target}>'s character is now played by an AI; nobody else is told."
