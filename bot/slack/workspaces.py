"""Which bot token speaks for which workspace.

With the token in ``.env`` the app lives in one workspace: `OneWorkspace` hands out that one
client. Installed through "Add to Slack" (OAuth, `bot.slack.oauth`) it lives in many:
`InstalledWorkspaces` finds each workspace's installation in our database (slack-sdk's
SQLAlchemy installation store) and gives a client holding that workspace's bot token, rotated
before it expires (slack-sdk's token rotator: a ``refresh_token`` grant on ``oauth.v2.access``).
One lock per workspace makes concurrent callers wait for a single refresh instead of each
spending the refresh token.

Every outgoing call names its workspace (the game's ``team``, or the team of the request it
answers), so a game's posts always carry its own workspace's token.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Protocol

from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.async_authorize import AsyncAuthorize
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackTokenRotationError
from slack_sdk.oauth.installation_store import Installation
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)

#: a token expiring within this many minutes is refreshed before it is used (Bolt's default)
ROTATE_MINUTES = 120


class WorkspaceGone(Exception):
    """The app is not (any more) installed in this workspace: nothing can be sent there."""

    def __init__(self, team: str | None) -> None:
        super().__init__(f"the app is not installed in workspace {team or '(none)'}")
        self.team = team


class TokenRefreshFailed(WorkspaceGone):
    """Slack did not refresh the workspace's expiring token just now: nothing can be sent there
    for the moment (the delivery queue tries again later; a direct call gives up)."""

    def __init__(self, team: str | None, error: str) -> None:
        super().__init__(team)
        self.error = error


class TeamInstallations(Protocol):
    """Where installations are kept (`bot.slack.oauth.InstallStore`)."""

    async def async_find_team(self, team_id: str) -> Installation | None: ...

    async def async_save(self, installation: Installation) -> None: ...


class Workspaces(Protocol):
    async def client(self, team: str | None) -> AsyncWebClient:
        """A client with ``team``'s bot token; `WorkspaceGone` when there is none."""
        ...

    async def stale(self, team: str | None, token: str | None) -> bool:
        """Slack refused ``token``: True when ``team``'s token will be looked up again."""
        ...


class OneWorkspace:
    """The single-workspace app: the token from ``.env`` answers for every team."""

    def __init__(self, client: AsyncWebClient) -> None:
        self.one = client

    async def client(self, team: str | None) -> AsyncWebClient:
        return self.one

    async def stale(self, team: str | None, token: str | None) -> bool:
        return False  # the token in .env is the only one there is


class InstalledWorkspaces:
    """Installed workspaces' clients, their tokens refreshed in time, one refresh at a time."""

    def __init__(
        self,
        store: TeamInstallations,
        rotator: AsyncTokenRotator,
        make_client: Callable[[str | None], AsyncWebClient],
        *,
        rotate_minutes: int = ROTATE_MINUTES,
    ) -> None:
        self.store = store
        self.rotator = rotator
        self._make_client = make_client
        self.rotate_minutes = rotate_minutes
        self._clients: dict[str, AsyncWebClient] = {}
        self._installs: dict[str, Installation] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def client(self, team: str | None) -> AsyncWebClient:
        return (await self.get(team))[0]

    async def get(self, team: str | None) -> tuple[AsyncWebClient, Installation]:
        """``team``'s client and installation, its token refreshed if it expires soon."""
        if not team:
            raise WorkspaceGone(team)
        cached = self._cached(team)
        if cached is not None:
            return cached  # the common case: no lock, no database
        async with self._locks.setdefault(team, asyncio.Lock()):
            cached = self._cached(team)
            if cached is not None:
                return cached  # the caller holding the lock before us has just read it
            install = await self.installation(team)
            client = self._clients.get(team)
            if client is None:
                client = self._clients[team] = self._make_client(install.bot_token)
            client.token = install.bot_token
            return client, install

    def _cached(self, team: str) -> tuple[AsyncWebClient, Installation] | None:
        client, install = self._clients.get(team), self._installs.get(team)
        if client is not None and install is not None and self._fresh(install):
            return client, install
        return None

    async def installation(self, team: str) -> Installation:
        """``team``'s installation with a bot token good for a while (call under its lock).
        Read from the database first: another process may have refreshed it already."""
        install = await self.store.async_find_team(team)
        if install is None or not install.bot_token:
            self._drop(team)
            raise WorkspaceGone(team)
        if install.bot_refresh_token:
            try:
                rotated = await self.rotator.perform_token_rotation(
                    installation=install, minutes_before_expiration=self.rotate_minutes
                )
            except SlackTokenRotationError as err:
                again = await self.store.async_find_team(team)
                if again is None or again.bot_token in (None, install.bot_token):
                    log.warning(
                        "Slack token refresh failed for workspace %s: %s", team, _error(err)
                    )
                    raise TokenRefreshFailed(team, _error(err)) from None
                rotated = None
                install = again  # another process refreshed it in the meantime
            if rotated is not None:
                await self.store.async_save(rotated)
                install = rotated
                log.info("Slack bot token of workspace %s refreshed", team)
        self._installs[team] = install
        return install

    async def stale(self, team: str | None, token: str | None) -> bool:
        """Slack refused ``token`` (expired, revoked): unless a newer one is cached already,
        forget it, so the next call reads the installation again: refreshed by another
        process, refreshed here if due, or gone (`WorkspaceGone`)."""
        if not team:
            return False
        async with self._locks.setdefault(team, asyncio.Lock()):
            client = self._clients.get(team)
            if client is not None and client.token == token:
                self._drop(team)
        return True

    async def forget(self, team: str) -> None:
        """Drop what is cached of ``team`` (its installation was deleted: uninstalled, or its
        token revoked). Under its lock, so a lookup already under way cannot cache it again."""
        async with self._locks.setdefault(team, asyncio.Lock()):
            self._drop(team)

    def _drop(self, team: str) -> None:
        self._clients.pop(team, None)
        self._installs.pop(team, None)

    def _fresh(self, install: Installation) -> bool:
        expires = install.bot_token_expires_at
        return expires is None or expires > time.time() + self.rotate_minutes * 60


def _error(err: SlackTokenRotationError) -> str:
    """The Slack error code alone (the response may echo what was sent)."""
    response = getattr(err.api_error, "response", None)
    data = getattr(response, "data", None)
    return str(data.get("error")) if isinstance(data, dict) else type(err.api_error).__name__


class WorkspaceAuthorize(AsyncAuthorize):
    """Bolt's authorize step for OAuth installs, through `InstalledWorkspaces`: a request is
    answered with its workspace's (refreshed) token, refreshed under the same lock as the
    game's own posts, and without an ``auth.test`` per request."""

    def __init__(self, workspaces: InstalledWorkspaces) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.workspaces = workspaces

    async def __call__(
        self,
        *,
        context: AsyncBoltContext,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None,
        actor_enterprise_id: str | None = None,
        actor_team_id: str | None = None,
        actor_user_id: str | None = None,
    ) -> AuthorizeResult | None:
        try:
            client, install = await self.workspaces.get(team_id)
        except WorkspaceGone:
            return None
        return AuthorizeResult(
            enterprise_id=install.enterprise_id,
            team_id=install.team_id,
            bot_user_id=install.bot_user_id,
            bot_id=install.bot_id,
            bot_token=client.token,
            bot_scopes=install.bot_scopes,
            user_id=user_id,
        )
