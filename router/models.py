"""SQLAlchemy tables. One row per proxied request in ``usage``; the console's labels in ``labels``.

The Alembic revisions in ``migrations/versions`` are the source of truth for
the database; this module must describe the same schema (a test compares the
two) so that the writer and the report can build statements from it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, DateTime, Float, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class Usage(Base):
    """What the proxy saw of one request (``router.accounting.UsageRow`` minus ``extra``)."""

    # Text columns have no length limit: a long model name or reason must never
    # make PostgreSQL reject a row (SQLite ignores lengths anyway).
    __tablename__ = "usage"
    __table_args__ = (
        # Unique so that replaying the spool (or retrying a batch whose commit was
        # acknowledged but not seen) never counts a request twice.
        UniqueConstraint("request_id", name="uq_usage_request_id"),
        # A month's report is a range scan on started_at; the composite index lets
        # the per-route aggregate read the route from the index as well.
        Index("ix_usage_started_at", "started_at"),
        Index("ix_usage_started_at_route", "started_at", "route"),
        Index("ix_usage_response_id", "response_id"),
        Index("ix_usage_shadow_of", "shadow_of"),
        # The console's Decisions view (router/console/queries.py): the newest rows of one
        # client, intent or reason, with every other filter's column in the index, so that
        # a filter that matches nothing is ruled out from the index alone, not row by row;
        # without any of those three, low confidence is read from the started_at one.
        Index(
            "ix_usage_client_started_at", "client", "started_at", "route", "intent", "reason", "confidence"
        ),
        Index(
            "ix_usage_intent_started_at", "intent", "started_at", "route", "reason", "client", "confidence"
        ),
        Index(
            "ix_usage_reason_started_at", "reason", "started_at", "route", "intent", "client", "confidence"
        ),
        Index("ix_usage_started_at_route_confidence", "started_at", "route", "confidence"),
        # Its Now view: the latest fallbacks.
        Index("ix_usage_fallback_started_at", "fallback", "started_at"),
    )

    # BIGINT on PostgreSQL; INTEGER on SQLite so that it aliases the rowid.
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    request_id: Mapped[str] = mapped_column(String)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    endpoint: Mapped[str] = mapped_column(String)
    client: Mapped[str | None] = mapped_column(String)
    model_requested: Mapped[str | None] = mapped_column(String)
    stream: Mapped[bool] = mapped_column(Boolean)
    status: Mapped[int] = mapped_column(Integer)
    error_type: Mapped[str | None] = mapped_column(String)
    intent: Mapped[str | None] = mapped_column(String)
    confidence: Mapped[float | None] = mapped_column(Float)
    decided_route: Mapped[str | None] = mapped_column(String)
    decided_backend: Mapped[str | None] = mapped_column(String)
    reason: Mapped[str | None] = mapped_column(String)
    backend: Mapped[str | None] = mapped_column(String)
    route: Mapped[str | None] = mapped_column(String)
    fallback: Mapped[bool] = mapped_column(Boolean)
    fallback_reason: Mapped[str | None] = mapped_column(String)
    shadow_backend: Mapped[str | None] = mapped_column(String)
    shadow_route: Mapped[str | None] = mapped_column(String)
    shadow_intent: Mapped[str | None] = mapped_column(String)
    classifier_version: Mapped[str | None] = mapped_column(String)
    prompt_tokens: Mapped[int] = mapped_column(Integer)
    completion_tokens: Mapped[int] = mapped_column(Integer)
    cached_tokens: Mapped[int] = mapped_column(Integer)
    reasoning_tokens: Mapped[int] = mapped_column(Integer)
    tokens_estimated: Mapped[bool] = mapped_column(Boolean)
    latency_ms: Mapped[float] = mapped_column(Float)
    ttft_ms: Mapped[float | None] = mapped_column(Float)
    api: Mapped[str | None] = mapped_column(String)
    thinking: Mapped[str | None] = mapped_column(String)
    response_id: Mapped[str | None] = mapped_column(String)
    arm: Mapped[str | None] = mapped_column(String)
    shadow_of: Mapped[str | None] = mapped_column(String)
    agreement: Mapped[str | None] = mapped_column(String)
    # Only filled when database.store_text is on.
    prompt_text: Mapped[str | None] = mapped_column(Text)
    completion_text: Mapped[str | None] = mapped_column(Text)


class Label(Base):
    """A person's verdict on one decision's intent, set in the console (``router.console``).

    One label per request (a second one replaces the first); ``offload export --select
    labelled`` writes them as ``offload train`` lines. No foreign key to ``usage``: pruning
    old usage rows must never be blocked by a label.
    """

    __tablename__ = "labels"
    __table_args__ = (
        UniqueConstraint("request_id", name="uq_labels_request_id"),
        Index("ix_labels_labelled_at", "labelled_at"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    request_id: Mapped[str] = mapped_column(String)
    intent: Mapped[str] = mapped_column(String)
    labelled_by: Mapped[str] = mapped_column(String)  # the admin key's name, never the key
    labelled_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


usage_table = Usage.__table__
labels_table = Label.__table__
