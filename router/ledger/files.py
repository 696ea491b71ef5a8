"""The file primitives the spool and the journal share: descriptors opened once, whole writes."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson


def open_append(path: Path) -> int:
    # 0600: with database.store_text on, these files hold prompt text.
    return os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)


def write_all(fd: int, data: bytes) -> None:
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


def read_all(fd: int) -> bytes:
    chunks, offset = [], 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def lines(fd: int, block: int = 64 * 1024) -> Iterator[bytes]:
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


def release_heap() -> None:
    """Give the memory a replay used back to the OS (glibc's malloc_trim).

    A replay builds and frees a whole spool's worth of rows in a worker thread;
    glibc keeps such freed memory in that thread's arena, and every database
    outage left the proxy a few MB larger for good (+11 % RSS over six outages
    in the hostile soak). Rare, and a few milliseconds.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def line(values: dict[str, Any]) -> bytes:
    return orjson.dumps(values) + b"\n"
