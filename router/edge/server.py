"""The HTTP protocol ``offload serve`` runs: uvicorn's httptools protocol, bounded.

Until its request head (request line and headers) is complete a client is
anonymous: no key has been checked and no limit applies. uvicorn bounds none of
what such a client may hold, so one could keep a socket forever by sending
nothing, trickle an unfinished 32 MB header, send 10,000 headers, or open
sockets until the process has no descriptor left (and its own health probes and
upstream connections start failing). :func:`guarded_protocol` adds:

- a **head timeout** (``server.header_timeout_s``): a connection whose request
  head is not complete this long after it connected, or after its previous
  response, is closed (408 if it had started one);
- a **head size** and **header count** limit (``server.max_header_bytes``,
  ``server.max_headers``): 431, counted as the bytes arrive, so the parser
  never holds more than the limit plus one read;
- a **connection cap** (``server.max_connections``, lowered to what the
  descriptor limit leaves room for): at the cap a new connection displaces the
  connection that has waited longest between requests (an idle keep-alive
  connection, or one trickling its head), else it gets 503 and is closed. A
  real client sends its head at once, so a flood of slow or idle sockets
  evicts itself, not the clients that are being served.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import resource
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from router.config import ServerConfig

log = logging.getLogger("offload.server")

# Descriptors kept back from client connections: the listening socket, the event loop,
# logs, the database connection, the spool and journal files, health probes.
RESERVED_DESCRIPTORS = 128
LINGER_S = 2.0  # a refused connection's reads go on this long after the answer (see _refuse)


@dataclass(frozen=True, slots=True)
class HeadLimits:
    header_timeout_s: float
    max_header_bytes: int
    max_headers: int
    max_connections: int


# glibc mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_LARGE = 128 * 1024  # glibc's own initial mmap threshold


def return_freed_memory() -> bool:
    """Pin glibc's allocation thresholds so that memory freed after a burst of large
    bodies goes back to the system.

    By default glibc raises its mmap threshold to the size of the largest block freed
    (up to 32 MiB), after which multi-megabyte bodies come from the heap, and a burst
    of them leaves the process that much bigger for good (measured: 20 concurrent
    7 MB requests, RSS 102 -> 198 MB and staying; pinned: 102 -> 107 MB). Pinned at
    128 KiB, a large block is its own mapping, unmapped when freed, and the heap top is
    trimmed past 128 KiB. Only glibc has mallopt; elsewhere this does nothing.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, _LARGE)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, _LARGE))
    except (OSError, AttributeError):
        return False


def raise_descriptor_limit() -> int:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit and return it.

    systemd and most shells start services with a soft limit of 1,024 and a far
    higher hard one; Go does the same at start-up. LimitNOFILE in the unit (and the
    container runtime's ulimit) sets the hard limit.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


def head_limits(server: ServerConfig, descriptors: int) -> HeadLimits:
    """The limits from the config, the connection cap lowered to fit ``descriptors``:
    each client connection may hold an upstream connection too, and some are reserved."""
    room = max(16, (descriptors - RESERVED_DESCRIPTORS) // 2)
    cap = min(server.max_connections, room)
    if cap < server.max_connections:
        log.warning(
            "server.max_connections lowered from %d to %d: the descriptor limit is %d "
            "(raise LimitNOFILE or ulimit -n; docs/operations.md)",
            server.max_connections,
            cap,
            descriptors,
        )
    return HeadLimits(server.header_timeout_s, server.max_header_bytes, server.max_headers, cap)


def guarded_protocol(limits: HeadLimits) -> type[HttpToolsProtocol]:
    """A protocol class for ``uvicorn.Config(http=...)`` enforcing ``limits``, with its
    own record of idle connections (one server per class)."""
    return type("GuardedProtocol", (GuardedProtocol,), {"limits": limits, "idle": OrderedDict()})


def _error(status: int, message: str, code: str) -> bytes:
    body = orjson.dumps({"error": {"message": message, "type": "invalid_request_error", "code": code}})
    head = b"content-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n" % len(body)
    extra = b"retry-after: 1\r\n" if status == 503 else b""
    return STATUS_LINE[status] + head + extra + b"\r\n" + body


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the limits of the module docstring.

    Refusals never raise out of the parser's callbacks (uvicorn would answer 400 and
    log a line per attacker request): a callback records the refusal, later callbacks
    of the connection do nothing, and :meth:`_refuse` answers and closes.
    """

    limits: ClassVar[HeadLimits]
    idle: ClassVar[OrderedDict[GuardedProtocol, None]]  # between requests, oldest first

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = True  # waiting for (the rest of) a request head
        self._head_bytes = 0  # bytes received since the head began (or the connection idled)
        self._head_size = 0  # request line and headers, as parsed
        self._header_count = 0
        self._head_timer: asyncio.TimerHandle | None = None
        self._refusal: tuple[int, str, str] | None = None
        self._refused = False

    # ---------------------------------------------------------------- connection

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections and not self._make_room():
            self._refuse(
                503, "the proxy has too many open connections; retry shortly", "too_many_connections"
            )
            return
        self._await_head()

    def _make_room(self) -> bool:
        """Close the connection that has waited longest between requests; False if none."""
        while self.idle:
            victim, _ = self.idle.popitem(last=False)
            if victim is not self and not victim.transport.is_closing():
                victim._drop()
                return True
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_finished()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._refused:
            return
        if self._refusal is None and self._in_head and self._head_bytes > self.limits.max_header_bytes:
            self._refusal = self._too_large()
        if self._refusal is not None:
            self._refuse(*self._refusal)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.timeout_keep_alive_task is not None:  # idle until the next request
            self._await_head()

    # ---------------------------------------------------------------- parser callbacks

    def on_message_begin(self) -> None:
        if self._refused:
            return
        super().on_message_begin()
        self._in_head = True
        self._head_size = self._header_count = 0
        if self._head_timer is None:
            self._arm_timer()

    def on_url(self, url: bytes) -> None:
        if self._refused or self._refusal is not None:
            return
        self._head_size += len(url)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._refused or self._refusal is not None:
            return  # refused: headers are no longer kept
        self._header_count += 1
        self._head_size += len(name) + len(value) + 4
        if self._header_count > self.limits.max_headers:
            count = self.limits.max_headers
            self._refusal = (
                431,
                f"more than {count} request headers (server.max_headers)",
                "too_many_headers",
            )
            return
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        if self._refused:
            return
        if self._refusal is None and self._head_size > self.limits.max_header_bytes:
            self._refusal = self._too_large()
        if self._refusal is not None:
            self._refuse(*self._refusal)
            return
        self._head_finished()
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if not self._refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if not self._refused:
            super().on_message_complete()

    # ---------------------------------------------------------------- the limits

    def _await_head(self) -> None:
        """Between requests: the head timer runs and the connection may be displaced."""
        self._in_head = True
        self._head_bytes = 0
        self.idle[self] = None
        self.idle.move_to_end(self)
        if self._head_timer is None:
            self._arm_timer()

    def _arm_timer(self) -> None:
        self._head_timer = self.loop.call_later(self.limits.header_timeout_s, self._head_timeout)

    def _head_finished(self) -> None:
        self._in_head = False
        self._head_bytes = 0
        self.idle.pop(self, None)
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timeout(self) -> None:
        self._head_timer = None
        if self._refused or not self._in_head or self.transport.is_closing():
            return
        if self._head_bytes:
            timeout = self.limits.header_timeout_s
            self._refuse(408, f"request head not received within {timeout:g} s", "request_timeout")
        else:
            self._drop()  # nothing sent: nothing to answer

    def _too_large(self) -> tuple[int, str, str]:
        size = self.limits.max_header_bytes
        return 431, f"request head larger than {size} bytes (server.max_header_bytes)", "headers_too_large"

    def _refuse(self, status: int, message: str, code: str) -> None:
        """Answer and close. Lingering: the write side is shut at once, but what the client
        still sends is read (and discarded) for LINGER_S, so that one still sending its
        head reads the answer rather than a reset. Meanwhile the connection counts as
        idle: a new connection at the cap may displace it."""
        if self._refused:
            return
        self._refused = True
        self._head_finished()
        if self.transport.is_closing():
            return
        self.transport.write(_error(status, message, code))
        if not self.transport.can_write_eof():
            self.transport.close()
            return
        self.transport.write_eof()
        self.idle[self] = None
        self.loop.call_later(LINGER_S, self._drop)

    def _drop(self) -> None:
        self._refused = True
        self._head_finished()
        if not self.transport.is_closing():
            self.transport.close()


__all__ = ["GuardedProtocol", "HeadLimits", "guarded_protocol", "head_limits", "raise_descriptor_limit"]
