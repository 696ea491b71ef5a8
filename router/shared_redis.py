"""The replicas' shared state in Redis: slot leases, per-key windows, response ids.

Imported only when the config has a ``state:`` key (router/shared.py). Three
things are shared, each behind the interface its in-process counterpart serves:

* **Slot leases** (:class:`SharedSlots`). Per endpoint URL, a sorted set of
  leases (member: ``<replica>:<n>``, score: its expiry in ms). Taking a slot is
  one Lua script: drop the expired leases, count, add one if below the limit.
  Each lease has a TTL (``state.lease_ttl_s``); one background task per replica
  renews its leases three times per TTL while requests run, so a replica that
  dies (SIGKILL, OOM, a lost node) holds nothing once its leases expire. The
  scripts read Redis's own clock, the one clock every replica agrees on.
* **Per-key windows** (:class:`SharedWindows`): the sliding minute of
  router/limits.py (requests counted at admission, tokens reserved at admission
  and replaced by the real usage at the end), as sorted sets and two sums per
  key, admitted in one script with the same arithmetic and Retry-After.
* **Response ids** (:class:`SharedOwners`): one key per id with a TTL.

**Redis away.** Every call is bounded by ``state.timeout_ms``. The first failure
(refused, reset, timed out, an error reply) marks the link down at once; from then
on no call touches the network, so each interface answers from its in-process
fallback with no wait: a replica's share of each endpoint (``max_concurrency ÷
state.replicas``), per-process limits, this process's response ids. A probe (PING
every ``state.probe_interval_s``) brings the link back after this replica's leases
are re-established, one for each request it still has in flight.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

import orjson
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from router.config import StateConfig
from router.limits import WINDOW_S
from router.redact import redact_url
from router.shared import Minted, Refused

if TYPE_CHECKING:
    from router.backends import Endpoint

log = logging.getLogger("offload.shared")

T = TypeVar("T")

# A queued request re-reads the shared count this often: other replicas' releases do
# not set this process's Server.slot_freed.
QUEUE_POLL_S = 0.1
# A released lease (a settled reservation) goes to Redis with this replica's next take on
# the endpoint (admission for the key), or after this long if none comes first: one round
# trip per request, not two, while other replicas see it this much later at most.
RELEASE_FLUSH_S = 0.01
# Response ids are the client's to choose (previous_response_id): never a huge key.
MAX_ID_BYTES = 256
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

# KEYS[1]: an endpoint's leases. ARGV: now_ms ('' = Redis TIME), ttl_ms, limit, lease, then
# this replica's leases released since its last call (dropped first: a release rides on the
# next take). Returns {1 taken | 0 refused, leases held after}.
TAKE = (
    _NOW
    + """
for i = 5, #ARGV do redis.call('ZREM', KEYS[1], ARGV[i]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[3]) then return {0, held} end
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[4])
redis.call('PEXPIRE', KEYS[1], 2 * ttl)
return {1, held + 1}
"""
)

# KEYS[1]: an endpoint's leases. ARGV: now_ms, ttl_ms, n, then n leases to drop, then the
# leases to keep: each (re)added with a fresh expiry, also one that had expired meanwhile
# (its request is still running). Renewal, release and re-establishment in one.
# Returns the leases held after.
SYNC = (
    _NOW
    + """
local ttl = tonumber(ARGV[2])
local drop = tonumber(ARGV[3])
for i = 4, 3 + drop do redis.call('ZREM', KEYS[1], ARGV[i]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
for i = 4 + drop, #ARGV do redis.call('ZADD', KEYS[1], now + ttl, ARGV[i]) end
if #ARGV >= 4 + drop then redis.call('PEXPIRE', KEYS[1], 2 * ttl) end
return redis.call('ZCARD', KEYS[1])
"""
)

# One key's windows. KEYS: requests (id → admitted at), tokens ("id:n" → charged at),
# reserved ("id:n" → admitted at), sums (hash: tokens, reserved). Entries leave the
# window when they are a window old, as in router/limits.py (_Window.expire).
_EXPIRE = """
local window = tonumber(ARGV[2])
local start = now - window
local function drop(key, field)
  local old = redis.call('ZRANGEBYSCORE', key, '-inf', start)
  if #old == 0 then return end
  local total = 0
  for _, member in ipairs(old) do total = total + tonumber(string.match(member, ':(%d+)$')) end
  redis.call('HINCRBY', KEYS[4], field, -total)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', start)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', start)
drop(KEYS[2], 'tokens')
drop(KEYS[3], 'reserved')
local function keep_all() for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], 2 * window) end end
"""


def _settlements(first: int) -> str:
    """Lua applying the settlements in ARGV from ``first`` on, four values each: the held
    reservation ("id:n" or ''), its n, the charge ("id:n" or ''), its n. A reservation that
    already lapsed is not released twice; the usage is charged all the same."""
    return f"""
for i = {first}, #ARGV, 4 do
  if ARGV[i] ~= '' and redis.call('ZREM', KEYS[3], ARGV[i]) == 1 then
    redis.call('HINCRBY', KEYS[4], 'reserved', -tonumber(ARGV[i + 1]))
  end
  local tokens = tonumber(ARGV[i + 3])
  if ARGV[i + 2] ~= '' and tokens > 0 then
    redis.call('ZADD', KEYS[2], now, ARGV[i + 2])
    redis.call('HINCRBY', KEYS[4], 'tokens', tokens)
  end
end
"""


# ARGV: now_ms, window_ms, rpm (-1: none), tpm (-1: none), reserve, id, then this replica's
# settlements for the key since its last call (applied first: they ride on the next admission).
# Returns {1, 'ok', 0} or {0, 'tokens' | 'requests', ms until the next request fits}.
ADMIT = (
    _NOW
    + _EXPIRE
    + _settlements(7)
    + """
local rpm, tpm, reserve = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
if tpm >= 0 then
  local sums = redis.call('HMGET', KEYS[4], 'tokens', 'reserved')
  local committed = (tonumber(sums[1]) or 0) + (tonumber(sums[2]) or 0)
  local need = math.max(reserve, 1)
  if committed ~= 0 and committed + need > tpm then
    local wait = 1000
    local charged = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
    for i = 1, #charged, 2 do
      committed = committed - tonumber(string.match(charged[i], ':(%d+)$'))
      if committed == 0 or committed + need <= tpm then
        wait = tonumber(charged[i + 1]) + window - now
        break
      end
    end
    keep_all()
    return {0, 'tokens', wait}
  end
end
if rpm >= 0 and redis.call('ZCARD', KEYS[1]) >= rpm then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  keep_all()
  return {0, 'requests', tonumber(oldest[2]) + window - now}
end
redis.call('ZADD', KEYS[1], now, ARGV[6])
if reserve > 0 then
  redis.call('ZADD', KEYS[3], now, ARGV[6] .. ':' .. ARGV[5])
  redis.call('HINCRBY', KEYS[4], 'reserved', reserve)
end
keep_all()
return {1, 'ok', 0}
"""
)

# ARGV: now_ms, window_ms, then settlements (as above): those no admission carried in time.
SETTLE = _NOW + _EXPIRE + _settlements(3) + "keep_all()\nreturn 1\n"


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


class SharedSlots:
    """In-flight slots leased in Redis, per endpoint URL, shared by every replica.

    ``Endpoint.in_flight`` still counts this replica's own requests; this class
    keeps one lease per such request (``_leases``; fungible: any of them goes when
    any request ends) and the latest count of all replicas' leases (``_counts``,
    refreshed by every take, release and renewal). Taking waits for Redis (it is
    the atomic check); giving back never does: released leases are dropped by this
    replica's next take on the endpoint, or together after ``RELEASE_FLUSH_S``.

    **While the link is down** each replica counts in process against a limit of its
    own per endpoint, fixed when the outage began from the last count it saw: what it
    had in flight, plus its part (``÷ replicas``) of the slots no replica held. The
    limits of all replicas add up to at most ``max_concurrency`` whoever held what, so
    the box is never over-committed (plain ``max_concurrency ÷ replicas`` would let the
    replicas that held few fill up while the one that held many drains). **On the way
    back** those limits still apply for ``rebuild_s`` after recovery (a lease TTL and two
    probe intervals: every other replica has re-leased its requests by then, and the
    leases of one that never came back have expired), together with the shared count.
    """

    def __init__(self, link: Link, replicas: int, lease_ttl_s: float, rebuild_s: float | None = None) -> None:
        self.link = link
        self.replicas = replicas
        self._ttl_ms = int(lease_ttl_s * 1000)
        self._renew_s = lease_ttl_s / 3
        self._rebuild_s = lease_ttl_s if rebuild_s is None else rebuild_s
        # url → (this replica's limit while the count is away, max_concurrency)
        self._outage: dict[str, tuple[int, int]] = {}
        self._rebuilt_at = 0.0  # monotonic; until then the outage limits still apply
        self._take = link.client.register_script(TAKE)
        self._sync = link.client.register_script(SYNC)
        self._leases: dict[str, list[str]] = {}  # url → this replica's leases
        self._to_drop: dict[str, list[str]] = {}  # url → leases to drop at the next sync
        self._counts: dict[str, int] = {}  # url → leases of every replica, as last seen
        self._seen: dict[str, int] = {}  # url → the newest call whose count is in _counts
        self._calls = itertools.count()  # orders the calls: a late reply never undoes a newer one
        self._counted: list[Endpoint] = []  # endpoints with a max_concurrency (from keep())
        self._serial = itertools.count()
        self._flush_timer: asyncio.TimerHandle | None = None
        link.on_recovery(self._reestablish)

    def key(self, url: str) -> str:
        return f"{self.link.prefix}:slots:{redact_url(url)}"

    def share(self, limit: int) -> int:
        """This replica's even part of an endpoint (what /readyz reports while away)."""
        return max(1, limit // self.replicas)

    def _own_limit(self, endpoint: Endpoint, limit: int) -> int:
        """This replica's limit on ``endpoint`` while the shared count is away or being
        rebuilt: fixed the first time it is asked for, from the last count seen."""
        fixed = self._outage.get(endpoint.url)
        if fixed is not None:
            return fixed[0]
        seen = self._counts.get(endpoint.url)
        if seen is None:
            own = self.share(limit)  # never counted together: the even part
        else:
            mine = endpoint.in_flight
            others = max(seen - len(self._leases.get(endpoint.url, ())), 0)
            own = mine + max(limit - mine - others, 0) // self.replicas
        self._outage[endpoint.url] = (own, limit)
        return own

    def _rebuilding(self) -> bool:
        """Just recovered: the other replicas may not have re-leased their requests yet."""
        if self._rebuilt_at and time.monotonic() >= self._rebuilt_at:
            self._rebuilt_at = 0.0
            self._outage.clear()
        return bool(self._rebuilt_at)

    def limit(self, configured: int | None) -> int | None:
        if configured is None or self.link.up:
            return configured
        return self.share(configured)

    def in_use(self, endpoint: Endpoint) -> int:
        count = endpoint.in_flight if not self.link.up else self._counts.get(endpoint.url, endpoint.in_flight)
        own = self._outage.get(endpoint.url)
        if own is not None and (not self.link.up or self._rebuilding()) and endpoint.in_flight >= own[0]:
            # This replica's own limit is reached: the endpoint is full, by limit()'s measure.
            return max(count, self.limit(own[1]) or 0)
        return count

    async def take(self, endpoint: Endpoint, limit: int | None) -> bool:
        if limit is None:
            return True
        if not self.link.up or self._rebuilding():
            if endpoint.in_flight >= self._own_limit(endpoint, limit):
                return False
            if not self.link.up:
                return True
        url, lease = endpoint.url, self._lease()
        released = self._to_drop.pop(url, [])
        args: list[str | int | float] = [self.link.now_ms(), self._ttl_ms, limit, lease, *released]
        count = self._counter(url)
        try:
            got = await self.link.call(lambda: self._take(keys=[self.key(url)], args=args))
        except asyncio.CancelledError:
            self._to_drop.setdefault(url, []).extend([*released, lease])  # whether it ran or not
            raise
        if got is None:  # Redis failed just now: this request counts in process, as the next ones
            self._to_drop.setdefault(url, []).extend([*released, lease])
            return endpoint.in_flight < self._own_limit(endpoint, limit)
        taken, held = got
        count(held)
        if taken:
            self._leases.setdefault(url, []).append(lease)
        return bool(taken)

    def claim(self, endpoint: Endpoint, limit: int | None) -> None:
        if limit is None or not self.link.up:
            return  # while Redis is away the count is in process; recovery leases it
        url, lease = endpoint.url, self._lease()
        self._leases.setdefault(url, []).append(lease)
        self._counts[url] = self._counts.get(url, 0) + 1
        args: list[str | int | float] = [self.link.now_ms(), self._ttl_ms, 0, lease]
        self.link.spawn(lambda: self._sync(keys=[self.key(url)], args=args), done=self._counter(url))

    def give_back(self, endpoint: Endpoint) -> None:
        url = endpoint.url
        leases = self._leases.get(url)
        if not leases:
            return  # taken in process while Redis was away, or not counted at all
        self._drop(url, leases.pop())
        if url in self._counts:
            self._counts[url] = max(self._counts[url] - 1, 0)  # the next sync's count corrects it
        if self.link.up and self._flush_timer is None:
            self._flush_timer = asyncio.get_running_loop().call_later(RELEASE_FLUSH_S, self._flush_soon)

    async def refresh(self, endpoints: Sequence[Endpoint]) -> bool:
        if not self.link.up:
            return False
        before = [self._counts.get(e.url) for e in endpoints]
        await self.link.call(lambda: self._sync_all([e.url for e in endpoints]))
        # Down now: the limit became this replica's share, worth another look as well.
        return not self.link.up or before != [self._counts.get(e.url) for e in endpoints]

    def wait_s(self, remaining: float) -> float:
        return min(remaining, QUEUE_POLL_S) if self.link.up else remaining

    def shared_up(self) -> bool | None:
        return self.link.up

    async def keep(self, endpoints: Sequence[Endpoint]) -> None:
        """Renew this replica's leases (and re-read every replica's count) three times per
        lease TTL, for as long as the pool runs."""
        self._counted = list(endpoints)
        while True:
            if self.link.up:
                await self.link.call(lambda: self._sync_all([e.url for e in self._counted]))
            await asyncio.sleep(self._renew_s)

    async def flush(self) -> None:
        """Drop the released leases now rather than with the next take or flush."""
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        urls = [url for url, drop in self._to_drop.items() if drop]
        if urls:
            await self.link.call(lambda: self._sync_all(urls, renew=False))

    async def close(self) -> None:
        """Shutdown: drop every lease this replica still holds (they would expire anyway)."""
        for url in list(self._leases):
            self._to_drop.setdefault(url, []).extend(self._leases.pop(url))
        await self.flush()

    def status(self) -> dict[str, dict[str, int]]:
        return {
            redact_url(e.url): {
                "in_flight_all_replicas": self._counts.get(e.url, 0),
                "leases_here": len(self._leases.get(e.url, ())),
            }
            for e in self._counted
        }

    # ------------------------------------------------------------ internals

    def _lease(self) -> str:
        return f"{self.link.replica}:{next(self._serial)}"

    def _drop(self, url: str, lease: str) -> None:
        self._to_drop.setdefault(url, []).append(lease)

    def _flush_soon(self) -> None:
        self._flush_timer = None
        urls = [url for url, drop in self._to_drop.items() if drop]
        if urls:
            self.link.spawn(lambda: self._sync_all(urls, renew=False))

    def _counter(self, url: str) -> Callable[[int], None]:
        """What to do with the count a call about to start returns: keep it, unless a call
        started later has already answered (replies on different connections may cross)."""
        call = next(self._calls)

        def count(held: int) -> None:
            if call >= self._seen.get(url, -1):
                self._seen[url] = call
                self._counts[url] = int(held)

        return count

    async def _sync_all(self, urls: Sequence[str], renew: bool = True) -> bool:
        """For each endpoint: drop the released leases, renew this replica's (unless only
        dropping), and read every replica's count."""
        for url in urls:
            drop = self._to_drop.pop(url, [])
            keep = list(self._leases.get(url, ())) if renew else []
            args: list[str | int | float] = [self.link.now_ms(), self._ttl_ms, len(drop), *drop, *keep]
            count = self._counter(url)
            try:
                held = await self._sync(keys=[self.key(url)], args=args)
            except BaseException:
                self._to_drop.setdefault(url, [])[:0] = drop  # dropped at the next sync instead
                raise
            count(held)
        return True

    async def _reestablish(self) -> bool:
        """Recovery: one lease per request this replica has in flight (those admitted in
        process while Redis was away included), and nothing more."""
        for endpoint in self._counted:
            leases = self._leases.setdefault(endpoint.url, [])
            while len(leases) < endpoint.in_flight:
                leases.append(self._lease())
            while len(leases) > endpoint.in_flight:
                self._drop(endpoint.url, leases.pop())
        done = await self.link.call(lambda: self._sync_all([e.url for e in self._counted]), probing=True)
        if done is not None and self.link.outages:  # back from an outage, not a first start
            self._rebuilt_at = time.monotonic() + self._rebuild_s
        return done is not None


class SharedWindows:
    """Per-key windows in Redis (router/limits.py's arithmetic, in Lua). Admission waits
    for Redis; a settlement never does: it rides on the key's next admission from this
    replica, or goes with the others after ``RELEASE_FLUSH_S``, one call per key."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self._admit = link.client.register_script(ADMIT)
        self._settle = link.client.register_script(SETTLE)
        self._window_ms = int(WINDOW_S * 1000)
        self._pending: dict[str, list[str | int]] = {}  # key name → settlements (4 values each)
        self._flush_timer: asyncio.TimerHandle | None = None

    def keys(self, name: str) -> list[str]:
        base = f"{self.link.prefix}:limits:{{{name}}}"  # one hash slot per key name
        return [f"{base}:requests", f"{base}:tokens", f"{base}:reserved", f"{base}:sums"]

    async def admit(self, name: str, rpm: int | None, tpm: int | None, reserve: int) -> str | Refused | None:
        if not self.link.up:
            return None
        rid = os.urandom(8).hex()
        limits = [-1 if rpm is None else rpm, -1 if tpm is None else tpm]
        # The key's pending settlements ride along. Should the call fail they are not sent
        # again (it may have run): the reservations lapse within the window instead.
        settled = self._pending.pop(name, [])
        args = [self.link.now_ms(), self._window_ms, *limits, reserve, rid, *settled]
        got = await self.link.call(lambda: self._admit(keys=self.keys(name), args=args))
        if got is None:
            return None
        ok, what, wait_ms = got
        return rid if ok else Refused(what.decode(), int(wait_ms) / 1000)

    def settle(self, name: str, reservation: str, held: int, tokens: int) -> bool:
        return self._charge(name, f"{reservation}:{held}" if held > 0 else "", held, reservation, tokens)

    def charge(self, name: str, tokens: int) -> bool:
        return self._charge(name, "", 0, os.urandom(8).hex(), tokens)

    async def flush(self) -> None:
        """Send the pending settlements now (shutdown)."""
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        for name, args in self._take_pending():
            await self.link.call(functools.partial(self._settle, keys=self.keys(name), args=args))

    def _charge(self, name: str, held_member: str, held: int, charge_id: str, tokens: int) -> bool:
        if not self.link.up:
            return False
        charged = f"{charge_id}:{tokens}" if tokens > 0 else ""
        self._pending.setdefault(name, []).extend((held_member, held, charged, tokens))
        if self._flush_timer is None:
            self._flush_timer = asyncio.get_running_loop().call_later(RELEASE_FLUSH_S, self._flush_soon)
        return True

    def _take_pending(self) -> list[tuple[str, list[str | int]]]:
        pending, self._pending = self._pending, {}
        now = self.link.now_ms()
        return [(name, [now, self._window_ms, *groups]) for name, groups in pending.items()]

    def _flush_soon(self) -> None:
        self._flush_timer = None
        for name, args in self._take_pending():
            self.link.spawn(functools.partial(self._settle, keys=self.keys(name), args=args))


class SharedOwners:
    """Response id → backend, one key each with a TTL (``state.response_ids_ttl_s``)."""

    def __init__(self, link: Link, ttl_s: int) -> None:
        self.link = link
        self._ttl_ms = ttl_s * 1000

    def key(self, response_id: str) -> str:
        return f"{self.link.prefix}:response:{response_id}"

    def put(self, response_id: str, minted: Minted) -> None:
        if self.link.up and len(response_id) <= MAX_ID_BYTES:
            key = self.key(response_id)
            value = orjson.dumps([minted.backend, minted.client])
            self.link.spawn(lambda: self.link.client.set(key, value, px=self._ttl_ms))

    async def get(self, response_id: str) -> Minted | None:
        if len(response_id) > MAX_ID_BYTES:
            return None
        key = self.key(response_id)
        got = await self.link.call(lambda: self.link.client.get(key))
        return _minted(got)


def _minted(value: Any) -> Minted | None:
    """A stored ``[backend, client]``; anything else (a value an older version wrote, with
    no client) is no owner at all: the turn is decided as for an unknown id."""
    try:
        backend, client = orjson.loads(value) if isinstance(value, bytes) else (None, None)
    except (orjson.JSONDecodeError, ValueError, TypeError):
        return None
    if isinstance(backend, str) and (client is None or isinstance(client, str)):
        return Minted(backend, client)
    return None


class RedisState:
    """``state:`` configured: the three interfaces of router/shared.py, served from Redis."""

    def __init__(self, config: StateConfig, clock: Callable[[], float] | None = None) -> None:
        self.config = config
        self.link = Link(config, clock)
        self.slots = SharedSlots(
            self.link, config.replicas, config.lease_ttl_s, config.lease_ttl_s + 2 * config.probe_interval_s
        )
        self.windows = SharedWindows(self.link)
        self.owners = SharedOwners(self.link, config.response_ids_ttl_s)

    async def start(self) -> None:
        await self.link.start()

    async def stop(self) -> None:
        await self.windows.flush()  # the slots were given back by Pool.stop
        await self.link.stop()

    def status(self) -> dict[str, Any]:
        return {
            **self.link.status(),
            "replicas": self.config.replicas,
            "endpoints": self.slots.status(),
        }


__all__ = [
    "ADMIT",
    "SETTLE",
    "SYNC",
    "TAKE",
    "Link",
    "RedisState",
    "SharedOwners",
    "SharedSlots",
    "SharedWindows",
]
