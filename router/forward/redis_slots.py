"""Slot leases in Redis: in-flight slots per endpoint, counted across every replica.

Per endpoint URL, a sorted set of leases (member: ``<replica>:<n>``, score: its expiry in
ms). Taking a slot is one Lua script: drop the expired leases, count, add one if below the
limit. Each lease has a TTL (``state.lease_ttl_s``); one background task per replica renews
its leases three times per TTL while requests run, so a replica that dies holds nothing once
its leases expire. The scripts read Redis's own clock, the one clock every replica agrees on.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable, Sequence

from router.forward.redis_link import _NOW, Link
from router.forward.shared import Counted
from router.redact import redact_url

log = logging.getLogger("offload.shared")


# A queued request re-reads the shared count this often: other replicas' releases do
# not set this process's Server.slot_freed.
QUEUE_POLL_S = 0.1
# A released lease (a settled reservation) goes to Redis with this replica's next take on
# the endpoint (admission for the key), or after this long if none comes first: one round
# trip per request, not two, while other replicas see it this much later at most.
RELEASE_FLUSH_S = 0.01

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
        self._counted: list[Counted] = []  # endpoints with a max_concurrency (from keep())
        self._serial = itertools.count()
        self._flush_timer: asyncio.TimerHandle | None = None
        link.on_recovery(self._reestablish)

    def key(self, url: str) -> str:
        return f"{self.link.prefix}:slots:{redact_url(url)}"

    def share(self, limit: int) -> int:
        """This replica's even part of an endpoint (what /readyz reports while away)."""
        return max(1, limit // self.replicas)

    def _own_limit(self, endpoint: Counted, limit: int) -> int:
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

    def in_use(self, endpoint: Counted) -> int:
        count = endpoint.in_flight if not self.link.up else self._counts.get(endpoint.url, endpoint.in_flight)
        own = self._outage.get(endpoint.url)
        if own is not None and (not self.link.up or self._rebuilding()) and endpoint.in_flight >= own[0]:
            # This replica's own limit is reached: the endpoint is full, by limit()'s measure.
            return max(count, self.limit(own[1]) or 0)
        return count

    async def take(self, endpoint: Counted, limit: int | None) -> bool:
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

    def claim(self, endpoint: Counted, limit: int | None) -> None:
        if limit is None or not self.link.up:
            return  # while Redis is away the count is in process; recovery leases it
        url, lease = endpoint.url, self._lease()
        self._leases.setdefault(url, []).append(lease)
        self._counts[url] = self._counts.get(url, 0) + 1
        args: list[str | int | float] = [self.link.now_ms(), self._ttl_ms, 0, lease]
        self.link.spawn(lambda: self._sync(keys=[self.key(url)], args=args), done=self._counter(url))

    def give_back(self, endpoint: Counted) -> None:
        url = endpoint.url
        leases = self._leases.get(url)
        if not leases:
            return  # taken in process while Redis was away, or not counted at all
        self._drop(url, leases.pop())
        if url in self._counts:
            self._counts[url] = max(self._counts[url] - 1, 0)  # the next sync's count corrects it
        if self.link.up and self._flush_timer is None:
            self._flush_timer = asyncio.get_running_loop().call_later(RELEASE_FLUSH_S, self._flush_soon)

    async def refresh(self, endpoints: Sequence[Counted]) -> bool:
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

    async def keep(self, endpoints: Sequence[Counted]) -> None:
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
