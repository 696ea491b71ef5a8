"""usage table: one row per proxied request

Revision ID: 0001
Revises:
Create Date: 2026-11-29

"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Frozen copy of the schema at this revision: never import router.models here.
    op.create_table(
        "usage",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
        sa.Column("request_id", sa.String(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("endpoint", sa.String(), nullable=False),
        sa.Column("client", sa.String(), nullable=True),
        sa.Column("model_requested", sa.String(), nullable=True),
        sa.Column("stream", sa.Boolean(), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("error_type", sa.String(), nullable=True),
        sa.Column("intent", sa.String(), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("decided_route", sa.String(), nullable=True),
        sa.Column("decided_backend", sa.String(), nullable=True),
        sa.Column("reason", sa.String(), nullable=True),
        sa.Column("backend", sa.String(), nullable=True),
        sa.Column("route", sa.String(), nullable=True),
        sa.Column("fallback", sa.Boolean(), nullable=False),
        sa.Column("fallback_reason", sa.String(), nullable=True),
        sa.Column("shadow_backend", sa.String(), nullable=True),
        sa.Column("shadow_route", sa.String(), nullable=True),
        sa.Column("shadow_intent", sa.String(), nullable=True),
        sa.Column("classifier_version", sa.String(), nullable=True),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("cached_tokens", sa.Integer(), nullable=False),
        sa.Column("reasoning_tokens", sa.Integer(), nullable=False),
        sa.Column("tokens_estimated", sa.Boolean(), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.Column("ttft_ms", sa.Float(), nullable=True),
        sa.Column("prompt_text", sa.Text(), nullable=True),
        sa.Column("completion_text", sa.Text(), nullable=True),
        sa.UniqueConstraint("request_id", name="uq_usage_request_id"),
    )


def downgrade() -> None:
    op.drop_table("usage")
