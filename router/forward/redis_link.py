"""The connection every shared interface uses, and what happens while Redis is away.

Every call is bounded by ``state.timeout_ms``. The first failure (refused, reset, timed out,
an error reply) marks the link down at once; from then on no call touches the network, so
each interface answers from its in-process fallback with no wait. A probe (PING every
``state.probe_interval_s``) brings the link back once the recovery hooks (the slots'
re-established leases) have run.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from router.config import StateConfig

log = logging.getLogger("offload.shared")


T = TypeVar("T")

# Connections to Redis at most; a burst waits for a free one within timeout_ms.
MAX_CONNECTIONS = 64

# The time in ms: the caller's (tests inject a clock), else Redis's own.
_NOW = """
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
"""


class Link:
    """This replica's connection to Redis, and whether to use it (``up``).

    Modelled on the backends' Breaker: the first failed call opens it (no further
    call waits on a Redis that is away: they all return None at once and the
    callers use their in-process fallback); the probe closes it again, once the
    recovery hooks (this replica's leases) have succeeded.
    """

    def __init__(self, config: StateConfig, clock: Callable[[], float] | None = None) -> None:
        self.timeout_s = config.timeout_ms / 1000
        # Connecting (and the first PING after an outage) may take longer than one
        # command on a warm connection.
        self.probe_timeout_s = max(10 * self.timeout_s, 0.5)
        self.probe_interval_s = config.probe_interval_s
        self.prefix = config.key_prefix
        self.replica = os.urandom(6).hex()
        pool = aioredis.BlockingConnectionPool.from_url(
            config.redis_url,
            max_connections=MAX_CONNECTIONS,
            timeout=self.timeout_s,
            socket_timeout=self.probe_timeout_s,
            socket_connect_timeout=self.probe_timeout_s,
            retry=Retry(NoBackoff(), 0),  # one bounded attempt: the fallback is the retry
            driver_info=None,  # no CLIENT SETINFO round trip on each new connection
        )
        self.client = aioredis.Redis(connection_pool=pool)
        self.up = False
        self.since = time.time()  # of the last change of `up`
        self.outages = 0
        self.last_error: str | None = None
        self._clock = clock  # None: Redis's clock, which every replica shares
        self._hooks: list[Callable[[], Awaitable[bool]]] = []
        self._background: set[asyncio.Task[None]] = set()
        self._watch: asyncio.Task[None] | None = None

    def now_ms(self) -> str:
        """The scripts' ``now``: '' lets Redis read its own clock."""
        return "" if self._clock is None else str(int(self._clock() * 1000))

    def on_recovery(self, hook: Callable[[], Awaitable[bool]]) -> None:
        """Run ``hook`` (with calls allowed) before the link counts as up again."""
        self._hooks.append(hook)

    async def call(
        self, op: Callable[[], Awaitable[T]], *, probing: bool = False, timeout: float | None = None
    ) -> T | None:
        """``op()`` within the timeout, or None: the link is down, or this call just took it down."""
        if not (self.up or probing):
            return None
        try:
            async with asyncio.timeout(timeout or self.timeout_s):
                return await op()
        except (RedisError, OSError, TimeoutError) as exc:
            self._lost(exc)
            return None

    def spawn(
        self,
        op: Callable[[], Awaitable[T]],
        done: Callable[[T], None] | None = None,
        failed: Callable[[], None] | None = None,
    ) -> None:
        """``call(op)`` in the background: what a request hands over without waiting for it
        (releases, settlements, new ids)."""

        async def run() -> None:
            result = await self.call(op)
            if result is None:
                if failed is not None:
                    failed()
            elif done is not None:
                done(result)

        task = asyncio.get_running_loop().create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _lost(self, exc: BaseException) -> None:
        self.last_error = type(exc).__name__
        if not self.up:
            return
        self.up = False
        self.since = time.time()
        self.outages += 1
        log.warning(
            "shared state: Redis failed (%s): this replica uses its share of every endpoint "
            "(max_concurrency / state.replicas) and per-process limits until Redis answers again",
            self.last_error,
        )

    async def recover(self) -> bool:
        """One probe: PING, the recovery hooks, then up. The pooled connections go first:
        after a restart of Redis each of them would fail once, and each failure would take
        the link down again."""
        await self.client.connection_pool.disconnect()
        if await self.call(self.client.ping, probing=True, timeout=self.probe_timeout_s) is None:
            return False
        for hook in self._hooks:
            if not await hook():
                return False
        self.up = True
        self.since = time.time()
        log.warning("shared state: Redis answers: leases re-established, shared capacity and limits resumed")
        return True

    async def _watch_forever(self) -> None:
        """Probe every ``probe_interval_s``: recover when down; when up, a PING, so that an
        idle replica also notices Redis leaving (and says so in /readyz)."""
        while True:
            await asyncio.sleep(self.probe_interval_s)
            if self.up:  # off the request path: only a PING that fails, or crawls, counts
                await self.call(self.client.ping, timeout=self.probe_timeout_s)
            else:
                await self.recover()

    async def start(self) -> None:
        if not await self.recover():
            log.warning(
                "shared state: Redis does not answer (%s): starting on per-process shares and limits",
                self.last_error,
            )
        self._watch = asyncio.create_task(self._watch_forever())

    async def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
        if self._background:
            await asyncio.wait(set(self._background), timeout=1.0)
        await self.client.aclose()

    def status(self) -> dict[str, Any]:
        return {
            "mode": "shared" if self.up else "fallback",
            "redis": "up" if self.up else "down",
            "replica": self.replica,
            "since": datetime.fromtimestamp(self.since, UTC).isoformat(),
            "outages": self.outages,
            "last_error": self.last_error,
        }
