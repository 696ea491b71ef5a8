"""Usage rows, the batched SQL writer and its spool file.

The request path calls ``recorder.record(row)``: an append to an in-memory
deque, nothing else. A background task takes batches off the deque and writes
each batch with one multi-row ``INSERT ... ON CONFLICT (request_id) DO NOTHING``
in a worker thread, so the event loop never waits on the database.

When the database is unreachable (or the deque is full) rows are appended to a
JSON-lines spool file; once the database answers again the spool is replayed
and removed. Replays are idempotent because ``request_id`` is unique and the
insert ignores conflicts, so a crash mid-replay only means replaying again.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Dialect, Engine
from sqlalchemy.exc import DataError, IntegrityError

from router.config import DatabaseConfig
from router.db import SchemaOutOfDate, ensure_schema, make_engine
from router.models import usage_table

log = logging.getLogger("offload.accounting")


@dataclass(slots=True)
class UsageRow:
    """One request, as the proxy saw it. Never holds a key; text only when enabled."""

    request_id: str
    started_at: datetime  # UTC
    endpoint: str  # "chat" | "completions" | "embeddings"
    client: str | None  # the client key's name, never the key
    model_requested: str | None
    stream: bool
    status: int = 0
    error_type: str | None = None
    intent: str | None = None
    confidence: float | None = None
    decided_route: str | None = None  # "local" | "cloud"
    decided_backend: str | None = None
    reason: str | None = None
    backend: str | None = None  # the backend that served (after any fallback)
    route: str | None = None  # route of the backend that served
    fallback: bool = False
    fallback_reason: str | None = None
    shadow_backend: str | None = None  # shadow mode: what the policy would have chosen
    shadow_route: str | None = None
    shadow_intent: str | None = None
    classifier_version: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    tokens_estimated: bool = False
    latency_ms: float = 0.0
    ttft_ms: float | None = None
    prompt_text: str | None = None
    completion_text: str | None = None


# Every UsageRow field is a column of ``usage``.
COLUMNS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(UsageRow))
_TEXT = ("prompt_text", "completion_text")
# SQLite allows 32,766 bind parameters per statement: a batch bigger than this
# many rows is split into several statements (PostgreSQL binds one array per column).
MAX_ROWS_PER_STATEMENT = 30_000 // len(COLUMNS)


def _utc(value: datetime) -> datetime:
    # A naive timestamp from the proxy is UTC by contract.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def row_values(row: UsageRow | dict[str, Any], store_text: bool) -> dict[str, Any]:
    """The column values of one row (a UsageRow, or a dict read back from the spool)."""
    if isinstance(row, UsageRow):
        values = {name: getattr(row, name) for name in COLUMNS}
    else:
        values = {name: row.get(name) for name in COLUMNS}
        if isinstance(values["started_at"], str):
            values["started_at"] = datetime.fromisoformat(values["started_at"])
    values["started_at"] = _utc(values["started_at"])
    if not store_text:
        for name in _TEXT:
            values[name] = None
    return values


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


_ON_CONFLICT = " ON CONFLICT (request_id) DO NOTHING"


def _sqlite_datetime(value: datetime) -> str:
    # The text format SQLAlchemy's SQLite DateTime reads and writes (naive UTC),
    # so that the report's range comparisons on started_at stay string-ordered.
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def insert_rows(engine: Engine, rows: list[dict[str, Any]]) -> int:
    """Insert rows with one multi-row INSERT per batch, ignoring known request_ids.

    Returns the number of rows actually inserted. Runs in a worker thread.
    """
    if not rows:
        return 0
    inserted = 0
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            arrays = tuple([values[name] for values in rows] for name in COLUMNS)
            return max(conn.exec_driver_sql(_postgres_insert_sql(engine.dialect), arrays).rowcount, 0)
        # SQLite: a statement holds at most 32,766 parameters; split bigger batches.
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


class Spool:
    """Append-only JSON-lines file of rows that could not be written yet.

    Replay first renames the file to ``<path>.replay`` (under the lock) so new
    rows keep appending to a fresh file while the old one is read.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.replay_path = self.path.with_name(self.path.name + ".replay")
        self.rejected_path = self.path.with_name(self.path.name + ".rejected")
        self._lock = threading.Lock()

    def append(self, rows: Iterable[dict[str, Any]], target: Path | None = None) -> int:
        data = b"".join(orjson.dumps(r) + b"\n" for r in rows)
        if not data:
            return 0
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(target or self.path, "ab") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())  # the spool exists for durability; pay for it
        return data.count(b"\n")

    def pending(self) -> bool:
        return self.replay_path.exists() or self.path.exists()

    def claim(self) -> Path | None:
        """The file to replay next: a leftover ``.replay`` first, else the spool itself."""
        with self._lock:
            if self.replay_path.exists():
                return self.replay_path
            if self.path.exists():
                os.replace(self.path, self.replay_path)
                return self.replay_path
        return None

    def read(self, path: Path, chunk: int) -> Iterator[list[dict[str, Any]]]:
        batch: list[dict[str, Any]] = []
        with open(path, "rb") as f:
            for line in f:
                if not line.strip():
                    continue
                try:
                    batch.append(orjson.loads(line))
                except orjson.JSONDecodeError:
                    # A torn last line after a crash: keep it for a human, skip it here.
                    log.error("spool %s: unreadable line kept in %s", path, self.rejected_path)
                    with open(self.rejected_path, "ab") as rej:
                        rej.write(line.rstrip(b"\n") + b"\n")
                    continue
                if len(batch) >= chunk:
                    yield batch
                    batch = []
        if batch:
            yield batch


class UsageRecorder:
    """Batched, non-blocking writer of usage rows with a spool for outages.

    ``retry_s`` is how long to stop trying the database after a failure
    (rows go straight to the spool meanwhile); it bounds how hard a dead
    database is hammered and how quickly recovery is noticed.
    """

    def __init__(self, config: DatabaseConfig, *, retry_s: float = 2.0) -> None:
        self._cfg = config
        self._enabled = config.enabled
        self._retry_s = retry_s
        self._queue: deque[UsageRow] = deque()
        self._overflow: list[UsageRow] = []
        self._wake = asyncio.Event()
        self._spill_wake = asyncio.Event()
        self._spool = Spool(config.spool_path)
        self._engine: Engine | None = None
        self._schema_ok = False
        self._down_until = 0.0  # monotonic time before which the DB is not tried
        self._down_logged = False
        self._closed = False
        self._tasks: list[asyncio.Task[None]] = []
        self._written = 0
        self._spooled = 0
        self._lost = 0
        self._count_lock = threading.Lock()
        # "The spool may hold rows": saves a file-system check per batch.
        # True at start so that a spool left by an earlier run is replayed.
        self._spool_maybe = True

    # ------------------------------------------------------------ metrics

    @property
    def queue_depth(self) -> int:
        return len(self._queue) + len(self._overflow)

    @property
    def rows_written(self) -> int:
        """Rows inserted into the database (replayed spool rows included)."""
        return self._written

    @property
    def rows_spooled(self) -> int:
        """Rows appended to the spool file since start (a counter, not the backlog)."""
        return self._spooled

    @property
    def rows_lost(self) -> int:
        """Rows that could be neither written nor spooled (disk full, malformed): logged as errors."""
        return self._lost

    @property
    def engine(self) -> Engine | None:
        return self._engine

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Check the schema and start the writer.

        An unreachable database does not stop the proxy (rows are spooled); a
        reachable PostgreSQL at the wrong revision does (SchemaOutOfDate).
        """
        if not self._enabled or self._tasks:
            return
        self._engine = make_engine(self._cfg.url)
        try:
            await asyncio.to_thread(ensure_schema, self._cfg.url)
            self._schema_ok = True
        except SchemaOutOfDate:
            raise
        except Exception as exc:
            self._mark_down(exc)
        self._tasks = [
            asyncio.create_task(self._write_loop(), name="usage-writer"),
            asyncio.create_task(self._spill_loop(), name="usage-spill"),
        ]

    def record(self, row: UsageRow) -> None:
        """Queue one row. O(1), never blocks on the database, never raises."""
        if not self._enabled:
            return
        try:
            if self._closed:
                # After stop() there is no writer: keep the row on disk.
                self._spool_now([row])
            elif len(self._queue) < self._cfg.queue_max:
                self._queue.append(row)
                if len(self._queue) >= self._cfg.batch_size:
                    self._wake.set()
            else:
                # Full: never drop; the spill task moves these to the spool.
                self._overflow.append(row)
                self._spill_wake.set()
        except Exception:
            log.exception("usage row %s not recorded", getattr(row, "request_id", "?"))

    async def stop(self) -> None:
        """Write (or spool) every queued row, then release the database."""
        if not self._enabled:
            return
        self._closed = True
        self._wake.set()
        self._spill_wake.set()
        for task in self._tasks:
            await task
        self._tasks = []
        # Anything not handled by the tasks (e.g. stop() without start()).
        if self._overflow:
            rows, self._overflow = self._overflow, []
            await self._spool_rows(rows)
        while self._queue:
            await self._write(self._take(self._cfg.batch_size))
        if self._engine is not None:
            self._engine.dispose()

    # ------------------------------------------------------------ background

    def _take(self, n: int) -> list[UsageRow]:
        q = self._queue
        return [q.popleft() for _ in range(min(n, len(q)))]

    async def _write_loop(self) -> None:
        cfg = self._cfg
        while not self._closed:
            if len(self._queue) < cfg.batch_size:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), cfg.flush_interval_s)
            batch = self._take(cfg.batch_size)
            try:
                if batch:
                    await self._write(batch)
                await self._maybe_replay()
            except Exception:  # never let the writer die
                log.exception("usage writer iteration failed")
        while self._queue:
            await self._write(self._take(cfg.batch_size))
        # Drain the spool now if the database is back, so a clean shutdown leaves none.
        await self._maybe_replay()

    async def _spill_loop(self) -> None:
        while True:
            await self._spill_wake.wait()
            self._spill_wake.clear()
            rows, self._overflow = self._overflow, []
            if rows:
                log.warning(
                    "usage queue full (%d): %d rows spilled to the spool", self._cfg.queue_max, len(rows)
                )
                await self._spool_rows(rows)
            if self._closed and not self._overflow:
                return

    def _db_available(self) -> bool:
        return time.monotonic() >= self._down_until

    def _mark_down(self, exc: BaseException) -> None:
        self._down_until = time.monotonic() + self._retry_s
        if not self._down_logged:  # once per outage, not once per batch
            log.warning("usage database unavailable, spooling to %s: %s", self._spool.path, exc)
            self._down_logged = True

    def _mark_up(self) -> None:
        self._down_until = 0.0
        if self._down_logged:
            log.warning("usage database reachable again")
            self._down_logged = False

    def _insert(self, rows: list[UsageRow] | list[dict[str, Any]]) -> int:
        """Worker thread: values, schema check once, one multi-row insert."""
        assert self._engine is not None
        values = self._values(rows)
        if not self._schema_ok:
            ensure_schema(self._cfg.url)
            self._schema_ok = True
        try:
            return insert_rows(self._engine, values)
        except (IntegrityError, DataError):
            # One bad row must not poison the batch (and the spool) forever.
            return self._insert_one_by_one(values)

    def _values(self, rows: list[UsageRow] | list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Column values, dropping (with an error log) rows too malformed to store."""
        values = []
        for r in rows:
            try:
                values.append(row_values(r, self._cfg.store_text))
            except Exception:
                log.exception("usage row %s malformed, lost", getattr(r, "request_id", "?"))
                with self._count_lock:
                    self._lost += 1
        return values

    def _insert_one_by_one(self, values: list[dict[str, Any]]) -> int:
        assert self._engine is not None
        inserted = 0
        for v in values:
            try:
                inserted += insert_rows(self._engine, [v])
            except (IntegrityError, DataError) as exc:
                log.error(
                    "usage row %s rejected by the database, kept in %s: %s",
                    v.get("request_id"),
                    self._spool.rejected_path,
                    exc.orig,
                )
                self._spool.append([v], target=self._spool.rejected_path)
        return inserted

    async def _write(self, batch: list[UsageRow]) -> None:
        if self._engine is None or not self._db_available():
            await self._spool_rows(batch)
            return
        try:
            self._written += await asyncio.to_thread(self._insert, batch)
            self._mark_up()
        except Exception as exc:
            if isinstance(exc, SchemaOutOfDate):
                log.error("%s", exc)
            self._mark_down(exc)
            await self._spool_rows(batch)

    async def _maybe_replay(self) -> None:
        if self._engine is None or not self._db_available():
            return
        if not self._spool_maybe:
            return
        # Cleared before looking, so that a row spooled meanwhile sets it again.
        self._spool_maybe = False
        if not await asyncio.to_thread(self._spool.pending):
            return
        try:
            self._written += await asyncio.to_thread(self._replay)
            self._mark_up()
        except Exception as exc:
            self._spool_maybe = True
            self._mark_down(exc)

    def _replay(self) -> int:
        """Worker thread: insert the spool in batches, then delete it.

        Two rounds at most: a ``.replay`` left by an interrupted replay, then
        the spool itself. Rows spooled meanwhile wait for the next call.
        """
        inserted = 0
        for _ in range(2):
            path = self._spool.claim()
            if path is None:
                break
            for chunk in self._spool.read(path, self._cfg.batch_size):
                inserted += self._insert(chunk)
            path.unlink()
            log.warning("usage spool replayed: %d rows inserted", inserted)
        return inserted

    async def _spool_rows(self, rows: list[UsageRow]) -> None:
        await asyncio.to_thread(self._spool_now, rows)

    def _spool_now(self, rows: list[UsageRow]) -> None:
        # Runs in worker threads (writer and spill task) and, after stop(), on
        # the loop itself: the counters take a lock.
        values = self._values(rows)
        try:
            n = self._spool.append(values)
        except Exception:
            n = 0
            log.exception("usage spool %s not writable: %d rows lost", self._spool.path, len(values))
            with self._count_lock:
                self._lost += len(values)
        with self._count_lock:
            self._spooled += n
        self._spool_maybe = True
