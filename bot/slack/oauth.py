"""Add to Slack: the app installed into many workspaces, and removed from them.

Installing is Slack's OAuth v2 flow, run by Bolt: ``/slack/install`` issues a state (kept in our
database and in a cookie) and sends the browser to Slack; Slack sends it back to
``/slack/oauth_redirect`` with a code, the state is checked against the cookie and consumed
once, the code is exchanged on ``oauth.v2.access`` and the installation saved. A client address
may start a few installs, then one a minute (`InstallGate`), and come back to the redirect as
often (a gate of its own: the redirect asks nobody who they are either); a redirect whose
state this store cannot have issued, or does not hold, is refused with at most one read;
expired states are deleted as new ones are issued, and at most `MAX_STATES` installs can be
in progress at once. Installations and states live in our database, in slack-sdk's own tables
(migration 0009), read and written by slack-sdk's SQLAlchemy stores on the store's engine, off
the event loop.

When a workspace removes the app (``app_uninstalled``) or revokes its bot token
(``tokens_revoked``), nothing can be posted there any more: its open games are ended through
the service (recorded as aborted with the reason, their data kept for ``mafiabot export``),
then its installation is deleted. Nothing of any other workspace is touched. A process that
did not receive the event learns it when Slack refuses its token and the installation is
gone from the database: it ends that workspace's games the same way.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import re
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from logging import Logger
from typing import Any, TypeVar
from uuid import uuid4

import sqlalchemy as sa
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.engine import Engine

from bot.limits import LOCAL_PROXIES, AddressLimiter, client_key, proxy_networks
from bot.protection.crypto import SecretBox, open_value
from bot.slack.problems import REQUIRED_SCOPES
from bot.slack.workspaces import InstalledWorkspaces, WorkspaceAuthorize

log = logging.getLogger(__name__)
Item = TypeVar("Item", Installation, Bot)
#: the fields of an installation (and a bot) that are encrypted at rest
TOKEN_FIELDS = ("bot_token", "bot_refresh_token", "user_token", "user_refresh_token")

#: the bot scopes an install asks for: the same list the manifest grants
SCOPES: tuple[str, ...] = tuple(REQUIRED_SCOPES)
#: seconds between "Add to Slack" and Slack's redirect back before the state is refused
STATE_SECONDS = 600
#: installs in progress (unexpired states) at most; past it /slack/install answers 503
MAX_STATES = 1000
#: "Add to Slack" clicks one client address may make at once, then one a minute
INSTALL_BURST = 5
INSTALL_RATE = 1 / 60
#: the states `StateStore` issues: ``str(uuid4())``
STATE_FORMAT = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"
#: what the players of a game are told (if Slack still lets us) when it is stopped this way
UNINSTALLED = "the app was removed from this Slack workspace"
REVOKED = "the app's access to this Slack workspace was revoked"


class InstallStore(AsyncInstallationStore):
    """slack-sdk's SQLAlchemy installation store on our engine, each call in a thread."""

    def __init__(self, client_id: str, engine: Engine, box: SecretBox | None = None) -> None:
        self.sync = SQLAlchemyInstallationStore(
            client_id=client_id, engine=engine, logger=logging.getLogger(__name__)
        )
        #: tokens are stored encrypted under it (`bot.protection.crypto`); None: as Slack issued
        # them
        self.box = box

    def _seal(self, item: Item) -> Item:
        if self.box is None:
            return item
        sealed = copy.copy(item)
        for name in TOKEN_FIELDS:
            if hasattr(sealed, name):
                setattr(sealed, name, self.box.seal(getattr(sealed, name)))
        return sealed

    def _open(self, item: Item | None) -> Item | None:
        if item is None:
            return None
        for name in TOKEN_FIELDS:
            if hasattr(item, name):
                setattr(item, name, open_value(self.box, getattr(item, name)))
        return item

    @property
    def logger(self) -> Logger:
        return self.sync.logger

    async def async_save(self, installation: Installation) -> None:
        await asyncio.to_thread(self.sync.save, self._seal(installation))

    async def async_save_bot(self, bot: Bot) -> None:
        await asyncio.to_thread(self.sync.save_bot, self._seal(bot))

    async def async_find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        return self._open(
            await asyncio.to_thread(
                lambda: self.sync.find_bot(
                    enterprise_id=enterprise_id,
                    team_id=team_id,
                    is_enterprise_install=is_enterprise_install,
                )
            )
        )

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        return self._open(
            await asyncio.to_thread(
                lambda: self.sync.find_installation(
                    enterprise_id=enterprise_id,
                    team_id=team_id,
                    user_id=user_id,
                    is_enterprise_install=is_enterprise_install,
                )
            )
        )

    async def async_find_team(self, team_id: str) -> Installation | None:
        """The newest installation in workspace ``team_id``, whether or not the workspace is
        part of an Enterprise Grid organisation (a team id is unique across Slack; a game
        knows only its workspace)."""
        return await asyncio.to_thread(self._find_team, team_id)

    def _find_team(self, team_id: str) -> Installation | None:
        table = self.sync.installations
        query = (
            sa.select(table.c.enterprise_id)
            .where(table.c.client_id == self.sync.client_id, table.c.team_id == team_id)
            .order_by(table.c.installed_at.desc())
            .limit(1)
        )
        with self.sync.engine.connect() as conn:
            found = conn.execute(query).first()
        if found is None:
            return None
        return self._open(self.sync.find_installation(enterprise_id=found[0], team_id=team_id))

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await asyncio.to_thread(
            lambda: self.sync.delete_bot(enterprise_id=enterprise_id, team_id=team_id)
        )

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        await asyncio.to_thread(
            lambda: self.sync.delete_installation(
                enterprise_id=enterprise_id, team_id=team_id, user_id=user_id
            )
        )


class StatesFull(RuntimeError):
    """`MAX_STATES` installs are in progress: no new state now."""


class InstallGate:
    """Who may start an install (``GET /slack/install``, which writes a state row and asks
    nobody who they are): `INSTALL_BURST` clicks per client address, then one a minute
    (`bot.limits.AddressLimiter`, bounded table)."""

    def __init__(
        self,
        burst: float = INSTALL_BURST,
        rate: float = INSTALL_RATE,
        *,
        trusted_proxies: str = "",
    ) -> None:
        self.addresses = AddressLimiter(burst, rate)
        #: requests from these come through a reverse proxy: counted by X-Forwarded-For
        self.trusted = proxy_networks(LOCAL_PROXIES) + proxy_networks(trusted_proxies)

    def admit_request(self, request: Any) -> bool:
        """`admit` for an aiohttp request."""
        return self.admit(request.remote, request.headers.getall("X-Forwarded-For", []))

    def admit(self, address: str | None, forwarded_for: Iterable[str] = ()) -> bool:
        """``address``: the peer's; ``forwarded_for``: the request's X-Forwarded-For headers."""
        key = client_key(address, forwarded_for, self.trusted)
        return self.addresses.allow(key, time.monotonic())


class StateStore(AsyncOAuthStateStore):
    """slack-sdk's SQLAlchemy OAuth state store on our engine. A state is consumed by one
    DELETE, so two redirects carrying the same state (a replay, a double click) cannot both
    pass: slack-sdk's select-then-delete would let both through on PostgreSQL."""

    def __init__(
        self, engine: Engine, expiration_seconds: int = STATE_SECONDS, max_states: int = MAX_STATES
    ) -> None:
        self.max_states = max_states
        self.expiration_seconds = expiration_seconds
        self._one_at_a_time = asyncio.Lock()
        self.sync = SQLAlchemyOAuthStateStore(
            expiration_seconds=expiration_seconds,
            engine=engine,
            logger=logging.getLogger(__name__),
        )

    @property
    def logger(self) -> Logger:
        return self.sync.logger

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        # one state written at a time: a burst of installs (many addresses at once) takes
        # turns with the games' writes for SQLite's one lock instead of crowding them out
        async with self._one_at_a_time:
            return await asyncio.to_thread(self._issue)

    def _issue(self) -> str:
        """A new state, after deleting the expired ones; `StatesFull` when `max_states`
        installs are already in progress (the table never grows past it)."""
        table = self.sync.oauth_states
        now = datetime.now(UTC).replace(tzinfo=None)
        with self.sync.engine.begin() as conn:  # (one short transaction)
            conn.execute(sa.delete(table).where(table.c.expire_at <= now))
            live = conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()
            full = live >= self.max_states
            state = str(uuid4())
            if not full:
                expire = now + timedelta(seconds=self.expiration_seconds)
                conn.execute(table.insert(), {"state": state, "expire_at": expire})
        if full:
            raise StatesFull()
        return state

    async def async_consume(self, state: str) -> bool:
        return await asyncio.to_thread(self._consume, state)

    def _consume(self, state: str) -> bool:
        """Consume ``state`` once. A state this store cannot have issued (not a UUID as
        `_issue` writes them) is refused without touching the database, and one it does not
        hold (unknown, expired, consumed) with a read only: a forged redirect costs no write."""
        if not STATE_FORMAT.fullmatch(state or ""):
            return False
        table = self.sync.oauth_states
        now = datetime.now(UTC).replace(tzinfo=None)
        held = sa.select(table.c.state).where(table.c.state == state, table.c.expire_at > now)
        with self.sync.engine.connect() as conn:
            if conn.execute(held.limit(1)).first() is None:
                return False
        with self.sync.engine.begin() as conn:
            gone = conn.execute(
                sa.delete(table).where(table.c.state == state, table.c.expire_at > now)
            )
        return bool(gone.rowcount)


def oauth_settings(
    *,
    client_id: str,
    client_secret: str,
    engine: Engine,
    redirect_uri: str | None = None,
    authorization_url: str | None = None,
    box: SecretBox | None = None,
) -> tuple[AsyncOAuthSettings, InstallStore]:
    """Bolt's install flow on our database. ``authorization_url``: Slack's consent page
    (tests point it elsewhere); ``redirect_uri``: the public URL of ``/slack/oauth_redirect``
    when the app's settings list more than one."""
    store = InstallStore(client_id, engine, box)
    settings = AsyncOAuthSettings(
        client_id=client_id,
        client_secret=client_secret,
        scopes=list(SCOPES),
        redirect_uri=redirect_uri,
        install_path=INSTALL_PATH,
        install_page_rendering_enabled=False,
        redirect_uri_path=REDIRECT_PATH,
        authorization_url=authorization_url,
        installation_store=store,
        installation_store_bot_only=True,
        state_store=StateStore(engine),
        state_expiration_seconds=STATE_SECONDS,
        logger=logging.getLogger(__name__),
    )
    return settings, store


def installed_workspaces(
    store: InstallStore,
    *,
    client_id: str,
    client_secret: str,
    api: AsyncWebClient,
    make: Callable[[str | None], AsyncWebClient],
) -> tuple[InstalledWorkspaces, WorkspaceAuthorize]:
    """Each workspace's client (its token refreshed on ``api``, the client without a token that
    calls ``oauth.v2.access``), and Bolt's authorize step on the same clients."""
    rotator = AsyncTokenRotator(client_id=client_id, client_secret=client_secret, client=api)
    workspaces = InstalledWorkspaces(store, rotator, make)
    return workspaces, WorkspaceAuthorize(workspaces)


class Departures:
    """``app_uninstalled`` and ``tokens_revoked``: the workspace's installation deleted (when
    installed through Add to Slack), then its games stopped (``stop``, the adapter's).
    Idempotent: Slack may deliver an event twice."""

    def __init__(
        self,
        stop: Any,
        store: InstallStore | None = None,
        workspaces: InstalledWorkspaces | None = None,
    ) -> None:
        self.stop = stop
        self.store = store
        self.workspaces = workspaces

    async def app_uninstalled(self, context: AsyncBoltContext) -> None:
        await self._leave(context.enterprise_id, context.team_id, UNINSTALLED)

    async def tokens_revoked(self, event: dict[str, Any], context: AsyncBoltContext) -> None:
        if not (event.get("tokens") or {}).get("bot"):
            return  # only user tokens, which this app never asks for: the bot still works
        await self._leave(context.enterprise_id, context.team_id, REVOKED)

    async def _leave(self, enterprise: str | None, team: str | None, why: str) -> None:
        if not team:
            return
        log.info("Slack workspace %s left: %s", team, why)
        await self.stop(team, why)  # first: its games are told why they end
        if self.store is not None and self.workspaces is not None:
            await self.store.async_delete_all(enterprise_id=enterprise, team_id=team)
            await self.workspaces.forget(team)
