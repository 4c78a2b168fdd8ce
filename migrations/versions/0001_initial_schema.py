"""initial schema: servers, games, seats, phases, messages, votes, events, actions

Revision ID: 0001
Revises:
Create Date: 2026-11-22 13:00:00+00:00

Timestamps are plain naive DATETIME columns holding UTC (bot.store.models.UTCDateTime adds and
checks the zone in Python), so this revision does not import application code.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Str = sqlmodel.sql.sqltypes.AutoString


def _game_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["game_id"], ["games.id"], name=op.f(f"fk_{table}_game_id_games"), ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "servers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", Str(), nullable=False),
        sa.Column("external_id", Str(), nullable=False),
        sa.Column("name", Str(), nullable=True),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("logging_enabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_servers")),
        sa.UniqueConstraint(
            "platform", "external_id", name=op.f("uq_servers_platform_external_id")
        ),
    )

    op.create_table(
        "games",
        sa.Column("id", Str(), nullable=False),
        sa.Column("server_id", sa.Integer(), nullable=True),
        sa.Column("channel_id", Str(), nullable=True),
        sa.Column("status", Str(), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("host_user_id", Str(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("ended_at", sa.DateTime(), nullable=True),
        sa.Column("winner", Str(), nullable=True),
        sa.Column("end_reason", Str(), nullable=True),
        sa.Column("clock_speed", sa.Float(), nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["server_id"],
            ["servers.id"],
            name=op.f("fk_games_server_id_servers"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_games")),
    )
    op.create_index(op.f("ix_games_server_id"), "games", ["server_id"])
    op.create_index(op.f("ix_games_status"), "games", ["status"])

    op.create_table(
        "seats",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", Str(), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("character_name", Str(), nullable=False),
        sa.Column("role", Str(), nullable=True),
        sa.Column("alive", sa.Boolean(), nullable=False),
        sa.Column("user_id", Str(), nullable=True),
        sa.Column("is_agent", sa.Boolean(), nullable=False),
        sa.Column("agent_kind", Str(), nullable=True),
        sa.Column("persona", Str(), nullable=True),
        sa.Column("joined_at", sa.DateTime(), nullable=False),
        _game_fk("seats"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seats")),
        sa.UniqueConstraint("game_id", "index", name=op.f("uq_seats_game_id_index")),
        sa.UniqueConstraint(
            "game_id", "character_name", name=op.f("uq_seats_game_id_character_name")
        ),
    )
    op.create_index(op.f("ix_seats_user_id"), "seats", ["user_id"])

    op.create_table(
        "phases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", Str(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", Str(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("deadline", sa.DateTime(), nullable=True),
        sa.Column("ended_at", sa.DateTime(), nullable=True),
        _game_fk("phases"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_phases")),
        sa.UniqueConstraint("game_id", "seq", name=op.f("uq_phases_game_id_seq")),
    )

    op.create_table(
        "messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", Str(), nullable=False),
        sa.Column("phase_seq", sa.Integer(), nullable=True),
        sa.Column("place", Str(), nullable=False),
        sa.Column("seat_index", sa.Integer(), nullable=True),
        sa.Column("speaker", Str(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("t", sa.DateTime(), nullable=False),
        sa.Column("action_seq", sa.Integer(), nullable=True),
        sa.Column("client_id", Str(), nullable=True),
        _game_fk("messages"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_messages")),
        sa.UniqueConstraint("game_id", "client_id", name=op.f("uq_messages_game_id_client_id")),
    )
    op.create_index("ix_messages_game_id_t", "messages", ["game_id", "t"])

    op.create_table(
        "votes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", Str(), nullable=False),
        sa.Column("phase_seq", sa.Integer(), nullable=False),
        sa.Column("kind", Str(), nullable=False),
        sa.Column("voter_index", sa.Integer(), nullable=False),
        sa.Column("target_index", sa.Integer(), nullable=True),
        sa.Column("t", sa.DateTime(), nullable=False),
        sa.Column("action_seq", sa.Integer(), nullable=True),
        _game_fk("votes"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_votes")),
    )
    op.create_index("ix_votes_game_id_phase_seq", "votes", ["game_id", "phase_seq"])

    op.create_table(
        "events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", Str(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", Str(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("t", sa.DateTime(), nullable=False),
        sa.Column("visible_to", sa.JSON(none_as_null=True), nullable=True),
        _game_fk("events"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_events")),
        sa.UniqueConstraint("game_id", "seq", name=op.f("uq_events_game_id_seq")),
    )

    op.create_table(
        "actions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", Str(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", Str(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("t", sa.DateTime(), nullable=False),
        sa.Column("client_id", Str(), nullable=True),
        _game_fk("actions"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_actions")),
        sa.UniqueConstraint("game_id", "seq", name=op.f("uq_actions_game_id_seq")),
        sa.UniqueConstraint("game_id", "client_id", name=op.f("uq_actions_game_id_client_id")),
    )


def downgrade() -> None:
    # Dropping a table drops its indexes too; children go before their parents.
    for table in ("actions", "events", "votes", "messages", "phases", "seats", "games", "servers"):
        op.drop_table(table)
