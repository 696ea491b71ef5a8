"""The console's SQL, in one place.

Each function takes an open connection and returns plain values. They run in the
console's worker threads (``router/console/service.py``), never on the event loop,
and each reads only what an index hands it: the newest rows of one client, intent,
reason or of the fallbacks (migration 0004), one request by its unique id, the
labels joined to their rows by that id. The month's money comes from
``router.ledger.report.build_report`` itself; :func:`daily` adds its trend by day, from the
same per-day rollup (``usage_daily``).

"Answered" means what the report means: neither an HTTP error nor an error type. A shadow
run (router/shadow/runs.py) is not the month's traffic (the rollup leaves it out); the Decisions
view lists it, marked, rather than add a condition that no index could check.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from router.ledger.models import Label, labels_table, usage_daily_table, usage_table
from router.ledger.report import utc_day

u = usage_table.c
d = usage_daily_table.c
lb = labels_table.c

PAGE = 50  # decisions per page
NO_INTENT = "none"  # the intent filter's value for decisions without one (overrides, rules)

# The route the policy chose: in shadow mode every row is served by the shadow backend
# and the policy's own choice is in shadow_route.
POLICY_ROUTE = sa.func.coalesce(u.shadow_route, u.decided_route)
# "= true", not "IS true": PostgreSQL uses ix_usage_fallback_started_at only for the former.
FELL_BACK = u.fallback == sa.true()


# ------------------------------------------------------------------ month


@dataclass(frozen=True, slots=True)
class Day:
    day: date
    requests: int
    answered_local: int
    answered_cloud: int
    fallbacks: int

    @property
    def local_share(self) -> float | None:
        """Of the answered requests, the share the local route served (None: none answered)."""
        answered = self.answered_local + self.answered_cloud
        return self.answered_local / answered if answered else None


def daily(conn: Connection, start: datetime, end: datetime) -> list[Day]:
    """Each UTC day of ``[start, end)`` (UTC midnights), with zeros for days without rows:
    one read of the per-day rollup (``router.ledger.models.UsageDaily``), grouped by day and route.

    The rollup counts what the report counts (real traffic, errors as the report's errors),
    so the days add up to the month's report.
    """
    route = sa.func.nullif(d.route, "")
    stmt = (
        sa.select(
            d.day,
            route.label("route"),
            sa.func.sum(d.requests).label("requests"),
            sa.func.sum(d.requests - d.errors).label("answered"),
            sa.func.sum(sa.case((d.fallback == sa.true(), d.requests), else_=0)).label("fallbacks"),
        )
        .where(d.day >= utc_day(start), d.day < utc_day(end))
        .group_by(d.day, route)
    )
    totals: dict[date, dict[str, int]] = {}
    for row in conn.execute(stmt):
        t = totals.setdefault(row.day, {"requests": 0, "local": 0, "cloud": 0, "fallbacks": 0})
        t["requests"] += int(row.requests)
        t["fallbacks"] += int(row.fallbacks)
        if row.route in ("local", "cloud"):
            t[row.route] += int(row.answered)
    out = []
    for day in days_between(start, end):
        t = totals.get(day, {"requests": 0, "local": 0, "cloud": 0, "fallbacks": 0})
        out.append(Day(day, t["requests"], t["local"], t["cloud"], t["fallbacks"]))
    return out


def days_between(start: datetime, end: datetime) -> list[date]:
    """The UTC days of ``[start, end)``."""
    first = start.date()
    return [first + timedelta(days=i) for i in range((end.date() - first).days)]


# ------------------------------------------------------------------ decisions


@dataclass(frozen=True, slots=True)
class Filters:
    """The Decisions view's filters; None (or False) means "any"."""

    route: str | None = None
    intent: str | None = None  # NO_INTENT: decisions without an intent
    reason: str | None = None
    client: str | None = None
    low_confidence: bool = False
    before: tuple[datetime, int] | None = None  # keyset: older than (started_at, id)

    def without_page(self) -> dict[str, str]:
        """The filters as query parameters (for links), the page position left out."""
        out = {k: v for k in ("route", "intent", "reason", "client") if (v := getattr(self, k))}
        return {**out, "low": "1"} if self.low_confidence else out


_LIST_COLUMNS = (
    u.id,
    u.request_id,
    u.started_at,
    u.client,
    u.api,
    u.endpoint,
    u.intent,
    u.confidence,
    u.reason,
    u.decided_route,
    u.decided_backend,
    u.backend,
    u.route,
    u.fallback,
    u.fallback_reason,
    u.shadow_route,
    u.shadow_of,
    u.gate_run,
    u.status,
    u.error_type,
    u.prompt_tokens,
    u.completion_tokens,
    u.prompt_text.is_not(None).label("has_text"),
)


def decisions(conn: Connection, filters: Filters, floor: float, limit: int = PAGE) -> list[dict[str, Any]]:
    """The newest decisions matching ``filters``, newest first, each with its label (or None)."""
    stmt = sa.select(*_LIST_COLUMNS).order_by(u.started_at.desc(), u.id.desc()).limit(limit)
    if filters.route:
        stmt = stmt.where(u.route == filters.route)
    if filters.intent == NO_INTENT:
        stmt = stmt.where(u.intent.is_(None))
    elif filters.intent:
        stmt = stmt.where(u.intent == filters.intent)
    if filters.reason:
        stmt = stmt.where(u.reason == filters.reason)
    if filters.client:
        stmt = stmt.where(u.client == filters.client)
    if filters.low_confidence:
        stmt = stmt.where(u.confidence.is_not(None), u.confidence < floor)
    if filters.before:
        at, row_id = filters.before
        stmt = stmt.where(u.started_at <= at, (u.started_at < at) | (u.id < row_id))
    rows = [dict(r._mapping) for r in conn.execute(stmt)]
    found = _labels_of(conn, [r["request_id"] for r in rows])
    for r in rows:
        r["label"] = found.get(r["request_id"])
    return rows


def decision(conn: Connection, request_id: str) -> dict[str, Any] | None:
    """One request's whole row (with its stored text, if any) and its label."""
    row = conn.execute(sa.select(usage_table).where(u.request_id == request_id)).first()
    if row is None:
        return None
    out = dict(row._mapping)
    out["label"] = _labels_of(conn, [request_id]).get(request_id)
    return out


def _labels_of(conn: Connection, request_ids: list[str]) -> dict[str, dict[str, Any]]:
    if not request_ids:
        return {}
    stmt = sa.select(lb.request_id, lb.intent, lb.labelled_by, lb.labelled_at).where(
        lb.request_id.in_(request_ids)
    )
    return {r.request_id: dict(r._mapping) for r in conn.execute(stmt)}


# ------------------------------------------------------------------ now


def recent_fallbacks(conn: Connection, limit: int = 20) -> list[dict[str, Any]]:
    """The newest requests that were moved to another backend, and why."""
    stmt = (
        sa.select(
            u.request_id,
            u.started_at,
            u.client,
            u.api,
            u.decided_backend,
            u.backend,
            u.fallback_reason,
            u.status,
        )
        .where(FELL_BACK)
        .order_by(u.started_at.desc())
        .limit(limit)
    )
    return [dict(r._mapping) for r in conn.execute(stmt)]


def fallbacks_since(conn: Connection, since: datetime) -> dict[str, int]:
    """Fallbacks since ``since``, by reason."""
    reason = sa.func.coalesce(u.fallback_reason, "unspecified")
    stmt = (
        sa.select(reason.label("reason"), sa.func.count().label("n"))
        .where(FELL_BACK, u.started_at >= since)
        .group_by(reason)
    )
    return {r.reason: r.n for r in conn.execute(stmt)}


# ------------------------------------------------------------------ labels


def set_label(conn: Connection, request_id: str, intent: str, who: str, at: datetime) -> bool:
    """Record (or replace) a person's intent for one request; False if no such request."""
    if conn.execute(sa.select(u.id).where(u.request_id == request_id)).first() is None:
        return False
    # Both dialects spell the upsert the same way; each has its own insert().
    from sqlalchemy.dialects import postgresql, sqlite

    insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
    values = {"request_id": request_id, "intent": intent, "labelled_by": who, "labelled_at": at}
    stmt = insert(Label).values(**values)
    conn.execute(
        stmt.on_conflict_do_update(
            index_elements=[lb.request_id],
            set_={"intent": intent, "labelled_by": who, "labelled_at": at},
        )
    )
    return True


def latest_labels(conn: Connection, limit: int = PAGE) -> list[dict[str, Any]]:
    """The newest labels with the decision each one judges (None where the row is gone)."""
    stmt = (
        sa.select(
            lb.request_id,
            lb.intent.label("label"),
            lb.labelled_by,
            lb.labelled_at,
            u.intent,
            u.confidence,
            u.reason,
            POLICY_ROUTE.label("policy_route"),
            u.client,
            u.api,
        )
        .select_from(labels_table.outerjoin(usage_table, u.request_id == lb.request_id))
        .order_by(lb.labelled_at.desc())
        .limit(limit)
    )
    return [dict(r._mapping) for r in conn.execute(stmt)]


def label_pairs(conn: Connection) -> list[dict[str, Any]]:
    """How many labels there are per (label, router's intent, route the policy chose, has text):
    what agreement is computed from (``router.console.service.agreement``)."""
    stmt = (
        sa.select(
            lb.intent.label("label"),
            u.intent,
            POLICY_ROUTE.label("policy_route"),
            u.prompt_text.is_not(None).label("has_text"),
            sa.func.count().label("n"),
        )
        .select_from(labels_table.join(usage_table, u.request_id == lb.request_id))
        .group_by(lb.intent, u.intent, POLICY_ROUTE, u.prompt_text.is_not(None))
    )
    return [dict(r._mapping) for r in conn.execute(stmt)]
