"""usage: the session a request belonged to

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01

Agent turns are sessions (router/sessions.py: Claude Code's and Codex's session ids, a
``previous_response_id`` chain, else the stable prefix). The row keeps the session's id
(at most 64 characters), so a session's turns, the box that served them and the route
changes inside it can be read from the table. Indexed for that.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("usage") as batch:
        batch.add_column(sa.Column("session_id", sa.String(), nullable=True))
    op.create_index("ix_usage_session_id", "usage", ["session_id"])


def downgrade() -> None:
    op.drop_index("ix_usage_session_id", table_name="usage")
    with op.batch_alter_table("usage") as batch:
        batch.drop_column("session_id")
