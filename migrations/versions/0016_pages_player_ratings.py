"""player_ratings, rated_games: each person's rating and records per server, brought up to
date once per revealed game (the stats and the board no longer re-rate the whole history)

Revision ID: 0016
Revises: 0015
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Str = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "player_ratings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", Str(), nullable=False),
        sa.Column("server_external_id", Str(), nullable=False),
        sa.Column("user_id", Str(), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("survived", sa.Integer(), nullable=False),
        sa.Column("roles", sa.JSON(), nullable=False),
        sa.Column("guesses", sa.Integer(), nullable=False),
        sa.Column("spotted", sa.Integer(), nullable=False),
        sa.Column("chance", sa.Float(), nullable=False),
        sa.Column("named", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_player_ratings")),
        sa.UniqueConstraint(
            "platform",
            "server_external_id",
            "user_id",
            name=op.f("uq_player_ratings_platform_server_external_id_user_id"),
        ),
    )
    op.create_table(
        "rated_games",
        sa.Column("game_id", Str(), nullable=False),
        sa.Column("rated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_rated_games_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_rated_games")),
    )


def downgrade() -> None:
    op.drop_table("rated_games")
    op.drop_table("player_ratings")
