"""Usage rows, the batched SQL writer, its journal and its spool file.

The request path calls ``recorder.record(row)``: an append to an in-memory
deque, nothing else. Every ``journal_interval_s`` while rows arrive, a
background task appends them to a journal (:class:`Journal`) in one write from
an already-open file and stages them; a second task writes the staged rows to
SQL with one multi-row ``INSERT ... ON CONFLICT (request_id) DO NOTHING`` per
``batch_size`` rows, then empties their journal file. Both do their work in
worker threads, so the event loop never waits on the database or the disk. A
process killed outright (SIGKILL, the OOM killer) loses only the rows of its
last ``journal_interval_s``: the next start moves the journal to the spool.

When the database is unreachable (or the queue is full) rows are appended to a
JSON-lines spool file; once the database answers again the spool is replayed
and removed. Replays are idempotent because ``request_id`` is unique and the
insert ignores conflicts, so a crash mid-replay only means replaying again.

Nothing on this path needs a descriptor it did not open at start (the journal
files, the spool or a spare file renamed into place, one pooled database
connection), so a proxy out of descriptors still keeps every row. Values are
made storable on both databases first (:func:`storable_text`). Rows lost anyway
(disk full, a malformed row) and rows the database still refuses are counted
(``rows_lost``, ``rows_rejected``: metrics with alerts) and logged by count and
error type only, never by value: a value may be prompt text.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import threading
from collections import deque

from sqlalchemy import Engine

from router.config import DatabaseConfig
from router.ledger.columns import row_values
from router.ledger.db import describe_error
from router.ledger.files import line
from router.ledger.journal import Journal
from router.ledger.models import UsageRow
from router.ledger.spool import Spool
from router.ledger.store import Counts, RowStore

log = logging.getLogger("offload.accounting")


class Phase(enum.Enum):
    """Where the recorder is in its life; what :meth:`UsageRecorder.record` does depends on it."""

    OFF = "off"  # database.enabled is false: rows are dropped
    NEW = "new"  # not started: rows queue up
    RUNNING = "running"  # the three tasks run
    CLOSING = "closing"  # stop() began: record() spools directly, the journal task drains
    DRAINING = "draining"  # the journal task is done: the writer's last round
    STOPPED = "stopped"


class UsageRecorder:
    """Batched, non-blocking writer of usage rows with a journal and a spool for outages.

    A row goes: :meth:`record` (the deque) → the journal task (journaled, staged)
    → the writer task (SQL, else the spool: :class:`~router.ledger.store.RowStore`).
    ``retry_s`` is how long to stop trying the database after a failure (rows go
    straight to the spool meanwhile); it bounds how hard a dead database is
    hammered and how quickly recovery is noticed.
    """

    def __init__(self, config: DatabaseConfig, *, retry_s: float = 2.0) -> None:
        self._cfg = config
        self._phase = Phase.NEW if config.enabled else Phase.OFF
        self._queue: deque[UsageRow] = deque()  # recorded, not journaled yet
        self._staged: list[UsageRow] = []  # journaled, not in the database yet
        # The journal's current file and _staged change together: the file the writer
        # empties after a commit holds exactly the rows it took.
        self._stage_lock = threading.Lock()
        self._overflow: list[UsageRow] = []
        self._stage_wake = asyncio.Event()
        self._wake = asyncio.Event()
        self._spill_wake = asyncio.Event()
        self._spool = Spool(config.spool_path)
        self._journal = Journal(config.spool_path) if config.journal else None  # None: off or unusable
        self._counts = Counts()
        self._store = RowStore(config, self._spool, self._counts, retry_s)
        self._tasks: list[asyncio.Task[None]] = []
        self._recovered = 0

    # ------------------------------------------------------------ metrics

    @property
    def queue_depth(self) -> int:
        """Rows in memory, not in the database yet (journaled or not)."""
        return len(self._queue) + len(self._staged) + len(self._overflow)

    @property
    def rows_written(self) -> int:
        """Rows inserted into the database (replayed spool rows included)."""
        return self._counts.written

    @property
    def rows_spooled(self) -> int:
        """Rows appended to the spool file since start (a counter, not the backlog)."""
        return self._counts.spooled

    @property
    def rows_lost(self) -> int:
        """Rows that could be neither written nor spooled (disk full, malformed): logged as errors."""
        return self._counts.lost

    @property
    def rows_rejected(self) -> int:
        """Rows the database refused even once made storable, and unreadable spool lines:
        kept in ``<spool>.rejected`` for a human, never replayed on their own."""
        return self._counts.rejected + self._spool.unreadable

    @property
    def rows_recovered(self) -> int:
        """Rows a killed earlier process left in the journal, spooled at start."""
        return self._recovered

    @property
    def engine(self) -> Engine | None:
        return self._store.engine

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Open the journal and spool, check the schema, open one database connection
        and start the writer, all while descriptors are to be had.

        An unreachable database does not stop the proxy (rows are spooled); a
        reachable PostgreSQL at the wrong revision does (SchemaOutOfDate).
        """
        if self._phase is not Phase.NEW:
            return
        await asyncio.to_thread(self._open_files)
        await asyncio.to_thread(self._store.open)
        self._phase = Phase.RUNNING
        self._tasks = [
            asyncio.create_task(self._stage_loop(), name="usage-journal"),
            asyncio.create_task(self._write_loop(), name="usage-writer"),
            asyncio.create_task(self._spill_loop(), name="usage-spill"),
        ]

    def record(self, row: UsageRow) -> None:
        """Queue one row. O(1), never blocks on the database or the disk, never raises."""
        phase = self._phase
        if phase is Phase.OFF:
            return
        try:
            if phase in (Phase.CLOSING, Phase.DRAINING, Phase.STOPPED):
                # After stop() there is no writer: keep the row on disk.
                self._spool_now([row])
            elif len(self._queue) + len(self._staged) < self._cfg.queue_max:
                self._queue.append(row)
                if not self._stage_wake.is_set():
                    self._stage_wake.set()
            else:
                # Full: never drop; the spill task moves these to the spool.
                self._overflow.append(row)
                self._spill_wake.set()
        except Exception as exc:
            log.error("usage row not recorded: %s", describe_error(exc))

    async def stop(self) -> None:
        """Journal, then write (or spool) every queued row, then release the files and the database."""
        if self._phase is Phase.OFF:
            return
        self._phase = Phase.CLOSING
        if self._tasks:
            stage, write, spill = self._tasks
            self._stage_wake.set()
            await stage
            self._phase = Phase.DRAINING
            self._wake.set()
            await write
            self._spill_wake.set()
            await spill
            self._tasks = []
        # Anything not handled by the tasks (stop() without start()).
        rows = [*self._overflow, *self._queue]
        self._overflow, self._queue = [], deque()
        if rows:
            await asyncio.to_thread(self._spool_now, rows)
        await asyncio.to_thread(self._close_files)
        self._store.close()
        self._phase = Phase.STOPPED

    def _open_files(self) -> None:
        """Worker thread: the spool's and the journal's descriptors; an earlier run's
        journal moved to the spool (replayed by the writer like any spool)."""
        try:
            self._spool.open()
            if self._journal is None:
                return
            left = self._journal.open()
            if left:
                self._recovered = self._spool.append_bytes(left)
                self._journal.clear(0)
                self._journal.clear(1)
                log.warning(
                    "usage journal: %d rows left by an earlier process moved to the spool for replay",
                    self._recovered,
                )
        except OSError as exc:
            # Serve anyway: rows still reach the database; spooling will try again.
            log.error("usage spool or journal next to %s unusable: %s", self._spool.path, describe_error(exc))
            self._journal = None

    def _close_files(self) -> None:
        if self._journal is not None:
            with self._stage_lock:
                self._journal.close()
        self._spool.close()

    # ------------------------------------------------------------ background

    async def _stage_loop(self) -> None:
        """Every ``journal_interval_s`` while rows arrive: journal the queued rows in
        one write and stage them for the writer."""
        cfg = self._cfg
        while True:
            await self._stage_wake.wait()
            if self._phase is Phase.RUNNING:
                await asyncio.sleep(cfg.journal_interval_s)  # one write per interval, not per row
            self._stage_wake.clear()
            q = self._queue
            rows = [q.popleft() for _ in range(len(q))]
            if rows:
                try:
                    await asyncio.to_thread(self._stage, rows)
                except Exception as exc:  # never let the journal task die
                    log.error("usage journal iteration failed: %s", describe_error(exc))
                if len(self._staged) >= cfg.batch_size:
                    self._wake.set()
            if self._phase is not Phase.RUNNING and not self._queue:
                return

    def _stage(self, rows: list[UsageRow]) -> None:
        """Worker thread: rows journaled and handed to the writer.

        The writer gets the rows, not their column values: built again at the flush,
        they live a moment instead of a flush interval (a second's worth of dicts,
        made and freed in different threads, left RSS several MB higher in the soak).
        """
        lines, kept = [], []
        for row in rows:
            try:
                lines.append(line(row_values(row, self._cfg.store_text)))
            except Exception as exc:
                log.error("usage row malformed, lost: %s", describe_error(exc))
                self._counts.add(lost=1)
                continue
            kept.append(row)
        data = b"".join(lines)
        del lines
        with self._stage_lock:
            if self._journal is not None and data:
                try:
                    self._journal.append(data)
                except OSError as exc:
                    # The rows still go to the database; only a kill meanwhile would lose them.
                    log.error("usage journal not writable: %s", describe_error(exc))
            self._staged.extend(kept)

    async def _write_loop(self) -> None:
        cfg = self._cfg
        while self._phase is not Phase.DRAINING:
            if len(self._staged) < cfg.batch_size:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), cfg.flush_interval_s)
            try:
                await self._flush()
                await self._store.maybe_replay()
            except Exception as exc:  # never let the writer die
                log.error("usage writer iteration failed: %s", describe_error(exc))
        await self._flush()
        # Drain the spool now if the database is back, so a clean shutdown leaves none.
        await self._store.maybe_replay()

    async def _spill_loop(self) -> None:
        while True:
            await self._spill_wake.wait()
            self._spill_wake.clear()
            rows, self._overflow = self._overflow, []
            if rows:
                log.warning(
                    "usage queue full (%d): %d rows spilled to the spool", self._cfg.queue_max, len(rows)
                )
                await asyncio.to_thread(self._spool_now, rows)
            if self._phase is not Phase.RUNNING and not self._overflow:
                return

    async def _flush(self) -> None:
        if self._staged:
            await asyncio.to_thread(self._flush_staged)

    def _flush_staged(self) -> None:
        """Worker thread: every staged row to SQL (else the spool), then its journal file emptied."""
        with self._stage_lock:
            rows, self._staged = self._staged, []
            used = self._journal.rotate() if self._journal is not None else None
        self._store.store(self._store.values(rows))
        if used is not None:
            assert self._journal is not None
            with self._stage_lock:
                self._journal.clear(used)

    def _spool_now(self, rows: list[UsageRow]) -> None:
        # Worker threads (spill task) and, after stop(), the loop itself.
        self._store.spool_values(self._store.values(rows))
