"""usage: cache writes, and no cached count told apart from zero cache hits; both in the rollup

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01

The report values local tokens as the cloud would have billed them (docs/report.md): cache
reads at the cache-read price, Anthropic's cache writes at the write price. So the row keeps
Anthropic's ``cache_creation_input_tokens`` (``cache_write_tokens``, part of
``prompt_tokens``), and ``cached_tokens`` becomes NULL where nobody counted the cache (vLLM
without ``--enable-prompt-tokens-details`` reports no cached count; an estimated row has
none): the report must say how many tokens it valued without a count, not read 0 hits.

Before this revision a 0 meant either. Rows written by it are taken as they most likely
were: a local row's 0 (vLLM reported no cached count until the recipe asked for it) and an
estimated row's 0 become NULL; a cloud row's 0 stays (the providers always report one).

The rollup gains both sums: ``cache_write_tokens`` and ``uncounted_prompt_tokens`` (the
prompt tokens of rows with a NULL cached count). Its triggers are rebuilt with them (frozen
here, with 0007's rule that shadow and gate rows are not traffic); the new columns start at
0 and the UPDATE above goes through the new triggers, which move the rows it changes into
``uncounted_prompt_tokens``: the rollup is right without a second backfill. Writers wait:
the triggers are dropped and the table altered in this one transaction (on SQLite the
table is copied, which drops its triggers).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels = None
depends_on = None

# Frozen copy of the schema's rules at this revision: never import router.ledger here.
_KEY = ("day", "route", "backend", "intent", "api", "fallback", "fallback_reason")
_SUMS = (
    "requests", "errors", "prompt_tokens", "completion_tokens", "cached_tokens",
    "cache_write_tokens", "uncounted_prompt_tokens",
)  # fmt: skip
_COLUMNS = ", ".join(_KEY + _SUMS)
_ERROR = "CASE WHEN {t}status >= 400 OR {t}error_type IS NOT NULL THEN 1 ELSE 0 END"
_UNCOUNTED = "CASE WHEN {t}cached_tokens IS NULL THEN {t}prompt_tokens ELSE 0 END"
_REAL = "{t}shadow_of IS NULL AND {t}gate_run IS NULL"
_UPSERT = f" ON CONFLICT ({', '.join(_KEY)}) DO UPDATE SET " + ", ".join(
    f"{c} = usage_daily.{c} + excluded.{c}" for c in _SUMS
)
_TRIGGERS = ("usage_daily_insert", "usage_daily_delete", "usage_daily_update", "usage_daily_truncate")


def _values(t: str, day: str, total: str, sign: str) -> list[str]:
    """The rollup row of ``t`` (a row prefix such as ``NEW.``, or ``''`` with ``total``
    ``sum`` over a transition table), added (sign ``''``) or taken out (``'-'``)."""
    text = [f"coalesce({t}{c}, '')" for c in ("route", "backend", "intent", "api")]
    count = "count(*)" if total else "1"
    tokens = [
        f"{t}prompt_tokens",
        f"{t}completion_tokens",
        f"coalesce({t}cached_tokens, 0)",  # NULL: no count; the sum must stay a number
        f"coalesce({t}cache_write_tokens, 0)",
        _UNCOUNTED.format(t=t),
    ]
    sums = [_ERROR.format(t=t), *tokens]
    return [
        day, *text, f"{t}fallback", f"coalesce({t}fallback_reason, '')",
        f"{sign}{count}", *(f"{sign}{total}({s})" for s in sums),
    ]  # fmt: skip


# ------------------------------------------------------------------ SQLite


def _sqlite_fold(t: str, sign: str) -> str:
    # started_at is naive UTC text, "YYYY-MM-DD HH:MM:SS.ffffff".
    values = _values(t, f"substr({t}started_at, 1, 10)", "", sign)
    # "WHERE true"-style: an upsert's SELECT needs a WHERE clause (SQLite's parser).
    return f"INSERT INTO usage_daily ({_COLUMNS}) SELECT {', '.join(values)} WHERE {_REAL.format(t=t)}{_UPSERT};"


_SQLITE_TRIGGERS = {
    "usage_daily_insert": f"AFTER INSERT ON usage BEGIN {_sqlite_fold('NEW.', '')} END",
    "usage_daily_delete": f"AFTER DELETE ON usage BEGIN {_sqlite_fold('OLD.', '-')} END",
    "usage_daily_update": f"AFTER UPDATE ON usage BEGIN {_sqlite_fold('OLD.', '-')} {_sqlite_fold('NEW.', '')} END",
}


# ------------------------------------------------------------------ PostgreSQL


def _postgres_fold(rows: str, sign: str) -> str:
    """One grouped upsert of the transition table ``rows``, in key order (no deadlock)."""
    positions = ", ".join(str(i + 1) for i in range(len(_KEY)))
    values = _values("", "(started_at AT TIME ZONE 'UTC')::date", "sum", sign)
    return (
        f"INSERT INTO usage_daily ({_COLUMNS}) SELECT {', '.join(values)} FROM {rows} "
        f"WHERE {_REAL.format(t='')} GROUP BY {positions} ORDER BY {positions}{_UPSERT};"
    )


_POSTGRES_FUNCTION = f"""
CREATE OR REPLACE FUNCTION usage_daily_apply() RETURNS trigger LANGUAGE plpgsql AS $$
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


def _postgres() -> bool:
    return bool(op.get_bind().dialect.name == "postgresql")


def _drop_triggers() -> None:
    for name in _TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}" + (" ON usage" if _postgres() else ""))


def _create_triggers() -> None:
    if _postgres():
        op.execute(_POSTGRES_FUNCTION)
    for name, body in (_POSTGRES_TRIGGERS if _postgres() else _SQLITE_TRIGGERS).items():
        op.execute(f"CREATE TRIGGER {name} {body}")


def upgrade() -> None:
    _drop_triggers()
    with op.batch_alter_table("usage") as batch:
        batch.add_column(sa.Column("cache_write_tokens", sa.Integer(), nullable=True))
        batch.alter_column("cached_tokens", existing_type=sa.Integer(), nullable=True)
    with op.batch_alter_table("usage_daily") as batch:
        for name in ("cache_write_tokens", "uncounted_prompt_tokens"):
            batch.add_column(sa.Column(name, sa.BigInteger(), nullable=False, server_default="0"))
    _create_triggers()
    op.execute(
        "UPDATE usage SET cached_tokens = NULL WHERE cached_tokens = 0 AND prompt_tokens > 0"
        " AND (route = 'local' OR tokens_estimated)"
    )


def _revision(filename: str) -> ModuleType:
    """An earlier revision's module (its file name is not an import name)."""
    path = Path(__file__).with_name(filename)
    spec = importlib.util.spec_from_file_location(f"_offload_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def downgrade() -> None:
    # A NULL count becomes 0 again (the rollup's cached sums already read it as 0).
    op.execute("UPDATE usage SET cached_tokens = 0 WHERE cached_tokens IS NULL")
    _drop_triggers()
    with op.batch_alter_table("usage") as batch:
        batch.drop_column("cache_write_tokens")
        batch.alter_column("cached_tokens", existing_type=sa.Integer(), nullable=False)
    with op.batch_alter_table("usage_daily") as batch:
        batch.drop_column("uncounted_prompt_tokens")
        batch.drop_column("cache_write_tokens")
    # 0006's triggers with 0007's rule (on PostgreSQL: 0007's function behind 0006's triggers).
    if _postgres():
        for name, body in _revision("0006_usage_daily_rollup.py")._POSTGRES_TRIGGERS.items():
            op.execute(f"CREATE TRIGGER {name} {body}")
    _revision("0007_gate.py")._triggers(gate_aware=True)
