"""The consent notice people agree to before playing on Discord or Slack, and its records.

Rules (one place, so the service, the exports and the experience pool agree):

- Who needs it. Humans on "discord" and "slack". Local terminal play ("local") is the
  operator's own and imported LLMafia games ("import") are an already published release:
  neither has or needs records.
- Joining. The person's latest answer on that server must be "agreed", to the CURRENT version,
  not withdrawn. An older version does not count: a new version exists because something the
  person agreed to changed, so they are asked again (their old answer still governs the games
  they played under it; see `consent_in_force`).
- Servers with logging off (``servers.logging_enabled`` False). Nothing from them is exported
  and the experience pool ignores them, but the notice is still shown, because telling people
  that one player is an AI is not optional; there it is a shorter acknowledgement
  (``research=False``). An acknowledgement is enough to play there and never counts as research
  consent, so a server that turns logging on later asks everyone again.
- Exports. A person's lines in a game are exported only if the answer in force when the game
  ended (their latest one made by then) agreed to research use and has not been withdrawn
  since. Withdrawal stamps every earlier answer, so it reaches back to all past games.

Versions are never edited once shipped: add a new one and bump `CONSENT_VERSION`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from rich.console import Console
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.errors import ServiceError
from bot.store.db import make_engine, session_scope
from bot.store.migrate import upgrade
from bot.store.models import Consent, Game, Seat, Server, utcnow

__all__ = [
    "CONSENT_PLATFORMS",
    "CONSENT_VERSION",
    "ConsentRequired",
    "ConsentStatus",
    "check_person",
    "consent_check",
    "consent_in_force",
    "consent_status",
    "consent_text",
    "has_consent",
    "needs_consent",
    "record_consent",
    "research_seats",
    "run_status",
]

CONSENT_PLATFORMS = ("discord", "slack")
CONSENT_VERSION = "1"

_RESEARCH_TEXTS: dict[str, str] = {
    "1": """\
Before you play (consent notice, version 1)

- One of the players at this table is an AI agent. You will not be told which one.
- What is recorded: what you write in the game (under your character name), your votes and \
night choices, when you sent them, and your answers to the short survey after the game. Your \
account id is kept only to seat you and is never part of an export.
- Research: moderators of this server may export games for research. Exports are anonymised: \
players appear only by character name, and account names, mentions, e-mail addresses and phone \
numbers are removed from the text.
- You can withdraw at any time with /mafia consent withdraw, or by asking a moderator or the \
bot's operator (mafiabot consent withdraw). Your messages, votes and survey answers are then \
deleted from every stored game (from a game in progress, as soon as it ends) and you stop \
appearing in exports.
- Agree to play. Declining just means you don't play; nothing else changes.""",
}

_ACKNOWLEDGEMENT_TEXTS: dict[str, str] = {
    "1": """\
Before you play (notice, version 1)

- One of the players at this table is an AI agent. You will not be told which one.
- This server has research logging off: the bot stores the game only to run it and recover \
it after a restart. Nothing is exported for research and the AI does not learn from it.
- You can still have your messages, votes and survey answers deleted at any time with \
/mafia consent withdraw, or by asking a moderator or the bot's operator \
(mafiabot consent withdraw).
- Click OK to play. Declining just means you don't play; nothing else changes.""",
}


def needs_consent(platform: str) -> bool:
    return platform in CONSENT_PLATFORMS


#: the platforms games are stored under (the terminal's games are "local")
PLATFORMS = (*CONSENT_PLATFORMS, "local")


def check_person(platform: str, server: str, user_id: str) -> None:
    """Refuse (``ValueError``, one line) a person no game could have seated: an unknown
    platform, or an empty or blank server or user id. A typo must not record a withdrawal
    or answer a status for nobody."""
    if platform not in PLATFORMS:
        raise ValueError(f"Unknown platform {platform!r}: use one of {', '.join(PLATFORMS)}.")
    for what, value in (("server", server), ("user", user_id)):
        if not value.strip() or not value.isprintable() or value != value.strip():
            raise ValueError(
                f"--{what} must be the {what} id as the platform shows it "
                f"(no blanks or control characters); got {value!r}."
            )


def consent_text(version: str = CONSENT_VERSION, *, research: bool = True) -> str:
    """The notice of ``version``: the full research consent, or (``research=False``) the
    acknowledgement shown on servers with logging off. Every shipped version stays here."""
    texts = _RESEARCH_TEXTS if research else _ACKNOWLEDGEMENT_TEXTS
    try:
        return texts[version]
    except KeyError:
        raise LookupError(f"no consent notice version {version!r}") from None


class ConsentRequired(ServiceError):
    """Raised by `GameService.join` for a person who has not agreed to the current notice.

    The adapter shows ``text`` with Agree/Decline buttons and, on Agree, calls
    `record_consent(..., version=self.version, research=self.research)` and joins again.
    """

    def __init__(
        self,
        *,
        platform: str,
        server: str,
        user_id: str,
        version: str,
        research: bool,
        previous: str | None,
    ) -> None:
        self.platform = platform
        self.server = server
        self.user_id = user_id
        self.version = version
        self.research = research
        self.text = consent_text(version, research=research)
        #: why the latest answer does not count: None (never answered), "declined",
        #: "withdrawn", "outdated" (an older version), "acknowledged only" (no research consent)
        self.previous = previous
        what = "agree to" if research else "acknowledge"
        super().__init__(f"Please read and {what} the notice before joining (version {version}).")


@dataclass(frozen=True)
class ConsentStatus:
    """A person's standing on one server, for `/mafia consent` and the operator CLI."""

    platform: str
    server: str
    user_id: str
    required: bool
    logging_enabled: bool
    current_version: str
    version: str | None = None
    agreed: bool | None = None
    research: bool | None = None
    t: datetime | None = None
    withdrawn_at: datetime | None = None
    ok: bool = False
    problem: str | None = None

    def describe(self) -> str:
        if not self.required:
            return f"No consent is needed on platform {self.platform!r}."
        if self.version is None:
            return "No answer recorded."
        when = self.t.isoformat(timespec="seconds") if self.t else "?"
        answer = "agreed" if self.agreed else "declined"
        scope = "research" if self.research else "acknowledgement only"
        out = f"{answer} to version {self.version} ({scope}) at {when}"
        if self.withdrawn_at is not None:
            out += f"; withdrawn at {self.withdrawn_at.isoformat(timespec='seconds')}"
        verdict = "may play" if self.ok else f"must answer again ({self.problem})"
        return f"{out}; {verdict}."


def _latest(
    session: Session, platform: str, server: str, user_id: str, until: datetime | None = None
) -> Consent | None:
    query = select(Consent).where(
        Consent.platform == platform,
        Consent.server_external_id == server,
        Consent.user_id == user_id,
    )
    if until is not None:
        query = query.where(col(Consent.t) <= until)
    return session.exec(query.order_by(col(Consent.t).desc(), col(Consent.id).desc())).first()


def _server(session: Session, platform: str, server: str) -> Server | None:
    return session.exec(
        select(Server).where(Server.platform == platform, Server.external_id == server)
    ).first()


def _logging_enabled(session: Session, platform: str, server: str) -> bool:
    row = _server(session, platform, server)
    return True if row is None else bool(row.logging_enabled)


def _problem(row: Consent | None, logging_enabled: bool) -> str | None:
    """Why ``row`` (the latest answer) does not let its person join, or None when it does."""
    if row is None:
        return "never answered"
    if row.withdrawn_at is not None:
        return "withdrawn"
    if not row.agreed:
        return "declined"
    if row.version != CONSENT_VERSION:
        return "outdated"
    if logging_enabled and not row.research:
        return "acknowledged only"
    return None


def record_consent(
    engine: Engine,
    platform: str,
    server: str,
    user_id: str,
    agreed: bool,
    version: str = CONSENT_VERSION,
    *,
    research: bool | None = None,
) -> Consent:
    """Store one answer. ``research`` is which notice was shown; by default the one the server
    shows now (the full consent with logging on, the acknowledgement with it off)."""
    consent_text(version)  # refuse unknown versions
    with session_scope(engine) as session:
        if research is None:
            research = _logging_enabled(session, platform, server)
        row = Consent(
            platform=platform,
            server_external_id=server,
            user_id=user_id,
            version=version,
            agreed=agreed,
            research=research,
            t=utcnow(),
        )
        session.add(row)
    return row


def has_consent(engine: Engine, platform: str, server: str, user_id: str) -> bool:
    """May this person join a game on this server now (see the module doc)? Always True on
    platforms that need no consent."""
    return consent_status(engine, platform, server, user_id).ok


def consent_status(engine: Engine, platform: str, server: str, user_id: str) -> ConsentStatus:
    with Session(engine) as session:
        return _status(session, platform, server, user_id)


def _status(session: Session, platform: str, server: str, user_id: str) -> ConsentStatus:
    logging_enabled = _logging_enabled(session, platform, server)
    if not needs_consent(platform):
        return ConsentStatus(
            platform, server, user_id, False, logging_enabled, CONSENT_VERSION, ok=True
        )
    row = _latest(session, platform, server, user_id)
    problem = _problem(row, logging_enabled)
    if row is None:
        return ConsentStatus(
            platform, server, user_id, True, logging_enabled, CONSENT_VERSION, problem=problem
        )
    return ConsentStatus(
        platform,
        server,
        user_id,
        True,
        logging_enabled,
        CONSENT_VERSION,
        version=row.version,
        agreed=row.agreed,
        research=row.research,
        t=row.t,
        withdrawn_at=row.withdrawn_at,
        ok=problem is None,
        problem=problem,
    )


def consent_check(session: Session, server_id: int | None, user_id: str) -> ConsentRequired | None:
    """The refusal `GameService.join` raises for this person on this server, or None.

    Runs inside the service's own session. A game without a server row (it was deleted) is
    treated like a server that needs nothing: there is nobody to ask on its behalf.
    """
    server = session.get(Server, server_id) if server_id is not None else None
    if server is None or not needs_consent(server.platform):
        return None
    status = _status(session, server.platform, server.external_id, user_id)
    if status.ok:
        return None
    return ConsentRequired(
        platform=server.platform,
        server=server.external_id,
        user_id=user_id,
        version=CONSENT_VERSION,
        research=status.logging_enabled,
        previous=None if status.version is None else status.problem,
    )


def consent_in_force(
    session: Session, platform: str, server: str, user_id: str, until: datetime
) -> bool:
    """Did this person's answer in force at ``until`` (their latest made by then) agree to
    research use, and has it not been withdrawn since? Any version counts: every version of
    the notice covers anonymised export."""
    row = _latest(session, platform, server, user_id, until)
    return row is not None and row.agreed and row.research and row.withdrawn_at is None


def research_seats(session: Session, game_id: str) -> dict[int, bool]:
    """Seat index -> may this seat's data be used for research (exports, experience pool)?

    All False when the game's server has logging off or is unknown. Agent seats are True (not
    people); withdrawn seats False; humans on consent platforms need `consent_in_force` at the
    game's end; humans elsewhere (local play, LLMafia imports) are True.
    """
    game = session.get(Game, game_id)
    if game is None:
        raise LookupError(f"no game {game_id!r} in the store")
    server = session.get(Server, game.server_id) if game.server_id is not None else None
    seats = session.exec(select(Seat).where(Seat.game_id == game_id)).all()
    if server is None or not server.logging_enabled:
        return {s.index: False for s in seats}
    until = game.ended_at or utcnow()
    out: dict[int, bool] = {}
    for seat in seats:
        if seat.withdrawn:
            out[seat.index] = False
        elif seat.is_agent or not needs_consent(server.platform):
            out[seat.index] = True
        elif seat.user_id is None:
            out[seat.index] = False
        else:
            out[seat.index] = consent_in_force(
                session, server.platform, server.external_id, seat.user_id, until
            )
    return out


def run_status(db_url: str, platform: str, server: str, user_id: str, console: Console) -> bool:
    """``mafiabot consent status``: print the person's standing; True when they may play."""
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        status = consent_status(engine, platform, server, user_id)
    finally:
        engine.dispose()
    console.print(status.describe(), markup=False, highlight=False, soft_wrap=True)
    return status.ok
