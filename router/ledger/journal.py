"""The journal: rows answered but not yet committed, so that a killed proxy loses almost none."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from router.ledger.files import open_append, read_all, write_all


def journal_paths(spool_path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """The journal's two files, next to the spool: ``<stem>.journal-0`` and ``-1``."""
    base = Path(spool_path)
    return base.with_name(base.stem + ".journal-0"), base.with_name(base.stem + ".journal-1")


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
        self.paths = journal_paths(spool_path)
        self._fds: list[int] = []
        self._current = 0

    def open(self) -> bytes:
        """Open both files; return the rows a killed process left in them (JSON lines)."""
        self.paths[0].parent.mkdir(parents=True, exist_ok=True)
        for path in self.paths:
            try:
                self._fds.append(open_append(path))
            except OSError:
                self.close()
                raise
        left = [read_all(fd) for fd in self._fds]
        return b"".join(data if data.endswith(b"\n") else data + b"\n" for data in left if data)

    def append(self, data: bytes) -> None:
        write_all(self._fds[self._current], data)

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
