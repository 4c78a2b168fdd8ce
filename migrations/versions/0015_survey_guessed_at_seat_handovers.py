"""survey_responses.guessed_at and seats.handovers: the survey closes at the reveal, and a seat
carries who played it when

``guessed_at`` is when the guess was given (a guess counts only if given before the reveal);
older rows keep NULL and are judged by ``t``, their last change. ``handovers`` lists a seat's
hand-overs between a person and an agent (kick, AFK takeover, substitute); NULL: none.

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("survey_responses") as batch:
        batch.add_column(sa.Column("guessed_at", sa.DateTime(), nullable=True))
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("handovers", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("handovers")
    with op.batch_alter_table("survey_responses") as batch:
        batch.drop_column("guessed_at")
