"""Inserting usage rows: one small interface, a SQLite and a PostgreSQL implementation.

:func:`inserter_for` chooses the implementation once, from the engine's dialect; nothing
else asks which database it is. Both insert with one multi-row ``INSERT ... ON CONFLICT
(request_id) DO NOTHING`` per statement, so that replaying a spool is idempotent.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy import Connection, Dialect, Engine

from router.ledger.columns import COLUMNS
from router.ledger.models import usage_table

# SQLite allows 32,766 bind parameters per statement: a batch bigger than this
# many rows is split into several statements (PostgreSQL binds one array per column).
MAX_ROWS_PER_STATEMENT = 30_000 // len(COLUMNS)
_ON_CONFLICT = " ON CONFLICT (request_id) DO NOTHING"


class Inserter(Protocol):
    """How one database takes a batch of rows (column values, made storable)."""

    def sizes(self, n: int, batch_size: int) -> list[int]:
        """Rows per statement for ``n`` rows written ``batch_size`` at a time."""
        ...

    def insert(self, conn: Connection, rows: list[dict[str, Any]]) -> int:
        """Insert ``rows`` (at most one statement's worth); the number actually inserted."""
        ...


class SQLiteInserter:
    """``VALUES (?, ..), (?, ..)`` built by hand, in a dozen distinct sizes at most."""

    def sizes(self, n: int, batch_size: int) -> list[int]:
        return _statement_sizes(n, min(batch_size, MAX_ROWS_PER_STATEMENT))

    def insert(self, conn: Connection, rows: list[dict[str, Any]]) -> int:
        inserted = 0
        at = COLUMNS.index("started_at")
        for start in range(0, len(rows), MAX_ROWS_PER_STATEMENT):
            chunk = rows[start : start + MAX_ROWS_PER_STATEMENT]
            params: list[Any] = []
            for values in chunk:
                params.extend(values[name] for name in COLUMNS)
            for i in range(at, len(params), len(COLUMNS)):
                params[i] = _sqlite_datetime(params[i])
            result = conn.exec_driver_sql(_sqlite_insert_sql(len(chunk)), tuple(params))
            inserted += max(result.rowcount, 0)
        return inserted


class PostgresInserter:
    """One array parameter per column: the statement is the same for any number of rows."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect

    def sizes(self, n: int, batch_size: int) -> list[int]:
        return [min(batch_size, n - start) for start in range(0, n, batch_size)]

    def insert(self, conn: Connection, rows: list[dict[str, Any]]) -> int:
        arrays = tuple([values[name] for values in rows] for name in COLUMNS)
        return max(conn.exec_driver_sql(_postgres_insert_sql(self.dialect), arrays).rowcount, 0)


def inserter_for(engine: Engine) -> Inserter:
    """The insert for ``engine``'s database, chosen once."""
    if engine.dialect.name == "postgresql":
        return PostgresInserter(engine.dialect)
    return SQLiteInserter()


def insert_rows(engine: Engine, rows: list[dict[str, Any]]) -> int:
    """Insert rows in one transaction, ignoring known request_ids; the number inserted.
    (For tools and tests; the writer keeps its inserter.) Runs in a worker thread."""
    if not rows:
        return 0
    with engine.begin() as conn:
        return inserter_for(engine).insert(conn, rows)


@functools.lru_cache(maxsize=32)
def _sqlite_insert_sql(n: int) -> str:
    """``INSERT ... VALUES (?, ..), (?, ..) ON CONFLICT (request_id) DO NOTHING`` for n rows.

    Built by hand: compiling a 500-row ``insert().values([...])`` through
    SQLAlchemy costs ~0.3 s per batch (15,000 bind parameters, never cached),
    which alone would cap the writer near 1,500 rows/s.
    """
    group = "(" + ", ".join(["?"] * len(COLUMNS)) + ")"
    return f'INSERT INTO "usage" ({", ".join(COLUMNS)}) VALUES ' + ", ".join([group] * n) + _ON_CONFLICT


@functools.lru_cache(maxsize=4)
def _postgres_insert_sql(dialect: Dialect) -> str:
    """``INSERT ... SELECT * FROM unnest(%s::type[], ...)``: one parameter per column.

    Still one multi-row INSERT per batch, but a 500-row ``VALUES`` list has
    15,000 placeholders that psycopg re-parses on every call (too long for its
    query cache), which capped PostgreSQL near 4,000 rows/s; column arrays
    keep the statement short and constant.
    """
    casts = ", ".join(f"%s::{usage_table.c[name].type.compile(dialect=dialect)}[]" for name in COLUMNS)
    return f'INSERT INTO "usage" ({", ".join(COLUMNS)}) SELECT * FROM unnest({casts})' + _ON_CONFLICT


def _statement_sizes(n: int, full: int) -> list[int]:
    """Rows per insert for ``n`` rows: ``full`` while they last, then powers of two.

    SQLite compiles one program per distinct row count, and Python's driver keeps up to
    128 of them per connection, each the size of its thousands of parameters. With any
    count allowed, a writer whose batches vary grew by about 0.5 KB a request (+24 % RSS
    over 60,000 requests in the soak); with these sizes there are a dozen programs at
    most. (PostgreSQL's statement is the same for any count: one array per column.)
    """
    sizes = [full] * (n // full)
    rest = n % full
    while rest:
        power = 1 << (rest.bit_length() - 1)
        sizes.append(power)
        rest -= power
    return sizes


def _sqlite_datetime(value: datetime) -> str:
    # The text format SQLAlchemy's SQLite DateTime reads and writes (naive UTC),
    # so that the report's range comparisons on started_at stay string-ordered.
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
