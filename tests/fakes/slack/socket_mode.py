"""The Socket Mode side: a loopback websocket that `slack_sdk`'s SocketModeClient connects to.

Flow, as on Slack: the client calls `apps.connections.open` with the app-level token, gets a
one-time `ticket` URL (here `ws://127.0.0.1:<port>/link/?ticket=...`, plain ws since there is
no TLS on loopback), connects, and receives `{"type": "hello", ...}`.  Each request is an
envelope `{"envelope_id", "type", "payload", "accepts_response_payload", ...}` that the app
must acknowledge by sending back `{"envelope_id": ..., "payload"?: ...}` within 3 s.
`disconnect()` sends Slack's `{"type": "disconnect"}` so reconnection can be exercised.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Callable

from aiohttp import WSMsgType, web

from tests.fakes.slack.model import JSON, InboundResult, SocketAck
from tests.fakes.slack.workspace import Workspace


class SocketModeHub:
    def __init__(self, ws: Workspace, on_change: Callable[[], None]) -> None:
        self.ws = ws
        self.on_change = on_change
        self.connections: list[web.WebSocketResponse] = []
        self.acks: list[SocketAck] = []
        self.received: list[JSON] = []  # every non-ack frame the client sent
        self.connects = 0
        self._pending: dict[str, asyncio.Future[JSON]] = {}
        #: cleared by `hold`: new connections wait in their handshake until `release`
        self._open = asyncio.Event()
        self._open.set()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        await self._open.wait()
        ticket = request.query.get("ticket", "")
        if ticket not in self.ws.socket_tickets:
            return web.Response(status=401, text="invalid_ticket")
        self.ws.socket_tickets.discard(ticket)
        sock = web.WebSocketResponse(autoping=True)
        await sock.prepare(request)
        self.connections.append(sock)
        self.connects += 1
        self.on_change()
        await sock.send_json(
            {
                "type": "hello",
                "num_connections": len(self.connections),
                "debug_info": {
                    "host": "fake-slack",
                    "build_number": 1,
                    "approximate_connection_time": 18060,
                },
                "connection_info": {"app_id": self.ws.app_id},
            }
        )
        try:
            async for frame in sock:
                if frame.type != WSMsgType.TEXT:
                    continue
                try:
                    data = json.loads(frame.data)
                except ValueError:
                    self.received.append({"raw": frame.data})
                    continue
                envelope_id = data.get("envelope_id") if isinstance(data, dict) else None
                future = self._pending.pop(envelope_id, None) if envelope_id else None
                if future is not None and not future.done():
                    future.set_result(data)
                else:
                    self.received.append(data)
                self.on_change()
        finally:
            if sock in self.connections:
                self.connections.remove(sock)
            self.on_change()
        return sock

    @property
    def connected(self) -> bool:
        return any(not c.closed for c in self.connections)

    async def send(
        self,
        envelope_type: str,
        payload: JSON,
        *,
        accepts_response_payload: bool,
        ack_within: float,
        retry_attempt: int = 0,
        retry_reason: str = "",
    ) -> InboundResult:
        live = [c for c in self.connections if not c.closed]
        if not live:
            raise RuntimeError("no Socket Mode client is connected to the fake")
        envelope_id = str(uuid.uuid4())
        envelope: JSON = {
            "envelope_id": envelope_id,
            "payload": payload,
            "type": envelope_type,
            "accepts_response_payload": accepts_response_payload,
        }
        if envelope_type == "events_api":
            envelope["retry_attempt"] = retry_attempt
            envelope["retry_reason"] = retry_reason
        future: asyncio.Future[JSON] = asyncio.get_running_loop().create_future()
        self._pending[envelope_id] = future
        started = time.monotonic()
        await live[-1].send_json(envelope)
        try:
            ack = await asyncio.wait_for(future, ack_within)
        except TimeoutError:
            self._pending.pop(envelope_id, None)
            return InboundResult(0, "", {}, time.monotonic() - started, acked=False)
        elapsed = time.monotonic() - started
        ack_payload = ack.get("payload")
        self.acks.append(SocketAck(envelope_id, envelope_type, ack_payload))
        body = json.dumps(ack_payload) if ack_payload is not None else ""
        return InboundResult(200, body, {}, elapsed)

    async def disconnect(self, reason: str = "refresh_requested") -> None:
        for sock in list(self.connections):
            if not sock.closed:
                await sock.send_json(
                    {"type": "disconnect", "reason": reason, "debug_info": {"host": "fake-slack"}}
                )

    async def hold(self) -> None:
        """An outage: every websocket is closed without Slack's ``disconnect`` notice, and
        reconnections hang in their handshake until `release`."""
        self._open.clear()
        for sock in list(self.connections):
            with contextlib.suppress(Exception):
                await sock.close()

    def release(self) -> None:
        self._open.set()

    async def close(self) -> None:
        self._open.set()
        for future in self._pending.values():
            future.cancel()
        self._pending.clear()
        for sock in list(self.connections):
            with contextlib.suppress(Exception):
                await sock.close()
