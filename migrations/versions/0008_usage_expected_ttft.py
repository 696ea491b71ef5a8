"""usage: the time to first token admission expected, beside the one measured

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

Where a vLLM backend has ``max_ttft_s``, admission estimates each request's time to
first token from the prefill owed ahead of it and the learned prefill rate; the row
keeps that estimate (``expected_ttft_ms``) next to the measured ``ttft_ms``, so the
estimate's quality can be read from the table.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("usage") as batch:
        batch.add_column(sa.Column("expected_ttft_ms", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("usage") as batch:
        batch.drop_column("expected_ttft_ms")
