"""``/mafia help``, ``/mafia stats [@someone]``, ``/mafia leaderboard``, ``/mafia history
[N]`` and ``/mafia replay GAME`` on Slack: the table's words (`bot.table.help`, `bot.players.stats`,
`bot.players.history`, `bot.players.replay_page`), the same as on Discord, each answer for the asker
only.
``replay`` is for the game's players and workspace admins; the page comes as a file in our
direct messages, only for a finished game of this workspace whose AI has been revealed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from slack_sdk.errors import SlackApiError, SlackClientError

from bot.players import reveal
from bot.players.history import SHOWN, history_text, may_replay, player_history
from bot.players.replay_page import ReplayError, page_bytes
from bot.players.stats import board, leaderboard_text, stats_text
from bot.players.web_pages import web_command
from bot.slack.delivery import error_fields
from bot.slack.lobby import PLATFORM
from bot.slack.problems import explain
from bot.slack.workspaces import WorkspaceGone
from bot.table.config import SETTINGS_HELP
from bot.table.help import SLACK, help_text, render, roles_in_play

if TYPE_CHECKING:
    from bot.slack.adapter import Ctx, SlackAdapter

log = logging.getLogger(__name__)

_USER = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>|^([UW][A-Z0-9]{6,})$")
_GAME_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
NOT_YOURS = (
    "A game's replay is for the people who played in it and for workspace admins. "
    "`/mafia history` lists your games."
)


def help_command(adapter: SlackAdapter, ctx: Ctx) -> str:
    sg = adapter.games.in_channel(ctx.channel)
    game = adapter.games.live(sg) if sg is not None else None
    roles = game.config.roles if game is not None else ()
    booth = (
        "Your booth is our direct messages (the Apps section of your sidebar, or my name): "
        "type there to talk during a game (your line appears in the game channel under your "
        "character's name); your role card, menus and private results come there, and if you "
        "are mafia the den's night talk too."
    )
    return help_text(
        commands=SLACK,
        roles=roles_in_play(roles),
        booth=booth,
        markup="slack",
        note=f"Settings: `{SETTINGS_HELP}` (extra roles: `roles=detective,doctor`). The lobby's "
        "buttons join and leave too.",
    )


def _numbers(args: str) -> tuple[str, bool]:
    """``args`` without the word "numbers", and whether it was there."""
    words = args.split()
    wanted = any(w.lower() == "numbers" for w in words)
    return " ".join(w for w in words if w.lower() != "numbers"), wanted


async def stats_command(adapter: SlackAdapter, ctx: Ctx, args: str) -> str:
    args, numbers = _numbers(args)
    who = ctx.user
    if args:
        m = _USER.search(args)
        if m is None:
            return (
                "Say whose: `/mafia stats @someone` (or just `/mafia stats` for yours; add "
                "`numbers` for the rating's numbers)."
            )
        who = m.group(1) or m.group(2)
    engine = adapter.service.engine
    b = await adapter.store.run(lambda: board(engine, PLATFORM, ctx.team))
    rank = b.rank_of(who)
    place = (rank, len(b.ranked)) if rank is not None else None
    return render(stats_text(b.of(who), f"<@{who}>", rank=place, numbers=numbers), "slack")


async def leaderboard_command(adapter: SlackAdapter, ctx: Ctx, args: str = "") -> str:
    args, numbers = _numbers(args)
    page = 1
    if args:
        if not args.isdigit():
            return "Say which page: `/mafia leaderboard 2` (add `numbers` for the numbers)."
        page = int(args)
    engine = adapter.service.engine
    b = await adapter.store.run(lambda: board(engine, PLATFORM, ctx.team))
    text = leaderboard_text(b, lambda u: f"<@{u}>", page=page, me=ctx.user, numbers=numbers)
    return render(text, "slack")


async def history_command(adapter: SlackAdapter, ctx: Ctx, args: str) -> str:
    count = SHOWN
    if args:
        if not args.strip().isdigit():
            return "Say how many games, or nothing: `/mafia history` or `/mafia history 20`."
        count = int(args.strip())
    engine = adapter.service.engine
    games = await adapter.store.run(
        lambda: player_history(engine, PLATFORM, ctx.team, ctx.user, limit=count)
    )
    return render(history_text(games, f"<@{ctx.user}>", "/mafia replay {game}"), "slack")


async def web_command_slack(adapter: SlackAdapter, ctx: Ctx, args: str) -> str:
    wanted = args.strip()
    moderator = wanted.lower() in ("on", "off") and await adapter.out.is_admin(ctx.team, ctx.user)
    engine = adapter.service.engine
    settings = adapter.lobby.settings
    base = settings.public_url if settings is not None else ""
    team, user = ctx.team, ctx.user
    text = await adapter.store.run(
        lambda: web_command(
            engine, base, PLATFORM, team, user, wanted, moderator=moderator, display_name=""
        )
    )
    return render(text, "slack")


Identities = Callable[["SlackAdapter", str, list[str]], Awaitable[dict[str, list[str]]]]


async def replay_command(adapter: SlackAdapter, ctx: Ctx, args: str, names: Identities) -> str:
    """``names``: the names the game's people go by on Slack (scrubbed from what they typed)."""
    game_id = args.strip()
    if not _GAME_ID.match(game_id):
        return "Say which game: `/mafia replay GAME` (the id `/mafia history` shows)."
    engine = adapter.service.engine
    if game_id not in await adapter.store.ended_games(ctx.team):
        return f"There is no finished game `{game_id}` in this workspace."
    team, me = ctx.team, ctx.user
    played = await adapter.store.run(lambda: may_replay(engine, PLATFORM, team, game_id, me))
    if not played and not await adapter.out.is_admin(ctx.team, ctx.user):
        return NOT_YOURS
    if not await adapter.store.run(lambda: reveal.revealed(engine, game_id)):
        return (
            f"Game `{game_id}` has no replay yet: it is available once the AI has been "
            "revealed in the game channel (after the survey)."
        )
    identities = await names(adapter, ctx.team, [game_id])
    try:
        data = await adapter.store.run(lambda: page_bytes(engine, game_id, identities=identities))
    except ReplayError as err:
        return str(err)
    dm = await adapter.out.open_dm(ctx.team, ctx.user)
    if dm is None:
        return "I couldn't open a direct message with you to send the file."
    try:
        client = await adapter.out.client(ctx.team)
        await client.files_upload_v2(
            channel=dm,
            content=data.decode("utf-8"),
            filename=f"mafia-replay-{game_id}.html",
            title=f"Mafia game {game_id}: replay",
            initial_comment="Open the file in a browser (it works offline).",
        )
    except SlackApiError as err:
        error, needed = error_fields(err)
        return explain(error, what="send you the replay file", needed=needed)
    except (SlackClientError, WorkspaceGone) as err:
        log.warning("replay upload failed: %s", err)
        return "I couldn't upload the replay file to Slack; please try again later."
    return f"The replay of game `{game_id}` is in our direct messages."
