"""usage: indexes for the monthly report (range scan on started_at)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29

"""

from __future__ import annotations

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_usage_started_at", "usage", ["started_at"])
    op.create_index("ix_usage_started_at_route", "usage", ["started_at", "route"])


def downgrade() -> None:
    op.drop_index("ix_usage_started_at_route", table_name="usage")
    op.drop_index("ix_usage_started_at", table_name="usage")
