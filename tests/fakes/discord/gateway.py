"""The fake gateway: one websocket per connection, sessions that outlive connections.

Frames go out through one writer task per connection so dispatches keep their order and
sequence numbers never interleave; with `?compress=zlib-stream` (discord.py asks for it
unless zstandard is installed) frames are sent as binary chunks of one shared zlib stream,
each ending in a Z_SYNC_FLUSH, as the real gateway does.  Sessions keep a replay buffer so a
client that reconnects with RESUME gets what it missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import WSMsgType, web

from tests.fakes.discord.model import (
    INTENT_GUILD_PRESENCES,
    JSON,
    PRIVILEGED_INTENTS,
)

if TYPE_CHECKING:
    from tests.fakes.discord.world import World

OP_DISPATCH = 0
OP_HEARTBEAT = 1
OP_IDENTIFY = 2
OP_PRESENCE_UPDATE = 3
OP_VOICE_STATE_UPDATE = 4
OP_RESUME = 6
OP_RECONNECT = 7
OP_REQUEST_GUILD_MEMBERS = 8
OP_INVALID_SESSION = 9
OP_HELLO = 10
OP_HEARTBEAT_ACK = 11

REPLAY_BUFFER = 2000

Marker = Callable[[], None]


class GatewayConnection:
    """One websocket.  Everything sent to it goes through `enqueue`, in order."""

    def __init__(
        self, ws: web.WebSocketResponse, request: web.Request, *, allow_compression: bool = True
    ) -> None:
        self.ws = ws
        self.path = request.path
        self.query = dict(request.query)
        self.compressed = allow_compression and self.query.get("compress") == "zlib-stream"
        self._zlib = zlib.compressobj() if self.compressed else None
        self.session: GatewaySession | None = None
        self.server_closing = False
        self.close_code: int | None = None
        self._outbox: asyncio.Queue[JSON | Marker | None] = asyncio.Queue()
        self._finished = False
        self._writer = asyncio.create_task(self._write_loop())

    def enqueue(self, item: JSON | Marker) -> None:
        if self._finished:
            if callable(item):
                item()  # nothing left to wait for: the socket is gone
            return
        self._outbox.put_nowait(item)

    async def flush(self) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def release() -> None:
            if not done.done():
                done.set_result(None)

        self.enqueue(release)
        await done

    async def close(self, code: int, message: str = "") -> None:
        """Close from the server side after everything queued so far has been written."""
        self.server_closing = True
        await self.flush()
        await self.ws.close(code=code, message=message.encode())

    async def finish(self) -> None:
        self._outbox.put_nowait(None)
        with contextlib.suppress(asyncio.CancelledError):
            await self._writer
        self._finished = True
        while not self._outbox.empty():  # release flush() calls queued behind the stop
            item = self._outbox.get_nowait()
            if callable(item):
                item()

    async def _write_loop(self) -> None:
        while True:
            item = await self._outbox.get()
            if item is None:
                return
            if callable(item):
                item()
                continue
            if self.ws.closed:
                continue
            text = json.dumps(item, separators=(",", ":"))
            try:
                if self._zlib is not None:
                    chunk = self._zlib.compress(text.encode()) + self._zlib.flush(zlib.Z_SYNC_FLUSH)
                    await self.ws.send_bytes(chunk)
                else:
                    await self.ws.send_str(text)
            except (ConnectionResetError, RuntimeError):
                # The client went away mid-write; the session keeps the frame for RESUME.
                continue


@dataclass(eq=False)
class GatewaySession:
    id: str
    intents: int
    identify: JSON
    shard: tuple[int, int] | None = None
    seq: int = 0
    connection: GatewayConnection | None = None
    alive: bool = True
    ready: bool = False
    buffer: deque[JSON] = field(default_factory=lambda: deque(maxlen=REPLAY_BUFFER))

    def sees_guild(self, guild_id: int | None) -> bool:
        if guild_id is None or self.shard is None:
            return True
        shard_id, count = self.shard
        return (guild_id >> 22) % count == shard_id

    def send_dispatch(self, event: str, data: Any) -> None:
        self.seq += 1
        frame = {"op": OP_DISPATCH, "t": event, "s": self.seq, "d": data}
        self.buffer.append(frame)
        if self.connection is not None:
            self.connection.enqueue(frame)


def _control(op: int, data: Any = None) -> JSON:
    return {"op": op, "d": data, "s": None, "t": None}


async def handle_gateway(world: World, request: web.Request) -> web.StreamResponse:
    ws = web.WebSocketResponse(max_msg_size=0)
    await ws.prepare(request)
    conn = GatewayConnection(ws, request, allow_compression=world.gateway_compression)
    world.connections.append(conn)
    world.gateway_log.append({"event": "connect", "path": conn.path, "query": conn.query})
    conn.enqueue(_control(OP_HELLO, {"heartbeat_interval": world.heartbeat_interval_ms}))
    try:
        async for msg in ws:
            if msg.type is WSMsgType.TEXT:
                try:
                    payload = json.loads(msg.data)
                except ValueError:
                    await conn.close(4002, "Error while decoding payload.")
                    break
                await _handle_op(world, conn, payload)
            elif msg.type is WSMsgType.BINARY:
                await conn.close(4002, "Error while decoding payload.")
                break
            else:
                break
    finally:
        conn.close_code = ws.close_code
        session = conn.session
        if session is not None and session.connection is conn:
            session.connection = None
            # A client that closes with 1000/1001 ends its session; anything else may resume.
            if not conn.server_closing and ws.close_code in (1000, 1001):
                session.alive = False
        world.gateway_log.append(
            {"event": "disconnect", "code": ws.close_code, "by_server": conn.server_closing}
        )
        await conn.finish()
        if conn in world.connections:
            world.connections.remove(conn)
        world.notify()
    return ws


async def _handle_op(world: World, conn: GatewayConnection, payload: JSON) -> None:
    op = payload.get("op")
    data = payload.get("d")
    world.gateway_received.append(payload)
    world.notify()
    if op == OP_HEARTBEAT:
        conn.enqueue(_control(OP_HEARTBEAT_ACK))
    elif op == OP_IDENTIFY:
        await _identify(world, conn, data or {})
    elif op == OP_RESUME:
        await _resume(world, conn, data or {})
    elif op == OP_REQUEST_GUILD_MEMBERS:
        _request_members(world, conn, data or {})
    elif op in (OP_PRESENCE_UPDATE, OP_VOICE_STATE_UPDATE):
        pass
    else:
        await conn.close(4001, "Unknown opcode.")


async def _identify(world: World, conn: GatewayConnection, data: JSON) -> None:
    if conn.session is not None:
        await conn.close(4005, "Already authenticated.")
        return
    if data.get("token") != world.token:
        await conn.close(4004, "Authentication failed.")
        return
    intents = data.get("intents")
    if not isinstance(intents, int):
        await conn.close(4013, "Invalid intent(s).")
        return
    if intents & PRIVILEGED_INTENTS & ~world.privileged_intents:
        await conn.close(4014, "Disallowed intent(s).")
        return
    shard = data.get("shard")
    session = GatewaySession(
        id=uuid.uuid4().hex,
        intents=intents,
        identify=data,
        shard=(int(shard[0]), int(shard[1])) if shard else None,
        connection=conn,
    )
    world.sessions[session.id] = session
    conn.session = session
    session.send_dispatch("READY", world.ready_payload(session))
    for guild in list(world.guilds.values()):
        if session.sees_guild(guild.id):
            session.send_dispatch("GUILD_CREATE", world.guild_create_payload(guild, session))

    def mark_ready() -> None:
        session.ready = True
        world.ready_count += 1
        world.notify()

    conn.enqueue(mark_ready)


async def _resume(world: World, conn: GatewayConnection, data: JSON) -> None:
    session = world.sessions.get(str(data.get("session_id")))
    seq = data.get("seq") or 0
    replay = [f for f in session.buffer if f["s"] > seq] if session is not None else []
    complete = session is not None and (
        seq >= session.seq or (replay and replay[0]["s"] == seq + 1)
    )
    if session is None or not session.alive or data.get("token") != world.token or not complete:
        conn.enqueue(_control(OP_INVALID_SESSION, False))
        return
    old = session.connection
    if old is not None and old is not conn:
        old.session = None
        asyncio.get_running_loop().create_task(old.close(4000, "Session resumed elsewhere."))
    session.connection = conn
    conn.session = session
    world.resume_count += 1
    for frame in replay:
        conn.enqueue(frame)
    session.send_dispatch("RESUMED", {"_trace": ["fake-discord"]})


def _request_members(world: World, conn: GatewayConnection, data: JSON) -> None:
    session = conn.session
    if session is None:
        return
    guild = world.guilds.get(int(data.get("guild_id", 0)))
    if guild is None:
        return
    members = list(guild.members.values())
    user_ids = data.get("user_ids")
    not_found: list[str] = []
    if user_ids:
        wanted = [int(u) for u in user_ids]
        members = [m for m in members if m.id in wanted]
        not_found = [str(u) for u in wanted if u not in guild.members]
    query = data.get("query")
    if query:
        q = query.lower()
        members = [
            m
            for m in members
            if m.user.username.lower().startswith(q) or (m.nick or "").lower().startswith(q)
        ]
    limit = data.get("limit") or 0
    if limit:
        members = members[:limit]
    chunk: JSON = {
        "guild_id": str(guild.id),
        "members": [m.payload() for m in members],
        "chunk_index": 0,
        "chunk_count": 1,
        "not_found": not_found,
    }
    if data.get("presences") and session.intents & INTENT_GUILD_PRESENCES:
        chunk["presences"] = []
    if data.get("nonce") is not None:
        chunk["nonce"] = data["nonce"]
    session.send_dispatch("GUILD_MEMBERS_CHUNK", chunk)
