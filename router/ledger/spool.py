"""The spool: rows the database could not take yet, on disk until it can."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from router.ledger.files import line, lines, open_append, write_all

log = logging.getLogger("offload.accounting")


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
                self._fd = open_append(self.path)
            if self._replay_fd is None and self.replay_path.exists():
                self._replay_fd = open_append(self.replay_path)
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
        return self.append_bytes(b"".join(map(line, rows)))

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
                write_all(self._fd, data)
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
            return open_append(self.path)
        os.rename(self.spare_path, self.path)
        fd, self._spare_fd = self._spare_fd, None
        return fd

    def _ensure_spare(self) -> None:
        if self._open and self._spare_fd is None:
            # Out of descriptors now: the next replay or append tries again.
            with contextlib.suppress(OSError):
                self._spare_fd = open_append(self.spare_path)
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
                    self._fd = open_append(self.path)  # left by a shutdown's late append
                self._ensure_spare()
                if self._fd is None or self._spare_fd is None:
                    return None
                os.rename(self.path, self.replay_path)
                self._replay_fd, self._fd = self._fd, None
            return self._replay_fd

    def read(self, fd: int, chunk: int) -> Iterator[list[dict[str, Any]]]:
        batch: list[dict[str, Any]] = []
        for text in lines(fd):
            if not text.strip():
                continue
            try:
                batch.append(orjson.loads(text))
            except orjson.JSONDecodeError:
                # A torn last line after a crash: keep it for a human, skip it here.
                log.error("usage spool %s: an unreadable line moved to %s", self.path, self.rejected_path)
                self.reject([text])
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
                self._rejected_fd = open_append(self.rejected_path)
            write_all(self._rejected_fd, data)
            os.fsync(self._rejected_fd)
