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
import logging
import time
from dataclasses import dataclass

import aiohttp

from router.config import BackendConfig, Config, HealthConfig

log = logging.getLogger("offload.backends")

CLOSED, HALF_OPEN, OPEN = "closed", "half_open", "open"
BREAKER_CODES = {CLOSED: 0, HALF_OPEN: 1, OPEN: 2}
REQUESTS, PROBE = "requests", "probe"  # what opened a breaker


class Breaker:
    """One endpoint's circuit breaker: closed → open → half-open trial → closed.

    Two signals feed it, and they are not worth the same:

    * **Real requests** (:meth:`success`, :meth:`failure`): ``threshold``
      consecutive failures (connect errors, resets, 5xx, 408, timeouts) open it.
      Only a real request closes a breaker that requests opened: after
      ``open_s`` the next request to the endpoint is its one half-open trial;
      success closes the breaker, failure opens it for another ``open_s``.
    * **The health probe** (:meth:`trip`, :meth:`probe_passed`): a failing probe
      opens it at once (the box is down). A passing probe closes a breaker that
      a failing probe opened (the box is back). It neither clears the count of
      failed requests (at low traffic the failures a box piles up between
      probes are the only evidence) nor closes a breaker that requests opened:
      vLLM's ``/health`` can pass while every completion fails, and closing on
      it would send a burst of doomed requests after every probe.

    ``opened_by`` says which signal holds it open (``"requests"`` or
    ``"probe"``; the latest one wins, so a box that went down and came back is
    judged by its probe). While open, requests skip the endpoint untried.
    """

    def __init__(self, threshold: int, open_s: float) -> None:
        self.threshold = threshold
        self.open_s = open_s
        self.state = CLOSED
        self.failures = 0
        self.opened_at = 0.0
        self.opened_by: str | None = None  # REQUESTS or PROBE while not closed
        self._trial_out = False

    def allow(self) -> bool:
        """May a request go to a breaker that is not closed? Yes once per trial."""
        if self.state == CLOSED:
            return True
        if self.state == OPEN and time.monotonic() - self.opened_at >= self.open_s:
            self.state = HALF_OPEN
            self._trial_out = False
        if self.state == HALF_OPEN and not self._trial_out:
            self._trial_out = True
            return True
        return False

    def success(self) -> None:
        """A real request succeeded: closed, whatever opened it."""
        self._close()

    def failure(self) -> None:
        """A real request failed."""
        if self.state == OPEN:
            return  # a request from before it opened, answering late: nothing new
        self.failures += 1
        if self.state == HALF_OPEN or self.failures >= self.threshold:
            self._open(REQUESTS)

    def release(self) -> None:
        """A request on the endpoint ended. A trial that ended without a verdict
        (the client went away first) goes to the next request."""
        if self.state == HALF_OPEN:
            self._trial_out = False

    def trip(self) -> None:
        """Open at once: a health probe saw the server down."""
        self.failures = max(self.failures, self.threshold)
        self._open(PROBE)

    def probe_passed(self) -> None:
        """A health probe passed: close only what a failing probe opened."""
        if self.state != CLOSED and self.opened_by == PROBE:
            self._close()
        # Opened by requests: a passing /health says nothing about requests, so
        # the breaker waits for its half-open trial.

    def _open(self, by: str) -> None:
        self.state = OPEN
        self.opened_by = by
        self.opened_at = time.monotonic()
        self._trial_out = False

    def _close(self) -> None:
        self.state = CLOSED
        self.opened_by = None
        self.failures = 0
        self._trial_out = False


@dataclass(slots=True)
class Endpoint:
    url: str  # base URL including /v1
    breaker: Breaker
    session: aiohttp.ClientSession | None = None
    in_flight: int = 0
    logged_up: bool = True  # what the log last said: Backend.update logs each change once
    waiting: float = 0.0  # vllm:num_requests_waiting, from /metrics
    running: float = 0.0  # vllm:num_requests_running: shown in /readyz next to our own in_flight
    kv_cache_usage: float = 0.0

    @property
    def up(self) -> bool:
        """Takes traffic: its breaker is closed."""
        return self.breaker.state == CLOSED

    @property
    def root(self) -> str:
        """The server root: vLLM's /health and /metrics live outside /v1."""
        return self.url[: -len("/v1")] if self.url.endswith("/v1") else self.url


class Unavailable(Exception):
    """A backend cannot take this request now; ``reason`` goes to accounting."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class Backend:
    def __init__(self, name: str, config: BackendConfig, health: HealthConfig) -> None:
        self.name = name
        self.config = config
        self.kind = config.kind
        self.route = config.route_name
        self.model = config.model
        self.endpoints = [
            Endpoint(url, Breaker(health.failure_threshold, health.open_s)) for url in config.urls
        ]
        self.auth_headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        self.spills = 0
        self._slot_freed = asyncio.Event()

    @property
    def unconfigured(self) -> str | None:
        """The environment variable to set, when the backend's key is missing."""
        return self.config.api_key_env

    @property
    def in_flight(self) -> int:
        return sum(e.in_flight for e in self.endpoints)

    @property
    def up(self) -> bool:
        return self.unconfigured is None and any(e.up for e in self.endpoints)

    def _has_room(self, endpoint: Endpoint) -> bool:
        limit = self.config.max_concurrency
        if limit is None:
            return True
        return endpoint.in_flight < limit and endpoint.waiting <= 0

    def _pick(self) -> Endpoint:
        """A half-open trial that is due, else the healthy endpoint with the fewest
        in-flight requests, else Unavailable."""
        limit = self.config.max_concurrency
        for e in self.endpoints:
            # An open breaker past its wait takes the next request as its one
            # trial, also next to healthy endpoints: nothing else closes a breaker
            # that requests opened. (vLLM's queue gauge is not read while an
            # endpoint is down, so only the in-flight limit applies here.)
            if e.breaker.state != CLOSED and (limit is None or e.in_flight < limit) and e.breaker.allow():
                return e
        healthy = [e for e in self.endpoints if e.up]
        if not healthy:
            raise Unavailable("backend_down", f"backend {self.name!r} is down")
        with_room = [e for e in healthy if self._has_room(e)]
        if not with_room:
            raise Unavailable("capacity", f"backend {self.name!r} is at capacity")
        return min(with_room, key=lambda e: e.in_flight)

    async def acquire(self, queue_timeout: float = 0.0) -> Endpoint:
        """Take a slot on an endpoint; with ``queue_timeout`` wait that long for one."""
        if self.unconfigured:
            raise Unavailable(
                "unconfigured", f"backend {self.name!r} is not configured: set {self.unconfigured}"
            )
        deadline = time.monotonic() + queue_timeout
        while True:
            try:
                endpoint = self._pick()
                break
            except Unavailable as exc:
                remaining = deadline - time.monotonic()
                if exc.reason != "capacity" or remaining <= 0:
                    if exc.reason == "capacity":
                        self.spills += 1
                    raise
                self._slot_freed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._slot_freed.wait(), remaining)
        endpoint.in_flight += 1
        return endpoint

    def release(self, endpoint: Endpoint) -> None:
        endpoint.in_flight -= 1
        endpoint.breaker.release()
        self._slot_freed.set()

    def report(self, endpoint: Endpoint, ok: bool) -> None:
        """Passive health from real traffic: connect errors, 5xx and timeouts count."""
        breaker = endpoint.breaker
        trial = breaker.state == HALF_OPEN
        if ok:
            breaker.success()
        else:
            breaker.failure()
            if trial:
                log.debug("backend %s endpoint %s: trial request failed", self.name, endpoint.url)
        self.update(endpoint, "a trial request succeeded" if trial else "a request succeeded")

    def update(self, endpoint: Endpoint, why_up: str) -> None:
        """Log each change of ``endpoint.up`` (its breaker closed or not) once."""
        breaker = endpoint.breaker
        up = endpoint.up
        if up == endpoint.logged_up:
            return
        endpoint.logged_up = up
        if up:
            log.warning("backend %s endpoint %s is up: %s", self.name, endpoint.url, why_up)
        elif breaker.opened_by == PROBE:
            log.warning("backend %s endpoint %s is down: health probe failed", self.name, endpoint.url)
        else:
            log.warning(
                "backend %s endpoint %s is down: %d requests in a row failed; a passing health "
                "probe will not close its breaker, one trial request every %gs decides",
                self.name,
                endpoint.url,
                breaker.failures,
                breaker.open_s,
            )

    def state(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "route": self.route,
            "model": self.model,
            "configured": self.unconfigured is None,
            **({"missing_env": self.unconfigured} if self.unconfigured else {}),
            "up": self.up,
            "in_flight": self.in_flight,
            "max_concurrency": self.config.max_concurrency,
            "endpoints": [
                {
                    "url": e.url,
                    "up": e.up,
                    "breaker": e.breaker.state,
                    "breaker_opened_by": e.breaker.opened_by,
                    "in_flight": e.in_flight,
                    "running": e.running,
                    "waiting": e.waiting,
                    "kv_cache_usage": e.kv_cache_usage,
                }
                for e in self.endpoints
            ],
        }


class Pool:
    """All backends, their HTTP clients and their background probes."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.backends = {name: Backend(name, bc, config.health) for name, bc in config.backends.items()}
        # Each backend's fallback order, resolved once (it is read on every request).
        self._chains = {
            name: [self.backends[n] for n in config.fallback_chain(name)] for name in self.backends
        }
        self._tasks: list[asyncio.Task[None]] = []

    def __getitem__(self, name: str) -> Backend:
        return self.backends[name]

    def candidates(self, first: str) -> list[Backend]:
        """The chosen backend, then its fallbacks in order, each once."""
        return self._chains[first]

    async def start(self) -> None:
        for backend in self.backends.values():
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
            if backend.unconfigured:
                log.warning("backend %s is not configured: set %s", backend.name, backend.unconfigured)
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
        for backend in self.backends.values():
            for endpoint in backend.endpoints:
                if endpoint.session is not None:
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
        except (aiohttp.ClientError, TimeoutError, OSError):
            ok = False
        if ok:
            endpoint.breaker.probe_passed()  # closes only a breaker that a failing probe opened
        else:
            endpoint.breaker.trip()
        backend.update(endpoint, "health probe passed")
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
        gauges = parse_vllm_load(text)
        endpoint.waiting = gauges.get("vllm:num_requests_waiting", 0.0)
        endpoint.running = gauges.get("vllm:num_requests_running", 0.0)
        endpoint.kv_cache_usage = gauges.get("vllm:kv_cache_usage_perc", 0.0)


_LOAD_GAUGES = ("vllm:num_requests_waiting", "vllm:num_requests_running", "vllm:kv_cache_usage_perc")


def parse_vllm_load(text: str) -> dict[str, float]:
    """Sum the load gauges over label sets (one per model/engine) in Prometheus text."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line.startswith("vllm:"):
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in _LOAD_GAUGES:
            try:
                value = float(line.rsplit(" ", 1)[1])
            except (IndexError, ValueError):
                continue
            if name == "vllm:kv_cache_usage_perc":
                out[name] = max(out.get(name, 0.0), value)
            else:
                out[name] = out.get(name, 0.0) + value
    return out
