"""The operations endpoint: ``GET /healthz`` and ``GET /metrics`` on ``MAFIABOT_HTTP_ADDR``;
and, when ``pages`` is given (an engine: ``MAFIABOT_PUBLIC_URL`` is set), the servers' web
pages that moderators turned on (`bot.players.web_pages`) under ``/p/``.

It is a server of its own (aiohttp, on the bot's event loop) rather than a route on the
Slack HTTP mode's server: that one exists only in Slack's HTTP mode, listens on the public
address Slack posts to, and health and metrics belong on a private one.
"""

from __future__ import annotations

import asyncio
import json
import logging

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy.engine import Engine

from bot.ops.health import Health
from bot.ops.metrics import Metrics
from bot.players.web_pages import board_page, history_page, replay_bytes, site
from bot.settings import SettingsError, split_addr

#: what a page may do in the browser: its own inline style and script, nothing from anywhere
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "script-src 'unsafe-inline'; img-src data:",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex",
    "Cache-Control": "no-store",
}

log = logging.getLogger(__name__)


class OpsServer:
    def __init__(
        self, addr: str, health: Health, metrics: Metrics, pages: Engine | None = None
    ) -> None:
        self.host, self.port = split_addr(addr)
        self.health = health
        self.metrics = metrics
        self.pages = pages
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/metrics", self._metrics)
        if self.pages is not None:
            app.router.add_get("/p/{token}/", self._page)
            app.router.add_get("/p/{token}/h/{key}", self._page)
            app.router.add_get("/p/{token}/r/{game}", self._page)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        try:
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            self._runner = None
            raise SettingsError(
                f"MAFIABOT_HTTP_ADDR={self.host}:{self.port}: {exc.strerror or exc} (is another "
                "mafiabot running there? choose another HOST:PORT, or leave it empty for no "
                "/healthz and /metrics)"
            ) from None
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        if sockets:
            self.port = sockets[0].getsockname()[1]  # the real one when asked for port 0
        log.info("health and metrics on http://%s:%s/healthz and /metrics", self.host, self.port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _healthz(self, request: web.Request) -> web.Response:
        down = await self.health.down()
        body = {"status": "down", "down": down} if down else {"status": "ok"}
        return web.Response(
            status=503 if down else 200,
            text=json.dumps(body),
            content_type="application/json",
        )

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(
            body=generate_latest(self.metrics.registry),
            headers={"Content-Type": CONTENT_TYPE_LATEST},
        )

    async def _page(self, request: web.Request) -> web.Response:
        engine = self.pages
        assert engine is not None
        info = request.match_info

        def build() -> bytes | None:
            found = site(engine, info["token"])
            if found is None:
                return None
            if "key" in info:
                text = history_page(engine, found, info["key"])
                return None if text is None else text.encode()
            if "game" in info:
                return replay_bytes(engine, found, info["game"])
            return board_page(engine, found).encode()

        body = await asyncio.to_thread(build)
        if body is None:
            return web.Response(status=404, text="Not found.", headers=PAGE_HEADERS)
        return web.Response(
            body=body, content_type="text/html", charset="utf-8", headers=PAGE_HEADERS
        )
