"""router/ledger/writer.py: the recorder's lifecycle decides what record() does with a row."""

from __future__ import annotations

from pathlib import Path

from router.config import DatabaseConfig
from router.ledger import db
from router.ledger.writer import Phase, UsageRecorder
from tests.test_accounting import cfg, count, make_row


async def test_a_disabled_recorder_drops_rows_and_never_starts() -> None:
    recorder = UsageRecorder(DatabaseConfig(enabled=False))
    await recorder.start()
    recorder.record(make_row(1))
    await recorder.stop()
    assert recorder._phase is Phase.OFF and recorder.queue_depth == 0 and recorder.rows_written == 0


async def test_rows_queue_before_start_are_written_and_after_stop_are_spooled(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    db.upgrade(url)
    recorder = UsageRecorder(cfg(url, tmp_path, flush_interval_s=0.01, journal_interval_s=0.01))
    assert recorder._phase is Phase.NEW
    recorder.record(make_row(1))  # queued: the writer takes it once started
    await recorder.start()
    assert recorder._phase is Phase.RUNNING
    await recorder.stop()
    assert recorder._phase is Phase.STOPPED and count(url) == 1
    recorder.record(make_row(2))  # a request finishing after shutdown: kept on disk
    assert recorder.rows_spooled == 1
    again = UsageRecorder(cfg(url, tmp_path, flush_interval_s=0.01))
    await again.start()
    await again.stop()  # the spool is replayed before a clean stop returns
    assert count(url) == 2
