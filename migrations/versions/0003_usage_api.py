"""usage: the API the client spoke, the thinking setting sent upstream, the minted response id

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30

Rows written before this revision were all Chat Completions, completions or
embeddings traffic: their ``api`` is their ``endpoint``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("usage") as batch:
        batch.add_column(sa.Column("api", sa.String(), nullable=True))
        batch.add_column(sa.Column("thinking", sa.String(), nullable=True))
        batch.add_column(sa.Column("response_id", sa.String(), nullable=True))
    op.execute("UPDATE usage SET api = endpoint WHERE api IS NULL")
    # previous_response_id → backend is rebuilt from recent rows at start-up.
    op.create_index("ix_usage_response_id", "usage", ["response_id"])


def downgrade() -> None:
    op.drop_index("ix_usage_response_id", table_name="usage")
    with op.batch_alter_table("usage") as batch:
        batch.drop_column("response_id")
        batch.drop_column("thinking")
        batch.drop_column("api")
