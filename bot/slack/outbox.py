"""Everything the app says on Slack, and who it is there.

Posts go through `bot.slack.poster.Poster` (per-conversation order survives rate limits and
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

from bot.platform_common import AVATAR_URL_TEMPLATE, avatar_url
from bot.slack import blocks as B
from bot.slack.games import Games
from bot.slack.poster import Failure, Poster, error_fields
from bot.slack.problems import GONE, explain, missing_scopes
from bot.slack.store import SlackGame
from bot.slack.text import escape, to_slack

log = logging.getLogger(__name__)

#: seconds a workspace-admin answer from users.info is trusted
ADMIN_TTL = 300.0

#: told (not awaited: it runs beside the poster's worker) that a game's stage is gone
StageLost = Callable[[SlackGame, str], None]


class Outbox:
    def __init__(
        self,
        client: AsyncWebClient,
        games: Games,
        *,
        avatar_template: str = AVATAR_URL_TEMPLATE,
    ) -> None:
        self.client = client
        self.games = games
        self.avatar_template = avatar_template
        self.poster = Poster(client, self.on_failure)
        #: set by the adapter: what to do when a game's channel is gone
        self.on_stage_lost: StageLost | None = None
        self.team_id: str | None = None
        self.bot_user_id: str | None = None
        self.scopes: set[str] | None = None
        self._dms: dict[str, str] = {}
        self._admins: dict[str, tuple[float, bool]] = {}

    # --- who we are -------------------------------------------------------------------------

    async def refresh_identity(self) -> None:
        try:
            auth = await self.client.auth_test()
        except SlackApiError as err:
            log.error("Slack auth.test failed: %s", error_fields(err)[0])
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

    async def is_admin(self, user: str) -> bool:
        cached = self._admins.get(user)
        if cached is not None and time.monotonic() - cached[0] < ADMIN_TTL:
            return cached[1]
        try:
            info = (await self.client.users_info(user=user))["user"]
        except SlackApiError as err:
            log.warning("users.info failed: %s", error_fields(err)[0])
            return False
        admin = bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"))
        self._admins[user] = (time.monotonic(), admin)
        return admin

    # --- posting ----------------------------------------------------------------------------

    async def open_dm(
        self, user: str, *, game_id: str | None = None, report: bool = True
    ) -> str | None:
        if user in self._dms:
            return self._dms[user]
        try:
            resp = await self.client.conversations_open(users=user)
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

    def ephemeral(self, channel: str, user: str, text: str) -> None:
        self.poster.submit(
            channel, "chat.postEphemeral", report=False, channel=channel, user=user, text=text
        )

    # --- problems -----------------------------------------------------------------------------

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

    async def on_failure(self, failure: Failure) -> None:
        sg = self.games.get(failure.game_id)
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
            and self.on_stage_lost is not None
        ):
            self.on_stage_lost(sg, "the game channel is gone")
