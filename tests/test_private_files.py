"""The proxy's own files (the SQLite database with its -wal and -shm, the spool, the
journal) hold prompt text when ``database.store_text`` is on: they are created 0600
whatever the umask, and start-up warns about any that others may read."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from router.config import DatabaseConfig, parse_config
from router.ledger.db import private_file_paths, upgrade
from router.ledger.writer import UsageRecorder
from router.ops import cli
from tests.test_accounting import make_row


@pytest.fixture
def loose_umask() -> Iterator[None]:
    old = os.umask(0o022)  # the usual default: new files 0644
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_database_spool_and_journal_are_private_under_a_loose_umask(
    tmp_path: Path, loose_umask: None
) -> None:
    (tmp_path / "data").mkdir()
    url = f"sqlite:///{tmp_path}/data/usage.db"
    config = DatabaseConfig(url=url, spool_path=str(tmp_path / "data" / "spool.jsonl"), flush_interval_s=0.05)

    async def record_one() -> dict[str, int]:
        recorder = UsageRecorder(config)
        await recorder.start()
        try:
            recorder.record(make_row(1))
            # Running, a row written: the database in WAL mode has its -wal and -shm open,
            # and the journal its two files (a clean stop removes them).
            paths = private_file_paths(url, config.spool_path)
            wal, journal = paths[1], paths[4]
            for _ in range(250):
                if wal.exists() and journal.exists():
                    break
                await asyncio.sleep(0.02)
            return {p.name: _mode(p) for p in paths if p.exists()}
        finally:
            await recorder.stop()

    modes = asyncio.run(record_one())
    assert {"usage.db", "usage.db-wal", "usage.db-shm"} <= set(modes), modes
    assert any(n.startswith("spool.journal-") for n in modes), modes
    assert {name: oct(mode) for name, mode in modes.items() if mode != 0o600} == {}


def test_db_upgrade_creates_a_private_file(tmp_path: Path, loose_umask: None) -> None:
    upgrade(f"sqlite:///{tmp_path}/fresh.db")
    assert _mode(tmp_path / "fresh.db") == 0o600


def test_start_warns_about_files_others_can_read(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / "usage.db"
    db.write_bytes(b"")
    db.chmod(0o644)
    spool = tmp_path / "spool.jsonl"
    spool.write_bytes(b"")
    spool.chmod(0o600)
    config = parse_config(
        {
            "database": {"url": f"sqlite:///{db}", "spool_path": str(spool)},
            "backends": {"local": {"kind": "vllm", "base_url": "http://127.0.0.1:9/v1", "model": "m"}},
        },
        env={},
    )
    with caplog.at_level(logging.WARNING, logger="offload"):
        cli._warn_about_open_files(config)
    warned = [r.getMessage() for r in caplog.records if "readable by other local users" in r.getMessage()]
    assert len(warned) == 1 and f"{db} (0644)" in warned[0] and "spool" not in warned[0]
