"""``/mafia`` and its subcommands: each becomes a call on the lobby, the service or the
store, and one reply for the person who typed it (ephemeral).
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from slack_sdk.errors import SlackApiError, SlackClientError

from bot.limits import CoolingDown
from bot.protection.consent import consent_status
from bot.protection.privacy import WithdrawalReport
from bot.service.port import ServiceError
from bot.slack import blocks as B
from bot.slack.delivery import error_fields
from bot.slack.links import SlackGame
from bot.slack.lobby import PLATFORM
from bot.slack.player_commands import (
    help_command,
    history_command,
    leaderboard_command,
    replay_command,
    stats_command,
    web_command_slack,
)
from bot.slack.problems import explain
from bot.slack.text import to_slack
from bot.slack.workspaces import WorkspaceGone
from bot.table.help import catalog_text
from bot.table.links import identity_names
from bot.table.status import status_text

if TYPE_CHECKING:
    from bot.slack.adapter import Ctx, SlackAdapter

log = logging.getLogger(__name__)

Reply = str | tuple[str, list[B.Block]] | None
#: the people whose Slack names an export looks up (users.info is rate-limited)
MAX_IDENTITIES = 200

_USER = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>|^([UW][A-Z0-9]{6,})$")


# --- /mafia -----------------------------------------------------------------------------------


#: what a ``/mafia WORD`` does: (adapter, ctx, the rest of the line) -> the reply
Handler = Callable[["SlackAdapter", "Ctx", str], Awaitable[Reply] | Reply]
#: ... for the open game of the channel it is typed in
GameHandler = Callable[["SlackAdapter", "Ctx", str, SlackGame], Awaitable[Reply]]


async def _kick(adapter: SlackAdapter, ctx: Ctx, rest: str, sg: SlackGame) -> Reply:
    m = _USER.search(rest)
    if m is None:
        return "Say who: `/mafia kick @someone`."
    return await adapter.lobby.kick(ctx.user, sg, m.group(1) or m.group(2))


#: the commands that work anywhere. Their words are those of `bot.table.help.SLACK` (the help
#: lists every command; tests/bot/slack/test_commands_help.py keeps the two the same)
ANYWHERE: dict[str, Handler] = {
    "help": lambda adapter, ctx, rest: help_command(adapter, ctx),
    "stats": stats_command,
    "leaderboard": leaderboard_command,
    "web": web_command_slack,
    "history": history_command,
    "replay": lambda adapter, ctx, rest: replay_command(adapter, ctx, rest, _identities),
    "new": lambda adapter, ctx, rest: adapter.lobby.new_game(ctx.team, ctx.user, ctx.channel, rest),
    "consent": lambda adapter, ctx, rest: consent_command(adapter, ctx, rest),
    "export": lambda adapter, ctx, rest: export_command(adapter, ctx, rest),
    "spotrate": lambda adapter, ctx, rest: spotrate_command(adapter, ctx),
    "status": lambda adapter, ctx, rest: status_command(adapter, ctx),
    "roles": lambda adapter, ctx, rest: catalog_text("slack"),
}
#: the commands about the channel's open game
IN_GAME: dict[str, GameHandler] = {
    "start": lambda adapter, ctx, rest, sg: adapter.lobby.start(ctx.user, sg),
    "join": lambda adapter, ctx, rest, sg: adapter.lobby.join(ctx.user, sg.id, ctx.trigger_id),
    "leave": lambda adapter, ctx, rest, sg: adapter.lobby.leave(ctx.user, sg.id),
    "end": lambda adapter, ctx, rest, sg: adapter.lobby.end(ctx.user, sg),
    "config": lambda adapter, ctx, rest, sg: adapter.lobby.configure(ctx.user, sg, rest),
    "kick": _kick,
}


async def run_command(adapter: SlackAdapter, ctx: Ctx, text: str) -> Reply:
    sub, _, rest = text.strip().partition(" ")
    sub = sub.lower()
    rest = rest.strip()
    if sub in ("", "help"):
        return help_command(adapter, ctx)
    try:  # each person's commands are rate-limited (`bot.limits.CommandLimiter`)
        adapter.service.commands.check(PLATFORM, ctx.team, ctx.user, command=sub)
    except CoolingDown as slow:
        return str(slow)
    anywhere = ANYWHERE.get(sub)
    if anywhere is not None:
        reply = anywhere(adapter, ctx, rest)
        return await reply if inspect.isawaitable(reply) else reply
    in_game = IN_GAME.get(sub)
    if in_game is None:
        return f"Unknown command `{sub}`.\n{help_command(adapter, ctx)}"
    sg = adapter.games.in_channel(ctx.channel)
    if sg is None:
        return "There is no open game in this channel. `/mafia new` opens one."
    return await in_game(adapter, ctx, rest, sg)


def status_command(adapter: SlackAdapter, ctx: Ctx) -> str:
    sg = adapter.games.in_channel(ctx.channel)
    game = adapter.games.live(sg) if sg is not None else None
    pairs = [(sg, game)] if sg is not None and game is not None else adapter.games.of_user(ctx.user)
    if not pairs:
        return "No game here, and you are not in a running game."
    out = []
    for _sg, live in pairs:
        seat = live.seat_of_user(ctx.user)
        out.append(status_text(live, seat.index if seat is not None else None))
    return to_slack("\n\n".join(out))


# --- consent and export ---------------------------------------------------------------------------


async def consent_command(adapter: SlackAdapter, ctx: Ctx, args: str) -> Reply:
    engine = adapter.service.engine
    if args.lower().startswith("withdraw"):
        team, user = ctx.team, ctx.user

        async def done(report: WithdrawalReport) -> None:
            dm = await adapter.out.open_dm(team, user, report=False)
            if dm is not None:
                text = "Your withdrawal is done. " + " ".join(report.summary()[1:])
                adapter.out.post(dm, to_slack(text), team=team, report=False)

        try:
            report = await adapter.withdrawals.start(PLATFORM, team, user, done)
        except ServiceError as err:
            return str(err)
        for game_id in report.lobby:
            sg = adapter.games.get(game_id)
            try:
                await adapter.service.leave(game_id, ctx.user)
            except ServiceError:
                continue
            if sg is not None:
                adapter.lobby.refresh(sg)
        lines = report.summary()
        lines.append("Your consent is withdrawn: to play again you will be asked to agree again.")
        lines.append("Your data in ended games is being removed now; I'll tell you when it's done.")
        return to_slack("\n".join(lines))
    status = await adapter.store.run(lambda: consent_status(engine, PLATFORM, ctx.team, ctx.user))
    text = f"Your consent on this workspace: {status.describe()}"
    return text, B.consent_prompt(text)


async def spotrate_command(adapter: SlackAdapter, ctx: Ctx) -> str:
    from bot.players.spotrate import server_chat_lines

    if not await adapter.out.is_admin(ctx.team, ctx.user):
        return "Only workspace admins can see the spot-the-AI rate."
    engine = adapter.service.engine
    lines = await adapter.store.run(lambda: server_chat_lines(engine, PLATFORM, ctx.team))
    return to_slack("\n".join(lines))


async def export_command(adapter: SlackAdapter, ctx: Ctx, args: str) -> str:
    from bot.protection.dataset.export import export_file_name, export_zip

    if not await adapter.out.is_admin(ctx.team, ctx.user):
        return "Only workspace admins can export games (the export is anonymised research data)."
    engine = adapter.service.engine
    ended = await adapter.store.ended_games(ctx.team)
    wanted = [g for g in args.replace(",", " ").split() if g.lower() != "all"]
    ids = [g for g in ended if g in wanted] if wanted else ended
    if not ids:
        return "There is no finished game of this workspace to export yet."
    identities = await _identities(adapter, ctx.team, ids)
    data, report = await adapter.store.run(
        lambda: export_zip(engine, ids, identities=identities, revealed_only=True)
    )
    if not report.exported:  # (a game whose AI is not revealed yet is never exported)
        return to_slack("\n".join(report.summary()))
    dm = await adapter.out.open_dm(ctx.team, ctx.user)
    if dm is None:
        return "I couldn't open a direct message with you to send the file."
    summary = "\n".join(report.summary())
    try:
        client = await adapter.out.client(ctx.team)
        await client.files_upload_v2(
            channel=dm,
            file=data,
            filename=export_file_name(),
            title="Mafia research export",
            initial_comment=to_slack(summary),
        )
    except SlackApiError as err:
        error, needed = error_fields(err)
        return explain(error, what="send you the export file", needed=needed)
    except (SlackClientError, WorkspaceGone) as err:
        log.warning("export upload failed: %s", err)
        return "I couldn't upload the export file to Slack; please try again later."
    return f"Export of {len(report.exported)} game(s) sent to our direct messages.\n" + to_slack(
        summary
    )


async def _identities(
    adapter: SlackAdapter, team: str, game_ids: list[str]
) -> dict[str, list[str]]:
    """The names the people who played go by on Slack, so the export can scrub them from
    what was typed."""
    out: dict[str, list[str]] = {}
    for user in await adapter.store.players(game_ids, limit=MAX_IDENTITIES):
        try:
            info = (await (await adapter.out.client(team)).users_info(user=user))["user"]
        except (SlackApiError, WorkspaceGone):
            break  # no users:read: the export still removes ids and mentions
        profile = info.get("profile") or {}
        out[user] = identity_names(
            info.get("name"),
            info.get("real_name"),
            profile.get("display_name"),
            profile.get("real_name"),
        )
    return out
