"""Everything the app says on Slack, and who it is there.

Posts go through `bot.slack.delivery.Delivery` (per-conversation order survives rate limits and
Slack's hiccups); a call Slack refuses for good becomes one plain sentence for the game's host
(`bot.slack.problems`), told once per problem. A character's line carries only the
character's name and picture (`say_as`), the same for a person and the agent.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack import blocks as B
from bot.slack.delivery import Delivery, Failure, error_fields, why
from bot.slack.games import Games
from bot.slack.links import SlackGame
from bot.slack.problems import GONE, explain, missing_scopes
from bot.slack.text import escape, to_slack
from bot.slack.workspaces import WorkspaceGone, Workspaces
from bot.table.text import AVATAR_URL_TEMPLATE, avatar_url

log = logging.getLogger(__name__)

#: seconds a workspace-admin answer from users.info is trusted
ADMIN_TTL = 300.0

#: told (not awaited: it runs beside the delivery queue's worker) that a game's stage is gone
StageLost = Callable[[SlackGame, str], None]


class Notifier:
    """Every call names its workspace (``team``): its bot token makes the call
    (`bot.slack.workspaces`)."""

    def __init__(
        self,
        workspaces: Workspaces,
        games: Games,
        *,
        avatar_template: str = AVATAR_URL_TEMPLATE,
    ) -> None:
        self.workspaces = workspaces
        self.games = games
        self.avatar_template = avatar_template
        self.delivery = Delivery(workspaces, self.on_failure)
        #: set by the adapter: what to do when a game's channel is gone
        self.on_stage_lost: StageLost | None = None
        #: the workspace of the token in .env (None when installed through OAuth)
        self.team_id: str | None = None
        self.bot_user_id: str | None = None
        #: each workspace's granted bot scopes, as Slack last said
        self.scopes: dict[str | None, set[str]] = {}
        self._dms: dict[tuple[str | None, str], str] = {}
        self._admins: dict[tuple[str | None, str], tuple[float, bool]] = {}

    async def client(self, team: str | None) -> AsyncWebClient:
        """``team``'s client, for calls made directly (not queued); `WorkspaceGone` when
        the app is no longer there."""
        return await self.workspaces.client(team)

    # --- who we are -------------------------------------------------------------------------

    async def refresh_identity(self, team: str | None = None) -> None:
        """Who the bot is and which scopes it holds, in ``team`` (None: the one workspace of
        the token in .env, whose team and bot user this learns)."""
        try:
            auth = await (await self.client(team)).auth_test()
        except SlackApiError as err:
            log.error("Slack auth.test failed: %s", error_fields(err)[0])
            raise
        if team is None:
            self.team_id = str(auth.get("team_id") or "") or None
            self.bot_user_id = str(auth.get("user_id") or "") or None
        header = ""
        for key, value in dict(auth.headers or {}).items():
            if str(key).lower() == "x-oauth-scopes":
                header = str(value)
        if header:
            scopes = self.scopes[team] = {s.strip() for s in header.split(",") if s.strip()}
            if "chat:write.customize" in scopes:
                self.delivery.plain.discard(team)  # re-granted: names and pictures again
            missing = missing_scopes(scopes)
            if missing:
                log.warning("Slack app is missing scopes: %s", ", ".join(missing))

    async def is_admin(self, team: str | None, user: str) -> bool:
        cached = self._admins.get((team, user))
        if cached is not None and time.monotonic() - cached[0] < ADMIN_TTL:
            return cached[1]
        try:
            info = (await (await self.client(team)).users_info(user=user))["user"]
        except (SlackApiError, WorkspaceGone) as err:
            log.warning("users.info failed: %s", why(err))
            return False
        admin = bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"))
        self._admins[(team, user)] = (time.monotonic(), admin)
        return admin

    # --- posting ----------------------------------------------------------------------------

    async def open_dm(
        self, team: str | None, user: str, *, game_id: str | None = None, report: bool = True
    ) -> str | None:
        if (team, user) in self._dms:
            return self._dms[(team, user)]
        try:
            resp = await (await self.client(team)).conversations_open(users=user)
        except WorkspaceGone:
            return None
        except SlackApiError as err:
            if report:
                error, needed = error_fields(err)
                await self.on_failure(
                    Failure(
                        "conversations.open",
                        None,
                        error,
                        needed,
                        "open a direct message with a player",
                        game_id,
                    )
                )
            return None
        channel = str(resp["channel"]["id"])
        self._dms[(team, user)] = channel
        return channel

    def post(
        self,
        channel: str,
        text: str,
        *,
        team: str | None,
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
        return self.delivery.submit(
            channel,
            "chat.postMessage",
            team=team,
            what=what,
            game_id=game_id,
            report=report,
            **kwargs,
        )

    def say_as(
        self,
        sg: SlackGame,
        channel: str,
        name: str,
        text: str,
        *,
        what: str,
        speaker: int | None = None,
    ) -> asyncio.Future[dict[str, Any]]:
        """A character's line: the name and picture are the only marks of who said it.
        ``speaker``: the seat (players' lines are queued fairly between seats, behind the
        Game-Manager's posts: `bot.slack.delivery`)."""
        body = to_slack(text)
        plain = {
            "channel": channel,
            "text": f"*{escape(name)}*: {body}",
            "unfurl_links": False,
            "unfurl_media": False,
        }
        return self.delivery.submit(
            channel,
            "chat.postMessage",
            team=sg.team,
            what=what,
            game_id=sg.id,
            plain=plain,
            speaker=speaker,
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
            booth.channel,
            text,
            team=sg.team,
            game_id=sg.id,
            blocks=blocks,
            what="write in a player's booth",
        )

    def ephemeral(self, team: str | None, channel: str, user: str, text: str) -> None:
        self.delivery.submit(
            channel,
            "chat.postEphemeral",
            team=team,
            report=False,
            channel=channel,
            user=user,
            text=text,
        )

    # --- problems -----------------------------------------------------------------------------

    async def tell_host(self, sg: SlackGame | None, text: str) -> None:
        host = sg.host if sg is not None else None
        if host is None:
            log.warning("Slack problem with nobody to tell: %s", text)
            return
        assert sg is not None
        dm = await self.open_dm(sg.team, host, report=False)
        if dm is None:
            log.warning("Slack problem, host unreachable: %s", text)
            return
        self.post(dm, f"Game `{sg.id}`: {text}", team=sg.team, report=False)

    async def on_failure(self, failure: Failure) -> None:
        sg = self.games.get(failure.game_id)
        # A player's booth is never named to the host (not its channel, not whose it is, not
        # what it was for): which booths exist and fail would tell who is a person, and who
        # is mafia. Every booth's failure reads the same, and is told once.
        private = sg is not None and failure.channel not in (None, sg.channel)
        channel = None if private else failure.channel
        key = f"{failure.error}|{'booth' if private else failure.channel}|{failure.needed}"
        if sg is not None:
            if key in sg.reported:
                return
            sg.reported.add(key)
        text = explain(failure.error, what=failure.what, channel=channel, needed=failure.needed)
        if failure.recovered:
            text += " Until then I post each line with the character's name in front."
        await self.tell_host(sg, text)
        if (
            sg is not None
            and not sg.done
            and failure.channel == sg.channel
            and failure.error in GONE
            and failure.error != "not_in_channel"
            and self.on_stage_lost is not None
        ):
            self.on_stage_lost(sg, "the game channel is gone")
