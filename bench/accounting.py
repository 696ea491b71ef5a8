"""Sustained throughput of the usage writer into SQLite and PostgreSQL.

    .venv/bin/python bench/accounting.py [--rows 100000] [--batch-size 500] [--rounds 1]
        [--without-rollup] [--postgres postgresql+psycopg://postgres@127.0.0.1:5432/test]

A producer records rows as fast as the writer keeps up (it only yields while
the queue holds more than a few batches, so nothing spills to the spool) and
the clock stops when the last row is committed. Also prints the cost of one
``record()`` call, the only part that runs on the request path. Each run uses a
fresh database (PostgreSQL: a throw-away schema) migrated to head, so the daily
rollup's triggers (migration 0006) run with every insert; ``--without-rollup``
also times, in the same round, a database whose triggers were dropped: what the
rollup costs the writer. The CPU time of this process per row is the
whole writer on SQLite (the database runs in the process: steadier than rows/s
on a busy machine), the client side only on PostgreSQL. Target: >= 5,000
rows/s on each database.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from router.config import DatabaseConfig  # noqa: E402
from router.ledger import db  # noqa: E402
from router.ledger.models import UsageRow  # noqa: E402
from router.ledger.writer import UsageRecorder  # noqa: E402

INTENTS = ("coding", "tools", "math", "writing")


def make_row(i: int, now: datetime) -> UsageRow:
    return UsageRow(
        request_id=f"bench-{i}",
        started_at=now,
        endpoint="chat",
        client="bench",
        model_requested="auto",
        stream=True,
        status=200,
        intent=INTENTS[i % len(INTENTS)],  # a few rollup rows per batch, as real traffic has
        confidence=0.93,
        decided_route="local",
        decided_backend="local",
        reason="classifier",
        backend="local" if i % 3 else "cloud",
        route="local" if i % 3 else "cloud",
        classifier_version="v1",
        prompt_tokens=1200 + i % 500,
        completion_tokens=300,
        cached_tokens=800,
        latency_ms=812.5,
        ttft_ms=95.0,
    )


async def run(url: str, rows: int, batch_size: int, spool: str) -> tuple[float, float, int, float]:
    cfg = DatabaseConfig(url=url, batch_size=batch_size, spool_path=spool, flush_interval_s=0.2)
    recorder = UsageRecorder(cfg)
    await recorder.start()
    now = datetime.now(UTC)
    prepared = [make_row(i, now) for i in range(rows)]
    record_s = 0.0
    start, cpu = time.perf_counter(), time.process_time()
    for lo in range(0, rows, 1000):
        t = time.perf_counter()
        for row in prepared[lo : lo + 1000]:
            recorder.record(row)
        record_s += time.perf_counter() - t
        while recorder.queue_depth > 4 * batch_size:
            await asyncio.sleep(0.001)
    while recorder.rows_written < rows and recorder.rows_spooled == 0:
        await asyncio.sleep(0.001)
    elapsed = time.perf_counter() - start
    await recorder.stop()
    cpu_us = (time.process_time() - cpu) / rows * 1e6
    return rows / elapsed, record_s / rows * 1e9, recorder.rows_spooled, cpu_us


def report(name: str, result: tuple[float, float, int, float]) -> None:
    rate, ns, spooled, cpu_us = result
    print(
        f"{name:<26} {rate:>10,.0f} rows/s   this process's CPU {cpu_us:5.1f} us/row"
        f"   record() {ns:,.0f} ns/call   spooled {spooled}",
        flush=True,
    )


def drop_rollup_triggers(url: str) -> None:
    """The triggers that keep usage_daily, dropped: the writer as it was before migration 0006."""
    engine = db.make_engine(url, pooled=False)
    try:
        with engine.begin() as conn:
            if engine.dialect.name == "sqlite":
                sql = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'usage'"
                for (name,) in conn.exec_driver_sql(sql).all():
                    conn.exec_driver_sql(f'DROP TRIGGER "{name}"')
            else:
                sql = "SELECT tgname FROM pg_trigger WHERE tgrelid = 'usage'::regclass AND NOT tgisinternal"
                for (name,) in conn.exec_driver_sql(sql).all():
                    conn.exec_driver_sql(f'DROP TRIGGER "{name}" ON usage')
    finally:
        engine.dispose()


@contextmanager
def fresh_database(kind: str, postgres: str | None, tmp: str) -> Iterator[str]:
    """A new, migrated database: an SQLite file, or a PostgreSQL schema dropped afterwards."""
    if kind == "sqlite":
        path = Path(tmp) / f"bench-{uuid.uuid4().hex[:8]}.db"
        url = f"sqlite:///{path}"
        db.upgrade(url)
        yield url
        return
    assert postgres is not None
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(postgres, poolclass=NullPool)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        pg = sa.make_url(postgres).update_query_dict({"options": f"-csearch_path={schema}"})
        url = pg.render_as_string(hide_password=False)
        db.upgrade(url)
        yield url
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--without-rollup",
        action="store_true",
        help="also time each round with the rollup's triggers dropped",
    )
    parser.add_argument(
        "--postgres",
        default=os.environ.get("OFFLOAD_BENCH_POSTGRES_URL") or os.environ.get("OFFLOAD_TEST_POSTGRES_URL"),
        help="PostgreSQL URL (skipped when unset)",
    )
    args = parser.parse_args()
    kinds = ["sqlite", "postgresql"] if args.postgres else ["sqlite"]
    if not args.postgres:
        print("postgresql skipped: pass --postgres URL or set OFFLOAD_BENCH_POSTGRES_URL")
    variants = [True, False] if args.without_rollup else [True]
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for kind in kinds:
                for rollup in variants:  # alternated, so that the machine's load hits both alike
                    with fresh_database(kind, args.postgres, tmp) as url:
                        if not rollup:
                            drop_rollup_triggers(url)
                        spool = f"{tmp}/spool-{uuid.uuid4().hex[:8]}.jsonl"
                        result = asyncio.run(run(url, args.rows, args.batch_size, spool))
                    report(f"{kind}, {'with' if rollup else 'without'} rollup", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
