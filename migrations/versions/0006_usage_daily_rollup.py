"""usage_daily: each UTC day's real traffic summed by route, backend, intent, api and fallback

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30

``offload report`` and the console's Month view read this instead of a month of
``usage`` rows (a million rows took 1.6 to 6 s; the sums take milliseconds).
Triggers on ``usage`` keep it, in the same transaction as the change to ``usage``:
a row inserted is added (one that ``ON CONFLICT DO NOTHING`` skipped is not: the
triggers see only rows actually inserted), a row deleted is taken out, a row
updated is taken out and added again. So every way a row arrives (the writer, a
spool replay, a recovered journal, a hand-written INSERT) and any pruning by hand
keep the sums right. Shadow runs (``shadow_of`` set) are left out, as the report
leaves them out. A NULL dimension is stored as ``''`` (the primary key has no NULLs).

SQLite: row triggers, each an upsert of one rollup row. PostgreSQL: statement
triggers with transition tables, so a 500-row batch is one grouped upsert, in key
order (two writers lock the rows they share in the same order: no deadlock). The
upgrade creates the triggers before it backfills: on PostgreSQL ``CREATE TRIGGER``
holds off writers until the upgrade commits, so no row is missed or counted twice;
rows written meanwhile wait in the proxy's spool.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels = None
depends_on = None

_KEY = ("day", "route", "backend", "intent", "api", "fallback", "fallback_reason")
_SUMS = ("requests", "errors", "prompt_tokens", "completion_tokens", "cached_tokens")
_COLUMNS = ", ".join(_KEY + _SUMS)
# Frozen copy of the schema's rules at this revision: never import router.models or
# router.report here. "errors" is what the report counts as an error.
_ERROR = "CASE WHEN {t}status >= 400 OR {t}error_type IS NOT NULL THEN 1 ELSE 0 END"
_UPSERT = f" ON CONFLICT ({', '.join(_KEY)}) DO UPDATE SET " + ", ".join(
    f"{c} = usage_daily.{c} + excluded.{c}" for c in _SUMS
)


def _key(t: str, day: str) -> list[str]:
    """The rollup key of the row(s) ``t`` (a row prefix such as ``NEW.``, or ``''``)."""
    text = [f"coalesce({t}{c}, '')" for c in ("route", "backend", "intent", "api")]
    return [day, *text, f"{t}fallback", f"coalesce({t}fallback_reason, '')"]


# ------------------------------------------------------------------ SQLite


def _sqlite_day(t: str) -> str:
    # started_at is naive UTC text, "YYYY-MM-DD HH:MM:SS.ffffff" (router.accounting).
    return f"substr({t}started_at, 1, 10)"


def _sqlite_fold(t: str, sign: str) -> str:
    """Add (sign ``''``) or take out (``'-'``) the row ``t`` (``NEW.`` or ``OLD.``)."""
    values = [
        *_key(t, _sqlite_day(t)),
        f"{sign}1",
        f"{sign}({_ERROR.format(t=t)})",
        *(f"{sign}{t}{c}" for c in ("prompt_tokens", "completion_tokens", "cached_tokens")),
    ]
    # "WHERE true": an upsert's SELECT needs a WHERE clause (SQLite's parser).
    return (
        f"INSERT INTO usage_daily ({_COLUMNS}) SELECT {', '.join(values)} "
        f"WHERE {t}shadow_of IS NULL{_UPSERT};"
    )


_SQLITE_TRIGGERS = {
    "usage_daily_insert": f"AFTER INSERT ON usage WHEN NEW.shadow_of IS NULL BEGIN {_sqlite_fold('NEW.', '')} END",
    "usage_daily_delete": f"AFTER DELETE ON usage WHEN OLD.shadow_of IS NULL BEGIN {_sqlite_fold('OLD.', '-')} END",
    "usage_daily_update": (
        "AFTER UPDATE ON usage WHEN OLD.shadow_of IS NULL OR NEW.shadow_of IS NULL BEGIN "
        f"{_sqlite_fold('OLD.', '-')} {_sqlite_fold('NEW.', '')} END"
    ),
}


# ------------------------------------------------------------------ PostgreSQL


def _postgres_day(t: str) -> str:
    return f"({t}started_at AT TIME ZONE 'UTC')::date"


def _postgres_fold(rows: str, sign: str) -> str:
    """Add (sign ``''``) or take out (``'-'``) the transition table ``rows``, one
    grouped upsert in key order."""
    positions = ", ".join(str(i + 1) for i in range(len(_KEY)))
    values = [
        *_key("", _postgres_day("")),
        f"{sign}count(*)",
        f"{sign}sum({_ERROR.format(t='')})",
        *(f"{sign}sum({c})" for c in ("prompt_tokens", "completion_tokens", "cached_tokens")),
    ]
    return (
        f"INSERT INTO usage_daily ({_COLUMNS}) SELECT {', '.join(values)} FROM {rows} "
        f"WHERE shadow_of IS NULL GROUP BY {positions} ORDER BY {positions}{_UPSERT};"
    )


_POSTGRES_FUNCTION = f"""
CREATE FUNCTION usage_daily_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM usage_daily;
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        {_postgres_fold("old_rows", "-")}
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        {_postgres_fold("new_rows", "")}
    END IF;
    RETURN NULL;
END
$$
"""
_EACH = "FOR EACH STATEMENT EXECUTE FUNCTION usage_daily_apply()"
_POSTGRES_TRIGGERS = {
    "usage_daily_insert": f"AFTER INSERT ON usage REFERENCING NEW TABLE AS new_rows {_EACH}",
    "usage_daily_delete": f"AFTER DELETE ON usage REFERENCING OLD TABLE AS old_rows {_EACH}",
    "usage_daily_update": (
        f"AFTER UPDATE ON usage REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows {_EACH}"
    ),
    "usage_daily_truncate": f"AFTER TRUNCATE ON usage {_EACH}",
}


def upgrade() -> None:
    # Frozen copy of the schema at this revision: never import router.models here.
    op.create_table(
        "usage_daily",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("route", sa.String(), nullable=False),
        sa.Column("backend", sa.String(), nullable=False),
        sa.Column("intent", sa.String(), nullable=False),
        sa.Column("api", sa.String(), nullable=False),
        sa.Column("fallback", sa.Boolean(), nullable=False),
        sa.Column("fallback_reason", sa.String(), nullable=False),
        sa.Column("requests", sa.BigInteger(), nullable=False),
        sa.Column("errors", sa.BigInteger(), nullable=False),
        sa.Column("prompt_tokens", sa.BigInteger(), nullable=False),
        sa.Column("completion_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cached_tokens", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint(*_KEY),
    )
    postgres = op.get_bind().dialect.name == "postgresql"
    if postgres:
        op.execute(_POSTGRES_FUNCTION)
    for name, body in (_POSTGRES_TRIGGERS if postgres else _SQLITE_TRIGGERS).items():
        op.execute(f"CREATE TRIGGER {name} {body}")
    key = _key("", _postgres_day("") if postgres else _sqlite_day(""))
    positions = ", ".join(str(i + 1) for i in range(len(_KEY)))
    op.execute(
        f"INSERT INTO usage_daily ({_COLUMNS}) SELECT {', '.join(key)}, count(*), "
        f"sum({_ERROR.format(t='')}), sum(prompt_tokens), sum(completion_tokens), sum(cached_tokens) "
        f"FROM usage WHERE shadow_of IS NULL GROUP BY {positions}"
    )


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    for name in _POSTGRES_TRIGGERS if postgres else _SQLITE_TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}" + (" ON usage" if postgres else ""))
    if postgres:
        op.execute("DROP FUNCTION IF EXISTS usage_daily_apply()")
    op.drop_table("usage_daily")
