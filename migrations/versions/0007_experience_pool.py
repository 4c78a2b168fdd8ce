"""experiences and strategy_notes: the LLM agent's learning across games

Revision ID: 0007
Revises: 0006

Like 0004, timestamps are plain naive DATETIME holding UTC and nothing from the application is
imported.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Str = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "experiences",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", Str(), nullable=False),
        sa.Column("server_id", sa.Integer(), nullable=True),
        sa.Column("seat_index", sa.Integer(), nullable=False),
        sa.Column("phase_seq", sa.Integer(), nullable=False),
        sa.Column("role", Str(), nullable=False),
        sa.Column("team", Str(), nullable=False),
        sa.Column("won", sa.Boolean(), nullable=False),
        sa.Column("days", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("reflection", sa.Text(), nullable=False),
        sa.Column("response", sa.Text(), nullable=False),
        sa.Column("embedder", Str(), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_experiences_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["server_id"], ["servers.id"], name=op.f("fk_experiences_server_id_servers"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_experiences")),
        sa.UniqueConstraint(
            "game_id", "seat_index", "phase_seq",
            name=op.f("uq_experiences_game_id_seat_index_phase_seq"),
        ),
    )
    op.create_index(op.f("ix_experiences_server_id"), "experiences", ["server_id"])
    op.create_index("ix_experiences_embedder_team", "experiences", ["embedder", "team"])
    op.create_table(
        "strategy_notes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("scope", Str(), nullable=False),
        sa.Column("role", Str(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("lessons", sa.JSON(), nullable=False),
        sa.Column("game_id", Str(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_strategy_notes_game_id_games"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_strategy_notes")),
        sa.UniqueConstraint(
            "scope", "role", "version", name=op.f("uq_strategy_notes_scope_role_version")
        ),
    )


def downgrade() -> None:
    op.drop_table("strategy_notes")
    op.drop_index("ix_experiences_embedder_team", table_name="experiences")
    op.drop_index(op.f("ix_experiences_server_id"), table_name="experiences")
    op.drop_table("experiences")
