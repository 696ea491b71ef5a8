"""The backend pool: endpoints, health probes, breakers, capacity, fallback order.

A backend (``local``, ``cloud``) has one or more endpoints (several Sparks in
one backend). Each endpoint has its own pooled HTTP client, in-flight count,
health state and circuit breaker. :meth:`Pool.candidates` gives the order in
which to try backends for a decision; :meth:`Backend.acquire` picks an
endpoint with a free slot or says why it can't.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from router.config import KIND_APIS, BackendConfig, Config, HealthConfig
from router.forward import affinity
from router.forward.admission import EndpointLoad
from router.forward.breaker import CLOSED, HALF_OPEN, PROBE, Breaker
from router.forward.shared import LocalSlots, Slots
from router.forward.vllm_metrics import KV_USAGE, RUNNING, WAITING
from router.forward.vllm_metrics import parse as parse_metrics
from router.redact import redact_url

log = logging.getLogger("offload.backends")


@dataclass(slots=True)
class Endpoint:
    url: str  # base URL including /v1
    breaker: Breaker
    session: aiohttp.ClientSession | None = None
    in_flight: int = 0
    logged_up: bool = True  # what the log last said: Backend.log_transition logs each change once
    waiting: float = 0.0  # vllm:num_requests_waiting, from /metrics
    running: float = 0.0  # vllm:num_requests_running: shown in /readyz next to our own in_flight
    kv_cache_usage: float = 0.0
    # Its account in tokens, when its backend admits by time to first token (max_ttft_s).
    load: EndpointLoad | None = None
    prefix_cache_hits: float | None = None  # vllm:prefix_cache_hits_total (tokens), from /metrics
    prefix_cache_queries: float | None = None
    cache_block_size: int | None = None  # vllm:cache_config_info's block_size
    metrics_missing: tuple[str, ...] = ()  # families the router reads that /metrics lacks

    @property
    def up(self) -> bool:
        """Takes traffic: its breaker is closed."""
        return self.breaker.state == CLOSED

    @property
    def root(self) -> str:
        """The server root: vLLM's /health and /metrics live outside /v1."""
        return self.url[: -len("/v1")] if self.url.endswith("/v1") else self.url


# The proxy's own machine ran out of something: no evidence about any backend.
_OWN_RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


def own_resource_error(exc: BaseException) -> bool:
    """Did this failure come from the proxy's own exhausted resources (descriptors, memory)?
    Such failures must never count against a backend's breaker."""
    seen: BaseException | None = exc
    for _ in range(4):  # aiohttp wraps the OSError once or twice
        if seen is None:
            return False
        if isinstance(seen, OSError) and seen.errno in _OWN_RESOURCE_ERRNOS:
            return True
        seen = getattr(seen, "os_error", None) or seen.__cause__ or seen.__context__
    return False


@dataclass(slots=True)
class Server:
    """One model server's endpoints, shared by its backend and that backend's variants
    (``variant_of``: the same server with other settings). So there is one count of
    in-flight slots, one breaker, one connection pool and one health probe per endpoint,
    however many variants send it work."""

    endpoints: list[Endpoint]
    # Set when a slot comes free: wakes requests queued for it (capacity.policy: queue).
    slot_freed: asyncio.Event = field(default_factory=asyncio.Event)
    # Shadow runs holding a slot here, oldest first: real traffic takes their slots back.
    shadows: list[asyncio.Task[Any]] = field(default_factory=list)
    # Where its in-flight slots are counted: in this process, or across replicas (router/forward/shared.py).
    slots: Slots = field(default_factory=LocalSlots)

    @classmethod
    def at(cls, urls: list[str], health: HealthConfig, slots: Slots | None = None) -> Server:
        endpoints = [Endpoint(url, Breaker(health.failure_threshold, health.open_s)) for url in urls]
        return cls(endpoints, slots=slots or LocalSlots())


class Unavailable(Exception):
    """A backend cannot take this request now; ``reason`` goes to accounting."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class Backend:
    def __init__(
        self, name: str, config: BackendConfig, health: HealthConfig, server: Server | None = None
    ) -> None:
        self.name = name
        self.config = config
        self.kind = config.kind
        self.route = config.route_name
        self.model = config.model
        self.server = server or Server.at(config.urls, health)
        self.endpoints = self.server.endpoints
        self.slots = self.server.slots
        self.auth_headers = _auth_headers(config)
        self.apis = frozenset(config.served_apis)
        self.spills = 0

    @property
    def missing_secret_env(self) -> str | None:
        """The environment variable to set, when the backend's key is missing."""
        return self.config.api_key_env

    @property
    def in_flight(self) -> int:
        return sum(e.in_flight for e in self.endpoints)

    @property
    def up(self) -> bool:
        return self.missing_secret_env is None and any(e.up for e in self.endpoints)

    def _has_room(self, endpoint: Endpoint) -> bool:
        limit = self.slots.limit(self.config.max_concurrency)
        if limit is None:
            return True
        # An endpoint whose account counts tokens (max_ttft_s) is judged by that account, not
        # by vLLM's waiting gauge, which lags the engine by seconds.
        queued = endpoint.waiting > 0 and endpoint.load is None
        return self.slots.in_use(endpoint) < limit and not queued

    def _pick(
        self, session: str | None = None, home: str | None = None, refused: frozenset[str] = frozenset()
    ) -> Endpoint:
        """A half-open trial that is due, else a healthy endpoint with room (``session``'s
        home or its next by affinity, router/forward/affinity.py; without a session or
        affinity, the one with the fewest in-flight requests), else Unavailable. The counts
        are :attr:`slots`': this replica's own, or every replica's when they share them.
        ``refused``: endpoints whose admission already refused this request."""
        limit = self.slots.limit(self.config.max_concurrency)
        in_use = self.slots.in_use
        for e in self.endpoints:
            # An open breaker past its wait takes the next request as its one
            # trial, also next to healthy endpoints: nothing else closes a breaker
            # that requests opened. (vLLM's queue gauge is not read while an
            # endpoint is down, so only the in-flight limit applies here.)
            if e.breaker.state != CLOSED and (limit is None or in_use(e) < limit) and e.breaker.allow():
                return e
        healthy = [e for e in self.endpoints if e.up and e.url not in refused]
        if not healthy:
            raise Unavailable("backend_down", f"backend {self.name!r} is down")
        with_room = [e for e in healthy if self._has_room(e)]
        if not with_room:
            raise Unavailable("capacity", f"backend {self.name!r} is at capacity")
        if session is None or not self.config.affinity or len(with_room) == 1:
            return min(with_room, key=in_use)
        return affinity.choose(session, home, with_room, in_use, self.config.affinity_load_factor)

    async def acquire(
        self,
        queue_timeout: float = 0.0,
        session: str | None = None,
        home: str | None = None,
        refused: frozenset[str] = frozenset(),
    ) -> Endpoint:
        """Take a slot on an endpoint (:meth:`_pick`'s); with ``queue_timeout`` wait that long.

        :meth:`_pick` chooses from the counts as last seen; :meth:`Slots.take` is the
        atomic check (across replicas when they share slots). Before refusing for
        capacity the counts are re-read once (another replica may have let go)."""
        if self.missing_secret_env:
            raise Unavailable(
                "unconfigured", f"backend {self.name!r} is not configured: set {self.missing_secret_env}"
            )
        deadline = time.monotonic() + queue_timeout
        fresh = False  # counts re-read since the last refusal
        while True:
            try:
                endpoint = self._pick(session, home, refused)
            except Unavailable as exc:
                if exc.reason == "capacity" and not fresh and await self.slots.refresh(self.endpoints):
                    fresh = True
                    continue
                if exc.reason == "capacity" and await self.reclaim_from_shadows():
                    continue  # real traffic never waits (or spills) behind shadow work
                remaining = deadline - time.monotonic()
                if exc.reason != "capacity" or remaining <= 0:
                    if exc.reason == "capacity":
                        self.spills += 1
                    raise
                self.server.slot_freed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.server.slot_freed.wait(), self.slots.wait_s(remaining))
                fresh = False
                continue
            if await self.slots.take(endpoint, self.config.max_concurrency):
                break
            # Another replica took the last slot (the refusal updated the count): look again.
            # A half-open trial that could not start goes to the next request.
            endpoint.breaker.release()
        endpoint.in_flight += 1
        return endpoint

    def take_idle(self, reserve: int) -> Endpoint:
        """A slot for shadow work, only where the server has more than ``reserve`` free slots
        (of every replica's, when they share them), nothing queued and a closed breaker (a
        half-open trial is for real traffic); else Unavailable. The caller registers its task
        in ``server.shadows`` and releases."""
        configured = self.config.max_concurrency
        limit = self.slots.limit(configured)
        idle = [
            e
            for e in self.endpoints
            if e.up and e.waiting <= 0 and (limit is None or self.slots.in_use(e) + reserve < limit)
        ]
        if self.missing_secret_env or not idle:
            raise Unavailable("busy", f"backend {self.name!r} has no idle slot for shadow work")
        endpoint = min(idle, key=self.slots.in_use)
        self.slots.claim(endpoint, configured)
        endpoint.in_flight += 1
        return endpoint

    async def reclaim_from_shadows(self) -> bool:
        """Cancel the newest shadow run holding a slot on this server and wait until it has
        let go (its cleanup releases the slot): True if there was one."""
        shadows = [t for t in self.server.shadows if not t.done()]
        if not shadows:
            return False
        newest = shadows[-1]
        newest.cancel()
        await asyncio.wait({newest}, timeout=1.0)
        return True

    def release(self, endpoint: Endpoint) -> None:
        endpoint.in_flight -= 1
        self.slots.give_back(endpoint)
        endpoint.breaker.release()
        self.server.slot_freed.set()

    def report(self, endpoint: Endpoint, ok: bool) -> None:
        """Passive health from real traffic: connect errors, 5xx and timeouts count."""
        breaker = endpoint.breaker
        trial = breaker.state == HALF_OPEN
        if ok:
            breaker.success()
        else:
            breaker.failure()
            if trial:
                log.debug("backend %s endpoint %s: trial request failed", self.name, redact_url(endpoint.url))
        self.log_transition(endpoint, "a trial request succeeded" if trial else "a request succeeded")

    def log_transition(self, endpoint: Endpoint, why_up: str) -> None:
        """Log each change of ``endpoint.up`` (its breaker closed or not) once."""
        breaker = endpoint.breaker
        up = endpoint.up
        if up == endpoint.logged_up:
            return
        endpoint.logged_up = up
        if up:
            log.warning("backend %s endpoint %s is up: %s", self.name, redact_url(endpoint.url), why_up)
        elif breaker.opened_by == PROBE:
            log.warning(
                "backend %s endpoint %s is down: health probe failed", self.name, redact_url(endpoint.url)
            )
        else:
            log.warning(
                "backend %s endpoint %s is down: %d requests in a row failed; a passing health "
                "probe will not close its breaker, one trial request every %gs decides",
                self.name,
                redact_url(endpoint.url),
                breaker.failures,
                breaker.open_s,
            )

    def state(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "route": self.route,
            "model": self.model,
            "configured": self.missing_secret_env is None,
            **({"missing_env": self.missing_secret_env} if self.missing_secret_env else {}),
            "up": self.up,
            "in_flight": self.in_flight,
            "max_concurrency": self.config.max_concurrency,
            "endpoints": [
                {
                    "url": redact_url(e.url),  # unauthenticated /readyz shows it
                    "up": e.up,
                    "breaker": e.breaker.state,
                    "breaker_opened_by": e.breaker.opened_by,
                    "in_flight": e.in_flight,
                    "running": e.running,
                    "waiting": e.waiting,
                    "kv_cache_usage": e.kv_cache_usage,
                    "prefix_cache_hits": e.prefix_cache_hits,
                    "prefix_cache_queries": e.prefix_cache_queries,
                    "cache_block_size": e.cache_block_size,
                    "metrics_missing": list(e.metrics_missing),
                    **({"admission": e.load.state(time.monotonic())} if e.load is not None else {}),
                }
                for e in self.endpoints
            ],
        }


def _auth_headers(config: BackendConfig) -> dict[str, str]:
    """How this kind of upstream wants its key (the client's own key never travels)."""
    if config.kind == "anthropic":
        headers = {"anthropic-version": config.anthropic_version}
        return {**headers, "x-api-key": config.api_key} if config.api_key else headers
    return {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}


class Pool:
    """All backends, their HTTP clients and their background probes."""

    def __init__(self, config: Config, slots: Slots | None = None) -> None:
        self.config = config
        self.slots = slots or LocalSlots()  # one count for every server (router/forward/shared.py)
        servers = {
            name: Server.at(bc.urls, config.health, self.slots)
            for name, bc in config.backends.items()
            if bc.variant_of is None
        }
        self.backends = {
            name: Backend(name, bc, config.health, servers[bc.variant_of or name])
            for name, bc in config.backends.items()
        }
        # Each backend's fallback order per API, resolved once (it is read on every request).
        self._chains = {
            (name, api): self._chain(name, api) for name in self.backends for api in KIND_APIS["vllm"]
        }
        self._tasks: list[asyncio.Task[None]] = []

    def __getitem__(self, name: str) -> Backend:
        return self.backends[name]

    def candidates(self, first: str, api: str = "chat") -> list[Backend]:
        """The backends to try for a request of ``api`` decided for ``first``, in order."""
        return self._chains[first, api]

    def _chain(self, first: str, api: str) -> list[Backend]:
        """``first``, then its fallbacks (``routing.fallbacks``), each once, keeping only the
        backends that serve ``api``. A backend that does not serve it stands aside for the
        backends of its route that do (an Anthropic backend takes the cloud route's Messages
        traffic when the cloud backend speaks OpenAI)."""
        chain: list[Backend] = []
        for name in self.config.fallback_chain(first):
            backend = self.backends[name]
            stand_ins = [backend] if api in backend.apis else self._of_route(backend.route, api)
            chain.extend(b for b in stand_ins if b not in chain)
        return chain

    def _of_route(self, route: str, api: str) -> list[Backend]:
        return [b for b in self.backends.values() if b.route == route and api in b.apis]

    async def start(self) -> None:
        # Each endpoint with a max_concurrency has its slots counted; shared ones are leased,
        # and one task renews this replica's leases.
        counted = [
            e
            for b in self.backends.values()
            if b.config.variant_of is None and b.config.max_concurrency is not None
            for e in b.endpoints
        ]
        self._tasks.append(asyncio.create_task(self.slots.keep(counted)))
        # One HTTP client and one set of probes per server: its variants share them.
        for backend in self.backends.values():
            if backend.config.variant_of is not None:
                continue
            timeouts = backend.config.timeouts
            for endpoint in backend.endpoints:
                # vLLM's uvicorn closes idle keep-alive connections after 5 s;
                # expiring ours at 4 s avoids reusing a socket it is closing.
                connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=4.0, ttl_dns_cache=300)
                endpoint.session = aiohttp.ClientSession(
                    connector=connector,
                    timeout=aiohttp.ClientTimeout(
                        total=None, sock_connect=timeouts.connect_s, sock_read=timeouts.read_s
                    ),
                    auto_decompress=False,
                    skip_auto_headers=("User-Agent",),
                )
            if backend.missing_secret_env:
                log.warning("backend %s is not configured: set %s", backend.name, backend.missing_secret_env)
                continue
            if backend.kind == "vllm" or self.config.health.probe_cloud:
                self._tasks.append(asyncio.create_task(self._probe_loop(backend)))
            if backend.kind == "vllm":
                self._tasks.append(asyncio.create_task(self._load_loop(backend)))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        await self.slots.close()  # leases this replica still holds go now, not at their TTL
        for backend in self.backends.values():
            for endpoint in backend.endpoints:
                if endpoint.session is not None and not endpoint.session.closed:
                    await endpoint.session.close()

    # -------------------------------------------------------------- probes

    async def _probe_loop(self, backend: Backend) -> None:
        health = self.config.health
        interval = health.interval_s if backend.kind == "vllm" else health.cloud_interval_s
        while True:
            await asyncio.gather(*(self.probe(backend, e) for e in backend.endpoints))
            await asyncio.sleep(interval)

    async def probe(self, backend: Backend, endpoint: Endpoint) -> bool:
        """One free health check: vLLM ``GET /health``, a cloud ``GET /v1/models``."""
        url = f"{endpoint.root}/health" if backend.kind == "vllm" else f"{endpoint.url}/models"
        timeout = aiohttp.ClientTimeout(total=self.config.health.probe_timeout_s)
        assert endpoint.session is not None
        try:
            async with endpoint.session.get(url, headers=backend.auth_headers, timeout=timeout) as resp:
                ok = resp.status == 200
                await resp.read()
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            if own_resource_error(exc):
                log.warning(
                    "health probe of %s skipped: the proxy is out of descriptors or memory", backend.name
                )
                return endpoint.up
            ok = False
        if ok:
            endpoint.breaker.probe_passed()  # closes only a breaker that a failing probe opened
        else:
            endpoint.breaker.trip()
        backend.log_transition(endpoint, "health probe passed")
        return ok

    async def _load_loop(self, backend: Backend) -> None:
        interval = self.config.routing.capacity.metrics_interval_s
        while True:
            await asyncio.sleep(interval)
            await asyncio.gather(*(self._read_load(e) for e in backend.endpoints if e.up))

    async def _read_load(self, endpoint: Endpoint) -> None:
        """vLLM's queue and KV-cache gauges: a waiting queue means the box is full."""
        assert endpoint.session is not None
        try:
            timeout = aiohttp.ClientTimeout(total=self.config.health.probe_timeout_s)
            async with endpoint.session.get(f"{endpoint.root}/metrics", timeout=timeout) as resp:
                if resp.status != 200:
                    return
                text = await resp.text()
        except (aiohttp.ClientError, TimeoutError, OSError):
            return
        metrics = parse_metrics(text)
        endpoint.waiting = metrics.load.get(WAITING, 0.0)
        endpoint.running = metrics.load.get(RUNNING, 0.0)
        endpoint.kv_cache_usage = metrics.load.get(KV_USAGE, 0.0)
        endpoint.prefix_cache_hits, endpoint.prefix_cache_queries = (
            metrics.prefix_hits,
            metrics.prefix_queries,
        )
        endpoint.cache_block_size = metrics.block_size
        if metrics.missing != endpoint.metrics_missing:
            endpoint.metrics_missing = metrics.missing
            if metrics.missing:
                # Loud, once per change: a renamed family would otherwise read as "idle".
                log.warning(
                    "vLLM endpoint %s: /metrics lacks %s (renamed or removed in this vLLM "
                    "version?): read as 0 / unknown until it is back",
                    redact_url(endpoint.url),
                    ", ".join(metrics.missing),
                )
        if endpoint.load is not None and metrics.kv_tokens:  # vLLM's own KV size beats kv_tokens
            endpoint.load.kv_capacity = metrics.kv_tokens
