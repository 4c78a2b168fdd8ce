"""survey_responses: post-game questionnaire answers (LLMafia imports, Discord/Slack surveys)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 15:00:00+00:00

Like 0001, timestamps are plain naive DATETIME holding UTC and nothing from the application is
imported.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Str = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "survey_responses",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", Str(), nullable=False),
        sa.Column("seat_index", sa.Integer(), nullable=False),
        sa.Column("about_seat_index", sa.Integer(), nullable=True),
        sa.Column("identified_ai", sa.Boolean(), nullable=True),
        sa.Column("guessed_name", Str(), nullable=True),
        sa.Column("similarity", sa.Float(), nullable=True),
        sa.Column("timing", sa.Float(), nullable=True),
        sa.Column("relevance", sa.Float(), nullable=True),
        sa.Column("original_scale", Str(), nullable=False),
        sa.Column("comments", sa.Text(), nullable=True),
        sa.Column("t", sa.DateTime(), nullable=True),
        sa.Column("source", Str(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_survey_responses_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_survey_responses")),
    )
    op.create_index(op.f("ix_survey_responses_game_id"), "survey_responses", ["game_id"])


def downgrade() -> None:
    op.drop_table("survey_responses")
