"""Rows the database refused, logged as a summary rather than one ERROR line each.

A hand-edited spool of 455 bad rows used to make 455 ERROR lines. :class:`RefusalLog`
logs the first refusal at once and the ones after it at most once every ``every_s``
seconds (and at stop), each line giving the count, the first error, where the rows were
kept and a few of their request ids.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger("offload.accounting")


class RefusalLog:
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
        self._lock = threading.Lock()  # rows are refused in worker threads

    def add(self, count: int, error: str, ids: list[Any]) -> None:
        """``count`` rows refused (``error``: the first one's reason), kept in ``kept_in``."""
        with self._lock:
            self._count += count
            self._error = self._error or error
            self._ids = (self._ids + ids)[:3]
            due = self._clock() - self._last >= self.every_s
        if due:
            self.flush()

    def flush(self) -> None:
        """Log what was refused since the last line, if anything."""
        with self._lock:
            count, error, ids = self._count, self._error, self._ids
            self._count, self._error, self._ids = 0, "", []
            self._last = self._clock()
        if not count:
            return
        shown = ", ".join(str(i) for i in ids) + (f" and {count - len(ids)} more" if count > len(ids) else "")
        log.error(
            "%d usage rows refused by the database (first: %s): kept in %s (%s)",
            count,
            error,
            self.kept_in,
            shown,
        )
