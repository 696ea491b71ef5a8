"""Three replicas, one truth: ``offload serve`` processes sharing a fake vLLM box with 8
slots through a real Redis (``state:``).

* a burst from many clients through three replicas never puts more than 8 requests on
  the box at once, and every one of the 8 slots is used (no static shares);
* a per-key limit holds across the replicas;
* a Responses conversation continued on another replica reaches the backend that holds it;
* a replica SIGKILLed mid-request leaks nothing: its leases expire;
* Redis stopped under load: no request fails, each replica falls back to its share of the
  box (8 // 3), and /readyz and ``offload_shared_state_up`` say so; Redis restarted: the
  shared count resumes by itself.

The shared Redis (127.0.0.1:6379, ``.ci/run`` starts it) is used with a key prefix of
this module's own; the outage test starts a Redis of its own on another port.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import redis

from tests.harness import CLOUD_KEY, CLOUD_MODEL, LOCAL_MODEL, USER, free_port, wait_until
from tests.test_shared_state_logic import REDIS_URL, OwnRedis, need_redis

ROOT = Path(__file__).resolve().parent.parent
SLOTS = 8
REPLICAS = 3
AGENTS_KEY = "sk-offload-agents-test"
OTHERS_KEY = "sk-offload-other-team-test"
LIMITED_KEY = "sk-offload-limited-test"
LIMITED_RPM = 5
LEASE_TTL_S = 1.5


def spawn(cmd: list[str], port: int) -> subprocess.Popen[bytes]:
    """Start a server process and wait until its port accepts connections."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=0.5)
            return proc
        except httpx.HTTPError:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"{cmd[2:5]} exited: {err[-2000:]}") from None
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"{cmd[2:5]} did not start") from None
            time.sleep(0.05)


def end(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    if proc.stderr is not None:
        proc.stderr.close()


@dataclass
class Fake:
    proc: subprocess.Popen[bytes]
    root: str

    def configure(self, **behaviour: Any) -> None:
        httpx.post(f"{self.root}/_fake/config", json=behaviour, timeout=5).raise_for_status()

    def state(self) -> dict[str, Any]:
        return httpx.get(f"{self.root}/_fake/state", timeout=5).json()


def start_fake(mode: str, *args: str) -> Fake:
    port = free_port()
    cmd = [sys.executable, "-m", "router.fake.upstream", "--port", str(port), "--mode", mode, *args]
    return Fake(spawn(cmd, port), f"http://127.0.0.1:{port}")


@dataclass
class Cluster:
    """Replicas sharing one local fake (8 slots) and one cloud fake through one Redis."""

    local: Fake
    cloud: Fake
    redis_url: str
    prefix: str
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)

    @property
    def slots_key(self) -> str:
        return f"{self.prefix}:slots:{self.local.root}/v1"

    def leases(self) -> int:
        client = redis.Redis.from_url(self.redis_url, socket_timeout=2)
        try:
            return client.zcard(self.slots_key)
        finally:
            client.close()

    def readyz(self, i: int) -> dict[str, Any]:
        return httpx.get(f"{self.roots[i]}/readyz", timeout=5).json()

    def shared_up_metric(self, i: int) -> float:
        text = httpx.get(f"{self.roots[i]}/metrics", timeout=5).text
        (line,) = [ln for ln in text.splitlines() if ln.startswith("offload_shared_state_up ")]
        return float(line.split()[1])


def write_config(path: Path, local: Fake, cloud: Fake, redis_url: str, prefix: str) -> Path:
    config = {
        "server": {"host": "127.0.0.1"},
        "database": {"enabled": False},
        "auth": {
            "keys": [
                {"name": "agents", "key": AGENTS_KEY},
                {"name": "others", "key": OTHERS_KEY},
                {"name": "limited", "key": LIMITED_KEY, "requests_per_minute": LIMITED_RPM},
            ]
        },
        "backends": {
            "local": {
                "kind": "vllm",
                "base_url": f"{local.root}/v1",
                "model": LOCAL_MODEL,
                "max_concurrency": SLOTS,
            },
            "cloud": {
                "kind": "openai",
                "base_url": f"{cloud.root}/v1",
                "model": CLOUD_MODEL,
                "api_key": CLOUD_KEY,
            },
        },
        "routing": {"default": "local", "fallbacks": {"local": ["cloud"]}},
        "health": {"interval_s": 0.5},
        "state": {
            "redis_url": redis_url,
            "replicas": REPLICAS,
            "key_prefix": prefix,
            "lease_ttl_s": LEASE_TTL_S,
            "probe_interval_s": 0.2,
            # Generous: on a loaded test machine a stalled loop must not pass for an outage
            # (the bound itself is tested in test_shared_state_logic.py).
            "timeout_ms": 1000,
        },
    }
    path.write_text(orjson.dumps(config).decode())  # JSON is YAML
    return path


def start_cluster(tmp: Path, redis_url: str) -> Cluster:
    prefix = f"offload-test-{uuid.uuid4().hex[:12]}"
    local = start_fake("vllm", "--model", LOCAL_MODEL)
    cloud = start_fake("cloud", "--model", CLOUD_MODEL, "--api-key", CLOUD_KEY)
    cluster = Cluster(local, cloud, redis_url, prefix)
    config = write_config(tmp / "router.yaml", local, cloud, redis_url, prefix)
    try:
        for _ in range(REPLICAS):
            port = free_port()
            cmd = [
                sys.executable,
                "-m",
                "router.ops.cli",
                "serve",
                "--config",
                str(config),
                "--port",
                str(port),
            ]
            cluster.procs.append(spawn(cmd, port))
            cluster.roots.append(f"http://127.0.0.1:{port}")
    except Exception:
        stop_cluster(cluster)
        raise
    return cluster


def stop_cluster(cluster: Cluster) -> None:
    for proc in [*cluster.procs, cluster.local.proc, cluster.cloud.proc]:
        end(proc)
    try:
        client = redis.Redis.from_url(cluster.redis_url, socket_timeout=2)
        for key in client.scan_iter(f"{cluster.prefix}:*"):
            client.delete(key)
        client.close()
    except redis.RedisError:
        pass


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    need_redis()
    running = start_cluster(tmp_path_factory.mktemp("shared"), REDIS_URL)
    yield running
    stop_cluster(running)


# ------------------------------------------------------------------ traffic


def chat_body(stream: bool = False) -> dict[str, Any]:
    return {"model": "local", "messages": USER, "stream": stream}


async def send(
    client: httpx.AsyncClient, root: str, key: str = AGENTS_KEY, stream: bool = False
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"}
    return await client.post(f"{root}/v1/chat/completions", json=chat_body(stream), headers=headers)


class Peak:
    """The most requests the fake box held at once, sampled every few ms while it runs."""

    def __init__(self, fake: Fake) -> None:
        self.fake = fake
        self.value = 0
        self._task: asyncio.Task[None] | None = None

    async def _sample(self) -> None:
        async with httpx.AsyncClient(timeout=5) as client:
            while True:
                state = (await client.get(f"{self.fake.root}/_fake/state")).json()
                self.value = max(self.value, state["active"])
                await asyncio.sleep(0.01)

    def __enter__(self) -> Peak:
        self._task = asyncio.get_running_loop().create_task(self._sample())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()

    def reset(self) -> None:
        self.value = 0


async def burst(roots: list[str], n: int) -> list[httpx.Response]:
    """``n`` clients at once, spread over the replicas, half of them streaming."""
    limits = httpx.Limits(max_connections=n + 10, max_keepalive_connections=n + 10)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        return list(
            await asyncio.gather(*(send(client, roots[i % len(roots)], stream=i % 2 == 1) for i in range(n)))
        )


# ------------------------------------------------------------------ Redis away (first: its own cluster)


@dataclass
class Load:
    """Clients sending one request after another until stopped; every status recorded."""

    roots: list[str]
    clients: int
    statuses: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    running: bool = True

    async def _client(self, i: int, http: httpx.AsyncClient) -> None:
        for n in itertools.count():
            if not self.running:
                return
            try:
                answer = await send(http, self.roots[(i + n) % len(self.roots)])
                self.statuses.append(answer.status_code)
            except httpx.HTTPError as exc:
                self.errors.append(type(exc).__name__)

    async def run(self) -> None:
        limits = httpx.Limits(max_connections=self.clients + 5)
        async with httpx.AsyncClient(timeout=60, limits=limits) as http:
            await asyncio.gather(*(self._client(i, http) for i in range(self.clients)))


async def until(predicate: Any, timeout: float) -> bool:
    return await asyncio.to_thread(wait_until, predicate, timeout)


async def test_redis_stopped_under_load_then_restarted(tmp_path: Path) -> None:
    own = OwnRedis()
    cluster = start_cluster(tmp_path, own.url)
    share = SLOTS // REPLICAS
    try:
        cluster.local.configure(first_byte_delay=0.2)
        load = Load(cluster.roots, clients=12)
        running = asyncio.get_running_loop().create_task(load.run())
        with Peak(cluster.local) as peak:
            await asyncio.sleep(1.5)
            assert peak.value == SLOTS  # shared: the whole box
            assert all(cluster.readyz(i)["shared_state"]["mode"] == "shared" for i in range(REPLICAS))

            own.stop()  # Redis gone, requests in flight
            assert await until(
                lambda: all(cluster.readyz(i)["shared_state"]["mode"] == "fallback" for i in range(REPLICAS)),
                10,
            )
            assert all(cluster.shared_up_metric(i) == 0 for i in range(REPLICAS))
            state = cluster.readyz(0)
            assert state["ready"] is True and state["shared_state"]["redis"] == "down"
            await asyncio.sleep(0.5)  # the requests admitted before the outage have finished
            peak.reset()
            await asyncio.sleep(2)
            assert 0 < peak.value <= REPLICAS * share  # each replica on its own share

            own.start()  # same port, empty: the probes bring shared state back
            assert await until(
                lambda: all(cluster.readyz(i)["shared_state"]["mode"] == "shared" for i in range(REPLICAS)),
                10,
            )
            assert all(cluster.shared_up_metric(i) == 1 for i in range(REPLICAS))
            await asyncio.sleep(0.5)
            peak.reset()
            await asyncio.sleep(2)
            assert peak.value == SLOTS  # the whole box again, never more
            assert 0 < cluster.leases() <= SLOTS  # leases re-established
        load.running = False
        await running
        assert load.errors == [] and set(load.statuses) == {200}, (load.errors, set(load.statuses))
        assert len(load.statuses) > 50
    finally:
        stop_cluster(cluster)
        own.stop()


# ------------------------------------------------------------------ the shared Redis


async def test_a_burst_through_three_replicas_never_overfills_the_box(cluster: Cluster) -> None:
    cluster.local.configure(first_byte_delay=0.5)
    with Peak(cluster.local) as peak:
        answers = await burst(cluster.roots, 60)
    assert [r.status_code for r in answers] == [200] * 60
    routes = [r.headers["x-offload-route"] for r in answers]
    assert peak.value <= SLOTS, peak.value
    # Any replica may use any free slot: the box was full, not three static thirds of it.
    assert peak.value == SLOTS and routes.count("local") >= SLOTS
    assert routes.count("cloud") > 0  # the rest spilled, as a lone replica's would
    assert wait_until(lambda: cluster.leases() == 0, timeout=10)  # every slot given back


async def test_a_per_key_limit_holds_across_replicas(cluster: Cluster) -> None:
    cluster.local.configure(first_byte_delay=0)
    async with httpx.AsyncClient(timeout=30) as client:
        answers = [
            await send(client, cluster.roots[i % REPLICAS], LIMITED_KEY) for i in range(3 * LIMITED_RPM)
        ]
    statuses = [r.status_code for r in answers]
    assert statuses.count(200) == LIMITED_RPM and statuses.count(429) == 2 * LIMITED_RPM
    assert all(int(r.headers["Retry-After"]) >= 1 for r in answers if r.status_code == 429)
    refused = 0.0
    for root in cluster.roots:
        text = httpx.get(f"{root}/metrics", timeout=5).text
        refused += sum(
            float(line.split()[-1])
            for line in text.splitlines()
            if line.startswith('offload_rejected_requests_total{reason="rate_limited_requests"}')
        )
    assert refused == 2 * LIMITED_RPM


async def test_a_conversation_continues_on_another_replica(cluster: Cluster) -> None:
    """Turn one on replica 0 is served by the cloud, which stores it; turn two, on replicas
    1 and 2, names it and is a coding turn that would otherwise stay local."""
    headers = {"Authorization": f"Bearer {AGENTS_KEY}"}
    async with httpx.AsyncClient(timeout=30) as client:
        first = await client.post(
            f"{cluster.roots[0]}/v1/responses", json={"model": "cloud", "input": "hello"}, headers=headers
        )
        assert first.status_code == 200 and first.headers["x-offload-route"] == "cloud"
        response_id = first.json()["id"]
        for root in cluster.roots[1:]:
            body = {"model": "auto", "input": USER[0]["content"], "previous_response_id": response_id}
            turn = await client.post(f"{root}/v1/responses", json=body, headers=headers)
            assert turn.status_code == 200, turn.text
            assert turn.headers["x-offload-route"] == "cloud"
    received = [r["body"] for r in cluster.cloud.state()["received"] if r["path"] == "/v1/responses"]
    assert [b.get("previous_response_id") for b in received[-2:]] == [response_id] * 2
    # Another key naming it, on any replica: the 404 of an unknown id, and nothing sent on.
    async with httpx.AsyncClient(timeout=30) as client:
        for root in cluster.roots:
            body = {"model": "auto", "input": "what did they ask?", "previous_response_id": response_id}
            other = await client.post(
                f"{root}/v1/responses", json=body, headers={"Authorization": f"Bearer {OTHERS_KEY}"}
            )
            assert other.status_code == 404, other.text
            assert other.json()["error"]["message"] == f"Response with id '{response_id}' not found."
    after = [r for r in cluster.cloud.state()["received"] if r["path"] == "/v1/responses"]
    assert len(after) == len(received)


async def test_a_killed_replica_leaks_no_slot(cluster: Cluster) -> None:
    """SIGKILL mid-request: its leases stay until their TTL, then the other replicas have the
    whole box again. (Runs last: it kills replica 0.)"""
    cluster.local.configure(first_byte_delay=30)
    victim = cluster.procs[0]
    async with httpx.AsyncClient(timeout=60) as client:
        stuck = [asyncio.ensure_future(send(client, cluster.roots[0])) for _ in range(4)]
        assert await asyncio.to_thread(wait_until, lambda: cluster.leases() == 4, 10)
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        await asyncio.gather(*stuck, return_exceptions=True)  # their connections died with it
    assert cluster.leases() == 4  # nobody released them ...
    assert await asyncio.to_thread(
        wait_until, lambda: cluster.leases() == 0, 10 * LEASE_TTL_S
    )  # ... they expired
    cluster.local.configure(first_byte_delay=0.5)
    with Peak(cluster.local) as peak:
        answers = await burst(cluster.roots[1:], 30)
    assert [r.status_code for r in answers] == [200] * 30
    assert peak.value == SLOTS
