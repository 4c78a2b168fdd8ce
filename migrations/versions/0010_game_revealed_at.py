"""games.revealed_at: when the stage was told who the AI was (the reveal after the survey)

Games already finished are marked revealed at their end.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("revealed_at", sa.DateTime(), nullable=True))
    # Games finished before the reveal existed count as revealed (at their end): a bot started
    # on an upgraded database must not post the reveal of every old game in its channel.
    op.execute(
        "UPDATE games SET revealed_at = ended_at WHERE status = 'finished' AND ended_at IS NOT NULL"
    )


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_column("revealed_at")
