"""State the replicas share: in-flight slots, per-key limits, response ids and sessions.

One process needs nothing shared: every count lives in it. That is
:class:`InProcess`, the default, and it is exactly how a single replica has
always behaved. Several replicas behind a load balancer configure
``state: {redis_url: ..., replicas: N}``, and the same four small interfaces are
served from Redis instead (:mod:`router.forward.shared_redis`; :func:`router.forward.sharing.shared_state` picks one):

* :class:`Slots`: in-flight slots per endpoint, for ``Backend.acquire``,
  ``release`` and ``take_idle``, so that spill, queue and shadow decisions read
  the count of every replica;
* :class:`WindowStore`: per-key requests and tokens per minute, for
  :class:`router.edge.limits.RateLimits`;
* :class:`OwnerStore`: response id → backend and client key, for
  :class:`router.forward.response_ids.ResponseOwners`;
* :class:`router.sessions.SessionStore`: session → where its last turn ran, for
  :class:`router.sessions.Sessions` (the endpoint it sticks to, the switch-cost rule).

Each Redis implementation falls back to the in-process behaviour the moment
Redis fails or is slow, and comes back on its own: a request never waits on, or
fails because of, a Redis that is away. The callers cannot tell which one they
hold, so none of them branches on Redis.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

from router.sessions import NoSessionStore, SessionStore

WINDOW_S = 60.0  # the per-key windows' length: requests and tokens per minute


class Counted(Protocol):
    """What a slot count reads of an endpoint (``router.forward.backends.Counted``)."""

    @property
    def url(self) -> str: ...

    @property
    def in_flight(self) -> int: ...


class Slots(Protocol):
    """Where in-flight slots are counted. ``Endpoint.in_flight`` always counts this
    replica's own requests; a Slots decides what the limit is checked against."""

    def limit(self, configured: int | None) -> int | None:
        """The in-flight limit per endpoint that applies now (``max_concurrency``, or this
        replica's share of it while the shared count is away)."""
        ...

    def in_use(self, endpoint: Counted) -> int:
        """Slots in use on ``endpoint``: what spill, queue and shadow decisions compare
        with :meth:`limit`."""
        ...

    async def take(self, endpoint: Counted, limit: int | None) -> bool:
        """Take one slot on ``endpoint`` if fewer than ``limit`` are in use, atomically."""
        ...

    def claim(self, endpoint: Counted, limit: int | None) -> None:
        """Count a slot already judged free without waiting (a shadow run's idle slot)."""
        ...

    def give_back(self, endpoint: Counted) -> None:
        """A slot taken or claimed on ``endpoint`` is free again. Never waits."""
        ...

    async def refresh(self, endpoints: Sequence[Counted]) -> bool:
        """Re-read the counts before refusing for capacity: True if they changed."""
        ...

    def wait_s(self, remaining: float) -> float:
        """How long a queued request sleeps before it looks again: other replicas'
        releases do not wake it."""
        ...

    def shared_up(self) -> bool | None:
        """None when nothing is shared; else whether the shared count is in use."""
        ...

    async def keep(self, endpoints: Sequence[Counted]) -> None:
        """The background task that keeps this replica's slots alive (leases renewed)."""
        ...

    async def close(self) -> None:
        """Give back whatever this replica still holds (shutdown)."""
        ...


class LocalSlots:
    """Each replica counts its own requests: ``max_concurrency`` is per replica."""

    def limit(self, configured: int | None) -> int | None:
        return configured

    def in_use(self, endpoint: Counted) -> int:
        return endpoint.in_flight

    async def take(self, endpoint: Counted, limit: int | None) -> bool:
        # No await before the caller's `in_flight += 1`: check and count are one step.
        return limit is None or endpoint.in_flight < limit

    def claim(self, endpoint: Counted, limit: int | None) -> None:
        return None

    def give_back(self, endpoint: Counted) -> None:
        return None

    async def refresh(self, endpoints: Sequence[Counted]) -> bool:
        return False  # the count is this process's own: always current

    def wait_s(self, remaining: float) -> float:
        return remaining  # every release here sets Server.slot_freed

    def shared_up(self) -> bool | None:
        return None

    async def keep(self, endpoints: Sequence[Counted]) -> None:
        return None

    async def close(self) -> None:
        return None


class Refused(NamedTuple):
    """A shared window's refusal: which budget ran out, and when the next request fits."""

    what: str  # "requests" or "tokens", as router.edge.limits names them
    wait_s: float


class WindowStore(Protocol):
    """Per-key windows that several replicas admit against (router/edge/limits.py)."""

    async def admit(self, name: str, rpm: int | None, tpm: int | None, reserve: int) -> str | Refused | None:
        """Count a request and hold ``reserve`` tokens: the reservation's id, a refusal, or
        None when this store does not decide (the in-process windows do)."""
        ...

    def settle(self, name: str, reservation: str, held: int, tokens: int) -> bool:
        """Release a reservation :meth:`admit` made and charge ``tokens``; False when the
        store cannot, so that the caller charges them in process."""
        ...

    def charge(self, name: str, tokens: int) -> bool:
        """Charge ``tokens`` without a reservation; False as for :meth:`settle`."""
        ...


class InProcessWindows:
    """Decides nothing: router.edge.limits.RateLimits's own windows are the in-process ones."""

    async def admit(self, name: str, rpm: int | None, tpm: int | None, reserve: int) -> str | Refused | None:
        return None

    def settle(self, name: str, reservation: str, held: int, tokens: int) -> bool:
        return False

    def charge(self, name: str, tokens: int) -> bool:
        return False


class Minted(NamedTuple):
    """Who minted a Responses id: the backend that stores the response and the client key
    it belongs to (None: an open proxy with no client keys)."""

    backend: str
    client: str | None
    session: str | None = None  # the conversation it belongs to (router/sessions.py)


class OwnerStore(Protocol):
    """Response id → who minted it, beyond this process (router/forward/response_ids.py)."""

    def put(self, response_id: str, minted: Minted) -> None:
        """Record an owner. Never waits."""
        ...

    async def get(self, response_id: str) -> Minted | None:
        """The owner another replica recorded, or None."""
        ...


class InProcessOwners:
    """Nothing beyond ResponseOwners's own map."""

    def put(self, response_id: str, minted: Minted) -> None:
        return None

    async def get(self, response_id: str) -> Minted | None:
        return None


IN_PROCESS_WINDOWS = InProcessWindows()
IN_PROCESS_OWNERS = InProcessOwners()


class SharedState(Protocol):
    """The four interfaces, with their start, stop and what /readyz shows of them."""

    # Read-only members: an implementation may hold a narrower type of each.
    @property
    def slots(self) -> Slots: ...
    @property
    def windows(self) -> WindowStore: ...
    @property
    def owners(self) -> OwnerStore: ...
    @property
    def sessions(self) -> SessionStore: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def status(self) -> dict[str, Any] | None:
        """For /readyz; None when nothing is shared."""
        ...


class InProcess:
    """No ``state:`` key: one process, every count its own (the behaviour of a single replica)."""

    def __init__(self) -> None:
        self.slots: Slots = LocalSlots()
        self.windows: WindowStore = IN_PROCESS_WINDOWS
        self.owners: OwnerStore = IN_PROCESS_OWNERS
        self.sessions: SessionStore = NoSessionStore()

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    def status(self) -> dict[str, Any] | None:
        return None


__all__ = [
    "IN_PROCESS_OWNERS",
    "IN_PROCESS_WINDOWS",
    "InProcess",
    "LocalSlots",
    "Minted",
    "OwnerStore",
    "Refused",
    "SharedState",
    "Slots",
    "WindowStore",
]
