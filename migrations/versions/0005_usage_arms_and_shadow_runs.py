"""usage: the arm of a weighted split or shadow run, and shadow runs beside the requests they copied

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30

A shadow run (a cloud-bound request answered again, in the background, by a local
arm) is a row of its own with ``shadow_of`` set to the real request's id: the same
writer, spool and journal keep it, and the report leaves it out of the month's
traffic. ``agreement`` is what a mechanical judge said of the two answers.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("usage") as batch:
        batch.add_column(sa.Column("arm", sa.String(), nullable=True))
        batch.add_column(sa.Column("shadow_of", sa.String(), nullable=True))
        batch.add_column(sa.Column("agreement", sa.String(), nullable=True))
    op.create_index("ix_usage_shadow_of", "usage", ["shadow_of"])


def downgrade() -> None:
    op.drop_index("ix_usage_shadow_of", table_name="usage")
    with op.batch_alter_table("usage") as batch:
        batch.drop_column("agreement")
        batch.drop_column("shadow_of")
        batch.drop_column("arm")
