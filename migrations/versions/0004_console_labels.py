"""labels table (the console's intent corrections); usage indexes for the console's views

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30

The console (``router/console``) lists the newest decisions filtered by client,
intent, reason, route and low confidence, and the newest fallbacks: the indexes
below let it read just the newest matching rows instead of walking the month. On PostgreSQL
``CREATE INDEX`` holds off writers while it builds (seconds per million rows);
rows written meanwhile wait in the proxy's spool.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels = None
depends_on = None

# Each filter's column first, then every other filter's column: a filter that matches
# nothing is ruled out from the index alone (see router.models.Usage). Created in this
# order on purpose: without statistics SQLite breaks a tie between equally good indexes
# in favour of the one created last, and a client is the narrowest filter, a reason the
# widest ("classifier" is most rows): 25 ms instead of 100-350 ms for reason=classifier,
# route=local, intent=math on a million rows (bench/README.md).
_USAGE_INDEXES = {
    "ix_usage_reason_started_at": ["reason", "started_at", "route", "intent", "client", "confidence"],
    "ix_usage_intent_started_at": ["intent", "started_at", "route", "reason", "client", "confidence"],
    "ix_usage_client_started_at": ["client", "started_at", "route", "intent", "reason", "confidence"],
    "ix_usage_started_at_route_confidence": ["started_at", "route", "confidence"],
    "ix_usage_fallback_started_at": ["fallback", "started_at"],
}


# PostgreSQL only: how often values occur together. Without them the planner takes
# route, intent and reason as independent, so for "route=local, intent=math" (which
# the policy never decides) it expects thousands of rows and walks the whole month
# newest first looking for 50 (0.6 s on a million rows) instead of reading the intent
# index (10 ms). ANALYZE (autovacuum) fills them.
_STATISTICS = {
    "st_usage_route_intent": "route, intent",
    "st_usage_route_reason": "route, reason",
    "st_usage_intent_reason": "intent, reason",
    "st_usage_client_route": "client, route",
    "st_usage_client_intent": "client, intent",
}


def upgrade() -> None:
    # Frozen copy of the schema at this revision: never import router.models here.
    op.create_table(
        "labels",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
        sa.Column("request_id", sa.String(), nullable=False),
        sa.Column("intent", sa.String(), nullable=False),
        sa.Column("labelled_by", sa.String(), nullable=False),
        sa.Column("labelled_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("request_id", name="uq_labels_request_id"),
    )
    op.create_index("ix_labels_labelled_at", "labels", ["labelled_at"])
    for name, columns in _USAGE_INDEXES.items():
        op.create_index(name, "usage", columns)
    if op.get_bind().dialect.name == "postgresql":
        for name, columns in _STATISTICS.items():
            op.execute(f"CREATE STATISTICS {name} (mcv) ON {columns} FROM usage")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for name in _STATISTICS:
            op.execute(f"DROP STATISTICS IF EXISTS {name}")
    for name in _USAGE_INDEXES:
        op.drop_index(name, table_name="usage")
    op.drop_index("ix_labels_labelled_at", table_name="labels")
    op.drop_table("labels")
