"""The console's work, kept off the proxy's request path.

Every query and every page render runs in the console's own two threads, never on
the event loop and never in the default executor, where the accounting writer
does its inserts: a burst of console views can only queue behind itself. Each
query opens its own connection (no pool held between views) and never uses the
writer's engine.

A month's figures are ``router.ledger.report.build_report`` itself (the same code as
``offload report``) plus the daily trend (:func:`router.console.queries.daily`).
Both scan the whole month, which on a million rows takes longer than a page may
(bench/README.md), so they are kept per month and recomputed in the background
once they are older than ``ttl_s`` (a month still in progress) or
``CLOSED_TTL_S`` (a past month, for rows replayed late from a spool): a view gets
the figures at once, with their age, while fresher ones are computed. The first
console page or login page after a start begins computing the current month, so
only a Month view that comes before they are ready waits for them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Engine, make_url
from sqlalchemy.exc import SQLAlchemyError

from router.config import Config
from router.console import queries
from router.console.session import ConsoleError
from router.ledger.db import describe_error, is_sqlite, make_engine
from router.ledger.report import build_report, month_bounds

log = logging.getLogger("offload.console")

T = TypeVar("T")
CLOSED_TTL_S = 900.0
_KEEP_MONTHS = 12  # months of figures kept in memory


@dataclass(frozen=True, slots=True)
class MonthFigures:
    month: str
    report: dict[str, Any]  # build_report's, as `offload report --format json` prints it
    days: list[queries.Day]
    computed_at: datetime
    took_s: float


class Console:
    def __init__(self, config: Config, *, ttl_s: float = 60.0, threads: int = 2) -> None:
        self.config = config
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="offload-console")
        self._engine: Engine | None = None
        self.months = MonthCache(self._compute_month, ttl_s)

    @property
    def recording(self) -> bool:
        return self.config.database.enabled

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in one of the console's threads."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(connection, *args)`` in a console thread; ConsoleError 503 when nothing can be read."""
        return await self.run(self._with_connection, False, fn, args)

    async def write(self, fn: Callable[..., T], *args: Any) -> T:
        """As :meth:`read`, in a transaction."""
        return await self.run(self._with_connection, True, fn, args)

    def _with_connection(self, write: bool, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        engine = self._open()
        try:
            with engine.begin() if write else engine.connect() as conn:
                return fn(conn, *args)
        except SQLAlchemyError as exc:
            # The type and code only: a driver's message may quote stored prompt text.
            log.warning("console: database error: %s", describe_error(exc))
            raise ConsoleError(503, f"cannot read the usage database: {describe_error(exc)}") from None

    def _open(self) -> Engine:
        """The console's own engine (no pool); ConsoleError 503 when there is nothing to read.
        An SQLite file that does not exist is never created here."""
        url = self.config.database.url
        if not self.recording:
            raise ConsoleError(503, "database.enabled is false: the proxy records nothing")
        path = make_url(url).database if is_sqlite(url) else None
        if path and path != ":memory:" and not Path(path).exists():
            raise ConsoleError(503, "nothing recorded yet: the usage database does not exist")
        if self._engine is None:
            self._engine = make_engine(url, pooled=False)
        return self._engine

    async def _compute_month(self, month: str) -> MonthFigures:
        return await self.run(self._month_now, month)

    def _month_now(self, month: str) -> MonthFigures:
        t0 = time.perf_counter()
        report = build_report(self.config, month)
        start, end = month_bounds(month)
        if report["empty"]:  # also: nothing recorded, no database, no table yet
            days = [queries.Day(d, 0, 0, 0, 0) for d in queries.days_between(start, end)]
        else:
            days = self._with_connection(False, queries.daily, (start, end))
        return MonthFigures(month, report, days, datetime.now(UTC), time.perf_counter() - t0)


class MonthCache:
    """Each month's figures, recomputed in the background when stale; one computation per
    month at a time, however many views ask for it."""

    def __init__(self, compute: Callable[[str], Awaitable[MonthFigures]], ttl_s: float) -> None:
        self._compute = compute
        self._ttl_s = ttl_s
        self._done: dict[str, tuple[float, MonthFigures]] = {}
        self._running: dict[str, asyncio.Task[MonthFigures]] = {}

    async def get(self, month: str) -> MonthFigures:
        """The month's figures: at once when any are kept (refreshing them if stale), else
        once computed."""
        done = self._done.get(month)
        if done is not None and not self._stale(done):
            return done[1]
        task = self._refresh(month)
        if done is not None:
            return done[1]
        return await asyncio.shield(task)

    def warm(self, month: str) -> None:
        """Start computing the month's figures if none are kept, so that the first Month
        view after a start does not wait for them. (Kept ones are refreshed only when the
        Month view is looked at: a wall screen showing Now costs no month scans.)"""
        if month not in self._done:
            self._refresh(month)

    def _stale(self, done: tuple[float, MonthFigures]) -> bool:
        kept_at, figures = done
        ttl = self._ttl_s if figures.report["partial"] else CLOSED_TTL_S
        return time.monotonic() - kept_at >= ttl

    def _refresh(self, month: str) -> asyncio.Task[MonthFigures]:
        task = self._running.get(month)
        if task is None:
            task = asyncio.create_task(self._keep(month))
            task.add_done_callback(_log_failure)
            self._running[month] = task
        return task

    async def _keep(self, month: str) -> MonthFigures:
        try:
            figures = await self._compute(month)
        finally:
            self._running.pop(month, None)
        self._done[month] = (time.monotonic(), figures)
        while len(self._done) > _KEEP_MONTHS:
            oldest = min(self._done, key=lambda m: self._done[m][0])
            del self._done[oldest]
        return figures


def _log_failure(task: asyncio.Task[MonthFigures]) -> None:
    if not task.cancelled() and (exc := task.exception()) is not None:
        message = exc.message if isinstance(exc, ConsoleError) else describe_error(exc)
        log.warning("console: month figures not computed: %s", message)
