"""withdrawal_jobs: consent withdrawals under way, taken up again after a restart

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Str = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "withdrawal_jobs",
        sa.Column("platform", Str(), nullable=False),
        sa.Column("server_external_id", Str(), nullable=False),
        sa.Column("user_id", Str(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint(
            "platform", "server_external_id", "user_id", name=op.f("pk_withdrawal_jobs")
        ),
    )


def downgrade() -> None:
    op.drop_table("withdrawal_jobs")
