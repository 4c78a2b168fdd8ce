"""llm_calls.cached_input_tokens: the part of a call's prompt served from the provider's
prompt cache (OpenAI ``prompt_tokens_details.cached_tokens``, Anthropic
``cache_read_input_tokens``)

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("llm_calls") as batch:
        batch.add_column(
            sa.Column("cached_input_tokens", sa.Integer(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("llm_calls") as batch:
        batch.drop_column("cached_input_tokens")
