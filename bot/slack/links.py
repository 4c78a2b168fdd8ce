"""Where each Slack game lives, kept in `platform_links` so a restarted app finds it again.

Rows (platform "slack"): ``stage`` (the game channel; data: team, host, agents), ``lobby``
(the lobby message ts; data: channel), ``booth`` per human seat (their DM channel; data: user,
last_ts = the newest DM line already handed to the game). A ``den`` row (the mafia's private
channel) is only written by older versions; it is still read, so such a game's den can be
archived at its end. All writes go through one thread so they land in the order they were made
(`bot.table.links.PlatformLinks`, shared with the other platforms).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.store.db import session_scope
from bot.store.models import Game, PlatformLink
from bot.table.links import OPEN, PlatformLinks

PLATFORM = "slack"


@dataclass
class Booth:
    seat: int
    user: str
    channel: str
    #: ts of the newest DM line handed to the game (relayed or refused)
    last_ts: str = "0"


@dataclass
class SlackGame:
    """The adapter's view of one game: where to post, who to tell."""

    id: str
    team: str
    channel: str
    host: str | None
    agents: int = 1
    lobby_ts: str | None = None
    #: a den channel an older version made for this game (now the den lives in the booths)
    den: str | None = None
    booths: dict[int, Booth] = field(default_factory=dict)
    #: ("vote" | "night", channel, ts) of menus still open, closed when their phase ends
    menus: list[tuple[str, str, str]] = field(default_factory=list)
    #: problems already told to the host (so each is told once)
    reported: set[str] = field(default_factory=set)
    done: bool = False
    set_up: bool = False


class LinkStore(PlatformLinks):
    def __init__(self, engine: Engine) -> None:
        super().__init__(engine, PLATFORM)

    async def save_game(self, sg: SlackGame) -> None:
        def work() -> None:
            with session_scope(self.engine) as s:
                data = {"team": sg.team, "host": sg.host, "agents": sg.agents}
                self._put(s, sg.id, "stage", sg.channel, data=data)
                if sg.lobby_ts:
                    self._put(s, sg.id, "lobby", sg.lobby_ts, data={"channel": sg.channel})

        await self.run(work)

    async def save_booth(self, game_id: str, booth: Booth) -> None:
        def work() -> None:
            with session_scope(self.engine) as s:
                data = {"user": booth.user, "last_ts": booth.last_ts}
                self._put(s, game_id, "booth", booth.channel, booth.seat, data)

        await self.run(work)

    async def drop_booth(self, game_id: str, seat: int) -> None:
        await self.delete(game_id, "booth", seat)

    # --- reads ----------------------------------------------------------------------------

    async def load(self, game_id: str) -> SlackGame | None:
        def work() -> SlackGame | None:
            with Session(self.engine) as s:
                rows = self._rows(s, game_id)
                game = s.get(Game, game_id)
            return _assemble(game_id, rows, game)

        return await self.run(work)

    async def open_games(self) -> list[tuple[str, str]]:
        """(game id, status) of every Slack game in the lobby or running, oldest first."""

        def work() -> list[tuple[str, str]]:
            with Session(self.engine) as s:
                rows = s.exec(
                    select(Game.id, Game.status)
                    .join(PlatformLink, col(PlatformLink.game_id) == col(Game.id))
                    .where(
                        PlatformLink.platform == PLATFORM,
                        PlatformLink.kind == "stage",
                        col(Game.status).in_(OPEN),
                    )
                    .order_by(col(Game.created_at))
                ).all()
            return [(str(a), str(b)) for a, b in rows]

        return await self.run(work)


def _assemble(game_id: str, rows: list[PlatformLink], game: Game | None) -> SlackGame | None:
    stage = next((r for r in rows if r.kind == "stage"), None)
    if stage is None:
        return None
    data = dict(stage.data or {})
    sg = SlackGame(
        id=game_id,
        team=str(data.get("team") or ""),
        channel=stage.external_id,
        host=data.get("host") or (game.host_user_id if game else None),
        agents=int(data.get("agents") or 1),
    )
    for row in rows:
        if row.kind == "lobby":
            sg.lobby_ts = row.external_id
        elif row.kind == "den":
            sg.den = row.external_id
        elif row.kind == "booth" and row.seat_index is not None:
            d = dict(row.data or {})
            sg.booths[row.seat_index] = Booth(
                row.seat_index, str(d.get("user", "")), row.external_id, str(d.get("last_ts", "0"))
            )
    sg.set_up = bool(sg.booths) or sg.den is not None
    if game is not None and game.status in ("finished", "aborted"):
        sg.done = True
    return sg
