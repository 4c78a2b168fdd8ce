"""platform_links: where a game lives on Discord/Slack (lobby, booths, den, webhooks)

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from bot.store.models import UTCDateTime

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "platform_links",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.String(), nullable=False),
        sa.Column("platform", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("seat_index", sa.Integer(), nullable=True),
        sa.Column("external_id", sa.String(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_platform_links_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_platform_links")),
        sa.UniqueConstraint(
            "game_id", "platform", "kind", "seat_index",
            name=op.f("uq_platform_links_game_id_platform_kind_seat_index"),
        ),
    )
    op.create_index(
        "ix_platform_links_platform_external_id", "platform_links",
        ["platform", "external_id"], unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_platform_links_platform_external_id", table_name="platform_links")
    op.drop_table("platform_links")
