"""The writer's far side: SQL while the database answers, the spool while it does not.

:class:`RowStore` holds the one engine and the insert chosen for its database (once, at
connect), notices outages (and stops trying for ``retry_s`` after each failure), spools what
SQL would not take, replays the spool once the database is back, and keeps the one set of
counters the metrics read (:class:`Counts`). Every method but :meth:`maybe_replay` runs in a
worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import DataError, IntegrityError

from router.config import DatabaseConfig
from router.ledger.columns import row_values
from router.ledger.db import SchemaOutOfDate, describe_error, ensure_schema, make_engine
from router.ledger.files import line, release_heap
from router.ledger.insert import Inserter, inserter_for
from router.ledger.models import UsageRow
from router.ledger.refusals import RefusalLog
from router.ledger.spool import Spool

log = logging.getLogger("offload.accounting")


class Counts:
    """Rows written, spooled, lost and rejected since start; updated from worker threads."""

    def __init__(self) -> None:
        self.written = self.spooled = self.lost = self.rejected = 0
        self._lock = threading.Lock()

    def add(self, *, written: int = 0, spooled: int = 0, lost: int = 0, rejected: int = 0) -> None:
        with self._lock:
            self.written += written
            self.spooled += spooled
            self.lost += lost
            self.rejected += rejected


class RowStore:
    """Rows to SQL, else to the spool; the spool back to SQL once the database answers."""

    def __init__(self, config: DatabaseConfig, spool: Spool, counts: Counts, retry_s: float) -> None:
        self.config = config
        self.spool = spool
        self.counts = counts
        self.retry_s = retry_s
        self.engine: Engine | None = None
        self._insert: Inserter | None = None  # chosen once the engine exists
        self._schema_checked = False
        self._down_until = 0.0  # monotonic time before which the database is not tried
        self._outage_logged = False
        self.refusals = RefusalLog(spool.rejected_path)
        # "The spool may hold rows": saves a file-system check per batch. True at start so
        # that a spool left by an earlier run is replayed.
        self._spool_maybe = True

    def open(self) -> None:
        """Worker thread: the engine, the schema checked and one pooled connection opened
        (inserting needs no new descriptor while it stays up). An unreachable database is an
        outage (rows are spooled); a reachable PostgreSQL at the wrong revision raises."""
        timeouts = (self.config.lock_timeout_s, self.config.statement_timeout_s)
        self.engine = make_engine(self.config.url, write_timeouts=timeouts)
        self._insert = inserter_for(self.engine)
        try:
            self._connect()
        except SchemaOutOfDate:
            raise
        except Exception as exc:
            self._mark_down(exc)

    def close(self) -> None:
        self.refusals.flush()
        if self.engine is not None:
            self.engine.dispose()

    def _connect(self) -> None:
        assert self.engine is not None
        if not self._schema_checked:
            ensure_schema(self.config.url)
            self._schema_checked = True
        with self.engine.connect() as conn:
            conn.exec_driver_sql('SELECT 1 FROM "usage" LIMIT 1')  # SQLite: opens -wal and -shm too

    # ------------------------------------------------------------ storing

    def store(self, values: list[dict[str, Any]]) -> None:
        """Insert in statements of ``batch_size`` rows; from the first failure on, spool."""
        done = 0
        if self._insert is not None and self._available():
            try:
                for size in self._insert.sizes(len(values), self.config.batch_size):
                    self.counts.add(written=self._insert_batch(values[done : done + size]))
                    done += size
            except Exception as exc:
                self._mark_down(exc)
            else:
                self._mark_up()
        if done < len(values):
            self.spool_values(values[done:])

    def values(self, rows: Sequence[UsageRow] | Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Column values, made storable, dropping (counted, logged) rows too malformed to store."""
        values = []
        for r in rows:
            try:
                values.append(row_values(r, self.config.store_text))
            except Exception as exc:
                log.error("usage row malformed, lost: %s", describe_error(exc))
                self.counts.add(lost=1)
        return values

    def spool_values(self, values: list[dict[str, Any]]) -> None:
        try:
            n = self.spool.append(values)
        except Exception as exc:
            log.error(
                "usage spool %s not writable (%s): %d rows lost",
                self.spool.path,
                describe_error(exc),
                len(values),
            )
            self.counts.add(lost=len(values))
            return
        self.counts.add(spooled=n)
        self._spool_maybe = True

    def _insert_batch(self, values: list[dict[str, Any]]) -> int:
        """One multi-row insert (schema checked once); rows the database refuses cost only themselves."""
        assert self.engine is not None and self._insert is not None
        if not self._schema_checked:
            self._connect()
        try:
            with self.engine.begin() as conn:
                return self._insert.insert(conn, values) if values else 0
        except (IntegrityError, DataError):
            return self._insert_one_by_one(values)

    def _insert_one_by_one(self, values: list[dict[str, Any]]) -> int:
        """A batch the database refused, row by row: the rows it still refuses are kept for
        a human and logged in a summary (:class:`RefusalLog`), not one line each."""
        assert self.engine is not None and self._insert is not None
        inserted = 0
        refused: list[tuple[dict[str, Any], BaseException]] = []
        for v in values:
            try:
                with self.engine.begin() as conn:
                    inserted += self._insert.insert(conn, [v])
            except (IntegrityError, DataError) as exc:
                refused.append((v, exc))
        if refused:
            self._reject(refused)
        return inserted

    def _reject(self, refused: list[tuple[dict[str, Any], BaseException]]) -> None:
        first = describe_error(refused[0][1])
        try:
            self.spool.reject([line(v) for v, _ in refused])
        except OSError as error:
            log.error(
                "%d usage rows refused by the database (%s) and lost: %s",
                len(refused),
                first,
                describe_error(error),
            )
            self.counts.add(lost=len(refused))
            return
        self.counts.add(rejected=len(refused))
        self.refusals.add(len(refused), first, [v.get("request_id") for v, _ in refused])

    # ------------------------------------------------------------ outages

    def _available(self) -> bool:
        return time.monotonic() >= self._down_until

    def _mark_down(self, exc: BaseException) -> None:
        self._down_until = time.monotonic() + self.retry_s
        if isinstance(exc, SchemaOutOfDate):
            log.error("%s", exc)  # our own message, naming the command to run
        if not self._outage_logged:  # once per outage, not once per batch
            log.warning(
                "usage database unavailable (%s): rows go to the spool %s",
                describe_error(exc),
                self.spool.path,
            )
            self._outage_logged = True

    def _mark_up(self) -> None:
        self._down_until = 0.0
        if self._outage_logged:
            log.warning("usage database reachable again")
            self._outage_logged = False

    # ------------------------------------------------------------ replay

    async def maybe_replay(self) -> None:
        """Replay the spool (in a worker thread) if the database answers and it may hold rows."""
        if self.engine is None or not self._available() or not self._spool_maybe:
            return
        # Cleared before looking, so that a row spooled meanwhile sets it again.
        self._spool_maybe = False
        if not self.spool.pending():
            return
        try:
            await asyncio.to_thread(self._replay)
            self._mark_up()
        except Exception as exc:
            self._spool_maybe = True
            self._mark_down(exc)

    def _replay(self) -> None:
        """Insert the spool in batches, then delete it.

        Two rounds at most: a ``.replay`` left by an interrupted replay, then
        the spool itself. Rows spooled meanwhile wait for the next call.
        """
        assert self._insert is not None
        for _ in range(2):
            fd = self.spool.claim()
            if fd is None:
                break
            inserted = 0
            for chunk in self.spool.read(fd, self.config.batch_size):
                values, start = self.values(chunk), 0
                for size in self._insert.sizes(len(values), self.config.batch_size):
                    n = self._insert_batch(values[start : start + size])
                    start += size
                    self.counts.add(written=n)
                    inserted += n
            self.spool.done(fd)
            log.warning("usage spool replayed: %d rows inserted", inserted)
            release_heap()
