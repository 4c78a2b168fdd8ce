"""Table models for the bot's database (SQLite by default, PostgreSQL in production).

Everything the service needs to resume a game after a crash lives here. The `actions` table is
the authoritative log (the service replays it); messages, votes, events and phases are
denormalised records kept for transcripts, analysis and fast queries.

Timestamps always go through `UTCDateTime`: SQLite has no time zone support and silently drops
tzinfo, so instead of depending on each backend we store naive UTC everywhere and hand back aware
UTC datetimes. Naive input is rejected because guessing its zone is how logs end up off by hours.

`Game` and `Server` carry list relationships to their rows mainly so the unit of work inserts a
parent before its children when both are added in one flush; deletes are left to the database's
ON DELETE rules (passive_deletes), so removing a game never loads its whole history.
"""

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from sqlalchemy.engine import Dialect
from sqlmodel import Field, Relationship, SQLModel

# Deterministic constraint names: batch migrations on SQLite and ALTERs on PostgreSQL can only
# drop or change constraints they can name, so never leave naming to the backend.
SQLModel.metadata.naming_convention = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

PLATFORMS = ("local", "discord", "slack")
GAME_STATUSES = ("lobby", "running", "finished", "aborted")
WINNERS = ("mafia", "bystanders")
PHASE_KINDS = ("day", "vote", "night", "night_vote")
PLACES = ("stage", "den", "booth")
VOTE_KINDS = ("day", "night")
GAME_MANAGER = "Game-Manager"


def utcnow() -> datetime:
    """Aware current UTC time; the only clock default the models use."""
    return datetime.now(UTC)


class UTCDateTime(sa.types.TypeDecorator[datetime]):
    """Stores naive UTC, returns aware UTC; refuses naive datetimes on the way in."""

    impl = sa.DateTime(timezone=False)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"UTCDateTime needs a datetime, got {type(value).__name__}")
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value.isoformat()} rejected; pass an aware UTC time")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def _ts(*, nullable: bool = False, default_now: bool = False) -> Any:
    """A UTCDateTime field; `default_now` stamps rows created without an explicit time."""
    if default_now:
        return Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=nullable)
    return Field(default=None, sa_type=UTCDateTime, nullable=nullable)


def _game_fk(*, index: bool = False) -> Any:
    """Every per-game row disappears with its game."""
    return Field(foreign_key="games.id", ondelete="CASCADE", nullable=False, index=index)


# Rows belong to their game: loaded ones are deleted by the ORM, the rest by ON DELETE CASCADE.
_CHILDREN: dict[str, Any] = {"cascade": "all, delete-orphan", "passive_deletes": True}


class Server(SQLModel, table=True):
    """A Discord guild, Slack workspace, or the local terminal; holds per-server settings."""

    __tablename__ = "servers"
    __table_args__ = (sa.UniqueConstraint("platform", "external_id"),)

    id: int | None = Field(default=None, primary_key=True)
    platform: str = Field(nullable=False)
    external_id: str = Field(nullable=False)
    name: str | None = Field(default=None)
    settings: dict[str, Any] = Field(default_factory=dict, sa_type=sa.JSON, nullable=False)
    logging_enabled: bool = Field(default=True, nullable=False)
    created_at: datetime = _ts(default_now=True)

    games: list["Game"] = Relationship(sa_relationship_kwargs={"passive_deletes": True})


class Game(SQLModel, table=True):
    """One game; `id` is a short random string chosen by the caller (it shows up in chat)."""

    __tablename__ = "games"

    id: str = Field(primary_key=True)
    server_id: int | None = Field(
        default=None, foreign_key="servers.id", ondelete="SET NULL", index=True
    )
    channel_id: str | None = Field(default=None)
    status: str = Field(default="lobby", nullable=False, index=True)
    config: dict[str, Any] = Field(default_factory=dict, sa_type=sa.JSON, nullable=False)
    seed: int = Field(sa_type=sa.BigInteger, nullable=False)
    host_user_id: str | None = Field(default=None)
    created_at: datetime = _ts(default_now=True)
    started_at: datetime | None = _ts(nullable=True)
    ended_at: datetime | None = _ts(nullable=True)
    winner: str | None = Field(default=None)
    end_reason: str | None = Field(default=None)
    clock_speed: float = Field(default=1.0, nullable=False)
    last_seq: int = Field(default=0, nullable=False)
    #: when the stage was told who the AI was (`bot.players.reveal`); None: not yet
    revealed_at: datetime | None = _ts(nullable=True)
    #: a lobby's last change (a join, a leave, its settings): its idle time counts from
    #: here, across restarts (`bot.service.lobbies`); None: from its creation
    lobby_active_at: datetime | None = _ts(nullable=True)
    #: per-game agent summary (LLM calls, tokens, cost, valid-response rate), set at the end
    agent_summary: dict[str, Any] | None = Field(
        default=None, sa_type=sa.JSON(none_as_null=True), nullable=True
    )

    seats: list["Seat"] = Relationship(sa_relationship_kwargs=_CHILDREN)
    phases: list["Phase"] = Relationship(sa_relationship_kwargs=_CHILDREN)
    messages: list["Message"] = Relationship(sa_relationship_kwargs=_CHILDREN)
    votes: list["Vote"] = Relationship(sa_relationship_kwargs=_CHILDREN)
    events: list["Event"] = Relationship(sa_relationship_kwargs=_CHILDREN)
    actions: list["Action"] = Relationship(sa_relationship_kwargs=_CHILDREN)


class Seat(SQLModel, table=True):
    """A player slot: the human or agent behind a character name."""

    __tablename__ = "seats"
    __table_args__ = (
        sa.UniqueConstraint("game_id", "index"),
        sa.UniqueConstraint("game_id", "character_name"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: str = _game_fk()
    index: int = Field(nullable=False)
    character_name: str = Field(nullable=False)
    role: str | None = Field(default=None)
    alive: bool = Field(default=True, nullable=False)
    user_id: str | None = Field(default=None, index=True)
    is_agent: bool = Field(default=False, nullable=False)
    agent_kind: str | None = Field(default=None)
    persona: str | None = Field(default=None)
    joined_at: datetime = _ts(default_now=True)
    # The person behind the seat withdrew (bot.protection.privacy): exports show the seat as
    # withheld and
    # the experience pool skips it from then on. ``scrubbed_at`` is when their lines, votes and
    # answers were removed from this game (None: not yet, the game was still open).
    withdrawn: bool = Field(
        default=False, nullable=False, sa_column_kwargs={"server_default": sa.false()}
    )
    scrubbed_at: datetime | None = _ts(nullable=True)
    # Who played the seat when (`bot.players.seat_story`): one entry per hand-over during the game
    # ({"from": "person"|"agent", "to": ..., "phase": "day 1", "seq": actions before it, "t":
    # ISO time}); None or empty: the same player all game (``is_agent`` says which kind).
    handovers: list[dict[str, Any]] | None = Field(
        default=None, sa_type=sa.JSON(none_as_null=True), nullable=True
    )


class Phase(SQLModel, table=True):
    """A day, vote, night or night-vote period, numbered by `seq` within its game."""

    __tablename__ = "phases"
    __table_args__ = (sa.UniqueConstraint("game_id", "seq"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: str = _game_fk()
    seq: int = Field(nullable=False)
    kind: str = Field(nullable=False)
    number: int = Field(nullable=False)
    started_at: datetime = _ts(default_now=True)
    deadline: datetime | None = _ts(nullable=True)
    ended_at: datetime | None = _ts(nullable=True)


class Message(SQLModel, table=True):
    """A line said in a place; `client_id` makes re-delivered platform messages idempotent."""

    __tablename__ = "messages"
    __table_args__ = (
        sa.UniqueConstraint("game_id", "client_id"),
        sa.Index("ix_messages_game_id_t", "game_id", "t"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: str = _game_fk()
    phase_seq: int | None = Field(default=None)
    place: str = Field(nullable=False)
    seat_index: int | None = Field(default=None)
    speaker: str = Field(nullable=False)
    text: str = Field(sa_type=sa.Text, nullable=False)
    t: datetime = _ts(default_now=True)
    action_seq: int | None = Field(default=None)
    client_id: str | None = Field(default=None)


class Vote(SQLModel, table=True):
    """One cast vote; a null target is an abstention. Re-votes are new rows (latest wins)."""

    __tablename__ = "votes"
    __table_args__ = (sa.Index("ix_votes_game_id_phase_seq", "game_id", "phase_seq"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: str = _game_fk()
    phase_seq: int = Field(nullable=False)
    kind: str = Field(nullable=False)
    voter_index: int = Field(nullable=False)
    target_index: int | None = Field(default=None)
    t: datetime = _ts(default_now=True)
    action_seq: int | None = Field(default=None)


class Event(SQLModel, table=True):
    """Engine output (deaths, phase changes, reveals); `visible_to` null means public."""

    __tablename__ = "events"
    __table_args__ = (sa.UniqueConstraint("game_id", "seq"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: str = _game_fk()
    seq: int = Field(nullable=False)
    kind: str = Field(nullable=False)
    payload: dict[str, Any] = Field(default_factory=dict, sa_type=sa.JSON, nullable=False)
    t: datetime = _ts(default_now=True)
    # none_as_null: Python None must be SQL NULL so "public" is queryable with IS NULL.
    visible_to: list[int] | None = Field(
        default=None, sa_type=sa.JSON(none_as_null=True), nullable=True
    )


class Action(SQLModel, table=True):
    """The authoritative, replayable input log of a game (seq 1, 2, 3, ...)."""

    __tablename__ = "actions"
    __table_args__ = (
        sa.UniqueConstraint("game_id", "seq"),
        sa.UniqueConstraint("game_id", "client_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: str = _game_fk()
    seq: int = Field(nullable=False)
    kind: str = Field(nullable=False)
    payload: dict[str, Any] = Field(default_factory=dict, sa_type=sa.JSON, nullable=False)
    t: datetime = _ts(default_now=True)
    client_id: str | None = Field(default=None)


class GameLease(SQLModel, table=True):
    """Which process drives a game, until when, and the fencing token every write of the game
    checks (``epoch``, bumped at each takeover). See `bot.service.lease`."""

    __tablename__ = "game_leases"

    game_id: str = Field(
        primary_key=True, foreign_key="games.id", ondelete="CASCADE", nullable=False
    )
    #: random token of the holding service; host and pid are for people (and for noticing,
    #: on the same machine, that the holder is gone)
    holder: str = Field(nullable=False)
    host: str = Field(nullable=False)
    pid: int = Field(nullable=False)
    epoch: int = Field(nullable=False)
    acquired_at: datetime = _ts()
    expires_at: datetime = _ts()


SURVEY_SOURCES = ("llmafia", "discord", "slack", "local")
SURVEY_SCALES = ("1-5", "0-100")


class SurveyResponse(SQLModel, table=True):
    """One post-game questionnaire answer about who the AI was and how human it seemed.

    Written by the Discord/Slack survey at game end and by the LLMafia importer. Ratings are
    stored on 1-5 whatever the form asked, so one query can pool sources: a 0-100 answer v
    (the LLMafia pilot games) is stored as 1 + 4*v/100. ``original_scale`` keeps the form's
    own scale ("1-5" or "0-100") so an analysis can undo the mapping (v = 25*(x - 1)) or
    apply another conversion, and must say which it used.
    ``identified_ai`` says whether the respondent named the AI correctly (None: not asked);
    ``guessed_name`` is the name they gave, when the form recorded it. ``t`` is None when the
    source has no time for the answer.
    """

    __tablename__ = "survey_responses"

    id: int | None = Field(default=None, primary_key=True)
    game_id: str = _game_fk(index=True)
    seat_index: int = Field(nullable=False)
    about_seat_index: int | None = Field(default=None)
    identified_ai: bool | None = Field(default=None)
    guessed_name: str | None = Field(default=None)
    similarity: float | None = Field(default=None)
    timing: float | None = Field(default=None)
    relevance: float | None = Field(default=None)
    original_scale: str = Field(default="1-5", nullable=False)
    comments: str | None = Field(default=None, sa_type=sa.Text)
    t: datetime | None = _ts(nullable=True)
    source: str = Field(nullable=False)
    #: when the guess (``guessed_name``/``identified_ai``) was given; ``t`` is the last change
    #: of any answer. A guess counts only if given before the game's reveal (`bot.players.survey`).
    guessed_at: datetime | None = _ts(nullable=True)


class LLMCall(SQLModel, table=True):
    """One LLM agent decision: a model call (prompt, raw output, parsed decision, tokens, cost)
    or a decision taken without the model (``fallback``; empty ``prompt``). Written by
    `bot.store.decisions.DBDecisionLog`; `t` is game time."""

    __tablename__ = "llm_calls"

    id: int | None = Field(default=None, primary_key=True)
    game_id: str = _game_fk(index=True)
    seat_index: int = Field(nullable=False)
    kind: str = Field(nullable=False)
    model: str | None = Field(default=None)
    prompt: str = Field(default="", sa_type=sa.Text, nullable=False)
    output: str | None = Field(default=None, sa_type=sa.Text, nullable=True)
    decision: str | None = Field(default=None, sa_type=sa.Text, nullable=True)
    fallback: bool = Field(default=False, nullable=False)
    valid: bool = Field(default=False, nullable=False)
    error: str | None = Field(default=None, sa_type=sa.Text, nullable=True)
    latency_s: float = Field(default=0.0, nullable=False)
    input_tokens: int = Field(default=0, nullable=False)
    output_tokens: int = Field(default=0, nullable=False)
    #: of ``input_tokens``, those served from the provider's prompt cache
    cached_input_tokens: int = Field(default=0, nullable=False)
    cost_usd: float = Field(default=0.0, nullable=False)
    t: datetime = _ts(default_now=True)


class WithdrawalJob(SQLModel, table=True):
    """A consent withdrawal under way (`bot.protection.withdrawals`): written with its first step,
    deleted
    when every game is cleaned, so a withdrawal cut short by a restart is taken up again."""

    __tablename__ = "withdrawal_jobs"

    platform: str = Field(primary_key=True)
    server_external_id: str = Field(primary_key=True)
    user_id: str = Field(primary_key=True)
    started_at: datetime = _ts(default_now=True)


class Consent(SQLModel, table=True):
    """One answer to the consent notice (bot.protection.consent), per platform, server and person.

    Rows are appended, never edited, except ``withdrawn_at``, which a withdrawal stamps on all
    of the person's rows on that server so no earlier "yes" can count again; agreeing later
    adds a new row. ``research`` says whether the notice shown asked for research use (False:
    the shorter acknowledgement of a server with logging off). The server is named by its
    external id, not a foreign key: an answer can come before the server row exists and must
    outlive it.
    """

    __tablename__ = "consents"
    __table_args__ = (
        sa.Index("ix_consents_platform_server_user", "platform", "server_external_id", "user_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    platform: str = Field(nullable=False)
    server_external_id: str = Field(nullable=False)
    user_id: str = Field(nullable=False)
    version: str = Field(nullable=False)
    agreed: bool = Field(nullable=False)
    research: bool = Field(default=True, nullable=False)
    t: datetime = _ts(default_now=True)
    withdrawn_at: datetime | None = _ts(nullable=True)


class PlatformLink(SQLModel, table=True):
    """Where a game lives on a chat platform: the lobby message, each human's booth, the den,
    the stage webhook... Kept so that a restarted bot finds its threads, channels and
    webhooks again (``kind`` e.g. "lobby", "booth", "den", "webhook"; ``seat_index`` for
    per-seat links)."""

    __tablename__ = "platform_links"
    __table_args__ = (
        sa.UniqueConstraint("game_id", "platform", "kind", "seat_index"),
        sa.Index("ix_platform_links_platform_external_id", "platform", "external_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: str = _game_fk()
    platform: str = Field(nullable=False)
    kind: str = Field(nullable=False)
    seat_index: int | None = Field(default=None)
    external_id: str = Field(nullable=False)
    data: dict[str, Any] = Field(default_factory=dict, sa_type=sa.JSON, nullable=False)
    created_at: datetime = _ts(default_now=True)


class Experience(SQLModel, table=True):
    """One (reflection, response, score) of an LLM agent seat, for the experience pool.

    Written at the end of a game (``bot.seats.experience_store``), one row per phase the seat
    reflected in, only for games that may feed the pool (every human consented). ``score`` is
    1000 - days for the winning side, days for the losing side. ``vector`` is the reflection's
    embedding (float32, ``dim`` values) from ``embedder``; rows from another embedder are never
    compared. ``server_id`` scopes the pool per server when ``MAFIABOT_EXPERIENCE_SCOPE`` is
    "server". Rows go with their game, and with any withdrawal from it.
    """

    __tablename__ = "experiences"
    __table_args__ = (
        sa.UniqueConstraint("game_id", "seat_index", "phase_seq"),
        sa.Index("ix_experiences_embedder_team", "embedder", "team"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: str = _game_fk()
    server_id: int | None = Field(
        default=None, foreign_key="servers.id", ondelete="SET NULL", index=True
    )
    seat_index: int = Field(nullable=False)
    phase_seq: int = Field(nullable=False)
    role: str = Field(nullable=False)
    team: str = Field(nullable=False)
    won: bool = Field(nullable=False)
    days: int = Field(nullable=False)
    score: float = Field(nullable=False)
    reflection: str = Field(sa_type=sa.Text, nullable=False)
    response: str = Field(sa_type=sa.Text, nullable=False)
    embedder: str = Field(nullable=False)
    dim: int = Field(nullable=False)
    vector: bytes = Field(sa_type=sa.LargeBinary, nullable=False)
    created_at: datetime = _ts(default_now=True)


class StrategyNote(SQLModel, table=True):
    """A version of the strategy note the LLM agent keeps per role (and scope: "global" or
    "server:<id>"), rewritten after each game from at most three lessons. Rows are appended;
    the highest ``version`` is the note in force. Notes and lessons never name a player."""

    __tablename__ = "strategy_notes"
    __table_args__ = (sa.UniqueConstraint("scope", "role", "version"),)

    id: int | None = Field(default=None, primary_key=True)
    scope: str = Field(nullable=False)
    role: str = Field(nullable=False)
    version: int = Field(nullable=False)
    note: str = Field(sa_type=sa.Text, nullable=False)
    lessons: list[str] = Field(default_factory=list, sa_type=sa.JSON, nullable=False)
    game_id: str | None = Field(
        default=None, foreign_key="games.id", ondelete="SET NULL", nullable=True
    )
    created_at: datetime = _ts(default_now=True)


# --- Slack installs ("Add to Slack", bot/slack/oauth.py) --------------------------------------
# slack-sdk's own tables, defined by slack-sdk, so its SQLAlchemy installation and OAuth state
# stores read and write them as they are; listed here so migrations and models stay compared.
SLACK_BOTS = SQLAlchemyInstallationStore.build_bots_table(SQLModel.metadata, "slack_bots")
SLACK_INSTALLATIONS = SQLAlchemyInstallationStore.build_installations_table(
    SQLModel.metadata, "slack_installations"
)
SLACK_OAUTH_STATES = SQLAlchemyOAuthStateStore.build_oauth_states_table(
    SQLModel.metadata, "slack_oauth_states"
)
# ... except the token columns, wide enough for an encrypted token (bot/protection/crypto.py,
# migration 0012)
for _table in (SLACK_BOTS, SLACK_INSTALLATIONS):
    for _column in ("bot_token", "bot_refresh_token", "user_token", "user_refresh_token"):
        if _column in _table.c:
            _table.c[_column].type = sa.String(length=1000)

__all__ = [
    "GAME_MANAGER",
    "GAME_STATUSES",
    "PHASE_KINDS",
    "PLACES",
    "PLATFORMS",
    "SLACK_BOTS",
    "SLACK_INSTALLATIONS",
    "SLACK_OAUTH_STATES",
    "SURVEY_SCALES",
    "SURVEY_SOURCES",
    "VOTE_KINDS",
    "WINNERS",
    "Action",
    "Consent",
    "Event",
    "Experience",
    "Game",
    "GameLease",
    "LLMCall",
    "Message",
    "Phase",
    "PlatformLink",
    "Seat",
    "Server",
    "StrategyNote",
    "SurveyResponse",
    "UTCDateTime",
    "Vote",
    "utcnow",
]


class PlayerRating(SQLModel, table=True):
    """One person's standing on one server (`bot.players.stats`): their skill rating and their
    records, brought up to date once per revealed game (``rated_games``), never re-rated from
    the whole history. ``user_id`` ``"@ai"`` is the server's AI players' row (no rating)."""

    __tablename__ = "player_ratings"
    __table_args__ = (sa.UniqueConstraint("platform", "server_external_id", "user_id"),)

    id: int | None = Field(default=None, primary_key=True)
    platform: str = Field(nullable=False)
    server_external_id: str = Field(nullable=False)
    user_id: str = Field(nullable=False)
    mu: float = Field(nullable=False)
    sigma: float = Field(nullable=False)
    games: int = Field(default=0, nullable=False)
    wins: int = Field(default=0, nullable=False)
    survived: int = Field(default=0, nullable=False)
    #: role -> [games, wins]
    roles: dict[str, Any] = Field(default_factory=dict, sa_type=sa.JSON, nullable=False)
    #: survey guesses made, how many named an AI, and what chance alone would have named
    guesses: int = Field(default=0, nullable=False)
    spotted: int = Field(default=0, nullable=False)
    chance: float = Field(default=0.0, nullable=False)
    #: (the AI's row) how many guesses named one of its players
    named: int = Field(default=0, nullable=False)
    created_at: datetime = _ts(default_now=True)
    updated_at: datetime = _ts(default_now=True)


class RatedGame(SQLModel, table=True):
    """A revealed game already counted in ``player_ratings`` (so it is counted once)."""

    __tablename__ = "rated_games"

    game_id: str = Field(foreign_key="games.id", ondelete="CASCADE", primary_key=True)
    rated_at: datetime = _ts(default_now=True)
