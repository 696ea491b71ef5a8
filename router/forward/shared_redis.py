"""The replicas' shared state in Redis: slot leases, per-key windows, response ids, sessions.

Imported only when the config has a ``state:`` key (router/forward/sharing.py). Four
things are shared, each behind the interface its in-process counterpart serves:

* **Slot leases** (:class:`SharedSlots`). Per endpoint URL, a sorted set of
  leases (member: ``<replica>:<n>``, score: its expiry in ms). Taking a slot is
  one Lua script: drop the expired leases, count, add one if below the limit.
  Each lease has a TTL (``state.lease_ttl_s``); one background task per replica
  renews its leases three times per TTL while requests run, so a replica that
  dies (SIGKILL, OOM, a lost node) holds nothing once its leases expire. The
  scripts read Redis's own clock, the one clock every replica agrees on.
* **Per-key windows** (:class:`SharedWindows`): the sliding minute of
  router/edge/limits.py (requests counted at admission, tokens reserved at admission
  and replaced by the real usage at the end), as sorted sets and two sums per
  key, admitted in one script with the same arithmetic and Retry-After.
* **Response ids** (:class:`SharedOwners`): one key per id with a TTL.
* **Sessions** (:class:`SharedSessions`): where each session's last turn ran, one key
  per session with a TTL of a day.

**Redis away.** Every call is bounded by ``state.timeout_ms``. The first failure
(refused, reset, timed out, an error reply) marks the link down at once; from then
on no call touches the network, so each interface answers from its in-process
fallback with no wait: a replica's share of each endpoint (``max_concurrency ÷
state.replicas``), per-process limits, this process's response ids. A probe (PING
every ``state.probe_interval_s``) brings the link back after this replica's leases
are re-established, one for each request it still has in flight.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from router.config import StateConfig
from router.forward.redis_link import Link
from router.forward.redis_slots import SYNC, TAKE, SharedSlots
from router.forward.redis_windows import ADMIT, SETTLE, SharedOwners, SharedSessions, SharedWindows


class RedisState:
    """``state:`` configured: the four interfaces of router/forward/shared.py, served from Redis."""

    def __init__(self, config: StateConfig, clock: Callable[[], float] | None = None) -> None:
        self.config = config
        self.link = Link(config, clock)
        self.slots = SharedSlots(
            self.link, config.replicas, config.lease_ttl_s, config.lease_ttl_s + 2 * config.probe_interval_s
        )
        self.windows = SharedWindows(self.link)
        self.owners = SharedOwners(self.link, config.response_ids_ttl_s)
        self.sessions = SharedSessions(self.link)

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
    "SharedSessions",
    "SharedSlots",
    "SharedWindows",
]
