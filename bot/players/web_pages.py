"""Pages on the web (optional, off by default): a server's board, its players' histories and
its games' replays, served by the bot's HTTP server (`bot.ops.http`) at unguessable links.

Nothing is served unless the operator set ``MAFIABOT_PUBLIC_URL`` (where that server is
reached from outside) and a moderator turned the pages on for their server (`enable`: a fresh
random token in the server's settings; `disable` forgets it, and every link dies with it;
turning them on again makes new links). A link is ``{public}/p/{token}/`` (the board),
``.../h/{key}`` (one person's history: ``key`` is an HMAC of their id under the token, so it
neither names them nor can be guessed) and ``.../r/{game}`` (a replay).

The rules are the stats' and the export's: only people whose latest consent answer on the
server agrees and is not withdrawn appear, and only by the display name they chose to show
(`set_name`, on request; withdrawn with their consent), otherwise as "a player"; a game appears
only once it has finished and its AI has been revealed; the replay page is the chat's (character
names only, accounts scrubbed). Pages are self-contained (no script or style from anywhere).
"""

from __future__ import annotations

import hashlib
import hmac
import html
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Engine
from sqlalchemy.orm.attributes import flag_modified
from sqlmodel import Session, col, select

from bot.players.history import MOST, SHOWN, history_text, player_history
from bot.players.replay_page import ReplayError, page_bytes
from bot.players.stats import board, consenting, leaderboard_text
from bot.store.models import Game, Server

#: where in ``servers.settings`` the pages' state lives
KEY = "web_pages"
ANONYMOUS = "a player"


@dataclass(frozen=True)
class Site:
    platform: str
    server: str
    token: str
    #: user id -> the display name they chose to show (consenting people only)
    names: dict[str, str]


def _server(session: Session, platform: str, server: str) -> Server | None:
    return session.exec(
        select(Server).where(Server.platform == platform, Server.external_id == str(server))
    ).first()


def _state(row: Server) -> dict[str, Any]:
    return dict((row.settings or {}).get(KEY) or {})


def _save(session: Session, row: Server, state: dict[str, Any] | None) -> None:
    settings = dict(row.settings or {})
    if state is None:
        settings.pop(KEY, None)
    else:
        settings[KEY] = state
    row.settings = settings
    flag_modified(row, "settings")
    session.add(row)
    session.commit()


def enable(engine: Engine, platform: str, server: str) -> str | None:
    """Turn the pages on (a new token unless they are on); returns the token, or None when
    the server has no games stored yet."""
    with Session(engine) as session:
        row = _server(session, platform, server)
        if row is None:
            return None
        state = _state(row)
        if not state.get("token"):
            state["token"] = secrets.token_urlsafe(24)
            _save(session, row, state)
        return str(state["token"])


def disable(engine: Engine, platform: str, server: str) -> bool:
    """Turn the pages off: the links stop working (names chosen are forgotten too)."""
    with Session(engine) as session:
        row = _server(session, platform, server)
        if row is None or not _state(row).get("token"):
            return False
        _save(session, row, None)
        return True


def token_of(engine: Engine, platform: str, server: str) -> str | None:
    with Session(engine) as session:
        row = _server(session, platform, server)
        return None if row is None else _state(row).get("token")


def set_name(engine: Engine, platform: str, server: str, user: str, name: str | None) -> bool:
    """Show ``name`` for ``user`` on the pages (None: show them as "a player" again).
    Returns False when the pages are off, or (to show a name) they have not agreed to the
    notice here."""
    with Session(engine) as session:
        row = _server(session, platform, server)
        state = _state(row) if row is not None else {}
        if row is None or not state.get("token"):
            return False
        if name and user not in consenting(session, platform, server):
            return False
        names = dict(state.get("names") or {})
        if name:
            names[user] = name[:64]
        else:
            names.pop(user, None)
        state["names"] = names
        _save(session, row, state)
        return True


def person_key(token: str, user: str) -> str:
    return hmac.new(token.encode(), user.encode(), hashlib.sha256).hexdigest()[:24]


def links(base: str, token: str, user: str | None = None) -> dict[str, str]:
    root = f"{base.rstrip('/')}/p/{token}/"
    out = {"board": root}
    if user is not None:
        out["history"] = f"{root}h/{person_key(token, user)}"
    return out


def site(engine: Engine, token: str) -> Site | None:
    """The server whose pages ``token`` opens (None: no such pages, or turned off)."""
    if not token or len(token) > 64:
        return None
    with Session(engine) as session:
        rows = session.exec(select(Server)).all()
        for row in rows:
            state = _state(row)
            if state.get("token") and hmac.compare_digest(str(state["token"]), token):
                shown = consenting(session, row.platform, row.external_id)
                chosen = dict(state.get("names") or {})
                names = {u: str(n) for u, n in chosen.items() if u in shown}
                if len(names) < len(chosen):  # withdrawn (or declined since): forgotten
                    _save(session, row, {**state, "names": names})
                return Site(row.platform, row.external_id, token, names)
    return None


# --- the pages ---------------------------------------------------------------------------------

CSS = (
    "body{font:15px/1.5 system-ui,sans-serif;margin:0;background:#f7f7fa;color:#1d1d24;"
    "overflow-wrap:anywhere}main{max-width:900px;margin:0 auto;padding:16px}"
    "h1{font-size:22px}pre{white-space:pre-wrap;font:inherit}li{margin:4px 0}"
)


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<meta name='robots' content='noindex'><title>{html.escape(title)}</title>"
        f"<style>{CSS}</style></head><body><main>{body}</main></body></html>"
    )


def _plain(text: str) -> str:
    return html.escape(text.replace("**", "").replace("`", ""))


def board_page(engine: Engine, found: Site) -> str:
    """The board, the revealed games with their replays, and links to the histories of the
    people who chose to show their name."""
    b = board(engine, found.platform, found.server)

    def name(user: str) -> str:
        return found.names.get(user, ANONYMOUS)

    text = leaderboard_text(b, name, page=1)
    if len(b.ranked) > 15:
        text += "\n" + "\n".join(
            leaderboard_text(b, name, page=p).split("\n", 1)[1]
            for p in range(2, (len(b.ranked) + 14) // 15 + 1)
        )
    with Session(engine) as session:
        games = session.exec(
            select(Game.id, Game.ended_at)
            .join(Server, col(Server.id) == col(Game.server_id))
            .where(
                Server.platform == found.platform,
                Server.external_id == found.server,
                Game.status == "finished",
                col(Game.revealed_at).is_not(None),
            )
            .order_by(col(Game.ended_at).desc())
            .limit(50)
        ).all()
    body = [f"<h1>The board</h1><pre id='board'>{_plain(text)}</pre>"]
    body.append("<h2>Games</h2><ul id='games'>")
    for game_id, ended in games:
        when = f" ({ended:%Y-%m-%d})" if ended else ""
        body.append(
            f"<li><a href='r/{html.escape(game_id)}'>Game {html.escape(game_id)}</a>{when}</li>"
        )
    body.append("</ul>")
    if found.names:
        body.append("<h2>Players' histories</h2><ul id='people'>")
        for user, shown in sorted(found.names.items(), key=lambda x: x[1].casefold()):
            key = person_key(found.token, user)
            body.append(f"<li><a href='h/{key}'>{html.escape(shown)}</a></li>")
        body.append("</ul>")
    return _page("Mafia: the board", "".join(body))


def history_page(engine: Engine, found: Site, key: str) -> str | None:
    """A consenting person's history (None: no such person here)."""
    with Session(engine) as session:
        shown = consenting(session, found.platform, found.server)
    user = next((u for u in shown if hmac.compare_digest(person_key(found.token, u), key)), None)
    if user is None:
        return None
    # only the revealed games: before its reveal, "<name> played <character>" tells whoever
    # reads the page that this character was a person, and so narrows down the AI
    games = [
        g
        for g in player_history(engine, found.platform, found.server, user, limit=MOST)
        if g.revealed
    ][:SHOWN]
    who = found.names.get(user, ANONYMOUS)
    if not games:
        return _page(
            f"Mafia: {who}'s games",
            "<h1>Games</h1><pre id='history'>No games shown yet: a game appears here once "
            "its AI has been revealed.</pre>",
        )
    text = history_text(games, who, "r/{game}")
    lines = []
    for line in _plain(text).split("\n"):
        for g in games:
            if g.replay:
                line = line.replace(
                    f"Replay: r/{g.game_id}", f"<a href='../r/{g.game_id}'>Replay</a>"
                )
        lines.append(line)
    body = f"<h1>Games</h1><pre id='history'>{'<br>'.join(lines)}</pre>"
    return _page(f"Mafia: {who}'s games", body)


def replay_bytes(engine: Engine, found: Site, game_id: str) -> bytes | None:
    """A revealed game of this server's replay (None: not one)."""
    with Session(engine) as session:
        row = session.exec(
            select(Game)
            .join(Server, col(Server.id) == col(Game.server_id))
            .where(
                Game.id == game_id,
                Server.platform == found.platform,
                Server.external_id == found.server,
                Game.status == "finished",
                col(Game.revealed_at).is_not(None),
            )
        ).first()
    if row is None:
        return None
    try:
        return page_bytes(engine, game_id, identities={u: [n] for u, n in found.names.items()})
    except ReplayError:
        return None


# --- the command, the same on every platform ----------------------------------------------------

USAGE = (
    "`web` (your links), `web on` / `web off` (moderators), `web name [NAME]` (show your name) "
    "/ `web noname`."
)


def web_command(
    engine: Engine,
    base: str,
    platform: str,
    server: str,
    user: str,
    arg: str,
    *,
    moderator: bool,
    display_name: str,
) -> str:
    """``/mafia web [on|off|name [NAME]|noname]``: the answer (private to the asker).
    ``display_name``: the name ``web name`` shows when none is typed ("" : one must be)."""
    if not base:
        return (
            "Web pages are not available: the bot's operator has not set a public address "
            "(MAFIABOT_PUBLIC_URL)."
        )
    arg, _, typed = arg.strip().partition(" ")
    arg, typed = arg.lower(), typed.strip()
    if arg in ("on", "off"):
        if not moderator:
            return "Only moderators can turn the web pages on or off."
        if arg == "off":
            gone = disable(engine, platform, server)
            return (
                "The web pages are off; their links no longer work."
                if gone
                else ("The web pages were off already.")
            )
        token = enable(engine, platform, server)
        if token is None:
            return "No game has been played here yet: nothing to show."
        return (
            f"The web pages are on. The board: {links(base, token)['board']} . It lists people "
            'who agreed to the notice as "a player", by name only if they ask (`web name`), '
            "and games once their AI was revealed. `web off` turns them off."
        )
    token = token_of(engine, platform, server)
    if token is None:
        return "This server's web pages are off (a moderator turns them on with `web on`)."
    if arg in ("name", "noname"):
        shown = (typed or display_name) if arg == "name" else None
        if arg == "name" and not shown:
            return "Say the name to show: `web name NAME`."
        if not set_name(engine, platform, server, user, shown):
            return "Agree to the notice first (`consent`): only then can your name be shown."
        if shown:
            return f"The web pages now show you as {shown}. `web noname` hides it again."
        return 'The web pages now show you as "a player".'
    if arg:
        return f"Say one of: {USAGE}"
    mine = links(base, token, user)
    return f"The board: {mine['board']}\nYour games: {mine['history']}"
