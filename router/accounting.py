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
import ctypes
import ctypes.util
import dataclasses
import functools
import logging
import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Dialect, Engine, Float, Integer, String, Text
from sqlalchemy.exc import DataError, IntegrityError

from router.config import DatabaseConfig
from router.db import SchemaOutOfDate, describe_error, ensure_schema, make_engine
from router.models import UsageRow, usage_table

log = logging.getLogger("offload.accounting")


# Every UsageRow field is a column of ``usage`` (router.models builds the table from them).
COLUMNS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(UsageRow))
_TEXT = ("prompt_text", "completion_text")
# SQLite allows 32,766 bind parameters per statement: a batch bigger than this
# many rows is split into several statements (PostgreSQL binds one array per column).
MAX_ROWS_PER_STATEMENT = 30_000 // len(COLUMNS)


def _utc(value: datetime) -> datetime:
    # A naive timestamp from the proxy is UTC by contract.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def row_values(row: UsageRow | dict[str, Any], store_text: bool) -> dict[str, Any]:
    """The column values of one row (a UsageRow, or a dict read back from the spool or
    the journal), made storable."""
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
    _make_storable(values)
    return values


# What makes every row storable on SQLite and PostgreSQL alike (docs/operations.md,
# "Limits an operator must set"): the client chooses `model` (and, with store_text,
# the text), so a value must never be what stops its row.
SHORT_TEXT_MAX = 512  # characters kept of a String column: model names, reasons, ids
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1  # INTEGER is 32-bit on PostgreSQL
_SHORT = tuple(n for n in COLUMNS if type(usage_table.c[n].type) is String)
_LONG = tuple(n for n in COLUMNS if isinstance(usage_table.c[n].type, Text))
_INTS = tuple(n for n in COLUMNS if isinstance(usage_table.c[n].type, Integer))
_FLOATS = {n: usage_table.c[n].nullable for n in COLUMNS if isinstance(usage_table.c[n].type, Float)}


def storable_text(value: str, limit: int | None = None) -> str:
    """``value`` as both databases can store it, at most ``limit`` characters.

    PostgreSQL refuses NUL (``\\u0000``) in text, and neither driver can encode a
    lone surrogate (``\\ud800``) as UTF-8: NULs are dropped, lone surrogates
    become ``?``. Cheap for the usual ASCII value: two scans.
    """
    if "\x00" in value:
        value = value.replace("\x00", "")
    if not value.isascii():
        try:
            value.encode()
        except UnicodeEncodeError:
            value = value.encode("utf-8", "replace").decode()
    return value if limit is None or len(value) <= limit else value[:limit]


def _make_storable(values: dict[str, Any]) -> None:
    """Text cleaned and short strings bounded; integers clamped to 32 bits; non-finite
    floats (SQLite stores NaN as NULL) made NULL, or 0 where the column needs a value."""
    for name in _SHORT:
        value = values[name]
        if isinstance(value, str):
            values[name] = storable_text(value, SHORT_TEXT_MAX)
    for name in _LONG:
        value = values[name]
        if isinstance(value, str):
            values[name] = storable_text(value)
    for name in _INTS:
        value = values[name]
        if type(value) is int and not _INT_MIN <= value <= _INT_MAX:
            values[name] = min(max(value, _INT_MIN), _INT_MAX)
    for name, nullable in _FLOATS.items():
        value = values[name]
        if isinstance(value, float) and not math.isfinite(value):
            values[name] = None if nullable else 0.0


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


def _statement_sizes(n: int, full: int) -> list[int]:
    """Rows per insert for ``n`` rows: ``full`` while they last, then powers of two.

    SQLite compiles one program per distinct row count, and Python's driver keeps up to
    128 of them per connection, each the size of its thousands of parameters. With any
    count allowed, a writer whose batches vary grew by about 0.5 KB a request (+24 % RSS
    over 60,000 requests in the soak); with these sizes there are a dozen programs at
    most. (PostgreSQL's statement is the same for any count: one array per column.)
    """
    sizes = [full] * (n // full)
    rest = n % full
    while rest:
        power = 1 << (rest.bit_length() - 1)
        sizes.append(power)
        rest -= power
    return sizes


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


def _open_append(path: Path) -> int:
    # 0600: with database.store_text on, these files hold prompt text.
    return os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)


def _write_all(fd: int, data: bytes) -> None:
    """All of ``data``, or none: a failed write (disk full) is cut back so that no torn
    line is left for the next append to run into."""
    start = os.fstat(fd).st_size
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start)
        raise


def _read_all(fd: int) -> bytes:
    chunks, offset = [], 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _lines(fd: int, block: int = 64 * 1024) -> Iterator[bytes]:
    """The lines of an open file, read with pread: no second descriptor, whatever its offset."""
    offset, rest = 0, b""
    while chunk := os.pread(fd, block, offset):
        offset += len(chunk)
        *lines, rest = (rest + chunk).split(b"\n")
        yield from lines
    if rest:
        yield rest  # a last line without its newline: torn by a crash, or whole


@functools.cache
def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None  # not glibc


def _release_heap() -> None:
    """Give the memory a replay used back to the OS (glibc's malloc_trim).

    A replay builds and frees a whole spool's worth of rows in a worker thread;
    glibc keeps such freed memory in that thread's arena, and every database
    outage left the proxy a few MB larger for good (+11 % RSS over six outages
    in the hostile soak). Rare, and a few milliseconds.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


class RefusalLog:
    """Rows the database refused, logged as a summary: the first refusal at once, the
    ones after it at most once every ``every_s`` seconds (and at stop), each line giving
    the count, the first error and a few request ids. A hand-edited spool of 455 bad
    rows is one or two ERROR lines, not 455."""

    def __init__(
        self, kept_in: Path, every_s: float = 10.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.kept_in = kept_in
        self.every_s = every_s
        self._clock = clock
        self._last = -every_s
        self._count = 0
        self._error = ""
        self._ids: list[Any] = []
        self._lock = threading.Lock()  # worker threads refuse rows

    def add(self, count: int, error: str, ids: list[Any]) -> None:
        with self._lock:
            self._count += count
            self._error = self._error or error
            self._ids = (self._ids + ids)[:3]
            due = self._clock() - self._last >= self.every_s
        if due:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            count, error, ids = self._count, self._error, self._ids
            self._count, self._error, self._ids = 0, "", []
            self._last = self._clock()
        if count:
            shown = ", ".join(str(i) for i in ids) + (
                f" and {count - len(ids)} more" if count > len(ids) else ""
            )
            log.error(
                "%d usage rows refused by the database (first: %s): kept in %s (%s)",
                count,
                error,
                self.kept_in,
                shown,
            )


def _line(values: dict[str, Any]) -> bytes:
    return orjson.dumps(values) + b"\n"


class Spool:
    """Append-only JSON-lines file of rows the database could not take yet.

    Appends and replays use descriptors opened by :meth:`open` at start, so that
    a proxy out of descriptors still keeps its rows: the spool file's own while
    it exists, else a spare empty file (``<stem>.spool-spare``) that the first
    append renames into place. A new spare is opened after a replay, and after
    an append, whenever descriptors allow. Replay renames the file to
    ``<path>.replay`` and reads it through the descriptor it was written with.
    Every append is fsync'd: the spool exists for durability. One process per
    spool file.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.replay_path = self.path.with_name(self.path.name + ".replay")
        self.rejected_path = self.path.with_name(self.path.name + ".rejected")
        self.spare_path = self.path.with_name(self.path.stem + ".spool-spare")
        self.unreadable = 0  # torn lines moved to the rejected file
        self._lock = threading.Lock()
        self._open = False
        self._fd: int | None = None  # the spool file, while it exists
        self._replay_fd: int | None = None
        self._spare_fd: int | None = None
        self._rejected_fd: int | None = None

    def open(self) -> None:
        """Open every descriptor appends and replays will need, while there are some."""
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self._fd is None and self.path.exists():
                self._fd = _open_append(self.path)
            if self._replay_fd is None and self.replay_path.exists():
                self._replay_fd = _open_append(self.replay_path)
            self._open = True
            self._ensure_spare()

    def close(self) -> None:
        """Release the descriptors; later appends (a request finishing during shutdown)
        open the file, write and close it again."""
        with self._lock:
            self._open = False
            if self._spare_fd is not None:
                with contextlib.suppress(OSError):
                    self.spare_path.unlink()
            for fd in (self._fd, self._replay_fd, self._spare_fd, self._rejected_fd):
                if fd is not None:
                    os.close(fd)
            self._fd = self._replay_fd = self._spare_fd = self._rejected_fd = None

    def append(self, rows: Iterable[dict[str, Any]]) -> int:
        return self.append_bytes(b"".join(map(_line, rows)))

    def append_bytes(self, data: bytes) -> int:
        """Append JSON lines (fsync'd); the number of rows appended."""
        if not data:
            return 0
        if not data.endswith(b"\n"):
            data += b"\n"
        with self._lock:
            if self._fd is None:
                self._fd = self._take_spare()
            try:
                _write_all(self._fd, data)
                os.fsync(self._fd)
            finally:
                if not self._open:
                    os.close(self._fd)
                    self._fd = None
            self._ensure_spare()
        return data.count(b"\n")

    def _take_spare(self) -> int:
        if self._spare_fd is None or self.path.exists():
            # No spare (used up and none could be opened since, or not started): this
            # is the one place that needs a new descriptor.
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return _open_append(self.path)
        os.rename(self.spare_path, self.path)
        fd, self._spare_fd = self._spare_fd, None
        return fd

    def _ensure_spare(self) -> None:
        if self._open and self._spare_fd is None:
            # Out of descriptors now: the next replay or append tries again.
            with contextlib.suppress(OSError):
                self._spare_fd = _open_append(self.spare_path)
                os.ftruncate(self._spare_fd, 0)

    def pending(self) -> bool:
        return self._fd is not None or self._replay_fd is not None or self.path.exists()

    def claim(self) -> int | None:
        """The descriptor of the file to replay next: a leftover ``.replay`` first, else
        the spool itself, renamed to ``.replay`` so that new rows go to a new spool.

        The spool is only claimed while a spare is open: a replay may fail halfway
        (the database went again), and the rows spooled meanwhile need a descriptor.
        """
        with self._lock:
            if self._replay_fd is None:
                if self._fd is None and self.path.exists():
                    self._fd = _open_append(self.path)  # left by a shutdown's late append
                self._ensure_spare()
                if self._fd is None or self._spare_fd is None:
                    return None
                os.rename(self.path, self.replay_path)
                self._replay_fd, self._fd = self._fd, None
            return self._replay_fd

    def read(self, fd: int, chunk: int) -> Iterator[list[dict[str, Any]]]:
        batch: list[dict[str, Any]] = []
        for line in _lines(fd):
            if not line.strip():
                continue
            try:
                batch.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                # A torn last line after a crash: keep it for a human, skip it here.
                log.error("usage spool %s: an unreadable line moved to %s", self.path, self.rejected_path)
                self.reject([line])
                self.unreadable += 1
                continue
            if len(batch) >= chunk:
                yield batch
                batch = []
        if batch:
            yield batch

    def done(self, fd: int) -> None:
        """The claimed file is in the database: remove it."""
        with self._lock:
            self.replay_path.unlink()
            os.close(fd)
            self._replay_fd = None
            self._ensure_spare()

    def reject(self, lines: list[bytes]) -> None:
        """Keep lines for a human in ``<path>.rejected`` (rows the database refused, torn lines)."""
        data = b"".join(line.rstrip(b"\n") + b"\n" for line in lines)
        with self._lock:
            if self._rejected_fd is None:
                self._rejected_fd = _open_append(self.rejected_path)
            _write_all(self._rejected_fd, data)
            os.fsync(self._rejected_fd)


class Journal:
    """Rows answered but not yet committed, on disk: a killed proxy loses only the
    rows of its last ``journal_interval_s``.

    Two files, ``<stem>.journal-0`` and ``-1``, opened at start. Each staged batch
    is one write() from the already-open descriptor to the current file, with no
    fsync: a killed process's writes are in the kernel's page cache and survive
    it (SIGKILL, the OOM killer); a power cut or kernel crash may lose what the
    kernel had not written back yet. When the writer takes the staged rows for
    the database it switches files (:meth:`rotate`); once those rows are
    committed or spooled, their file is truncated (:meth:`clear`). At start,
    whatever a killed process left in them goes to the spool and is replayed.
    """

    def __init__(self, spool_path: str | os.PathLike[str]) -> None:
        base = Path(spool_path)
        self.paths = (base.with_name(base.stem + ".journal-0"), base.with_name(base.stem + ".journal-1"))
        self._fds: list[int] = []
        self._current = 0

    def open(self) -> bytes:
        """Open both files; return the rows a killed process left in them (JSON lines)."""
        self.paths[0].parent.mkdir(parents=True, exist_ok=True)
        for path in self.paths:
            try:
                self._fds.append(_open_append(path))
            except OSError:
                self.close()
                raise
        left = [_read_all(fd) for fd in self._fds]
        return b"".join(data if data.endswith(b"\n") else data + b"\n" for data in left if data)

    def append(self, data: bytes) -> None:
        _write_all(self._fds[self._current], data)

    def rotate(self) -> int:
        """Later appends go to the other file; the index of the one that holds everything so far."""
        used = self._current
        self._current ^= 1
        return used

    def clear(self, index: int) -> None:
        os.ftruncate(self._fds[index], 0)

    def close(self) -> None:
        """Close both files and remove them if empty (a clean stop committed everything)."""
        for fd, path in zip(self._fds, self.paths[: len(self._fds)], strict=True):
            empty = os.fstat(fd).st_size == 0
            os.close(fd)
            if empty:
                with contextlib.suppress(OSError):
                    path.unlink()
        self._fds = []


class UsageRecorder:
    """Batched, non-blocking writer of usage rows with a journal and a spool for outages.

    A row goes: :meth:`record` (the deque) → the journal task (journaled, staged)
    → the writer task (SQL, else the spool). ``retry_s`` is how long to stop
    trying the database after a failure (rows go straight to the spool
    meanwhile); it bounds how hard a dead database is hammered and how quickly
    recovery is noticed.
    """

    def __init__(self, config: DatabaseConfig, *, retry_s: float = 2.0) -> None:
        self._cfg = config
        self._enabled = config.enabled
        self._retry_s = retry_s
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
        self._journal = Journal(config.spool_path) if config.journal else None
        self._journal_ok = True
        self._engine: Engine | None = None
        self._schema_ok = False
        self._down_until = 0.0  # monotonic time before which the DB is not tried
        self._down_logged = False
        self._closed = False  # stop() began: record() spools directly
        self._draining = False  # the journal task is done: the writer's last round
        self._tasks: list[asyncio.Task[None]] = []
        self._written = 0
        self._spooled = 0
        self._lost = 0
        self._rejected = 0
        self._refusals = RefusalLog(self._spool.rejected_path)
        self._recovered = 0
        self._count_lock = threading.Lock()
        # "The spool may hold rows": saves a file-system check per batch.
        # True at start so that a spool left by an earlier run is replayed.
        self._spool_maybe = True

    # ------------------------------------------------------------ metrics

    @property
    def queue_depth(self) -> int:
        """Rows in memory, not in the database yet (journaled or not)."""
        return len(self._queue) + len(self._staged) + len(self._overflow)

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
    def rows_rejected(self) -> int:
        """Rows the database refused even once made storable, and unreadable spool lines:
        kept in ``<spool>.rejected`` for a human, never replayed on their own."""
        return self._rejected + self._spool.unreadable

    @property
    def rows_recovered(self) -> int:
        """Rows a killed earlier process left in the journal, spooled at start."""
        return self._recovered

    @property
    def engine(self) -> Engine | None:
        return self._engine

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Open the journal and spool, check the schema, open one database connection
        and start the writer, all while descriptors are to be had.

        An unreachable database does not stop the proxy (rows are spooled); a
        reachable PostgreSQL at the wrong revision does (SchemaOutOfDate).
        """
        if not self._enabled or self._tasks:
            return
        await asyncio.to_thread(self._open_files)
        self._engine = make_engine(self._cfg.url)
        try:
            await asyncio.to_thread(self._connect)
        except SchemaOutOfDate:
            raise
        except Exception as exc:
            self._mark_down(exc)
        self._tasks = [
            asyncio.create_task(self._stage_loop(), name="usage-journal"),
            asyncio.create_task(self._write_loop(), name="usage-writer"),
            asyncio.create_task(self._spill_loop(), name="usage-spill"),
        ]

    def record(self, row: UsageRow) -> None:
        """Queue one row. O(1), never blocks on the database or the disk, never raises."""
        if not self._enabled:
            return
        try:
            if self._closed:
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
        if not self._enabled:
            return
        self._closed = True
        if self._tasks:
            stage, write, spill = self._tasks
            self._stage_wake.set()
            await stage
            self._draining = True
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
        if self._engine is not None:
            self._engine.dispose()
        self._refusals.flush()

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
            self._journal_ok = False

    def _close_files(self) -> None:
        if self._journal is not None and self._journal_ok:
            with self._stage_lock:
                self._journal.close()
        self._spool.close()

    def _connect(self) -> None:
        """Worker thread: check the schema, then open the pooled connection the writer
        keeps using (inserting needs no new descriptor while it stays up)."""
        assert self._engine is not None
        if not self._schema_ok:
            ensure_schema(self._cfg.url)
            self._schema_ok = True
        with self._engine.connect() as conn:
            conn.exec_driver_sql('SELECT 1 FROM "usage" LIMIT 1')  # SQLite: opens -wal and -shm too

    # ------------------------------------------------------------ background

    async def _stage_loop(self) -> None:
        """Every ``journal_interval_s`` while rows arrive: journal the queued rows in
        one write and stage them for the writer."""
        cfg = self._cfg
        while True:
            await self._stage_wake.wait()
            if not self._closed:
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
            if self._closed and not self._queue:
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
                lines.append(_line(row_values(row, self._cfg.store_text)))
            except Exception as exc:
                log.error("usage row malformed, lost: %s", describe_error(exc))
                self._count(lost=1)
                continue
            kept.append(row)
        data = b"".join(lines)
        del lines
        with self._stage_lock:
            if self._journal is not None and self._journal_ok and data:
                try:
                    self._journal.append(data)
                except OSError as exc:
                    # The rows still go to the database; only a kill meanwhile would lose them.
                    log.error("usage journal not writable: %s", describe_error(exc))
            self._staged.extend(kept)

    async def _write_loop(self) -> None:
        cfg = self._cfg
        while not self._draining:
            if len(self._staged) < cfg.batch_size:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), cfg.flush_interval_s)
            try:
                await self._flush()
                await self._maybe_replay()
            except Exception as exc:  # never let the writer die
                log.error("usage writer iteration failed: %s", describe_error(exc))
        await self._flush()
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
                await asyncio.to_thread(self._spool_now, rows)
            if self._closed and not self._overflow:
                return

    async def _flush(self) -> None:
        if self._staged:
            await asyncio.to_thread(self._flush_staged)

    def _flush_staged(self) -> None:
        """Worker thread: every staged row to SQL (else the spool), then its journal file emptied."""
        with self._stage_lock:
            rows, self._staged = self._staged, []
            used = self._journal.rotate() if self._journal is not None and self._journal_ok else None
        self._store(self._values(rows))
        if used is not None:
            assert self._journal is not None
            with self._stage_lock:
                self._journal.clear(used)

    def _store(self, values: list[dict[str, Any]]) -> None:
        """Insert in statements of ``batch_size`` rows; from the first failure on, spool."""
        done = 0
        if self._engine is not None and self._db_available():
            try:
                for size in self._sizes(len(values)):
                    self._count(written=self._insert(values[done : done + size]))
                    done += size
            except Exception as exc:
                self._mark_down(exc)
            else:
                self._mark_up()
        if done < len(values):
            self._spool_values(values[done:])

    def _sizes(self, n: int) -> list[int]:
        """Rows per insert statement: ``batch_size``, and on SQLite powers of two for the rest."""
        size = self._cfg.batch_size
        if self._engine is not None and self._engine.dialect.name == "sqlite":
            return _statement_sizes(n, min(size, MAX_ROWS_PER_STATEMENT))
        return [min(size, n - start) for start in range(0, n, size)]

    def _db_available(self) -> bool:
        return time.monotonic() >= self._down_until

    def _mark_down(self, exc: BaseException) -> None:
        self._down_until = time.monotonic() + self._retry_s
        if isinstance(exc, SchemaOutOfDate):
            log.error("%s", exc)  # our own message, naming the command to run
        if not self._down_logged:  # once per outage, not once per batch
            log.warning(
                "usage database unavailable (%s): rows go to the spool %s",
                describe_error(exc),
                self._spool.path,
            )
            self._down_logged = True

    def _mark_up(self) -> None:
        self._down_until = 0.0
        if self._down_logged:
            log.warning("usage database reachable again")
            self._down_logged = False

    def _count(self, *, written: int = 0, spooled: int = 0, lost: int = 0, rejected: int = 0) -> None:
        # Worker threads and (after stop) the loop itself update these.
        with self._count_lock:
            self._written += written
            self._spooled += spooled
            self._lost += lost
            self._rejected += rejected

    def _insert(self, values: list[dict[str, Any]]) -> int:
        """Worker thread: one multi-row insert (schema checked once); rows the database
        refuses cost only themselves."""
        assert self._engine is not None
        if not self._schema_ok:
            self._connect()
        try:
            return insert_rows(self._engine, values)
        except (IntegrityError, DataError):
            return self._insert_one_by_one(values)

    def _values(self, rows: list[UsageRow] | list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Column values, made storable, dropping (counted, logged) rows too malformed to store."""
        values = []
        for r in rows:
            try:
                values.append(row_values(r, self._cfg.store_text))
            except Exception as exc:
                log.error("usage row malformed, lost: %s", describe_error(exc))
                self._count(lost=1)
        return values

    def _insert_one_by_one(self, values: list[dict[str, Any]]) -> int:
        """Insert a batch the database refused row by row: the rows it still refuses are
        kept for a human and logged as one summary line, not one line each."""
        assert self._engine is not None
        inserted = 0
        refused: list[tuple[dict[str, Any], BaseException]] = []
        for v in values:
            try:
                inserted += insert_rows(self._engine, [v])
            except (IntegrityError, DataError) as exc:
                refused.append((v, exc))
        if refused:
            self._reject(refused)
        return inserted

    def _reject(self, refused: list[tuple[dict[str, Any], BaseException]]) -> None:
        try:
            self._spool.reject([_line(v) for v, _ in refused])
        except OSError as error:
            log.error(
                "%d usage rows refused by the database (%s) and lost: %s",
                len(refused),
                describe_error(refused[0][1]),
                describe_error(error),
            )
            self._count(lost=len(refused))
            return
        self._count(rejected=len(refused))
        self._refusals.add(
            len(refused), describe_error(refused[0][1]), [v.get("request_id") for v, _ in refused]
        )

    async def _maybe_replay(self) -> None:
        if self._engine is None or not self._db_available():
            return
        if not self._spool_maybe:
            return
        # Cleared before looking, so that a row spooled meanwhile sets it again.
        self._spool_maybe = False
        if not self._spool.pending():
            return
        try:
            await asyncio.to_thread(self._replay)
            self._mark_up()
        except Exception as exc:
            self._spool_maybe = True
            self._mark_down(exc)

    def _replay(self) -> None:
        """Worker thread: insert the spool in batches, then delete it.

        Two rounds at most: a ``.replay`` left by an interrupted replay, then
        the spool itself. Rows spooled meanwhile wait for the next call.
        """
        for _ in range(2):
            fd = self._spool.claim()
            if fd is None:
                break
            inserted = 0
            for chunk in self._spool.read(fd, self._cfg.batch_size):
                values, start = self._values(chunk), 0
                for size in self._sizes(len(values)):
                    n = self._insert(values[start : start + size])
                    start += size
                    self._count(written=n)
                    inserted += n
            self._spool.done(fd)
            log.warning("usage spool replayed: %d rows inserted", inserted)
            _release_heap()

    def _spool_now(self, rows: list[UsageRow]) -> None:
        # Worker threads (spill task) and, after stop(), the loop itself.
        self._spool_values(self._values(rows))

    def _spool_values(self, values: list[dict[str, Any]]) -> None:
        try:
            n = self._spool.append(values)
        except Exception as exc:
            log.error(
                "usage spool %s not writable (%s): %d rows lost",
                self._spool.path,
                describe_error(exc),
                len(values),
            )
            self._count(lost=len(values))
            return
        self._count(spooled=n)
        self._spool_maybe = True
