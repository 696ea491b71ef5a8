"""SQLAlchemy tables. One row per proxied request in ``usage``, its per-day sums in
``usage_daily``; the console's labels in ``labels``.

The Alembic revisions in ``migrations/versions`` are the source of truth for
the database; this module must describe the same schema (a test compares the
two) so that the writer and the report can build statements from it.
:class:`UsageRow` is the one list of the usage columns: the table is built from
its fields.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Date,
    DateTime,
    Float,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeEngine

# A field's metadata: what its Python type alone does not say about its column.
LONG_TEXT = {"sql_type": Text}  # no length limit, never cut (SHORT_TEXT_MAX is for String)
NULLABLE = {"nullable": True}  # NULL in old rows although the proxy always sets a value


@dataclass(slots=True)
class UsageRow:
    """One request, as the proxy saw it. Never holds a key; text only when enabled.

    Every field is a column of ``usage``, typed by its annotation (see :func:`_column`).
    """

    request_id: str
    started_at: datetime  # UTC
    endpoint: str  # "chat" | "completions" | "embeddings" | "responses" | "messages" | "count_tokens"
    client: str | None  # the client key's name, never the key
    model_requested: str | None
    stream: bool
    status: int = 0
    error_type: str | None = None
    intent: str | None = None
    confidence: float | None = None
    decided_route: str | None = None  # "local" | "cloud"
    decided_backend: str | None = None
    reason: str | None = None
    backend: str | None = None  # the backend that served (after any fallback)
    route: str | None = None  # route of the backend that served
    fallback: bool = False
    fallback_reason: str | None = None
    shadow_backend: str | None = None  # shadow mode: what the policy would have chosen
    shadow_route: str | None = None
    shadow_intent: str | None = None
    classifier_version: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Part of prompt_tokens read from the prompt cache. NULL: the upstream reported no cached
    # count (vLLM without --enable-prompt-tokens-details), or the tokens are estimated; the
    # report values such rows at the full input price and says how many tokens it did so for.
    cached_tokens: int | None = 0
    reasoning_tokens: int = 0
    tokens_estimated: bool = False
    latency_ms: float = 0.0
    ttft_ms: float | None = None
    # The API the client spoke: chat, completions, embeddings, responses, messages.
    api: str = field(default="chat", metadata=NULLABLE)
    thinking: str | None = None  # "on" | "off" as sent upstream; None: nobody set it (the model's default)
    response_id: str | None = None  # Responses: the id the backend minted (previous_response_id → backend)
    arm: str | None = None  # the arm a weighted split (routing.intents) or a shadow run chose
    shadow_of: str | None = None  # a shadow run's row: the request_id of the real request it copied
    agreement: str | None = None  # a shadow run: "agree", "disagree" or "not_judged" against the real answer
    gate_run: str | None = None  # `offload gate run`'s traffic: the id of its run (not the month's traffic)
    # Admission's expected time to first token (a vLLM backend with max_ttft_s), beside ttft_ms.
    expected_ttft_ms: float | None = None
    # Part of prompt_tokens written to the prompt cache (Anthropic's cache_creation_input_tokens).
    cache_write_tokens: int = field(default=0, metadata=NULLABLE)
    # The conversation it belonged to (router/sessions.py): its turns, boxes and route changes.
    session_id: str | None = None
    # Only filled when database.store_text is on.
    prompt_text: str | None = field(default=None, metadata=LONG_TEXT)
    completion_text: str | None = field(default=None, metadata=LONG_TEXT)


# Text columns have no length limit: a long model name or reason must never make
# PostgreSQL reject a row (SQLite ignores lengths anyway).
_SQL_TYPES: dict[type, type[TypeEngine[Any]]] = {
    str: String,
    int: Integer,
    float: Float,
    bool: Boolean,
    datetime: DateTime,
}


def _column(f: dataclasses.Field[Any], hint: Any) -> Column[Any]:
    """The column of one UsageRow field: ``X | None`` is nullable, the rest NOT NULL."""
    args = typing.get_args(hint) if isinstance(hint, types.UnionType) else ()
    python_type = next(a for a in args if a is not type(None)) if args else hint
    sql_type = f.metadata.get("sql_type", _SQL_TYPES[python_type])
    instance = sql_type(timezone=True) if sql_type is DateTime else sql_type()
    return Column(f.name, instance, nullable=bool(args) or f.metadata.get("nullable", False))


class Base(DeclarativeBase):
    pass


_hints = typing.get_type_hints(UsageRow)
usage_table = Table(
    "usage",
    Base.metadata,
    # BIGINT on PostgreSQL; INTEGER on SQLite so that it aliases the rowid.
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    *(_column(f, _hints[f.name]) for f in dataclasses.fields(UsageRow)),
    # Unique so that replaying the spool (or retrying a batch whose commit was
    # acknowledged but not seen) never counts a request twice.
    UniqueConstraint("request_id", name="uq_usage_request_id"),
    # A month's report is a range scan on started_at; the composite index lets
    # the per-route aggregate read the route from the index as well.
    Index("ix_usage_started_at", "started_at"),
    Index("ix_usage_started_at_route", "started_at", "route"),
    Index("ix_usage_response_id", "response_id"),
    Index("ix_usage_shadow_of", "shadow_of"),
    Index("ix_usage_session_id", "session_id"),
    # The console's Decisions view (router/console/queries.py): the newest rows of one
    # client, intent or reason, with every other filter's column in the index, so that
    # a filter that matches nothing is ruled out from the index alone, not row by row;
    # without any of those three, low confidence is read from the started_at one.
    Index("ix_usage_client_started_at", "client", "started_at", "route", "intent", "reason", "confidence"),
    Index("ix_usage_intent_started_at", "intent", "started_at", "route", "reason", "client", "confidence"),
    Index("ix_usage_reason_started_at", "reason", "started_at", "route", "intent", "client", "confidence"),
    Index("ix_usage_started_at_route_confidence", "started_at", "route", "confidence"),
    # Its Now view: the latest fallbacks.
    Index("ix_usage_fallback_started_at", "fallback", "started_at"),
)


class UsageDaily(Base):
    """The real traffic of one UTC day, summed by the dimensions the month's readers group by.

    ``offload report`` (``router.ledger.report``) and the console's daily trend
    (``router.console.queries.daily``) read this instead of a month of ``usage`` rows.
    Database triggers (migration 0006) keep it: every row inserted into ``usage``
    (by the writer, a spool replay, a journal recovery, or by hand) is added in the
    same transaction, a row the insert skipped as already known is not, and a row
    updated or deleted is taken out again. Shadow runs (``shadow_of`` set) and the
    gate's traffic (``gate_run`` set) are left out, as the report leaves them out. A NULL dimension is stored as ``''`` (a
    primary key has no NULLs); the readers read ``''`` back as NULL.
    """

    __tablename__ = "usage_daily"

    day: Mapped[date] = mapped_column(Date, primary_key=True)  # UTC
    route: Mapped[str] = mapped_column(String, primary_key=True)
    backend: Mapped[str] = mapped_column(String, primary_key=True)
    intent: Mapped[str] = mapped_column(String, primary_key=True)
    api: Mapped[str] = mapped_column(String, primary_key=True)
    fallback: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    fallback_reason: Mapped[str] = mapped_column(String, primary_key=True)
    requests: Mapped[int] = mapped_column(BigInteger)
    errors: Mapped[int] = mapped_column(BigInteger)  # HTTP status >= 400 or an error type: not answered
    prompt_tokens: Mapped[int] = mapped_column(BigInteger)
    completion_tokens: Mapped[int] = mapped_column(BigInteger)
    cached_tokens: Mapped[int] = mapped_column(BigInteger)
    cache_write_tokens: Mapped[int] = mapped_column(BigInteger, server_default="0")  # revision 0009
    # The prompt tokens of rows with no cached count (cached_tokens NULL), revision 0009.
    uncounted_prompt_tokens: Mapped[int] = mapped_column(BigInteger, server_default="0")


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


class GateRun(Base):
    """One capability run of ``offload gate`` (``router.gate``): smf-bench-format cases sent
    through the proxy to one backend or arm, or a stage-1 result file imported.

    ``recipe_hash`` fingerprints what answered (``router.gate.store.fingerprint``): a config whose
    backend hashes otherwise has changed since, and the run's evidence is stale.
    """

    __tablename__ = "gate_runs"
    __table_args__ = (Index("ix_gate_runs_target_started_at", "target", "started_at"),)

    id: Mapped[str] = mapped_column(String, primary_key=True)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    source: Mapped[str] = mapped_column(String)  # "run" | "import"
    target: Mapped[str] = mapped_column(String)  # the backend or arm that answered
    backend: Mapped[str] = mapped_column(String)  # the server's backend (an arm's variant_of)
    route: Mapped[str] = mapped_column(String)  # "local" | "cloud"
    model: Mapped[str] = mapped_column(String)
    recipe_hash: Mapped[str] = mapped_column(String)
    label: Mapped[str | None] = mapped_column(String, nullable=True)  # e.g. an imported file's tag
    suites: Mapped[str] = mapped_column(Text)  # JSON list of what ran
    wall_time_s: Mapped[float | None] = mapped_column(Float, nullable=True)


class GateResult(Base):
    """One graded case of a gate run: ``pass``, ``fail`` or ``error`` (no answer, a timeout)."""

    __tablename__ = "gate_results"
    __table_args__ = (UniqueConstraint("run_id", "case_id", name="uq_gate_results_run_case"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    run_id: Mapped[str] = mapped_column(String)
    case_id: Mapped[str] = mapped_column(String)
    category: Mapped[str] = mapped_column(String)
    difficulty: Mapped[str | None] = mapped_column(String, nullable=True)
    evaluator: Mapped[str] = mapped_column(String)
    status: Mapped[str] = mapped_column(String)
    score: Mapped[float] = mapped_column(Float)
    detail: Mapped[str] = mapped_column(Text)
    elapsed_s: Mapped[float] = mapped_column(Float)
    tokens: Mapped[int] = mapped_column(Integer)


usage_daily_table = UsageDaily.__table__
gate_runs_table = GateRun.__table__
gate_results_table = GateResult.__table__
labels_table = Label.__table__
