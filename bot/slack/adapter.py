"""The Slack adapter: Slack conversations mapped onto one game, through the service port.

- The *stage* is the channel where ``/mafia new`` ran. Every line said there (human or agent)
  is posted by the app under the character's name and picture; the Game-Manager speaks as the
  app itself. Nothing is rendered from anywhere but the service's events, so the agent's lines
  take exactly the humans' path.
- A player's *booth* is their direct-message conversation with the app: role card, private
  results, vote and night menus, the survey; and what they type there is what they say.
- The *den* (the mafia's night talk) has no channel of its own: a channel's member list would
  show which partners are people, so a human whose only partner is the agent would know it.
  Each den event goes into the booth of every mafia human the service lets see it
  (``visible_to``); a line is posted the stage's way (character name and picture) into every
  such booth but the speaker's own, so an agent's line and a human's look exactly alike.

Robustness: posts go through `bot.slack.poster.Poster` (per-conversation order survives rate
limits); where each game lives is in `platform_links` (`bot.slack.store`), so after a restart
the service resumes its timers and `catch_up` relays, once and in order, what players typed in
their booths while the app was down (each line carries ``platform_id="slack:<channel>:<ts>"``,
which the service stores once). Slack errors become plain sentences for the host
(`bot.slack.problems`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.consent import CONSENT_VERSION, ConsentRequired, record_consent
from bot.platform_common import (
    AVATAR_URL_TEMPLATE,
    SettingsTextError,
    apply_settings,
    avatar_url,
    lobby_text,
    parse_settings,
)
from bot.service import GameService, LiveGame, ServiceError
from bot.settings import Settings
from bot.slack import blocks as B
from bot.slack.poster import Failure, Poster
from bot.slack.problems import GONE, explain, missing_scopes, scope_words
from bot.slack.store import Booth, LinkStore, SlackGame
from bot.slack.text import escape, from_slack, to_slack
from games.config import GameConfig
from games.errors import ConfigError, RuleError
from games.events import (
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
from games.roles import get_role
from games.state import GameState

log = logging.getLogger(__name__)

PLATFORM = "slack"
BOOTH_HELP = (
    "This conversation is your *booth*. Type here to talk: your lines appear in {stage} under "
    "your character's name. At night, if you are mafia, what you type goes to your partners "
    "only, and their lines appear here. Vote and night menus arrive here. Nobody sees who "
    "types what."
)
STAGE_REMINDER = (
    "Psst: messages typed straight into this channel are not part of the game. Speak from "
    "your booth, your direct messages with me: I post your lines here under your character's "
    "name."
)
#: real seconds between two reminders to the same person in the same channel
REMIND_EVERY = 60.0
SPECTATOR_REMINDER = (
    "A game of Mafia is running in this channel; only the players' booth lines count. Please "
    "keep the channel for the game until it ends."
)


@dataclass
class Ctx:
    """Who asked, where: what every inbound handler knows."""

    team: str
    user: str
    channel: str | None = None
    trigger_id: str | None = None


class SlackAdapter:
    """One workspace's games. Subscribes itself to the service on construction, so it sees
    every event of every game from the first (create it before resuming games)."""

    def __init__(
        self,
        service: GameService,
        client: AsyncWebClient,
        *,
        settings: Settings | None = None,
        allow_test_options: bool = False,
        avatar_template: str = AVATAR_URL_TEMPLATE,
        agent_kind: str | None = None,
    ) -> None:
        self.service = service
        self.client = client
        self.settings = settings
        self.allow_test_options = allow_test_options
        self.avatar_template = avatar_template
        self.agent_kind = agent_kind
        self.poster = Poster(client, self._on_failure)
        self.store = LinkStore(service.engine)
        self.games: dict[str, SlackGame] = {}
        self.team_id: str | None = None
        self.bot_user_id: str | None = None
        self.scopes: set[str] | None = None
        self._not_ours: set[str] = set()
        self._locks: dict[str, asyncio.Lock] = {}
        self._dms: dict[str, str] = {}
        self._admins: dict[str, tuple[float, bool]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reminded: dict[tuple[str, str], float] = {}
        self._closed = False
        service.subscribe(self)

    # --- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Who we are, then every open Slack game back in memory, then the booths' backlog.
        Call before the app starts receiving requests."""
        await self.refresh_identity()
        for game_id, _status in await self.store.open_games():
            sg = await self.store.load(game_id)
            if sg is None:
                continue
            self.games[game_id] = sg
            try:
                # Only Slack games: resume_all() would also wake up, say, a terminal game
                # its player paused to resume later. (Idempotent: a shared service that has
                # already resumed a game just returns it.)
                await self.service.resume(game_id)
            except Exception:
                log.exception("could not resume Slack game %s", game_id)
        for sg in list(self.games.values()):
            game = self.service.games.get(sg.id)
            if game is not None and game.state is not None and not sg.set_up:
                await self._set_up(game, sg)  # crashed between the start and the set-up
        await self.catch_up()

    async def refresh_identity(self) -> None:
        try:
            auth = await self.client.auth_test()
        except SlackApiError as err:
            log.error("Slack auth.test failed: %s", err.response.get("error"))
            raise
        self.team_id = str(auth.get("team_id") or "") or None
        self.bot_user_id = str(auth.get("user_id") or "") or None
        header = ""
        for key, value in dict(auth.headers or {}).items():
            if str(key).lower() == "x-oauth-scopes":
                header = str(value)
        if header:
            self.scopes = {s.strip() for s in header.split(",") if s.strip()}
            if "chat:write.customize" in self.scopes:
                self.poster.customize = True  # re-granted: names and pictures again
            missing = missing_scopes(self.scopes)
            if missing:
                log.warning("Slack app is missing scopes: %s", ", ".join(missing))

    async def close(self) -> None:
        """Let pending work (posts, last-ts writes) finish briefly, then stop."""
        self._closed = True
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)
        await self.poster.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.store.close()

    async def drain(self) -> None:
        """Everything the service has dispatched so far is posted (tests, shutdown)."""
        await self.service.drain()
        await self.poster.drain()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _lock(self, key: str) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    # --- lookups ------------------------------------------------------------------------------

    async def _known(self, game_id: str) -> SlackGame | None:
        sg = self.games.get(game_id)
        if sg is not None or game_id in self._not_ours:
            return sg
        sg = await self.store.load(game_id)
        if sg is None:
            self._not_ours.add(game_id)
            return None
        self.games[game_id] = sg
        return sg

    def game_in_channel(self, channel: str | None) -> SlackGame | None:
        """The open game whose stage is ``channel`` (one per channel)."""
        for sg in self.games.values():
            if not sg.done and sg.channel == channel:
                return sg
        return None

    def game_with_den(self, channel: str | None) -> SlackGame | None:
        """The open game whose den channel (made by an older version) is ``channel``."""
        for sg in self.games.values():
            if not sg.done and channel is not None and sg.den == channel:
                return sg
        return None

    def live(self, sg: SlackGame) -> LiveGame | None:
        return self.service.games.get(sg.id)

    def booth_target(self, user: str) -> tuple[SlackGame, Booth] | None:
        """The running game whose booth a DM from ``user`` speaks into: the newest one."""
        found: tuple[SlackGame, Booth] | None = None
        for sg in self.games.values():
            game = self.live(sg)
            if sg.done or game is None or game.state is None or game.state.over:
                continue
            for booth in sg.booths.values():
                if booth.user == user and game.seats[booth.seat].user_id == user:
                    found = (sg, booth)
        return found

    def games_of(self, user: str) -> list[tuple[SlackGame, LiveGame]]:
        out = []
        for sg in self.games.values():
            game = self.live(sg)
            if game is not None and not sg.done and game.seat_of_user(user) is not None:
                out.append((sg, game))
        return out

    # --- talking to people --------------------------------------------------------------------

    async def open_dm(
        self, user: str, *, game_id: str | None = None, report: bool = True
    ) -> str | None:
        if user in self._dms:
            return self._dms[user]
        try:
            resp = await self.client.conversations_open(users=user)
        except SlackApiError as err:
            if report:
                await self._on_failure(
                    Failure(
                        "conversations.open",
                        None,
                        str(err.response.get("error")),
                        str(err.response.get("needed") or ""),
                        "open a direct message with a player",
                        game_id,
                    )
                )
            return None
        channel = str(resp["channel"]["id"])
        self._dms[user] = channel
        return channel

    def post(
        self,
        channel: str,
        text: str,
        *,
        game_id: str | None = None,
        what: str = "post a message",
        blocks: list[B.Block] | None = None,
        report: bool = True,
    ) -> asyncio.Future[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "channel": channel,
            "text": text,
            "unfurl_links": False,
            "unfurl_media": False,
        }
        if blocks is not None:
            kwargs["blocks"] = blocks
        return self.poster.submit(
            channel, "chat.postMessage", what=what, game_id=game_id, report=report, **kwargs
        )

    def say_as(
        self, channel: str, name: str, text: str, *, game_id: str, what: str
    ) -> asyncio.Future[dict[str, Any]]:
        """A character's line: the name and picture are the only marks of who said it."""
        body = to_slack(text)
        plain = {
            "channel": channel,
            "text": f"*{escape(name)}*: {body}",
            "unfurl_links": False,
            "unfurl_media": False,
        }
        return self.poster.submit(
            channel,
            "chat.postMessage",
            what=what,
            game_id=game_id,
            plain=plain,
            channel=channel,
            text=body,
            username=name,
            icon_url=avatar_url(name, self.avatar_template),
            unfurl_links=False,
            unfurl_media=False,
        )

    def booth_note(
        self, sg: SlackGame, seat: int, text: str, blocks: list[B.Block] | None = None
    ) -> asyncio.Future[dict[str, Any]] | None:
        booth = sg.booths.get(seat)
        if booth is None:
            return None
        return self.post(
            booth.channel, text, game_id=sg.id, blocks=blocks, what="write in a player's booth"
        )

    async def tell_host(self, sg: SlackGame | None, text: str) -> None:
        host = sg.host if sg is not None else None
        if host is None:
            log.warning("Slack problem with nobody to tell: %s", text)
            return
        dm = await self.open_dm(host, report=False)
        if dm is None:
            log.warning("Slack problem, host unreachable: %s", text)
            return
        prefix = f"Game `{sg.id}`: " if sg is not None else ""
        self.post(dm, prefix + text, report=False)

    async def _on_failure(self, failure: Failure) -> None:
        sg = self.games.get(failure.game_id) if failure.game_id else None
        key = f"{failure.error}|{failure.channel}|{failure.needed}"
        if sg is not None:
            if key in sg.reported:
                return
            sg.reported.add(key)
        text = explain(
            failure.error, what=failure.what, channel=failure.channel, needed=failure.needed
        )
        if failure.recovered:
            text += " Until then I post each line with the character's name in front."
        await self.tell_host(sg, text)
        if (
            sg is not None
            and not sg.done
            and failure.channel == sg.channel
            and failure.error in GONE
            and failure.error != "not_in_channel"
        ):
            self._spawn(self.stage_lost(sg, "the game channel is gone"))

    async def is_admin(self, user: str) -> bool:
        cached = self._admins.get(user)
        if cached is not None and time.monotonic() - cached[0] < 300:
            return cached[1]
        try:
            info = (await self.client.users_info(user=user))["user"]
        except SlackApiError as err:
            log.warning("users.info failed: %s", err.response.get("error"))
            return False
        admin = bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"))
        self._admins[user] = (time.monotonic(), admin)
        return admin

    async def may_manage(self, sg: SlackGame, user: str) -> bool:
        return user == sg.host or await self.is_admin(user)

    # --- the lobby ----------------------------------------------------------------------------

    def default_config(self) -> GameConfig:
        s = self.settings
        if s is None:
            return GameConfig()
        return GameConfig(
            day_seconds=s.day_seconds,
            vote_seconds=s.vote_seconds,
            night_seconds=s.night_seconds,
            night_vote_seconds=s.night_vote_seconds,
        )

    async def new_game(self, ctx: Ctx, args: str) -> str:
        channel = ctx.channel
        if channel is None or channel.startswith("D"):
            return "Run `/mafia new` in the channel where you want to play (not in a DM)."
        current = self.game_in_channel(channel)
        if current is not None:
            return (
                f"There is already a game here (`{current.id}`). "
                "Finish it or `/mafia end` it first."
            )
        try:
            parsed = parse_settings(args, allow_hidden=self.allow_test_options)
            config = apply_settings(self.default_config(), parsed.config)
        except (SettingsTextError, ConfigError) as err:
            return str(err)
        warn = ""
        with contextlib.suppress(SlackApiError):
            await self.refresh_identity()
        if self.scopes is not None:
            missing = missing_scopes(self.scopes)
            if missing:
                warn = (
                    "\nHeads-up: the app is missing permissions, so parts of the game will "
                    f"fail: {scope_words(missing)}. A workspace admin can add them and "
                    "reinstall the app (see slack_manifest.yaml)."
                )
        seed = parsed.hidden.get("seed")
        game_id = await self.service.create_game(
            config,
            platform=PLATFORM,
            server_external_id=ctx.team,
            channel_id=channel,
            host_user_id=ctx.user,
            seed=None if seed is None else int(seed),
            speed=float(parsed.hidden.get("speed", 1.0)),
        )
        sg = SlackGame(game_id, ctx.team, channel, ctx.user, agents=parsed.agents or 1)
        self.games[game_id] = sg
        try:
            posted = await self.post(
                channel,
                "A game of Mafia is open: click Join to play.",
                blocks=self._lobby_blocks(sg),
                game_id=game_id,
                what="post the lobby",
                report=False,
            )
        except SlackApiError as err:
            sg.done = True
            await self.service.end(game_id, "the lobby could not be posted")
            error = str(err.response.get("error"))
            return explain(
                error,
                what="post the lobby here",
                channel=channel,
                needed=str(err.response.get("needed") or ""),
            ) + (
                " Invite me to this channel (/invite) and try again."
                if error in ("not_in_channel", "channel_not_found")
                else ""
            )
        sg.lobby_ts = str(posted["ts"])
        await self.store.save_game(sg)
        return f"Game `{game_id}` is open. Players click *Join*; you click *Start*.{warn}"

    def _lobby_blocks(self, sg: SlackGame, *, note: str | None = None) -> list[B.Block]:
        game = self.live(sg)
        if note is not None or game is None:
            return B.lobby(sg.id, note or "This game is closed.", open_=False)
        humans = [f"<@{s.user_id}>" for s in game.seats if not s.is_agent and s.user_id]
        roster = lobby_text(
            humans, sg.agents, game.config, host=f"<@{sg.host}>" if sg.host else "nobody"
        )
        return B.lobby(sg.id, roster, open_=game.status == "lobby")

    def refresh_lobby(self, sg: SlackGame, *, note: str | None = None) -> None:
        if sg.lobby_ts is None:
            return
        text = note or "A game of Mafia is open: click Join to play."
        self.poster.submit(
            sg.channel,
            "chat.update",
            what="update the lobby",
            game_id=sg.id,
            channel=sg.channel,
            ts=sg.lobby_ts,
            text=text,
            blocks=self._lobby_blocks(sg, note=note),
        )

    async def join(self, ctx: Ctx, game_id: str) -> str | None:
        """Join, or open the consent notice first. Returns the reply for the user."""
        sg = await self._known(game_id)
        if sg is None or sg.done:
            return "This game is closed."
        async with self._lock(f"lobby:{game_id}"):
            try:
                await self.service.join(game_id, ctx.user)
            except ConsentRequired as need:
                if ctx.trigger_id is None:
                    return f"{need} Click *Join* on the lobby message to read it."
                await self.open_consent(
                    ctx.trigger_id,
                    need.text,
                    version=need.version,
                    research=need.research,
                    game_id=game_id,
                )
                return None
            except ServiceError as err:
                return str(err)
        self.refresh_lobby(sg)
        return (
            f"You're in game `{game_id}`. When the host starts it, I'll send your role "
            "in a direct message: that conversation is your booth."
        )

    async def open_consent(
        self, trigger_id: str, text: str, *, version: str, research: bool, game_id: str | None
    ) -> None:
        view = B.consent_modal(text, version=version, research=research, game_id=game_id)
        try:
            await self.client.views_open(trigger_id=trigger_id, view=view)
        except SlackApiError as err:
            log.warning("consent modal failed: %s", err.response.get("error"))

    async def consent_given(self, ctx: Ctx, meta: dict[str, Any]) -> None:
        """The consent modal was submitted: record it, then join the game it came from."""
        version = str(meta.get("version") or CONSENT_VERSION)
        research = bool(meta.get("research", True))
        await self.store.run(
            lambda: record_consent(
                self.service.engine, PLATFORM, ctx.team, ctx.user, True, version, research=research
            )
        )
        game_id = meta.get("game")
        if not game_id:
            dm = await self.open_dm(ctx.user, report=False)
            if dm:
                self.post(
                    dm, f"Thanks: your answer (notice version {version}) is recorded.", report=False
                )
            return
        reply = await self.join(Ctx(ctx.team, ctx.user), str(game_id))
        sg = self.games.get(str(game_id))
        if reply and sg is not None:
            self.poster.submit(
                sg.channel,
                "chat.postEphemeral",
                report=False,
                channel=sg.channel,
                user=ctx.user,
                text=f"Thanks, your consent (version {version}) is recorded. " + reply,
            )

    async def leave(self, ctx: Ctx, game_id: str) -> str:
        sg = await self._known(game_id)
        if sg is None or sg.done:
            return "This game is closed."
        async with self._lock(f"lobby:{game_id}"):
            try:
                await self.service.leave(game_id, ctx.user)
            except ServiceError as err:
                return str(err)
        self.refresh_lobby(sg)
        return f"You left game `{game_id}`."

    async def start_game(self, ctx: Ctx, sg: SlackGame) -> str:
        if not await self.may_manage(sg, ctx.user):
            return "Only the host (or a workspace admin) can start the game."
        async with self._lock(f"lobby:{sg.id}"):
            game = self.live(sg)
            if game is None or game.status != "lobby":
                return "This game has already started (or is closed)."
            seated = sum(s.is_agent for s in game.seats)
            wanted = max(0, sg.agents - seated)
            try:
                game.config.validate(len(game.seats) + wanted)
            except ConfigError as err:
                return f"Can't start yet: {err}"
            # Joined last, but the service seats everyone in a seed-drawn order at the start;
            # booths are keyed by the final seats (`_set_up`, on GameStarted).
            for _ in range(wanted):
                await self.service.join(sg.id, None, is_agent=True, agent_kind=self.agent_kind)
            try:
                await self.service.start(sg.id)
            except (ConfigError, ServiceError) as err:
                return f"Can't start: {err}"
        return f"Game `{sg.id}` has started. Good luck!"

    async def end_game(self, ctx: Ctx, sg: SlackGame) -> str:
        if not await self.may_manage(sg, ctx.user):
            return "Only the host (or a workspace admin) can end the game."
        game = self.live(sg)
        if game is None:
            return "This game is not running here."
        if game.state is None:
            await self.service.end(sg.id, "cancelled by the host")
            sg.done = True
            self.refresh_lobby(sg, note="This game was cancelled by the host.")
            return f"Game `{sg.id}` cancelled."
        await self.service.end(sg.id, "ended by the host")
        return f"Game `{sg.id}` ended."

    async def stage_lost(self, sg: SlackGame, why: str) -> None:
        """The stage channel was deleted or archived: nobody can follow the game any more."""
        if sg.done:
            return
        game = self.live(sg)
        await self.tell_host(
            sg,
            f"The game channel <#{sg.channel}> ({sg.channel}) can't be "
            "used any more (deleted or archived), so I stopped the game.",
        )
        sg.done = True
        if game is not None and game.status in ("lobby", "running"):
            with contextlib.suppress(ServiceError, RuleError):
                await self.service.end(sg.id, why)

    async def configure(self, ctx: Ctx, sg: SlackGame, args: str) -> str:
        game = self.live(sg)
        if game is None:
            return "This game is not running here."
        if not args.strip():
            from bot.platform_common import config_summary

            return f"Settings of game `{sg.id}`: {config_summary(game.config, sg.agents)}"
        if not await self.may_manage(sg, ctx.user):
            return "Only the host (or a workspace admin) can change the settings."
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
        self.refresh_lobby(sg)
        from bot.platform_common import config_summary

        return f"Settings updated: {config_summary(config, sg.agents)}"

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

    async def kick(self, ctx: Ctx, sg: SlackGame, target: str) -> str:
        if not await self.may_manage(sg, ctx.user):
            return "Only the host (or a workspace admin) can remove a player."
        game = self.live(sg)
        if game is None:
            return "This game is not running here."
        seat = game.seat_of_user(target)
        if seat is None:
            return f"<@{target}> has no seat in game `{sg.id}`."
        if game.state is None:
            async with self._lock(f"lobby:{sg.id}"):
                await self.service.leave(sg.id, target)
            self.refresh_lobby(sg)
            return f"<@{target}> was removed from the lobby."
        await self.service.replace_seat(sg.id, seat.index, agent_kind=self.agent_kind or "baseline")
        booth = sg.booths.pop(seat.index, None)
        await self.store.drop_booth(sg.id, seat.index)
        if booth is not None:  # gone from sg.booths: no more den lines reach it either
            self.post(
                booth.channel,
                f"The host took you out of game `{sg.id}`; an AI plays "
                "your character from now on. Thanks for playing!",
                game_id=sg.id,
            )
        return f"<@{target}>'s character is now played by an AI; nobody else is told."

    # --- rendering the game -------------------------------------------------------------------

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        if self._closed:
            return  # shutting down: the service may still flush its queues
        sg = await self._known(game.id)
        if sg is None:
            return
        for event in events:
            try:
                await self._render(game, sg, event)
            except Exception:
                log.exception("could not show %s of game %s on Slack", event.kind, game.id)

    async def _render(self, game: LiveGame, sg: SlackGame, event: Event) -> None:
        if isinstance(event, GameStarted):
            await self._set_up(game, sg)
        if isinstance(event, MessageAccepted):
            if event.place == "den":
                for channel in self.den_booths(game, sg, event, skip=event.seat):
                    self.say_as(
                        channel,
                        event.name,
                        event.text,
                        game_id=sg.id,
                        what="pass a mafia line to a partner's booth",
                    )
            else:
                self.say_as(
                    sg.channel,
                    event.name,
                    event.text,
                    game_id=sg.id,
                    what="post a line in the game channel",
                )
            return
        if event.place == "booth":
            text = manager_line(event)
            if isinstance(event, RoleAssigned):
                text = role_card(event)
            if text:
                for seat in sorted(event.visible_to or ()):
                    self.booth_note(sg, seat, to_slack(text))
        elif event.place == "den":
            line = manager_line(event)
            if line:
                for channel in self.den_booths(game, sg, event):
                    self.post(channel, to_slack(line), game_id=sg.id, what="write in a mafia booth")
        else:
            line = manager_line(event)
            if line:
                self.post(
                    sg.channel, to_slack(line), game_id=sg.id, what="post in the game channel"
                )
        if isinstance(event, PhaseStarted):
            self._send_menus(game, sg, event)
        elif isinstance(event, PhaseEnded) and event.phase in ("vote", "night_vote"):
            self._close_menus(sg, night=event.phase == "night_vote")
        elif isinstance(event, PlayerEliminated):
            self._eliminated(game, sg, event)
        elif isinstance(event, GameOver):
            self._finish(game, sg, event)

    def den_booths(
        self, game: LiveGame, sg: SlackGame, event: Event, *, skip: int | None = None
    ) -> list[str]:
        """The booths a den event goes to: those of the seats the service lets see it that a
        human holds right now (a kicked player's booth is gone, a dead mafia is not in
        ``visible_to``), but ``skip``'s (the speaker already sees what they typed). The
        service scopes every den event; one it did not is shown to nobody rather than to all."""
        channels = []
        for seat in sorted(event.visible_to or ()):
            if seat == skip or not 0 <= seat < len(game.seats):
                continue
            info = game.seats[seat]
            booth = sg.booths.get(seat)
            if info.is_agent or not info.user_id or booth is None or booth.user != info.user_id:
                continue
            channels.append(booth.channel)
        return channels

    async def _set_up(self, game: LiveGame, sg: SlackGame) -> None:
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
            dm = await self.open_dm(seat.user_id, game_id=sg.id)
            if dm is None:
                continue
            last_ts = f"{time.time():.6f}"
            with contextlib.suppress(SlackApiError):
                welcome = await self.post(
                    dm,
                    f"*Game `{sg.id}` is starting.* " + BOOTH_HELP.format(stage=stage),
                    game_id=sg.id,
                    what="write in a player's booth",
                )
                last_ts = str(welcome.get("ts") or last_ts)
            booth = Booth(seat.index, seat.user_id, dm, last_ts)
            sg.booths[seat.index] = booth
            await self.store.save_booth(sg.id, booth)

    def _send_menus(self, game: LiveGame, sg: SlackGame, event: PhaseStarted) -> None:
        state = game.state
        if state is None or state.phase.seq != event.seq:
            return  # that phase is already over: a menu would only mislead
        left = game.clock.real_delay_until(event.deadline)
        until = B.deadline_text(left, time.time())
        alive = [s for s in state.seats if s.alive]
        if event.phase == "vote":
            for s in alive:
                names = [o.name for o in alive if o.index != s.index]
                self._menu(
                    game,
                    sg,
                    s.index,
                    "vote",
                    B.target_menu(
                        action_id=B.VOTE,
                        block_id=f"{B.VOTE}:{sg.id}:{event.seq}",
                        prompt=f"*Day {event.number} vote:* who should be voted out? "
                        f"You can change your vote until {until}.",
                        names=names,
                        placeholder="Vote for...",
                        abstain=True,
                    ),
                )
        if event.phase == "night_vote":
            victims = [o.name for o in alive if not o.is_mafia]
            for s in alive:
                if s.is_mafia:
                    self._menu(
                        game,
                        sg,
                        s.index,
                        "night",
                        B.target_menu(
                            action_id=B.VOTE,
                            block_id=f"{B.VOTE}:{sg.id}:{event.seq}",
                            prompt=f"*Night {event.number}:* who do the mafia kill? You can change "
                            f"your vote until {until}.",
                            names=victims,
                            placeholder="Kill...",
                            abstain=True,
                        ),
                    )
        if event.phase == "night" or (event.phase == "night_vote" and event.talk_skipped):
            self._night_menus(game, sg, state, event.number, until)

    def _night_menus(
        self, game: LiveGame, sg: SlackGame, state: GameState, number: int, until: str
    ) -> None:
        alive = state.alive()
        for s in state.seats:
            role = get_role(s.role)
            if not s.alive or role.night_verb is None:
                continue
            names = [
                o.name
                for o in state.seats
                if o.alive
                and role.check_target(s.index, o.index, alive, state.last_night_actions) is None
            ]
            self._menu(
                game,
                sg,
                s.index,
                "night",
                B.target_menu(
                    action_id=B.NIGHT_ACT,
                    block_id=f"{B.NIGHT_ACT}:{sg.id}:{number}",
                    prompt=f"*Night {number}:* who do you {role.night_verb}? You can change your "
                    f"choice until the night ends (at the latest {until}).",
                    names=names,
                    placeholder=f"{role.night_verb.capitalize()}...",
                    abstain=False,
                ),
            )

    def _menu(
        self, game: LiveGame, sg: SlackGame, seat: int, kind: str, blocks: list[B.Block]
    ) -> None:
        if game.seats[seat].is_agent:
            return
        future = self.booth_note(sg, seat, "Make your choice:", blocks=blocks)
        if future is None:
            return

        def remember(f: asyncio.Future[dict[str, Any]]) -> None:
            if not f.cancelled() and f.exception() is None:
                result = f.result()
                sg.menus.append((kind, str(result.get("channel")), str(result.get("ts"))))

        future.add_done_callback(remember)

    def _close_menus(self, sg: SlackGame, *, night: bool) -> None:
        keep: list[tuple[str, str, str]] = []
        for kind, channel, ts in sg.menus:
            if kind == "vote" or night:
                text = "This vote is closed." if kind == "vote" else "The night is over."
                self.poster.submit(
                    channel,
                    "chat.update",
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

    def _eliminated(self, game: LiveGame, sg: SlackGame, event: PlayerEliminated) -> None:
        seat = game.seats[event.seat]
        if seat.is_agent or not seat.user_id:
            return
        self.booth_note(
            sg,
            event.seat,
            f"You are out of the game. You can keep watching <#"
            f"{sg.channel}>, but you can no longer talk or vote.",
        )

    def _finish(self, game: LiveGame, sg: SlackGame, event: GameOver) -> None:
        sg.done = True
        self._close_menus(sg, night=True)
        if sg.den is not None:
            # A den channel made by an older version for a game still running: nothing is
            # posted there any more; archive it as that version did, as far as the app's
            # permissions still allow (groups:write is no longer asked for).
            self.post(
                sg.den,
                "The game is over; this den is now archived.",
                game_id=sg.id,
                report=False,
            )
            self.poster.submit(
                sg.den,
                "conversations.archive",
                what="archive the den",
                game_id=sg.id,
                report=False,
                channel=sg.den,
            )
        if event.winner is None:
            return
        for seat in game.seats:
            if not seat.is_agent and seat.user_id and seat.index in sg.booths:
                self.booth_note(
                    sg,
                    seat.index,
                    "How did it go? One short survey.",
                    blocks=B.survey_invite(sg.id),
                )

    # --- players typing -----------------------------------------------------------------------

    async def on_dm(self, user: str, channel: str, ts: str, text: str) -> None:
        target = self.booth_target(user)
        if target is None:
            self.post(
                channel,
                "You're not in a running game. Join one from its lobby message "
                "in a channel (`/mafia new` opens one).",
                report=False,
            )
            return
        sg, booth = target
        if booth.channel != channel:
            return
        async with self._lock("relay"):  # one line at a time, in the order they arrived
            await self._relay(sg, booth, ts, text)

    async def _relay(
        self, sg: SlackGame, booth: Booth, ts: str, text: str, *, late: bool = False
    ) -> None:
        line = from_slack(text)
        try:
            await self.service.say(
                sg.id, booth.seat, line, platform_id=f"slack:{booth.channel}:{ts}"
            )
        except (RuleError, ServiceError) as err:
            quoted = line if len(line) <= 80 else line[:77] + "..."
            head = f"While I was offline you wrote \u201c{quoted}\u201d; it" if late else "That"
            self.post(
                booth.channel,
                to_slack(f"{head} was not passed on: {err}"),
                game_id=sg.id,
                what="write in a player's booth",
            )
        finally:
            if _ts(ts) > _ts(booth.last_ts):
                booth.last_ts = ts
                # not awaited: the store's single writer keeps these in order
                self._spawn(self.store.save_booth(sg.id, Booth(**vars(booth))))

    async def catch_up(self) -> None:
        """Relay once, oldest first across all booths, every booth line typed after the last
        one relayed (the app was down, or Slack never delivered the event). Slack ts are
        times, so lines typed in different booths keep their order too."""
        targets: dict[str, tuple[SlackGame, Booth]] = {}
        for sg in self.games.values():
            game = self.live(sg)
            if sg.done or game is None or game.state is None or game.state.over:
                continue
            for booth in sg.booths.values():
                if game.seats[booth.seat].user_id == booth.user:
                    targets[booth.channel] = (sg, booth)  # the newest game wins the channel
        backlog: list[tuple[tuple[int, int], str, str, SlackGame, Booth]] = []
        for sg, booth in targets.values():
            for ts, text in await self._typed_since(sg, booth):
                backlog.append((_ts(ts), ts, text, sg, booth))
        backlog.sort(key=lambda item: item[0])
        for _key, ts, text, sg, booth in backlog:
            async with self._lock("relay"):
                await self._relay(sg, booth, ts, text, late=True)  # platform_id: applied once

    async def _typed_since(self, sg: SlackGame, booth: Booth) -> list[tuple[str, str]]:
        lines: list[tuple[str, str]] = []
        cursor: str | None = None
        while True:
            try:
                kwargs: dict[str, Any] = {
                    "channel": booth.channel,
                    "oldest": booth.last_ts,
                    "limit": 200,
                }
                if cursor:
                    kwargs["cursor"] = cursor
                page = await self.client.conversations_history(**kwargs)
            except SlackApiError as err:
                await self._on_failure(
                    Failure(
                        "conversations.history",
                        booth.channel,
                        str(err.response.get("error")),
                        str(err.response.get("needed") or ""),
                        "read what a player typed in their booth while I was offline",
                        sg.id,
                    )
                )
                return []
            for m in page.get("messages") or []:
                if m.get("user") == booth.user and not m.get("subtype") and not m.get("bot_id"):
                    ts = str(m.get("ts"))
                    if _ts(ts) > _ts(booth.last_ts):
                        lines.append((ts, str(m.get("text") or "")))
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                break
        return sorted(lines, key=lambda x: _ts(x[0]))

    async def on_channel_message(self, user: str, channel: str) -> None:
        """Someone typed straight into a stage: remind them where the game is played."""
        sg = self.game_in_channel(channel)
        if sg is None:
            return
        game = self.live(sg)
        if game is None or game.state is None or game.state.over:
            return
        now = time.monotonic()
        if now - self._reminded.get((channel, user), -REMIND_EVERY) < REMIND_EVERY:
            return  # told a moment ago: don't answer every line
        self._reminded[(channel, user)] = now
        player = game.seat_of_user(user) is not None
        self.poster.submit(
            channel,
            "chat.postEphemeral",
            report=False,
            channel=channel,
            user=user,
            text=STAGE_REMINDER if player else SPECTATOR_REMINDER,
        )

    async def on_channel_gone(self, channel: str, how: str) -> None:
        sg = self.game_in_channel(channel)
        if sg is not None:
            await self.stage_lost(sg, f"the game channel was {how}")
            return
        sg = self.game_with_den(channel)
        if sg is not None:
            sg.den = None  # an older version's den channel: nothing is posted there any more


def _ts(ts: str) -> tuple[int, int]:
    """Slack ts compare as (seconds, fraction) numbers, never as floats or strings."""
    whole, _, frac = ts.partition(".")
    try:
        return int(whole or 0), int((frac or "0").ljust(6, "0")[:6])
    except ValueError:
        return 0, 0
