"""router/ledger/insert.py: one insert interface, its implementation chosen once per engine."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from router.ledger import db
from router.ledger.columns import row_values
from router.ledger.insert import (
    MAX_ROWS_PER_STATEMENT,
    PostgresInserter,
    SQLiteInserter,
    insert_rows,
    inserter_for,
)
from tests.test_accounting import make_row


def test_the_engine_chooses_its_insert() -> None:
    assert isinstance(inserter_for(sa.create_engine("sqlite://")), SQLiteInserter)
    engine = sa.create_engine("postgresql+psycopg://u@127.0.0.1:1/x")  # never connects
    assert isinstance(inserter_for(engine), PostgresInserter)


def test_statement_sizes_bound_sqlite_programs_and_keep_postgres_batches() -> None:
    sqlite = SQLiteInserter()
    assert sqlite.sizes(1000, 500) == [500, 500]
    assert sqlite.sizes(13, 500) == [8, 4, 1]  # powers of two: a dozen distinct programs at most
    assert sum(sqlite.sizes(50_000, 50_000)) == 50_000
    assert max(sqlite.sizes(50_000, 50_000)) <= MAX_ROWS_PER_STATEMENT
    assert PostgresInserter(postgresql.dialect()).sizes(1001, 500) == [500, 500, 1]


def test_sqlite_insert_ignores_known_request_ids(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    db.upgrade(url)
    engine = db.make_engine(url, pooled=False)
    try:
        values = [row_values(make_row(i), store_text=False) for i in range(3)]
        assert insert_rows(engine, values) == 3
        assert insert_rows(engine, values[1:] + [row_values(make_row(3), store_text=False)]) == 1
        with engine.connect() as conn:
            stored = conn.execute(sa.text("SELECT prompt_text, started_at FROM usage ORDER BY id")).all()
        assert len(stored) == 4 and all(text is None for text, _ in stored)
    finally:
        engine.dispose()
