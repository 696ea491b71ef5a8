"""Issue 13, items 2, 3, 8 and 9: no usage row lost to a hostile value, an exhausted
machine or a kill, and no request content in any log line.

The proxy tests run the real HTTP proxy on real sockets with a real SQLite or
PostgreSQL (``db_url``); the descriptor tests run the writer in a subprocess
under a real ``RLIMIT_NOFILE`` with every descriptor taken.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import sqlalchemy as sa

from router.config import DatabaseConfig
from router.ledger import db
from router.ledger.columns import SHORT_TEXT_MAX, row_values
from router.ledger.models import UsageRow
from router.ledger.writer import UsageRecorder
from tests.harness import USER, ProxyServer, make_config, wait_until

ROOT = Path(__file__).resolve().parent.parent
SECRET_PROMPT = "the-secret-prompt-4711"


def db_config(url: str, tmp_path: Path, **kw: Any) -> DatabaseConfig:
    base: dict[str, Any] = {
        "url": url,
        "spool_path": str(tmp_path / "spool" / "usage.jsonl"),
        "batch_size": 50,
        "flush_interval_s": 0.05,
    }
    return DatabaseConfig(**{**base, **kw})


def stored(url: str, where: str = "") -> list[dict[str, Any]]:
    engine = db.make_engine(url, pooled=False)
    try:
        with engine.connect() as conn:
            return [dict(r) for r in conn.execute(sa.text(f"SELECT * FROM usage {where}")).mappings()]
    finally:
        engine.dispose()


def row(i: int, **kw: Any) -> UsageRow:
    fields: dict[str, Any] = {
        "request_id": f"req-{i}",
        "started_at": datetime(2026, 11, 5, 12, 0, tzinfo=UTC),
        "endpoint": "chat",
        "client": "ci",
        "model_requested": "local",
        "stream": False,
        "status": 200,
        "prompt_text": SECRET_PROMPT,
    }
    return UsageRow(**{**fields, **kw})


async def until(predicate: Any, timeout: float = 20.0) -> None:
    assert await asyncio.to_thread(wait_until, predicate, timeout), "condition not met in time"


# ------------------------------------------------------------ 3. unstorable text


async def test_every_text_field_is_storable_on_both_databases(db_url: str, tmp_path: Path) -> None:
    """NUL, lone surrogates, megabyte model names, 64-bit counts, NaN: every row lands."""
    db.upgrade(db_url)
    recorder = UsageRecorder(db_config(db_url, tmp_path, store_text=True))
    await recorder.start()
    recorder.record(row(1, model_requested="lo\x00cal", prompt_text="a\x00b", completion_text="c\ud800d"))
    recorder.record(row(2, model_requested="m" * 1_000_000, client="bad\udfffname", reason="x\x00" * 10))
    recorder.record(row(3, prompt_tokens=2**40, completion_tokens=-(2**40), latency_ms=float("nan")))
    recorder.record(row(4, ttft_ms=float("inf"), confidence=float("-inf"), error_type="\x00"))
    await recorder.stop()
    got = {r["request_id"]: r for r in stored(db_url)}
    assert sorted(got) == ["req-1", "req-2", "req-3", "req-4"]
    assert recorder.rows_rejected == recorder.rows_lost == 0
    assert got["req-1"]["model_requested"] == "local" and got["req-1"]["prompt_text"] == "ab"
    assert got["req-1"]["completion_text"] == "c?d"
    assert got["req-2"]["model_requested"] == "m" * SHORT_TEXT_MAX and got["req-2"]["client"] == "bad?name"
    assert got["req-3"]["prompt_tokens"] == 2**31 - 1 and got["req-3"]["latency_ms"] == 0.0
    assert got["req-4"]["ttft_ms"] is None and got["req-4"]["error_type"] == ""


def test_a_chat_request_whose_model_holds_nul_is_served_and_stored(db_url, tmp_path, local_fake, cloud_fake):
    """Through the real proxy: before, PostgreSQL refused the row and it sat in
    spool.jsonl.rejected, uncounted (1,000 of 1,000 such requests were missing)."""
    db.upgrade(db_url)
    recorder = UsageRecorder(db_config(db_url, tmp_path, store_text=True), retry_s=0.1)
    server = ProxyServer(make_config(local_fake.url, cloud_fake.url), recorder=recorder)
    statuses = []
    try:
        for model in ("loc\u0000al", "auto\u0000", "\u0000" * 3):
            body = {"model": model, "messages": [{"role": "user", "content": "nul \u0000 inside"}]}
            statuses.append(
                httpx.post(server.base_url + "/chat/completions", json=body, timeout=30).status_code
            )
    finally:
        server.stop()
    assert statuses == [200, 200, 200]  # an unknown model takes the default route
    rows = stored(db_url)
    assert len(rows) == len(statuses), (statuses, rows)  # every request has its row, answered or not
    for r in rows:
        assert "\x00" not in (r["model_requested"] or "") + (r["prompt_text"] or "")
    assert recorder.rows_rejected == recorder.rows_lost == 0
    assert not (tmp_path / "spool" / "usage.jsonl.rejected").exists()


async def test_many_refused_rows_make_one_log_line(
    pg_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """455 rows PostgreSQL refuses (a hand-edited spool) are kept and counted, and the log
    says so in a summary, not in 455 ERROR lines."""
    db.upgrade(pg_url)
    spool = tmp_path / "spool"
    spool.mkdir()
    bad = [orjson.dumps({**row_values(row(i), False), "status": "not-a-number"}) for i in range(455)]
    (spool / "usage.jsonl").write_bytes(b"\n".join([orjson.dumps(row_values(row(999), False)), *bad]))
    recorder = UsageRecorder(db_config(pg_url, tmp_path))
    with caplog.at_level(logging.ERROR, logger="offload"):
        await recorder.start()
        await recorder.stop()
    assert len(stored(pg_url)) == 1 and recorder.rows_rejected == 455
    assert len((spool / "usage.jsonl.rejected").read_bytes().splitlines()) == 455
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert 1 <= len(errors) <= 3, errors[:5]  # one per batch the database refused
    assert sum(int(m.split()[0]) for m in errors if "refused by the database" in m) == 455


async def test_rows_the_database_still_refuses_are_counted_and_kept(pg_url: str, tmp_path: Path) -> None:
    """A spool line PostgreSQL refuses even after sanitising (a hand-edited spool): counted
    in offload_accounting_rows_rejected_total, kept for a human, the others stored."""
    db.upgrade(pg_url)
    spool = tmp_path / "spool"
    spool.mkdir()
    good = [orjson.dumps(row_values(row(i), False)) for i in range(3)]
    bad = orjson.dumps({**row_values(row(9), False), "status": "not-a-number"})
    (spool / "usage.jsonl").write_bytes(b"\n".join([good[0], bad, good[1], good[2], b"{torn"]))
    recorder = UsageRecorder(db_config(pg_url, tmp_path))
    await recorder.start()
    await recorder.stop()
    assert len(stored(pg_url)) == 3
    assert recorder.rows_rejected == 2 and recorder.rows_lost == 0  # the refused row and the torn line
    kept = (spool / "usage.jsonl.rejected").read_bytes().splitlines()
    assert len(kept) == 2 and b"{torn" in kept and any(b"not-a-number" in line for line in kept)
    from router.config import parse_config
    from router.edge.metrics import Metrics
    from router.forward.backends import Pool

    config = parse_config(
        {"backends": {"local": {"kind": "vllm", "base_url": "http://127.0.0.1:9/v1", "model": "m"}}}
    )
    assert b"offload_accounting_rows_rejected_total 2.0" in Metrics(Pool(config), recorder).render()


# ------------------------------------------------------------ 9. no content in logs


async def test_database_errors_are_logged_by_type_and_count_only(
    db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The table vanishes under the writer (statement-level errors, whose SQLAlchemy text
    quotes every parameter): the log names the error, never the prompt."""
    db.upgrade(db_url)
    recorder = UsageRecorder(db_config(db_url, tmp_path, store_text=True), retry_s=0.1)
    await recorder.start()
    engine = db.make_engine(db_url, pooled=False)
    with engine.begin() as conn:
        conn.exec_driver_sql('ALTER TABLE "usage" RENAME TO usage_gone')
    caplog.set_level(logging.DEBUG)
    for i in range(120):
        recorder.record(row(i, completion_text=SECRET_PROMPT + "-answer"))
    await until(lambda: recorder.rows_spooled == 120)
    with engine.begin() as conn:
        conn.exec_driver_sql('ALTER TABLE usage_gone RENAME TO "usage"')
    await until(lambda: recorder.rows_written == 120)
    await recorder.stop()
    engine.dispose()
    assert len(stored(db_url)) == 120
    text = caplog.text  # messages and any traceback
    assert SECRET_PROMPT not in text
    assert "INSERT" not in text and "parameters" not in text
    assert any("usage database unavailable" in r.getMessage() for r in caplog.records)
    assert max(len(r.getMessage()) for r in caplog.records) < 300


# ------------------------------------------------------------ 2. no descriptor left

# Runs in a subprocess: the limit and the exhaustion are real, and the test process keeps its own.
_EXHAUSTED = textwrap.dedent(
    """
    import asyncio, json, os, resource, sys
    from datetime import UTC, datetime
    resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))
    from router.ledger.writer import UsageRecorder
    from router.ledger.models import UsageRow
    from router.config import DatabaseConfig

    async def main():
        url, spool, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
        recorder = UsageRecorder(
            DatabaseConfig(url=url, spool_path=spool, batch_size=40, flush_interval_s=0.05), retry_s=0.05
        )
        await recorder.start()
        held = []
        try:
            while True:
                held.append(os.open(os.devnull, os.O_RDONLY))
        except OSError as exc:
            assert exc.errno == 24, exc  # EMFILE: every descriptor is taken
        for i in range(n):
            recorder.record(UsageRow(
                request_id=f"req-{i}", started_at=datetime.now(UTC), endpoint="chat",
                client="c", model_requested="m", stream=False, status=200,
            ))
            if i % 25 == 0:
                await asyncio.sleep(0.02)
        await asyncio.sleep(0.5)
        await recorder.stop()  # still without a free descriptor
        for fd in held:
            os.close(fd)
        print(json.dumps({
            "written": recorder.rows_written, "spooled": recorder.rows_spooled,
            "lost": recorder.rows_lost, "held": len(held),
        }))

    asyncio.run(main())
    """
)


def exhausted(url: str, spool: Path, n: int) -> dict[str, int]:
    result = subprocess.run(
        [sys.executable, "-c", _EXHAUSTED, url, str(spool), str(n)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    counts = json.loads(result.stdout.strip().splitlines()[-1])
    assert counts["held"] > 0
    return counts


def test_rows_reach_the_database_with_no_descriptor_left(db_url: str, tmp_path: Path) -> None:
    """The writer's connection was opened at start: inserting needs no new descriptor."""
    db.upgrade(db_url)
    counts = exhausted(db_url, tmp_path / "spool.jsonl", 300)
    assert counts == {**counts, "written": 300, "spooled": 0, "lost": 0}
    assert len(stored(db_url)) == 300


async def test_rows_are_spooled_with_no_descriptor_left_then_replayed(tmp_path: Path) -> None:
    """The database is away and no descriptor is free: the spool's was opened at start.
    (Before: ``usage spool ... not writable: 300 rows lost``.)"""
    missing = tmp_path / "not-yet"
    url = f"sqlite:///{missing}/usage.db"
    counts = exhausted(url, tmp_path / "spool.jsonl", 300)
    assert counts == {**counts, "written": 0, "spooled": 300, "lost": 0}
    missing.mkdir()  # the database is back: the next start replays the spool
    recorder = UsageRecorder(DatabaseConfig(url=url, spool_path=str(tmp_path / "spool.jsonl")))
    await recorder.start()
    await recorder.stop()
    assert recorder.rows_written == 300 and len(stored(url)) == 300
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-yet"]  # spool, spare and journal gone


def test_rows_lost_are_a_metric(tmp_path: Path, local_fake, cloud_fake) -> None:
    """Database away and spool unwritable (its directory is a file): the request is still
    served and /metrics says one row is gone (alerted on: OffloadAccountingRowsLost)."""
    (tmp_path / "blocker").write_text("a file where the spool directory should be")
    config = DatabaseConfig(
        url=f"sqlite:///{tmp_path}/missing/usage.db", spool_path=str(tmp_path / "blocker" / "spool.jsonl")
    )
    server = ProxyServer(make_config(local_fake.url, cloud_fake.url), recorder=UsageRecorder(config))
    try:
        assert httpx.post(
            server.base_url + "/chat/completions", json={"model": "local", "messages": USER}
        ).is_success
        assert wait_until(lambda: "offload_accounting_rows_lost_total 1.0" in server.get("/metrics").text, 10)
        assert "offload_accounting_rows_rejected_total 0.0" in server.get("/metrics").text
    finally:
        server.stop()


# ------------------------------------------------------------ 8. SIGKILL


async def test_rows_are_journaled_before_the_flush_and_the_journal_emptied_after(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    config = db_config(url, tmp_path, flush_interval_s=30, batch_size=10_000, journal_interval_s=0.05)
    recorder = UsageRecorder(config)
    await recorder.start()
    for i in range(100):
        recorder.record(row(i))
    journals = [tmp_path / "spool" / "usage.journal-0", tmp_path / "spool" / "usage.journal-1"]
    await until(lambda: sum(len(p.read_bytes().splitlines()) for p in journals) == 100, 5)
    assert recorder.rows_written == 0 and stored(url) == []  # on disk, not in SQL yet
    await recorder.stop()
    assert len(stored(url)) == 100 and not any(p.exists() for p in journals)


async def test_a_killed_process_journal_is_replayed_at_start(db_url: str, tmp_path: Path) -> None:
    db.upgrade(db_url)
    spool = tmp_path / "spool"
    spool.mkdir()
    lines = [orjson.dumps(row_values(row(i), False)) for i in range(30)]
    (spool / "usage.journal-0").write_bytes(b"\n".join(lines[:10]) + b"\n")
    (spool / "usage.journal-1").write_bytes(b"\n".join(lines[10:]) + b"\n" + b'{"request_id": "tor')
    recorder = UsageRecorder(db_config(db_url, tmp_path))
    await recorder.start()
    await recorder.stop()
    assert recorder.rows_recovered == 31 and recorder.rows_written == 30 and recorder.rows_rejected == 1
    assert len(stored(db_url)) == 30
    assert sorted(p.name for p in spool.iterdir()) == ["usage.jsonl.rejected"]


def _serve(config: Path, port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "router.ops.cli", "serve", "--config", str(config), "--port", str(port)],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def healthy() -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return proc.poll() is not None

    assert wait_until(healthy, timeout=30) and proc.poll() is None
    return proc


def test_sigkill_under_load_loses_at_most_the_journal_interval(
    tmp_path: Path, local_fake, cloud_fake
) -> None:
    """A real ``offload serve`` killed with SIGKILL under load, then restarted: the rows of
    every answered request are in SQL, but for those of the last journal interval
    (docs/operations.md). The writer is set never to flush on its own (5 s, 100,000
    rows), so before the journal every row of the run was lost."""
    import threading
    import time

    import yaml

    from tests.harness import free_port

    interval = 0.05
    config = tmp_path / "router.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "database": {
                    "url": f"sqlite:///{tmp_path / 'usage.db'}",
                    "spool_path": str(tmp_path / "spool.jsonl"),
                    "flush_interval_s": 5,
                    "batch_size": 100_000,
                    "journal_interval_s": interval,
                },
                "backends": {"local": {"kind": "vllm", "base_url": local_fake.url, "model": "m"}},
            }
        )
    )
    port = free_port()
    proc = _serve(config, port)
    answered = 0
    lock = threading.Lock()
    stop = threading.Event()

    def client() -> None:
        nonlocal answered
        body = {"model": "local", "messages": USER}
        with httpx.Client(timeout=10) as http:
            while not stop.is_set():
                try:
                    ok = (
                        http.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body).status_code
                        == 200
                    )
                except httpx.HTTPError:
                    return  # the kill
                if ok and not stop.is_set():
                    with lock:
                        answered += 1

    threads = [threading.Thread(target=client) for _ in range(8)]
    t0 = time.monotonic()
    for thread in threads:
        thread.start()
    time.sleep(2.0)
    with lock:  # no answer is counted after this point
        stop.set()
        proc.kill()
        elapsed = time.monotonic() - t0
        counted = answered
    proc.wait(10)
    for thread in threads:
        thread.join(15)
    assert counted > 100, counted

    restarted = _serve(config, port)  # moves the journal to the spool and replays it
    restarted.terminate()
    assert restarted.wait(30) == 0
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'usage.db'}")
    with engine.connect() as conn:
        rows = conn.execute(sa.text('SELECT count(*) FROM "usage"')).scalar_one()
    engine.dispose()
    rate = counted / elapsed
    # The documented bound: the rows of the last journal interval, plus those finishing
    # while one journal write is under way (3 intervals of slack for a loaded machine).
    bound = rate * 3 * interval + 5
    assert rows >= counted - bound, f"{rows} rows for {counted} answered requests (bound {bound:.0f})"


async def test_a_locked_table_never_holds_rows_or_shutdown_hostage(pg_url: str, tmp_path: Path) -> None:
    """LOCK TABLE usage held by someone else for as long as it takes: the writer's inserts
    give up after database.lock_timeout_s, its rows go to the spool, and stop() returns
    (before: stop() waited the whole 60 s lock, past systemd's 45 s kill)."""
    db.upgrade(pg_url)
    locker = sa.create_engine(pg_url, poolclass=sa.pool.NullPool)
    conn = locker.connect()
    trans = conn.begin()
    conn.execute(sa.text("LOCK TABLE usage IN ACCESS EXCLUSIVE MODE"))  # held until the end
    try:
        recorder = UsageRecorder(db_config(pg_url, tmp_path, lock_timeout_s=0.5, statement_timeout_s=2))
        await asyncio.wait_for(recorder.start(), 30)
        for i in range(120):
            recorder.record(row(i))
        # A guard against hanging, not a timing assertion: with the lock never released,
        # only the timeouts let stop() return at all.
        await asyncio.wait_for(recorder.stop(), 30)
        assert recorder.rows_lost == 0 and recorder.rows_written == 0
        assert recorder.rows_spooled == 120
    finally:
        trans.rollback()
        conn.close()
        locker.dispose()
    again = UsageRecorder(db_config(pg_url, tmp_path))  # the table is free: the spool replays
    await again.start()
    await again.stop()
    assert len(stored(pg_url)) == 120
