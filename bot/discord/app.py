"""The Discord bot: start-up, recovery after a crash, gateway events, faults.

`run_discord(settings)` is what ``mafiabot run --discord`` runs. Start-up order matters for
crash recovery:

1. ``setup_hook`` (logged in, gateway not yet connected): register the persistent components
   (every `DynamicItem` class: lobby, consent, votes, night actions, survey), sync the slash
   commands, then for every Discord game still in the lobby or running: rebuild its room from
   ``platform_links``, resume it in the service (which replays its log and re-arms its deadline
   with the time left) and put the current phase's menus up again.
2. ``on_ready`` (connected): read every booth back from its watermark and relay what players
   typed while the bot was down, in order, once.

Only Discord games are resumed here (those the link store lists, `LinkStore.games`): a Slack
adapter may be running the others from the same database; and only those of servers in this
process's shards that no other process drives (`bot.discord.shards`: several processes,
rolling restarts). The others are taken over when their driver lets go.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import discord

from bot.discord.actions import Actions
from bot.discord.afk import AfkWatch
from bot.discord.commands import MafiaCommands
from bot.discord.delivery import Delivery, Job
from bot.discord.faults import Faults
from bot.discord.links import PLATFORM, GameRow, LinkStore
from bot.discord.lobby import Lobby
from bot.discord.notify import Notifier
from bot.discord.options import DiscordOptions, load_options
from bot.discord.player_commands import add_player_commands
from bot.discord.relay import Relay, RelayMetrics
from bot.discord.render import Renderer
from bot.discord.rooms import Room, Rooms
from bot.discord.servers import Servers, reply
from bot.discord.shards import Handover
from bot.discord.startup import check_token, start_refusals
from bot.discord.survey import Survey
from bot.discord.tree import GameTree, TreeHost
from bot.discord.views import DYNAMIC_ITEMS, Handlers
from bot.ops.logs import guard_library_loggers
from bot.players.reveal import Reveals
from bot.protection.privacy import WithdrawalReport
from bot.service.live import LiveGame
from bot.service.lobbies import IdleLobbies
from bot.service.ownership import GameHeld
from bot.service.port import GameService, ServiceError
from bot.settings import Settings, load_settings

log = logging.getLogger(__name__)


def bot_intents() -> discord.Intents:
    """Guilds (channels, threads), guild messages, and message content: the bot must read what
    players type in their booths (a privileged intent, switched on in the developer portal)."""
    intents = discord.Intents.none()
    intents.guilds = True
    intents.guild_messages = True
    intents.message_content = True
    return intents


def skip_webhook_messages(
    parsers: dict[str, Callable[[Any], None]], booth: Callable[[Any], bool] | None = None
) -> None:
    """Every line the relay posts comes back to the bot through the gateway as a message of
    its webhook; the bot never reads one (`Relay.on_message` drops any webhook's message). So
    such a message is dropped before discord.py builds a `discord.Message` for it: at 1,000
    games that object for each echoed line was a fair share of the event loop's time. So is a
    message ``booth`` takes from its payload (`Relay.on_raw_message`: a line in a booth)."""
    create = parsers["MESSAGE_CREATE"]

    def message_create(data: Any) -> None:
        if data.get("webhook_id") is None and not (booth is not None and booth(data)):
            create(data)

    parsers["MESSAGE_CREATE"] = message_create


class MafiaBot(discord.AutoShardedClient):
    def __init__(
        self,
        service: GameService,
        settings: Settings | None = None,
        options: DiscordOptions | None = None,
        *,
        agent_kind: str | None = None,
        metrics: RelayMetrics | None = None,
        **kwargs: Any,
    ) -> None:
        guard_library_loggers()  # webhook tokens out of discord.py's DEBUG lines
        self.options = options or load_options()
        self.serving = self.options.shard_set()
        kwargs.setdefault("shard_count", self.serving.count)
        if self.serving.ids is not None:
            kwargs.setdefault("shard_ids", list(self.serving.ids))
        kwargs.setdefault("chunk_guilds_at_startup", False)
        super().__init__(
            intents=bot_intents(), allowed_mentions=discord.AllowedMentions.none(), **kwargs
        )
        self.service = service
        self.engine = service.engine
        self.settings = settings or load_settings()
        self.agent_kind = (
            agent_kind or self.options.agent_kind or ("llm" if self.settings.llm else "baseline")
        )
        self.tree = GameTree(self)
        # The parts, each given what it uses (none of them reaches the others through the bot).
        self.links = LinkStore(self.engine)
        self.servers = Servers(self.links)
        self.rooms = Rooms(self, self.links, self.options)
        self.delivery = Delivery(self._on_fault)
        self.notify = Notifier(self.delivery, self.rooms)
        self.relay = Relay(self, self.rooms, service, self.links, self.notify, metrics)
        self.rooms.on_booth.append(self.relay.booth_opened)
        service.graveyard.listen(self.relay.graveyard_line)
        self.renderer = Renderer(
            self.rooms,
            self.notify,
            manager_names=self.manager_names,
            finish_stage=self.finish_stage,
            metrics=metrics,
            game_ended=lambda game_id: self.reveals.game_over(game_id),
        )
        #: who the AI was, on the stage once the survey closes (`bot.players.reveal`)
        self.reveals = Reveals(
            self.engine, self.settings.reveal_after_seconds, self._post_reveal, self.links.run
        )
        self.actions = Actions(
            self,
            service,
            self.rooms,
            self.links,
            self.notify,
            self.relay,
            reply=reply,
            agent_kind=self.agent_kind,
            seat_menus=self.renderer.seat_menus,
        )
        self.faults = Faults(
            service, self.rooms, self.links, self.delivery, self.notify, self.relay
        )
        self.lobby = Lobby(
            service,
            self.rooms,
            self.links,
            self.options,
            self.settings,
            reply=reply,
            is_moderator=self.servers.is_moderator,
            restore_room=self.restore_room,
            agent_kind=self.agent_kind,
        )
        self.survey = Survey(self.links, self.rooms, reply, completed=self.reveals.answered)
        self.afk = AfkWatch(self.rooms, self.notify, self._afk_takeover, self.options)
        self.handover = Handover(service, self.links, self.serving, self.take_over)
        self.idle_lobbies = IdleLobbies(service, lambda: list(self.rooms.rooms), self._close_idle)
        self.recovered: list[str] = []
        self._reveals_recovered = False
        self.caught_up = asyncio.Event()
        self._background: set[asyncio.Task[Any]] = set()
        service.subscribe(self.renderer)
        service.add_alert_sink(self)
        service.subscribe(self.afk)
        service.on_moved.append(self.game_moved)
        skip_webhook_messages(self._connection.parsers, self.relay.on_raw_message)

    # --- start-up ------------------------------------------------------------------------------

    async def setup_hook(self) -> None:
        self.add_dynamic_items(*DYNAMIC_ITEMS)
        group = MafiaCommands(
            self.service,
            self.rooms,
            self.links,
            self.servers,
            self.lobby,
            self.actions,
            self.settings,
            self.options,
            self.end_lobby,
        )
        add_player_commands(
            group, rooms=self.rooms, links=self.links, servers=self.servers, settings=self.settings
        )
        self.tree.add_command(group)
        if self.options.guild_ids:
            for gid in self.options.guild_ids:
                guild = discord.Object(gid)
                self.tree.copy_global_to(guild=guild)
                await self.tree.sync(guild=guild)
        else:
            await self.tree.sync()
        await self.recover()
        self.idle_lobbies.start()
        # withdrawals a stop cut short: finished now, each person told in a direct message
        await group.withdrawals.resume(PLATFORM, self._tell_withdrawn, mine=self.serving.has)

    async def _tell_withdrawn(self, server: str, user_id: str, report: WithdrawalReport) -> None:
        text = "Your withdrawal is done. " + " ".join(report.summary()[1:])
        try:
            user = self.get_user(int(user_id)) or await self.fetch_user(int(user_id))
            await user.send(text[:1900])
        except (discord.HTTPException, ValueError):
            log.info("could not tell %s (server %s) their withdrawal is done", user_id, server)

    async def recover(self) -> None:
        for row in await self.links.games():
            if not self.serving.has(row.guild_id):
                continue  # another process's shards
            try:
                await self._recover(row)
            except GameHeld as held:  # its driver still runs: taken over when it lets go
                log.info("standing by for game %s: %s drives it", row.id, held.held.describe())
            except Exception:
                log.exception("could not recover game %s", row.id)

    async def take_over(self, row: GameRow) -> bool:
        """Drive a game no process drives now (`bot.discord.shards.Handover`): as after a
        restart, then the lines typed in its booths meanwhile. False: another process holds
        it (stay silent about it)."""
        if row.id in self.service.games:
            return True
        try:
            await self._recover(row)
        except GameHeld:
            return False
        except ServiceError as exc:  # it ended meanwhile: any process may say so
            log.info("game %s: %s", row.id, exc)
            return True
        except Exception:
            log.exception("could not take over game %s", row.id)
            return False
        if self.caught_up.is_set():
            self._later(self.relay.catch_up_all(row.id), f"catch up {row.id}")
        return True

    def game_moved(self, game_id: str) -> None:
        """Another process took the game over (this one stalled past its lease): forget it
        here, so nothing more about it is posted or relayed by this process."""
        self._forget(game_id, self.rooms.get(game_id))

    def _forget(self, game_id: str, room: Room | None) -> None:
        """Drop what this process keeps of a game: its room, booth queues and AFK timers."""
        if room is not None:
            self.rooms.forget(room)
        self.relay.forget(game_id)
        self.afk.forget(game_id)

    async def _recover(self, row: GameRow) -> None:
        if not row.channel_id or not row.guild_id:
            return
        room = self.rooms.from_links(row, await self.links.links(row.id))
        relayed = await self.links.relayed_watermarks(row.id)
        for seat, booth in room.booths.items():
            booth.seen = max(booth.seen, relayed.get(seat, 0))
        self.rooms.register(room)  # before the service can emit anything for it
        try:
            # input down until the booths are read back (`Relay.catch_up_all`): the agents and
            # the clock wait for what people typed meanwhile (bot.service.outages)
            game = await self.service.resume(row.id, input_down=True)
        except Exception:
            self.rooms.forget(room)
            raise
        self.rooms.sync(room, game)
        for booth in room.booths.values():
            self.relay.booth_opened(room, booth)
        await self.rooms.retire_den(room)  # a den thread from an older version
        if game.status == "running":
            self.renderer.resumed(room, game)
            self.afk.resumed(room, game)
        self.recovered.append(row.id)
        log.info("recovered game %s (%s)", row.id, game.status)

    async def restore_room(self, game: LiveGame) -> Room | None:
        """The room of a game this process has not loaded yet (a lobby clicked after a
        restart)."""
        row = await self.links.game(game.id)
        if row is None or not row.channel_id:
            return None
        room = self.rooms.from_links(row, await self.links.links(game.id))
        self.rooms.register(room)
        self.rooms.sync(room, game)
        for booth in room.booths.values():
            self.relay.booth_opened(room, booth)
        return room

    async def on_ready(self) -> None:
        count = await self.relay.catch_up_all()
        if count:
            log.info("relaying %d booth line(s) typed while the bot was away", count)
        self.caught_up.set()
        self.handover.start()
        if not self._reveals_recovered:
            self._reveals_recovered = True
            self._later(self.reveals.recover(PLATFORM), "reveals")
        log.info("ready on %s", self.serving.describe())

    # --- gateway gaps (bot.service.outages: the service pauses the games whose input is down)
    # -------

    def _games_on_shard(self, shard_id: int | None) -> list[str]:
        """The running games of this process whose guild is on ``shard_id`` (None: all)."""
        count = self.shard_count or 1
        return [
            room.game_id
            for room in list(self.rooms.rooms.values())
            if room.started
            and not room.ended
            and (shard_id is None or (room.guild_id >> 22) % count == shard_id)
        ]

    async def on_shard_disconnect(self, shard_id: int) -> None:
        if not self.is_closed():
            self.service.input_down(self._games_on_shard(shard_id))

    async def on_shard_resumed(self, shard_id: int) -> None:
        # (the messages missed meanwhile were replayed before RESUMED: they wait in the
        # service for their place in the release)
        await self.service.input_back(self._games_on_shard(shard_id))

    async def on_shard_ready(self, shard_id: int) -> None:
        """A new session after a gap (no replay): read the shard's booths back."""
        if not self.caught_up.is_set():
            return  # the first start: `on_ready` catches everything up
        for game_id in self._games_on_shard(shard_id):
            self._later(self.relay.catch_up_all(game_id), f"catch up {game_id}")

    # --- gateway events ------------------------------------------------------------------------

    async def on_message(self, message: discord.Message) -> None:
        await self.relay.on_message(message)

    async def on_raw_thread_delete(self, payload: discord.RawThreadDeleteEvent) -> None:
        where = self.rooms.threads.get(payload.thread_id)
        if where is None:
            return
        room = self.rooms.get(where[0])
        if room is not None:
            await self.faults.thread_gone(room, where[1], where[2], payload.thread_id)

    async def on_guild_channel_delete(self, channel: discord.abc.GuildChannel) -> None:
        room = self.rooms.for_channel(channel.id)
        if room is not None:
            await self.faults.channel_gone(room)

    async def _on_fault(self, job: Job, exc: BaseException) -> None:
        await self.faults.on_fault(job, exc)

    async def _afk_takeover(self, room: Room, seat: int) -> None:
        await self.actions.takeover(room, seat, why="afk")

    def manager_names(self) -> list[str]:
        user = self.user
        return [] if user is None else list({user.name, user.display_name})

    # --- the end of a game -------------------------------------------------------------------

    async def finish_stage(self, room: Room) -> None:
        """After the winner is announced: the channel's permissions back, the lobby message
        closed; the room is forgotten once its last posts are out."""
        try:
            await self.rooms.unlock_stage(room)
        except discord.NotFound:
            pass
        except discord.Forbidden:
            await self.rooms.report(
                room,
                "unlock",
                "I could not restore the game channel's permissions (I need Manage Permissions "
                "there): @everyone may still be unable to send messages in it.",
            )
        game = self.service.games.get(room.game_id)
        if game is not None:
            await self.lobby.refresh(room, game, "This game is over.", closed=True)

        async def forget_later() -> None:
            await asyncio.sleep(3600)
            self._forget(room.game_id, room)

        self._later(forget_later(), f"forget {room.game_id}")

    def _later(self, work: Coroutine[Any, Any, object], name: str) -> None:
        task = asyncio.create_task(work, name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def end_lobby(self, room: Room, game: LiveGame, reason: str) -> None:
        room.ended = True
        await self.lobby.refresh(room, game, f"This lobby was closed ({reason}).", closed=True)
        self._forget(room.game_id, room)

    async def _close_idle(self, game_id: str, reason: str) -> None:
        room, game = self.rooms.get(game_id), self.service.games.get(game_id)
        await self.service.end(game_id, reason)
        if room is not None and game is not None:
            await self.end_lobby(room, game, reason)

    # --- faults ----------------------------------------------------------------------------------

    async def on_alert(self, game: LiveGame, message: str) -> None:
        """A problem the service reports (the database refusing a game's writes): the host and
        the moderator who bound the channel get it by DM."""
        room = self.rooms.get(game.id)
        if room is not None:
            await self.rooms.report(room, f"alert:{message}", message)

    # --- shutdown ------------------------------------------------------------------------------

    async def _post_reveal(self, game_id: str, text: str) -> None:
        """The reveal on the game's stage: through the room's queue while the room is known,
        else as a plain bot post in the game's channel (after a restart)."""
        room = self.rooms.get(game_id)
        if room is not None:
            self.notify.stage(room, text)
            return
        row = await self.links.game(game_id)
        if row is None or not row.channel_id:
            return
        guild = int(row.guild_id) if row.guild_id else None
        channel = self.get_partial_messageable(int(row.channel_id), guild_id=guild)
        await channel.send(text, allowed_mentions=discord.AllowedMentions.none())

    async def close(self) -> None:
        self.reveals.close()
        await self.idle_lobbies.stop()
        await self.handover.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.delivery.drain(), 10)
        await self.delivery.close()
        for task in list(self._background):
            task.cancel()
        await super().close()
        await asyncio.to_thread(self.links.close)


if TYPE_CHECKING:  # a clicked component reaches the bot's handlers as `Handlers` (views.py)
    _reached_by_components: type[Handlers] = MafiaBot
    _tree_host: type[TreeHost] = MafiaBot  # what the command tree asks of its client


_token = check_token  # the name mafiabot/cli.py imports


async def serve_discord(
    service: GameService,
    settings: Settings,
    options: DiscordOptions | None = None,
    *,
    bot: MafiaBot | None = None,
) -> None:
    """Run the bot on ``service`` until cancelled; the caller owns the service (so Slack can
    share it: ``asyncio.gather(serve_discord(service, ...), run_slack(..., service=service))``).
    ``bot``: one the caller built (to watch it: `mafiabot run`'s health and metrics).
    """
    token = check_token(settings)
    if bot is None:
        bot = MafiaBot(service, settings, options or load_options())
    try:
        async with start_refusals():
            await bot.start(token)
    finally:
        if not bot.is_closed():
            await bot.close()


async def run_discord(settings: Settings) -> None:
    """``mafiabot run --discord``: a migrated database, the game service and the bot, until
    interrupted."""
    from bot.runtime import running_service

    check_token(settings)  # fail before touching the database
    options = load_options()
    kind = options.agent_kind or ("llm" if settings.llm else "baseline")
    async with running_service(settings, agent_kind=kind) as service:
        await serve_discord(service, settings, options)
