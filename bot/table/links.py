"""Where a game lives on a platform, kept in `platform_links`, and the finished games of a
server, for every adapter.

Each adapter stores its own kinds of link (Slack: ``stage``, ``lobby``, ``booth``; Discord:
``lobby``, ``webhook``, ``booth``...) through one `PlatformLinks` of its platform: one row per
(game, kind, seat), written on one worker thread of its own so the adapter's writes land in the
order they were made and never queue behind the service's game actions.

Finished games are listed by ``started_at``, the moment the game was dealt: the order in which
they were played, which is what a host exporting "the last games" means. ``created_at`` (when
the lobby opened) puts a lobby left open for an hour before games that began after it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.store.db import session_scope
from bot.store.models import Game, PlatformLink, Seat, Server

T = TypeVar("T")
#: a game that can still be played: in the lobby or running
OPEN = ("lobby", "running")
ENDED = ("finished", "aborted")


@dataclass(frozen=True)
class Link:
    kind: str
    seat: int | None
    external_id: str
    data: dict[str, Any]


class PlatformLinks:
    def __init__(self, engine: Engine, platform: str) -> None:
        self.engine = engine
        self.platform = platform
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"mafiabot-{platform}-db")

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a blocking call (``fn(*args, **kwargs)``) on this platform's DB thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))

    async def _tx(self, fn: Callable[[Session], T]) -> T:
        def work() -> T:
            with session_scope(self.engine) as session:
                return fn(session)

        return await self.run(work)

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    # --- links ------------------------------------------------------------------------------

    def _find(self, session: Session, game_id: str, kind: str, seat: int | None) -> Any:
        query = select(PlatformLink).where(
            PlatformLink.game_id == game_id,
            PlatformLink.platform == self.platform,
            PlatformLink.kind == kind,
        )
        if seat is None:
            query = query.where(col(PlatformLink.seat_index).is_(None))
        else:
            query = query.where(PlatformLink.seat_index == seat)
        return session.exec(query).first()

    def _put(
        self,
        session: Session,
        game_id: str,
        kind: str,
        external_id: str | int,
        seat: int | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        row = self._find(session, game_id, kind, seat)
        if row is None:
            row = PlatformLink(
                game_id=game_id,
                platform=self.platform,
                kind=kind,
                seat_index=seat,
                external_id=str(external_id),
            )
        row.external_id = str(external_id)
        row.data = dict(data or {})  # a new dict: JSON columns miss in-place edits
        session.add(row)

    async def put(
        self,
        game_id: str,
        kind: str,
        external_id: str | int,
        seat: int | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        """Create or replace the link of this kind (and seat)."""
        await self._tx(lambda s: self._put(s, game_id, kind, external_id, seat, data))

    async def delete(self, game_id: str, kind: str, seat: int | None = None) -> None:
        def work(session: Session) -> None:
            row = self._find(session, game_id, kind, seat)
            if row is not None:
                session.delete(row)

        await self._tx(work)

    def _rows(self, session: Session, game_id: str) -> list[PlatformLink]:
        return list(
            session.exec(
                select(PlatformLink).where(
                    PlatformLink.game_id == game_id, PlatformLink.platform == self.platform
                )
            ).all()
        )

    async def links(self, game_id: str) -> list[Link]:
        def work(session: Session) -> list[Link]:
            return [
                Link(r.kind, r.seat_index, r.external_id, dict(r.data))
                for r in self._rows(session, game_id)
            ]

        return await self._tx(work)

    # --- games --------------------------------------------------------------------------------

    async def ended_games(self, server_external_id: str | int) -> list[str]:
        """Ids of the games played to an end (or stopped after the start) on one server of
        this platform, in the order they were played (see the module's note)."""

        def work(session: Session) -> list[str]:
            rows = session.exec(
                select(Game.id)
                .join(Server, col(Server.id) == col(Game.server_id))
                .where(
                    Server.platform == self.platform,
                    Server.external_id == str(server_external_id),
                    col(Game.status).in_(ENDED),
                    col(Game.started_at).is_not(None),
                )
                .order_by(col(Game.started_at), col(Game.id))
            ).all()
            return [str(r) for r in rows]

        return await self._tx(work)

    async def players(self, game_ids: Iterable[str], limit: int) -> list[str]:
        """The platform user ids of the people who sat in ``game_ids`` (at most ``limit``),
        for the export's identities: the names each platform knows them by are scrubbed
        from what was typed."""
        ids = list(game_ids)

        def work(session: Session) -> list[str]:
            rows = session.exec(
                select(Seat.user_id).where(
                    col(Seat.game_id).in_(ids),
                    col(Seat.user_id).is_not(None),
                    col(Seat.is_agent).is_(False),
                )
            ).all()
            return sorted({str(u) for u in rows if u})[:limit]

        return await self._tx(work)


def identity_names(*names: str | None) -> list[str]:
    """The names one person goes by on a platform, each once, for the export's scrubbing."""
    return sorted({n for n in names if n})
