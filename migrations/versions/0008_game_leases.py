"""game_leases: one process drives a game at a time (lease + fencing epoch, see bot/service/lease.py)

Revision ID: 0008
Revises: 0007

Like 0004, timestamps are plain naive DATETIME holding UTC and nothing from the application is
imported. Games running when this migration is applied have no lease yet; the first process
that resumes one creates it.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Str = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "game_leases",
        sa.Column("game_id", Str(), nullable=False),
        sa.Column("holder", Str(), nullable=False),
        sa.Column("host", Str(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("epoch", sa.Integer(), nullable=False),
        sa.Column("acquired_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_game_leases_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_game_leases")),
    )


def downgrade() -> None:
    op.drop_table("game_leases")
