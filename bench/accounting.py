"""Sustained throughput of the usage writer into SQLite and PostgreSQL.

    .venv/bin/python bench/accounting.py [--rows 100000] [--batch-size 500]
        [--postgres postgresql+psycopg://postgres@127.0.0.1:5432/test]

A producer records rows as fast as the writer keeps up (it only yields while
the queue holds more than a few batches, so nothing spills to the spool) and
the clock stops when the last row is committed. Also prints the cost of one
``record()`` call, the only part that runs on the request path. PostgreSQL
runs in a throw-away schema. Target: >= 5,000 rows/s on each database.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from router import db  # noqa: E402
from router.accounting import UsageRecorder, UsageRow  # noqa: E402
from router.config import DatabaseConfig  # noqa: E402


def make_row(i: int, now: datetime) -> UsageRow:
    return UsageRow(
        request_id=f"bench-{i}",
        started_at=now,
        endpoint="chat",
        client="bench",
        model_requested="auto",
        stream=True,
        status=200,
        intent="coding",
        confidence=0.93,
        decided_route="local",
        decided_backend="local",
        reason="classifier",
        backend="local",
        route="local",
        classifier_version="v1",
        prompt_tokens=1200 + i % 500,
        completion_tokens=300,
        cached_tokens=800,
        latency_ms=812.5,
        ttft_ms=95.0,
    )


async def run(url: str, rows: int, batch_size: int, spool: str) -> tuple[float, float, int]:
    cfg = DatabaseConfig(url=url, batch_size=batch_size, spool_path=spool, flush_interval_s=0.2)
    recorder = UsageRecorder(cfg)
    await recorder.start()
    now = datetime.now(UTC)
    prepared = [make_row(i, now) for i in range(rows)]
    record_s = 0.0
    start = time.perf_counter()
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
    return rows / elapsed, record_s / rows * 1e9, recorder.rows_spooled


def report(name: str, result: tuple[float, float, int]) -> None:
    rate, ns, spooled = result
    print(f"{name:<10} {rate:>10,.0f} rows/s   record() {ns:,.0f} ns/call   spooled {spooled}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument(
        "--postgres",
        default=os.environ.get("OFFLOAD_BENCH_POSTGRES_URL") or os.environ.get("OFFLOAD_TEST_POSTGRES_URL"),
        help="PostgreSQL URL (skipped when unset)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/bench.db"
        report("sqlite", asyncio.run(run(url, args.rows, args.batch_size, f"{tmp}/spool.jsonl")))
        if args.postgres:
            schema = f"bench_{uuid.uuid4().hex[:8]}"
            admin = sa.create_engine(args.postgres, poolclass=NullPool)
            with admin.begin() as conn:
                conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
            try:
                pg = sa.make_url(args.postgres).update_query_dict({"options": f"-csearch_path={schema}"})
                pg_url = pg.render_as_string(hide_password=False)
                db.upgrade(pg_url)
                report(
                    "postgresql",
                    asyncio.run(run(pg_url, args.rows, args.batch_size, f"{tmp}/spool-pg.jsonl")),
                )
            finally:
                with admin.begin() as conn:
                    conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
                admin.dispose()
        else:
            print("postgresql skipped: pass --postgres URL or set OFFLOAD_BENCH_POSTGRES_URL")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
