"""consents: answers to the consent notice; seats.withdrawn/scrubbed_at for withdrawals

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 10:00:00+00:00

Like 0001, timestamps are plain naive DATETIME holding UTC and nothing from the application is
imported. Existing seats get withdrawn = false from the server default.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Str = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "consents",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", Str(), nullable=False),
        sa.Column("server_external_id", Str(), nullable=False),
        sa.Column("user_id", Str(), nullable=False),
        sa.Column("version", Str(), nullable=False),
        sa.Column("agreed", sa.Boolean(), nullable=False),
        sa.Column("research", sa.Boolean(), nullable=False),
        sa.Column("t", sa.DateTime(), nullable=False),
        sa.Column("withdrawn_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_consents")),
    )
    op.create_index(
        "ix_consents_platform_server_user",
        "consents",
        ["platform", "server_external_id", "user_id"],
    )
    with op.batch_alter_table("seats") as batch:
        batch.add_column(
            sa.Column("withdrawn", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("scrubbed_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("scrubbed_at")
        batch.drop_column("withdrawn")
    op.drop_index("ix_consents_platform_server_user", table_name="consents")
    op.drop_table("consents")
