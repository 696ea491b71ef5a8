"""The usage writer: batching, spool on outage and overflow, replay, shutdown."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
import sqlalchemy as sa
from sqlalchemy import event

from router.config import DatabaseConfig
from router.ledger import db
from router.ledger.columns import COLUMNS, row_values
from router.ledger.insert import insert_rows
from router.ledger.models import UsageRow
from router.ledger.writer import UsageRecorder

T0 = datetime(2026, 11, 5, 12, 0, tzinfo=UTC)


def make_row(i: int, **kw: Any) -> UsageRow:
    fields: dict[str, Any] = {
        "request_id": f"req-{i}",
        "started_at": T0 + timedelta(seconds=i),
        "endpoint": "chat",
        "client": "ci-bot",
        "model_requested": "local",
        "stream": i % 2 == 0,
        "status": 200,
        "route": "local",
        "backend": "local",
        "prompt_tokens": 100 + i,
        "completion_tokens": 10,
        "prompt_text": "secret prompt",
        "completion_text": "secret answer",
    }
    fields.update(kw)
    return UsageRow(**fields)


def cfg(url: str, tmp_path: Path, **kw: Any) -> DatabaseConfig:
    base: dict[str, Any] = {"url": url, "spool_path": str(tmp_path / "spool" / "usage.jsonl")}
    base.update(kw)
    return DatabaseConfig(**base)


def count(url: str) -> int:
    engine = db.make_engine(url, pooled=False)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text("SELECT COUNT(DISTINCT request_id) FROM usage")).scalar_one()
    finally:
        engine.dispose()


def total(url: str) -> int:
    engine = db.make_engine(url, pooled=False)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text("SELECT COUNT(*) FROM usage")).scalar_one()
    finally:
        engine.dispose()


def spool_files(tmp_path: Path) -> list[Path]:
    d = tmp_path / "spool"
    return sorted(p for p in d.glob("usage.jsonl*") if not p.name.endswith(".rejected")) if d.exists() else []


async def wait_for(cond: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not cond():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


# ---------------------------------------------------------------- happy path


async def test_rows_recorded_equal_rows_in_db(db_url: str, tmp_path: Path) -> None:
    db.upgrade(db_url)
    recorder = UsageRecorder(cfg(db_url, tmp_path, batch_size=100, flush_interval_s=0.05))
    await recorder.start()
    for i in range(1234):
        recorder.record(make_row(i))
        if i % 97 == 0:
            await asyncio.sleep(0.001)  # rows arrive while batches are written
    await recorder.stop()
    assert total(db_url) == count(db_url) == 1234
    assert recorder.rows_written == 1234
    assert recorder.rows_spooled == 0 and recorder.queue_depth == 0
    assert spool_files(tmp_path) == []


async def test_batches_are_single_multi_row_inserts(db_url: str, tmp_path: Path) -> None:
    db.upgrade(db_url)
    recorder = UsageRecorder(cfg(db_url, tmp_path, batch_size=250, flush_interval_s=30))
    await recorder.start()
    inserts: list[tuple[str, Any, bool]] = []

    @event.listens_for(recorder.engine, "before_cursor_execute")
    def spy(conn: Any, cursor: Any, statement: str, params: Any, context: Any, executemany: bool) -> None:
        if statement.lstrip().upper().startswith("INSERT"):
            inserts.append((statement, params, executemany))

    for i in range(1000):  # all queued before the writer runs: exactly 4 full batches
        recorder.record(make_row(i))
    await wait_for(lambda: recorder.rows_written == 1000)
    await recorder.stop()
    assert len(inserts) == 4
    for statement, params, executemany in inserts:
        assert not executemany  # one statement per batch, not a driver-level loop
        if db_url.startswith("sqlite"):
            assert statement.count("), (") + 1 == 250  # 250 VALUES groups
            assert len(params) == 250 * len(COLUMNS)
        else:  # INSERT ... SELECT * FROM unnest(<one array per column>)
            assert "unnest(" in statement
            assert len(params) == len(COLUMNS) and {len(a) for a in params} == {250}
    assert total(db_url) == 1000


async def test_flush_interval_writes_partial_batches(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    recorder = UsageRecorder(cfg(url, tmp_path, batch_size=500, flush_interval_s=0.05))
    await recorder.start()  # SQLite: schema created automatically
    recorder.record(make_row(1))
    await wait_for(lambda: recorder.rows_written == 1, timeout=5)
    assert recorder.queue_depth == 0
    await recorder.stop()


@pytest.mark.parametrize("store_text", [False, True])
async def test_text_only_stored_when_enabled(tmp_path: Path, store_text: bool) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    recorder = UsageRecorder(cfg(url, tmp_path, store_text=store_text))
    await recorder.start()
    recorder.record(make_row(1))
    await recorder.stop()
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        got = conn.execute(sa.text("SELECT prompt_text, completion_text, started_at FROM usage")).one()
    engine.dispose()
    assert tuple(got[:2]) == (("secret prompt", "secret answer") if store_text else (None, None))


async def test_disabled_is_a_noop(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    recorder = UsageRecorder(cfg(url, tmp_path, enabled=False))
    await recorder.start()
    recorder.record(make_row(1))
    await recorder.stop()
    assert recorder.queue_depth == recorder.rows_written == recorder.rows_spooled == 0
    assert not (tmp_path / "usage.db").exists() and spool_files(tmp_path) == []


async def test_record_never_raises_and_a_bad_row_costs_only_itself(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    recorder = UsageRecorder(cfg(url, tmp_path, flush_interval_s=0.05))
    await recorder.start()
    recorder.record(make_row(1))
    recorder.record(make_row(2, started_at=None))  # a proxy bug: must not take row 1 with it
    recorder.record(make_row(3))
    await recorder.stop()
    assert total(url) == 2 and recorder.rows_lost == 1


async def test_record_after_stop_is_spooled_and_replayed_next_start(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    recorder = UsageRecorder(cfg(url, tmp_path))
    await recorder.start()
    await recorder.stop()
    recorder.record(make_row(7))  # a late request finishing during shutdown
    assert recorder.rows_spooled == 1 and spool_files(tmp_path)
    again = UsageRecorder(cfg(url, tmp_path))
    await again.start()
    await again.stop()
    assert total(url) == 1 and spool_files(tmp_path) == []


async def test_slow_database_never_blocks_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from router.ledger.insert import SQLiteInserter

    real_insert = SQLiteInserter.insert

    def slow_insert(self: SQLiteInserter, conn: Any, rows: list[dict[str, Any]]) -> int:
        time.sleep(0.3)  # a database that takes its time, in the worker thread
        return real_insert(self, conn, rows)

    monkeypatch.setattr(SQLiteInserter, "insert", slow_insert)
    url = f"sqlite:///{tmp_path}/usage.db"
    recorder = UsageRecorder(cfg(url, tmp_path, batch_size=10, flush_interval_s=0.01))
    await recorder.start()
    worst = 0.0
    for i in range(100):
        t = time.perf_counter()
        recorder.record(make_row(i))
        await asyncio.sleep(0.005)
        worst = max(worst, time.perf_counter() - t)
    await recorder.stop()
    assert worst < 0.28  # never waited for a 0.3 s insert (a blocked loop would wait >= 0.3 s)
    assert total(url) == 100


# ---------------------------------------------------------------- overflow


async def test_queue_overflow_spills_to_spool_without_loss(db_url: str, tmp_path: Path) -> None:
    db.upgrade(db_url)
    recorder = UsageRecorder(cfg(db_url, tmp_path, queue_max=100, batch_size=50, flush_interval_s=0.05))
    await recorder.start()
    for i in range(1000):  # a burst with no await: the queue cannot drain meanwhile
        recorder.record(make_row(i))
    assert recorder.queue_depth == 1000  # 100 queued + 900 waiting for the spill task
    await wait_for(lambda: recorder.rows_spooled >= 900)
    await recorder.stop()
    assert recorder.rows_spooled == 900
    assert total(db_url) == count(db_url) == 1000
    assert spool_files(tmp_path) == []  # replayed and removed once the DB took the rows


# ---------------------------------------------------------------- outages


async def test_sqlite_unreachable_then_back(tmp_path: Path) -> None:
    missing = tmp_path / "not-yet"  # a directory that does not exist: every connect fails
    url = f"sqlite:///{missing}/usage.db"
    recorder = UsageRecorder(cfg(url, tmp_path, batch_size=20, flush_interval_s=0.02), retry_s=0.05)
    await recorder.start()  # must not raise: the proxy serves while the DB is away
    for i in range(300):
        recorder.record(make_row(i))
        if i % 10 == 0:
            await asyncio.sleep(0.005)
    await wait_for(lambda: recorder.rows_spooled == 300)
    assert recorder.rows_written == 0 and spool_files(tmp_path)

    missing.mkdir()  # the database is back (and gets its schema automatically)
    for i in range(300, 500):
        recorder.record(make_row(i))
        if i % 10 == 0:
            await asyncio.sleep(0.005)
    await wait_for(lambda: recorder.rows_written == 500 and not spool_files(tmp_path))
    await recorder.stop()
    assert total(url) == count(url) == 500


class TcpProxy:
    """A stoppable TCP forwarder in front of PostgreSQL, to simulate an outage."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.target_port = host, port
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._stopped = False

    async def start(self) -> None:
        self._stopped = False
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._stopped = True
        self._server.close()
        for w in self._writers:
            w.transport.abort()  # cut live connections like a network failure
        self._writers.clear()
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.target_port)
        except OSError:
            writer.transport.abort()
            return
        if self._stopped:
            # Accepted just before stop() and connected just after: it must not
            # survive the outage, or the database would never look down.
            writer.transport.abort()
            up_writer.transport.abort()
            return
        self._writers.update({writer, up_writer})

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (OSError, ConnectionError):
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


async def test_postgres_outage_then_back(pg_url: str, tmp_path: Path) -> None:
    db.upgrade(pg_url)
    real = sa.make_url(pg_url)
    proxy = TcpProxy(real.host or "127.0.0.1", real.port or 5432)
    await proxy.start()
    via_proxy = real.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    recorder = UsageRecorder(cfg(via_proxy, tmp_path, batch_size=25, flush_interval_s=0.02), retry_s=0.1)
    await recorder.start()
    for i in range(200):
        recorder.record(make_row(i))
    await wait_for(lambda: recorder.rows_written == 200)

    await proxy.stop()  # outage: live connections cut, new ones refused
    for i in range(200, 500):
        recorder.record(make_row(i))
        if i % 10 == 0:
            await asyncio.sleep(0.005)
    await wait_for(lambda: recorder.rows_spooled == 300)
    assert spool_files(tmp_path)

    await proxy.start()  # same port: the database is back
    for i in range(500, 600):
        recorder.record(make_row(i))
        if i % 10 == 0:
            await asyncio.sleep(0.005)
    await wait_for(lambda: recorder.rows_written == 600 and not spool_files(tmp_path))
    await recorder.stop()
    await proxy.stop()
    assert total(pg_url) == count(pg_url) == 600


async def test_postgres_unreachable_at_start(pg_url: str, tmp_path: Path) -> None:
    """The proxy starts while PostgreSQL is away; the schema is checked once it answers."""
    db.upgrade(pg_url)
    real = sa.make_url(pg_url)
    proxy = TcpProxy(real.host or "127.0.0.1", real.port or 5432)
    await proxy.start()
    await proxy.stop()  # keep its port, refuse connections
    via_proxy = real.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    recorder = UsageRecorder(cfg(via_proxy, tmp_path, batch_size=10, flush_interval_s=0.02), retry_s=0.1)
    await recorder.start()  # must not raise
    for i in range(50):
        recorder.record(make_row(i))
    await wait_for(lambda: recorder.rows_spooled == 50)
    await proxy.start()
    await wait_for(lambda: recorder.rows_written == 50 and not spool_files(tmp_path))
    await recorder.stop()
    await proxy.stop()
    assert total(pg_url) == 50


# ---------------------------------------------------------------- replay


async def test_replay_is_idempotent(db_url: str, tmp_path: Path) -> None:
    """A crash mid-replay leaves rows both in the DB and in the spool: none doubles."""
    db.upgrade(db_url)
    engine = db.make_engine(db_url, pooled=False)
    insert_rows(engine, [row_values(make_row(i), False) for i in range(50)])
    engine.dispose()
    spool = tmp_path / "spool"
    spool.mkdir()
    lines = [orjson.dumps(row_values(make_row(i), False)) for i in range(30, 80)]
    (spool / "usage.jsonl.replay").write_bytes(b"\n".join(lines[:25]) + b"\n")  # interrupted replay
    (spool / "usage.jsonl").write_bytes(b"\n".join(lines[25:]) + b"\n{torn")  # + a torn last line
    recorder = UsageRecorder(cfg(db_url, tmp_path))
    await recorder.start()
    await recorder.stop()
    assert total(db_url) == count(db_url) == 80
    assert recorder.rows_written == 30  # only the rows the DB did not have
    assert spool_files(tmp_path) == []
    assert (spool / "usage.jsonl.rejected").read_bytes() == b"{torn\n"
