"""Everything the Discord adapter keeps in the database, on one worker thread of its own.

- ``platform_links`` rows (platform "discord") say where a game lives: ``lobby`` (the lobby
  message), ``webhook`` (id and token of the stage webhook), ``booth`` (one per human seat),
  ``den``, ``graveyard``, ``perms`` (the channel overwrites to restore at the end) and
  ``incident`` (a deleted thread or channel, what was done about it). A restarted bot finds its
  threads and webhooks again from these.
- ``servers.settings`` holds per-server defaults and the channels bound with ``/mafia setup``.
- Survey answers (``survey_responses``, source "discord") are stored by `bot.players.survey`, on
this
  thread.

The service has its own single DB thread; this one keeps the adapter's writes from queueing
behind game actions (and the other way round). The link rows, the thread and the list of a
server's finished games are the table's (`bot.table.links.PlatformLinks`), shared with Slack.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.service import lease
from bot.store.models import Game, GameLease, Message, PlatformLink, Seat, Server, utcnow
from bot.table.links import OPEN, Link, PlatformLinks

__all__ = ["PLATFORM", "GameRow", "Link", "LinkStore", "SeatRow"]

PLATFORM = "discord"


@dataclass(frozen=True)
class GameRow:
    id: str
    status: str
    channel_id: str | None
    guild_id: str | None
    host_user_id: str | None


@dataclass(frozen=True)
class SeatRow:
    index: int
    name: str
    user_id: str | None
    is_agent: bool
    role: str | None


class LinkStore(PlatformLinks):
    def __init__(self, engine: Engine) -> None:
        super().__init__(engine, PLATFORM)

    # --- links ------------------------------------------------------------------------------

    async def update_data(
        self, game_id: str, kind: str, seat: int | None, changes: dict[str, Any]
    ) -> None:
        def work(session: Session) -> None:
            row = self._find(session, game_id, kind, seat)
            if row is not None:
                row.data = {**row.data, **changes}

        await self._tx(work)

    async def incident(self, game_id: str, external_id: str | int, **data: Any) -> None:
        """Record something that happened to the game's channels (append-only)."""

        def work(session: Session) -> None:
            session.add(
                PlatformLink(
                    game_id=game_id,
                    platform=PLATFORM,
                    kind="incident",
                    external_id=str(external_id),
                    data={"t": utcnow().isoformat(), **data},
                )
            )

        await self._tx(work)

    # --- games ------------------------------------------------------------------------------

    async def games(self, statuses: tuple[str, ...] = OPEN) -> list[GameRow]:
        """Games played on Discord with one of ``statuses``, oldest first."""

        def work(session: Session) -> list[GameRow]:
            rows = session.exec(
                select(Game, Server)
                .join(Server, col(Server.id) == col(Game.server_id))
                .where(Server.platform == PLATFORM, col(Game.status).in_(list(statuses)))
                .order_by(col(Game.created_at))
            ).all()
            return [
                GameRow(g.id, g.status, g.channel_id, s.external_id, g.host_user_id)
                for g, s in rows
            ]

        return await self._tx(work)

    async def free_games(self, me: lease.Holder) -> list[GameRow]:
        """Open Discord games nobody drives now (no lease, an expired or released one, or a
        holder on this machine that is gone), oldest first: what a process standing by for
        its shards may take over. Live leases of other machines and our own leases are left
        out in the query, so a poll costs little however many games any process runs."""

        def work(session: Session) -> list[GameRow]:
            now = utcnow()
            lease_t = GameLease.__table__  # type: ignore[attr-defined]
            rows = session.exec(
                select(Game, Server, GameLease)
                .join(Server, col(Server.id) == col(Game.server_id))
                .outerjoin(GameLease, col(GameLease.game_id) == col(Game.id))
                .where(
                    Server.platform == PLATFORM,
                    col(Game.status).in_(list(OPEN)),
                    sa.or_(
                        lease_t.c.game_id.is_(None),
                        lease_t.c.expires_at <= now,
                        sa.and_(lease_t.c.host == me.host, lease_t.c.holder != me.token),
                    ),
                )
                .order_by(col(Game.created_at))
            ).all()
            return [
                GameRow(g.id, g.status, g.channel_id, s.external_id, g.host_user_id)
                for g, s, held in rows
                if lease.free(held, me, now)
            ]

        return await self._tx(work)

    async def lease_until(self, game_id: str) -> tuple[str, datetime] | None:
        """(holder token, until when) of the game's lease (None: it has none); a released
        lease runs until the moment it was released."""

        def work(session: Session) -> tuple[str, datetime] | None:
            held = session.get(GameLease, game_id)
            return None if held is None else (held.holder, held.expires_at)

        return await self._tx(work)

    async def game(self, game_id: str) -> GameRow | None:
        def work(session: Session) -> GameRow | None:
            g = session.get(Game, game_id)
            if g is None:
                return None
            s = session.get(Server, g.server_id) if g.server_id is not None else None
            if s is None or s.platform != PLATFORM:
                return None
            return GameRow(g.id, g.status, g.channel_id, s.external_id, g.host_user_id)

        return await self._tx(work)

    async def open_game_in_channel(self, channel_id: int) -> str | None:
        def work(session: Session) -> str | None:
            return session.exec(
                select(Game.id).where(
                    Game.channel_id == str(channel_id),
                    col(Game.status).in_(["lobby", "running"]),
                )
            ).first()

        return await self._tx(work)

    async def seats(self, game_id: str) -> list[SeatRow]:
        def work(session: Session) -> list[SeatRow]:
            rows = session.exec(
                select(Seat).where(Seat.game_id == game_id).order_by(col(Seat.index))
            ).all()
            return [SeatRow(s.index, s.character_name, s.user_id, s.is_agent, s.role) for s in rows]

        return await self._tx(work)

    async def relayed_watermarks(self, game_id: str) -> dict[int, int]:
        """Seat -> the newest Discord message id the service has stored for that seat.

        Lines are stored with the platform id "discord:msg:<message id>" (older versions:
        "discord:<message id>") and Discord ids grow with time, so anything newer in a booth
        was never relayed."""

        def work(session: Session) -> dict[int, int]:
            rows = session.exec(
                select(Message.seat_index, Message.client_id).where(
                    Message.game_id == game_id, col(Message.client_id).like("discord:%")
                )
            ).all()
            out: dict[int, int] = {}
            for seat, client_id in rows:
                if seat is None or client_id is None:
                    continue
                try:
                    mid = int(client_id.rsplit(":", 1)[1])
                except ValueError:
                    continue
                out[seat] = max(out.get(seat, 0), mid)
            return out

        return await self._tx(work)

    # --- servers ------------------------------------------------------------------------------

    @staticmethod
    def _server(session: Session, guild_id: int, name: str | None = None) -> Server:
        row = session.exec(
            select(Server).where(Server.platform == PLATFORM, Server.external_id == str(guild_id))
        ).first()
        if row is None:
            row = Server(platform=PLATFORM, external_id=str(guild_id), name=name)
            session.add(row)
            session.flush()
        return row

    async def server_settings(self, guild_id: int) -> tuple[dict[str, Any], bool]:
        """(settings, research logging on) of a server; both defaults when unknown."""

        def work(session: Session) -> tuple[dict[str, Any], bool]:
            row = session.exec(
                select(Server).where(
                    Server.platform == PLATFORM, Server.external_id == str(guild_id)
                )
            ).first()
            if row is None:
                return {}, True
            return dict(row.settings), bool(row.logging_enabled)

        return await self._tx(work)

    async def update_server(
        self,
        guild_id: int,
        change: Callable[[dict[str, Any]], dict[str, Any]],
        *,
        name: str | None = None,
        logging_enabled: bool | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """Apply ``change`` to the server's settings (a new dict is stored: JSON columns do
        not notice in-place edits)."""

        def work(session: Session) -> tuple[dict[str, Any], bool]:
            row = self._server(session, guild_id, name)
            row.settings = change(dict(row.settings))
            if logging_enabled is not None:
                row.logging_enabled = logging_enabled
            if name and not row.name:
                row.name = name
            return dict(row.settings), bool(row.logging_enabled)

        try:
            return await self._tx(work)
        except sa.exc.IntegrityError:  # created concurrently (by the service): just retry
            return await self._tx(work)
