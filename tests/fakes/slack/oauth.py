"""Slack for an app installed into several workspaces: "Add to Slack" (OAuth v2) and token
rotation, on loopback, over the wire formats the real SDKs speak.

Each workspace is a `FakeSlack` of its own (its people, channels, signed requests to the app),
with ids that never collide with another's. In front of them one Web API endpoint, as Slack has
one: ``oauth.v2.access`` is answered here (a code exchanged for a bot token, or a
``refresh_token`` grant), every other method goes to the workspace whose token it carries.

    async with FakeSlackOAuth(client_id="1.2", client_secret="s", signing_secret=s) as slack:
        a = await slack.add_workspace("acme")           # a started FakeSlack
        client = AsyncWebClient(base_url=slack.base_url)  # the app's client: no token
        url = slack.approve(authorize_url, a)            # the user clicks "Allow" in `a`
        # -> the redirect to the app's /slack/oauth_redirect?code=...&state=...
        slack.expire(a)                                  # a's bot token expires now
        slack.refreshes(a)                               # refresh_token grants for `a`

Tokens rotate (``token_rotation_enabled``): a code gives an ``xoxe.xoxb-`` token lasting
`TOKEN_SECONDS` and a refresh token; a refresh gives a new pair, and the old refresh token is
spent (a second refresh with it fails ``invalid_refresh_token``, as a double refresh would).
An expired token is refused with ``token_expired``; a revoked one with ``token_revoked``.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs, urlencode, urlparse

from aiohttp import web

from tests.fakes.slack.server import FakeSlack
from tests.fakes.slack.workspace import TokenInfo

TOKEN_SECONDS = 43_200
#: how far apart the workspaces' ids are numbered
ID_SPACING = 0x10000


@dataclass
class Grant:
    """One answered ``oauth.v2.access``."""

    grant_type: str  # "authorization_code" | "refresh_token"
    team: str | None
    ok: bool
    error: str | None = None


@dataclass
class _Tokens:
    fake: FakeSlack
    #: token -> unix time it expires
    access: dict[str, float] = field(default_factory=dict)
    refresh: str | None = None
    revoked: set[str] = field(default_factory=set)
    scopes: set[str] = field(default_factory=set)


class FakeSlackOAuth:
    def __init__(
        self,
        *,
        client_id: str,
        client_secret: str,
        signing_secret: str,
        token_seconds: int = TOKEN_SECONDS,
    ) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.signing_secret = signing_secret
        self.token_seconds = token_seconds
        self.workspaces: list[FakeSlack] = []
        self.grants: list[Grant] = []
        #: (method, error) of every call refused for its token (expired, revoked, unknown)
        self.refused: list[tuple[str, str]] = []
        #: refresh_token grants still to be answered with Slack's ``internal_error``
        self.failing_refreshes = 0
        self._tokens: dict[str, _Tokens] = {}  # team id -> its tokens
        #: code -> (workspace, redirect_uri, expiry, scopes granted)
        self._codes: dict[str, tuple[FakeSlack, str | None, float, set[str]]] = {}
        self._runner: web.AppRunner | None = None
        self._port: int | None = None

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> Self:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._handle_api)
        app.router.add_get("/oauth/v2/authorize", self._handle_authorize_page)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        self._runner = runner
        self._port = int(runner.addresses[0][1])
        return self

    async def close(self) -> None:
        for fake in self.workspaces:
            await fake.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def origin(self) -> str:
        if self._port is None:
            raise RuntimeError("FakeSlackOAuth not started")
        return f"http://127.0.0.1:{self._port}"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/api/"

    async def add_workspace(self, domain: str, **kwargs: Any) -> FakeSlack:
        fake = FakeSlack(
            signing_secret=self.signing_secret,
            team_domain=domain,
            id_offset=ID_SPACING * len(self.workspaces),
            **kwargs,
        )
        await fake.start()
        self.workspaces.append(fake)
        self._tokens[fake.team_id] = _Tokens(fake)
        return fake

    # -- the user's side of an install -----------------------------------------------------

    def approve(self, authorize_url: str, fake: FakeSlack) -> str:
        """The user allows the app into ``fake``'s workspace on Slack's consent page: the URL
        Slack then sends the browser to (the app's redirect, with a code and the state)."""
        url = urlparse(authorize_url)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if query.get("client_id") != self.client_id:
            raise AssertionError(f"authorize URL for another app: {authorize_url}")
        asked = set(query.get("scope", "").split(",")) - {""}
        if not asked:
            raise AssertionError("no bot scopes asked for")
        redirect = query.get("redirect_uri")
        if not redirect:
            raise AssertionError("no redirect_uri in the authorize URL")
        code = f"{fake.team_id}.{secrets.token_hex(8)}"
        self._codes[code] = (fake, redirect, time.time() + 600, asked)
        return f"{redirect}?{urlencode({'code': code, 'state': query.get('state', '')})}"

    async def _handle_authorize_page(self, request: web.Request) -> web.Response:
        return web.Response(text="<html>Slack's consent page</html>", content_type="text/html")

    # -- tokens ------------------------------------------------------------------------------

    def tokens(self, fake: FakeSlack) -> list[str]:
        """Every bot token issued for ``fake``'s workspace, oldest first."""
        return list(self._tokens[fake.team_id].access)

    def expire(self, fake: FakeSlack, token: str | None = None) -> None:
        """``fake``'s bot tokens (or just ``token``) expire now: Slack refuses them with
        token_expired."""
        tokens = self._tokens[fake.team_id]
        for issued in tokens.access:
            if token is None or issued == token:
                tokens.access[issued] = min(tokens.access[issued], time.time() - 1)

    def revoke(self, fake: FakeSlack) -> None:
        """Every token of ``fake``'s workspace stops working (uninstalled or revoked)."""
        tokens = self._tokens[fake.team_id]
        tokens.revoked.update(tokens.access)
        tokens.refresh = None

    def refreshes(self, fake: FakeSlack) -> list[Grant]:
        return [
            g for g in self.grants if g.grant_type == "refresh_token" and g.team == fake.team_id
        ]

    def _issue(self, tokens: _Tokens, scopes: set[str] | None = None) -> dict[str, Any]:
        ws = tokens.fake.workspace
        if scopes is not None:
            tokens.scopes = set(scopes)  # what the user allowed on the consent page
        token = f"xoxe.xoxb-{ws.team_id}-{secrets.token_hex(8)}"
        tokens.access[token] = time.time() + self.token_seconds
        tokens.refresh = f"xoxe-1-{secrets.token_hex(12)}"
        ws.tokens[token] = TokenInfo("bot", set(tokens.scopes), ws.bot.id)
        return {
            "ok": True,
            "app_id": ws.app_id,
            "authed_user": {"id": next(iter(ws.users))},
            "scope": ",".join(sorted(tokens.scopes)),
            "token_type": "bot",
            "access_token": token,
            "bot_user_id": ws.bot.id,
            "refresh_token": tokens.refresh,
            "expires_in": self.token_seconds,
            "team": {"id": ws.team_id, "name": ws.team_domain.title()},
            "enterprise": ws.enterprise,
            "is_enterprise_install": False,
        }

    # -- the Web API ---------------------------------------------------------------------------

    async def _handle_api(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        args: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            raw = await request.read()
            args.update(json.loads(raw) if raw else {})
        elif request.can_read_body:
            args.update({k: v for k, v in (await request.post()).items() if isinstance(v, str)})
        if method == "oauth.v2.access":
            return web.json_response(self._oauth_access(request, args))
        token = str(args.get("token") or "")
        auth = request.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            token = auth.removeprefix("Bearer ").strip()
        for tokens in self._tokens.values():
            expires = tokens.access.get(token)
            if token in tokens.revoked:
                return self._refuse_call(method, "token_revoked")
            if expires is not None and expires <= time.time():
                return self._refuse_call(method, "token_expired")
            if token in tokens.fake.workspace.tokens:
                return await tokens.fake._handle_api(request)  # that workspace answers
        return self._refuse_call(method, "invalid_auth")

    def _refuse_call(self, method: str, error: str) -> web.Response:
        self.refused.append((method, error))
        return web.json_response({"ok": False, "error": error})

    def _oauth_access(self, request: web.Request, args: dict[str, Any]) -> dict[str, Any]:
        client_id, client_secret = args.get("client_id"), args.get("client_secret")
        basic = request.headers.get("Authorization", "")
        if basic.startswith("Basic "):
            import base64

            client_id, _, client_secret = (
                base64.b64decode(basic.removeprefix("Basic ")).decode().partition(":")
            )
        grant_type = str(args.get("grant_type") or "authorization_code")
        if client_id != self.client_id or client_secret != self.client_secret:
            return self._refuse(grant_type, None, "invalid_client_id")
        if grant_type == "refresh_token" and self.failing_refreshes > 0:
            self.failing_refreshes -= 1
            return self._refuse(grant_type, None, "internal_error")
        if grant_type == "refresh_token":
            refresh = args.get("refresh_token")
            for team, tokens in self._tokens.items():
                if refresh and refresh == tokens.refresh:
                    body = self._issue(tokens)
                    self.grants.append(Grant(grant_type, team, True))
                    return body
            return self._refuse(grant_type, None, "invalid_refresh_token")
        found = self._codes.pop(str(args.get("code") or ""), None)
        if found is None or found[2] < time.time():
            return self._refuse(grant_type, None, "invalid_code")
        fake, redirect, _, scopes = found
        if args.get("redirect_uri") not in (None, "", redirect):
            return self._refuse(grant_type, fake.team_id, "bad_redirect_uri")
        body = self._issue(self._tokens[fake.team_id], scopes)
        self.grants.append(Grant(grant_type, fake.team_id, True))
        return body

    def _refuse(self, grant_type: str, team: str | None, error: str) -> dict[str, Any]:
        self.grants.append(Grant(grant_type, team, False, error))
        return {"ok": False, "error": error}
