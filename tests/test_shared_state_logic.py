"""The shared state's own logic, against a real Redis: slot leases (the Lua scripts),
per-key windows (the same arithmetic as router/edge/limits.py), response ids, and the
fallback when Redis is away or slow. The proxy-level tests with three replicas are in
tests/test_shared_state.py.

Every test uses its own key prefix on the shared Redis (``OFFLOAD_TEST_REDIS_URL``,
default 127.0.0.1:6379; ``.ci/run`` starts it), and the tests that stop Redis start one
of their own on another port. Time is injected (``Link(clock=...)``) wherever the
scripts compare it, so no test depends on how fast the machine is.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio
import redis

from router.config import ClientKey, ConfigError, StateConfig, parse_config
from router.edge.limits import RateLimits
from router.errors import ProxyError
from router.forward.backends import Backend, Endpoint, Server, Unavailable
from router.forward.breaker import Breaker
from router.forward.response_ids import ResponseOwners
from router.forward.shared import InProcess, LocalSlots
from router.forward.shared_redis import RedisState
from router.forward.sharing import shared_state
from tests.harness import free_port

REDIS_URL = os.environ.get("OFFLOAD_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
URL = "http://spark-1.test:8888/v1"


def need_redis(url: str = REDIS_URL) -> None:
    try:
        redis.Redis.from_url(url, socket_timeout=2).ping()
    except redis.RedisError:
        if os.environ.get("CI"):
            pytest.fail(f"no Redis at {url}: .ci/run starts one")
        pytest.skip(f"no Redis at {url} (redis-server --daemonize yes)")


@pytest.fixture
def prefix() -> Iterator[str]:
    """A key prefix of this test's own on the shared Redis, removed afterwards."""
    need_redis()
    name = f"offload-test-{uuid.uuid4().hex[:12]}"
    yield name
    client = redis.Redis.from_url(REDIS_URL)
    for key in client.scan_iter(f"{name}:*"):
        client.delete(key)
    client.close()


class Clock:
    """The scripts' time, in seconds, moved by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def state_config(url: str, prefix: str, **kw: Any) -> StateConfig:
    return StateConfig(redis_url=url, replicas=kw.pop("replicas", 3), key_prefix=prefix, **kw)


@pytest_asyncio.fixture(loop_scope="function")  # the test's own loop: the clients live in it
async def replicas(prefix: str) -> AsyncIterator[tuple[RedisState, RedisState, Clock]]:
    """Two replicas' shared state on one Redis, with one injected clock."""
    clock = Clock()
    # A generous timeout: these tests are about the scripts, not about a loaded machine's stalls.
    config = state_config(REDIS_URL, prefix, lease_ttl_s=10, timeout_ms=2000)
    states = [RedisState(config, clock=clock) for _ in range(2)]
    for state in states:
        await state.start()
    yield states[0], states[1], clock
    for state in states:
        await state.stop()


def endpoint(url: str = URL) -> Endpoint:
    return Endpoint(url, Breaker(3, 10.0))


async def drain(*states: RedisState) -> None:
    """Wait for what requests handed over without waiting (releases, settlements)."""
    for state in states:
        await state.slots.flush()
        await state.windows.flush()
        pending = set(state.link._background)
        if pending:
            await asyncio.wait(pending)


async def take(state: RedisState, e: Endpoint, limit: int) -> bool:
    """Backend.acquire's part: the atomic take, then this replica's own count."""
    if await state.slots.take(e, limit):
        e.in_flight += 1
        return True
    return False


def give_back(state: RedisState, e: Endpoint) -> None:
    e.in_flight -= 1
    state.slots.give_back(e)


def leases(state: RedisState, url: str = URL) -> dict[str, float]:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        return {m.decode(): s for m, s in client.zrange(state.slots.key(url), 0, -1, withscores=True)}
    finally:
        client.close()


# ------------------------------------------------------------------ slots


async def test_a_burst_takes_exactly_the_limit(replicas: tuple[RedisState, RedisState, Clock]) -> None:
    """Take is one script (expire, count, add): 20 concurrent takes from two replicas for 8
    slots get exactly 8, and each replica's count says 8."""
    a, b, _ = replicas
    ea, eb = endpoint(), endpoint()
    results = await asyncio.gather(*(take(a if i % 2 else b, ea if i % 2 else eb, 8) for i in range(20)))
    assert sum(results) == 8
    assert ea.in_flight + eb.in_flight == 8
    assert len(leases(a)) == 8
    await a.slots.refresh([ea])
    await b.slots.refresh([eb])
    assert a.slots.in_use(ea) == b.slots.in_use(eb) == 8


async def test_a_replica_uses_any_free_slot(replicas: tuple[RedisState, RedisState, Clock]) -> None:
    """No static halves: one replica may take all 8; the other gets one as soon as it is given back."""
    a, b, _ = replicas
    ea, eb = endpoint(), endpoint()
    assert all([await take(a, ea, 8) for _ in range(8)])
    assert not await take(b, eb, 8)
    give_back(a, ea)
    await drain(a)
    assert await take(b, eb, 8)
    assert not await take(a, ea, 8)


async def test_leases_expire_unless_renewed(replicas: tuple[RedisState, RedisState, Clock]) -> None:
    """A replica that stops renewing (it died) holds nothing once its leases are a TTL old;
    one that renews keeps them."""
    a, b, clock = replicas
    ea, eb = endpoint(), endpoint()
    for _ in range(3):
        await take(a, ea, 8)
    clock.now += 6
    await a.slots._sync_all([URL])  # what the renewal task does every TTL / 3
    clock.now += 6  # 12 s after the take, 6 after the renewal: still held
    await b.slots.refresh([eb])
    assert b.slots.in_use(eb) == 3
    clock.now += 5  # 11 s after the last renewal: expired
    got = [await take(b, eb, 8) for _ in range(9)]
    assert got == [True] * 8 + [False]
    assert all(m.startswith(b.link.replica) for m in leases(b))


async def test_sync_re_adds_lost_leases_and_drops_orphans(
    replicas: tuple[RedisState, RedisState, Clock],
) -> None:
    """Renewal re-adds a lease that vanished while its request still runs, and drops a
    lease whose release could not reach Redis."""
    a, _, _ = replicas
    e = endpoint()
    for _ in range(3):
        await take(a, e, 8)
    own = sorted(leases(a))
    client = redis.Redis.from_url(REDIS_URL)
    client.zrem(a.slots.key(URL), own[0])  # lost (e.g. expired during a stall)
    client.zadd(a.slots.key(URL), {"gone:1": 2e12})  # a release that never arrived ...
    a.slots._drop(URL, "gone:1")  # ... and was remembered
    client.close()
    await a.slots._sync_all([URL])
    assert sorted(leases(a)) == own
    assert a.slots.in_use(e) == 3


async def test_shadow_claims_and_shutdown_release(replicas: tuple[RedisState, RedisState, Clock]) -> None:
    """A shadow run's slot (claim, no wait) is a lease like any other; a replica that stops
    gracefully gives back what it still holds at once."""
    a, b, _ = replicas
    e = endpoint()
    a.slots._counted = [e]
    a.slots.claim(e, 8)
    e.in_flight += 1
    await take(a, e, 8)
    await drain(a)
    assert len(leases(a)) == 2
    await a.slots.close()
    assert leases(a) == {}


def backend(state: RedisState, limit: int) -> Backend:
    """One replica's local backend, counting its slots in ``state``."""
    raw = {"backends": {"local": {"kind": "vllm", "base_url": URL, "model": "m", "max_concurrency": limit}}}
    config = parse_config(raw, env={})
    server = Server.at(config.backends["local"].urls, config.health, state.slots)
    state.slots._counted = server.endpoints
    return Backend("local", config.backends["local"], config.health, server)


async def test_acquire_spills_and_queues_on_every_replicas_count(
    replicas: tuple[RedisState, RedisState, Clock],
) -> None:
    """Backend.acquire over shared slots: a replica whose own count is zero still spills
    when the other holds the box, and a queued request gets the slot the other replica
    gives back (its release does not wake this process: the queue polls)."""
    a, b, _ = replicas
    mine, theirs = backend(a, 2), backend(b, 2)
    held = [await mine.acquire(), await mine.acquire()]
    with pytest.raises(Unavailable) as full:
        await theirs.acquire()
    assert full.value.reason == "capacity" and theirs.spills == 1
    assert theirs.in_flight == 0 and theirs.slots.in_use(theirs.endpoints[0]) == 2
    queued = asyncio.ensure_future(theirs.acquire(queue_timeout=30))
    await asyncio.sleep(0.3)
    assert not queued.done()
    mine.release(held.pop())
    await drain(a)
    endpoint = await asyncio.wait_for(queued, 10)
    assert theirs.in_flight == 1 and endpoint.url == URL
    assert len(leases(a)) == 2


# ---------------------------------------------------------------- fallback


@pytest_asyncio.fixture(loop_scope="function")
async def unreachable() -> AsyncIterator[RedisState]:
    state = RedisState(state_config(f"redis://127.0.0.1:{free_port()}/0", "offload-test-away", replicas=3))
    await state.start()
    yield state
    await state.stop()


def completes_without_waiting(coro: Any) -> Any:
    """Run a coroutine that must not suspend (no network, no sleep): its result."""
    with pytest.raises(StopIteration) as done:
        coro.send(None)
    return done.value.value


async def test_redis_away_means_the_in_process_share_at_once(unreachable: RedisState) -> None:
    """Nothing waits on a Redis that is away: every call answers from the fallback without
    suspending, with this replica's share of the endpoint (8 // 3 = 2)."""
    state = unreachable
    assert state.link.up is False and state.status()["mode"] == "fallback"
    e = endpoint()
    assert state.slots.limit(8) == 2 and state.slots.limit(None) is None
    assert completes_without_waiting(state.slots.take(e, 8)) is True
    e.in_flight = 2
    assert completes_without_waiting(state.slots.take(e, 8)) is False
    assert state.slots.in_use(e) == 2
    assert completes_without_waiting(state.windows.admit("k", 5, None, 0)) is None
    assert completes_without_waiting(state.owners.get("resp_1")) is None
    state.slots.give_back(e)  # no lease to give back: nothing happens
    assert state.windows.charge("k", 10) is False  # the caller charges in process


async def test_limits_fall_back_to_per_process_windows(unreachable: RedisState) -> None:
    limits = RateLimits([ClientKey(name="k", requests_per_minute=2)], store=unreachable.windows)
    await limits.enter("k")
    await limits.enter("k")
    with pytest.raises(ProxyError) as refused:
        await limits.enter("k")
    assert refused.value.status == 429 and refused.value.headers["Retry-After"]


class OwnRedis:
    """A redis-server of this test's own, to stop, pause and restart (never the shared one)."""

    def __init__(self) -> None:
        if shutil.which("redis-server") is None:
            pytest.skip("redis-server is not installed")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        cmd = [
            "redis-server",
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ]
        self.process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url, socket_timeout=1)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except redis.RedisError:
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        client.close()

    def signal(self, sig: int) -> None:
        assert self.process is not None
        self.process.send_signal(sig)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.terminate()
            self.process.wait(10)


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    server = OwnRedis()
    yield server
    server.stop()


async def test_slow_redis_falls_back_then_recovers_with_leases(own_redis: OwnRedis) -> None:
    """A paused Redis (slow, not gone): the call gives up after timeout_ms and the replica
    falls back; once Redis answers, the probe brings shared state back with one lease per
    request still in flight, those admitted in process meanwhile included."""
    state = RedisState(state_config(own_redis.url, "slow", replicas=2, timeout_ms=50, probe_interval_s=0.1))
    await state.start()
    try:
        e = endpoint()
        state.slots._counted = [e]
        assert await take(state, e, 8)  # leased
        own_redis.signal(signal.SIGSTOP)
        # A guard against hanging, not a timing assertion: the call is bounded by timeout_ms.
        assert await asyncio.wait_for(take(state, e, 8), 5) is True  # fell back: 1 < 8 // 2
        assert state.link.up is False and state.slots.limit(8) == 4
        for _ in range(2):
            assert await take(state, e, 8)  # in process, up to the share
        assert not await take(state, e, 8)
        assert e.in_flight == 4
        own_redis.signal(signal.SIGCONT)
        assert await state.link.recover()
        assert state.link.up and state.status()["mode"] == "shared"
        client = redis.Redis.from_url(own_redis.url)
        assert client.zcard(state.slots.key(URL)) == 4  # every request in flight holds a lease
        client.close()
        for _ in range(4):
            give_back(state, e)
        await drain(state)
        await state.slots.refresh([e])
        assert state.slots.in_use(e) == 0
    finally:
        await state.stop()


async def test_the_box_is_never_over_committed_during_an_outage_and_on_the_way_back(
    own_redis: OwnRedis,
) -> None:
    """max_concurrency 6 over three replicas holding 4, 1 and 1 when Redis stops: during
    the outage none of them may fill up to an even share of 2 (that made 8), and the first
    replica back may not take the slots whose leases expired while the others are still
    counting in process (that made 8 again)."""
    config = state_config(
        own_redis.url, "outage", replicas=3, timeout_ms=50, lease_ttl_s=0.3, probe_interval_s=60
    )
    states = [RedisState(config) for _ in range(3)]
    ends = [endpoint() for _ in states]
    for state, e in zip(states, ends, strict=True):
        await state.start()
        state.slots._counted = [e]
    try:
        for state, e, held in zip(states, ends, (4, 1, 1), strict=True):
            for _ in range(held):
                assert await take(state, e, 6)
        for state, e in zip(states, ends, strict=True):
            await state.slots.refresh([e])  # what each last saw (the renewals do this every TTL/3)
        own_redis.signal(signal.SIGSTOP)
        for state, e in zip(states, ends, strict=True):
            for _ in range(5):
                await asyncio.wait_for(take(state, e, 6), 5)
        assert all(not s.link.up for s in states)
        assert sum(e.in_flight for e in ends) <= 6, [e.in_flight for e in ends]
        own_redis.signal(signal.SIGCONT)
        await asyncio.sleep(0.5)  # every lease taken before the outage has expired by now
        first_back, a = states[0], ends[0]
        assert await first_back.link.recover()
        for _ in range(3):
            give_back(first_back, a)
        for _ in range(8):
            await take(first_back, a, 6)
        assert sum(e.in_flight for e in ends) <= 6, [e.in_flight for e in ends]
    finally:
        for state in states:
            await state.stop()


async def test_stopped_redis_restarted_resumes_by_itself(own_redis: OwnRedis) -> None:
    """Redis gone (connection refused) and back: the probe loop alone restores shared state."""
    state = RedisState(state_config(own_redis.url, "restart", replicas=2, probe_interval_s=0.05))
    await state.start()
    try:
        assert state.link.up
        own_redis.stop()
        await state.link.call(state.link.client.ping)
        assert not state.link.up and state.link.outages == 1
        own_redis.start()
        for _ in range(200):
            if state.link.up:
                break
            await asyncio.sleep(0.05)
        assert state.link.up
    finally:
        await state.stop()


# ------------------------------------------------------------------ limits


async def _outcome(limits: RateLimits, name: str, reserve: int) -> Any:
    try:
        return await limits.enter(name, reserve)
    except ProxyError as exc:
        return (exc.status, exc.param, exc.headers["Retry-After"], str(exc))


async def test_shared_windows_decide_as_the_in_process_ones(prefix: str) -> None:
    """One script of admissions, settlements and time steps, run against the in-process
    windows and against the Redis ones with the same clock: the same admissions, the same
    429s, the same Retry-After and messages."""
    clock = Clock()
    keys = [
        ClientKey(name="t", tokens_per_minute=1000),
        ClientKey(name="r", requests_per_minute=3),
        ClientKey(name="both", requests_per_minute=4, tokens_per_minute=300),
    ]
    state = RedisState(state_config(REDIS_URL, prefix, timeout_ms=2000), clock=clock)
    await state.start()
    local = RateLimits(keys, clock=clock)
    shared = RateLimits(keys, clock=clock, store=state.windows)
    steps: list[tuple[str, Any]] = [
        *[("enter", ("t", 150))] * 7,  # 900 reserved, then refused (tokens)
        ("settle", (0, 40)),
        ("enter", ("t", 150)),
        ("settle", (1, 900)),  # over the estimate
        ("enter", ("t", 10)),
        ("tick", 30),
        ("enter", ("t", 10)),
        ("tick", 31),  # the first charges leave the window; the held reservations lapse
        ("enter", ("t", 10)),
        *[("enter", ("r", 0))] * 4,
        ("tick", 20),
        ("enter", ("r", 0)),
        ("tick", 41),
        ("enter", ("r", 0)),
        ("enter", ("both", 200)),
        ("enter", ("both", 200)),
        ("settle", (-1, 50)),
        ("enter", ("both", 200)),
        ("enter", ("both", 10)),
        ("enter", ("both", 10)),
        ("enter", ("nobody", 10**9)),
    ]
    try:
        for limits, results in ((local, []), (shared, [])):
            clock.now = 1_000_000.0
            held: list[Any] = []
            for op, arg in steps:
                if op == "tick":
                    clock.now += arg
                elif op == "settle":
                    index, tokens = arg
                    admitted = [r for r in held if not isinstance(r, tuple)]
                    limits.settle(admitted[index], tokens)
                    await drain(state)
                else:
                    outcome = await _outcome(limits, *arg)
                    held.append(outcome)
                    results.append(outcome if isinstance(outcome, tuple) else "admitted")
            if limits is local:
                expected = results
            else:
                assert results == expected
        assert expected.count("admitted") >= 10 and len(expected) - expected.count("admitted") >= 4
    finally:
        await state.stop()


async def test_a_per_key_limit_holds_across_replicas(prefix: str) -> None:
    """Three replicas, one key with 5 requests a minute: 5 admissions in all, not 15."""
    states = [RedisState(state_config(REDIS_URL, prefix, timeout_ms=2000)) for _ in range(3)]
    for state in states:
        await state.start()
    try:
        limiters = [RateLimits([ClientKey(name="k", requests_per_minute=5)], store=s.windows) for s in states]
        outcomes = [await _outcome(limiters[i % 3], "k", 0) for i in range(15)]
        assert sum(not isinstance(o, tuple) for o in outcomes) == 5
        assert all(o[0] == 429 and int(o[2]) >= 1 for o in outcomes[5:])
    finally:
        for state in states:
            await state.stop()


async def test_settlements_never_wait_and_go_together(prefix: str) -> None:
    """Settling never waits for Redis: a settlement rides on the key's next admission from
    this replica, and those that no admission carries go together, one call per key; each
    releases its reservation and charges its usage."""
    state = RedisState(state_config(REDIS_URL, prefix, timeout_ms=2000))
    await state.start()
    try:
        limits = RateLimits([ClientKey(name="k", tokens_per_minute=10_000)], store=state.windows)
        sums_key = state.windows.keys("k")[3]
        client = redis.Redis.from_url(REDIS_URL)

        def sums() -> dict[str, int]:
            return {k.decode(): int(v) for k, v in client.hgetall(sums_key).items()}

        calls: list[Any] = []
        settle = state.windows._settle

        async def counted(**kw: Any) -> Any:
            calls.append(kw["args"])
            return await settle(**kw)

        state.windows._settle = counted  # type: ignore[method-assign]
        first = await limits.enter("k", 100)
        limits.settle(first, 30)
        assert sums() == {"reserved": 100}  # not sent yet
        held = [await limits.enter("k", 100) for _ in range(5)]  # the first carries it
        assert sums() == {"reserved": 500, "tokens": 30} and calls == []
        for reservation in held:
            limits.settle(reservation, 30)
        await drain(state)
        assert len(calls) == 1 and len(calls[0]) == 2 + 4 * 5
        assert sums() == {"reserved": 0, "tokens": 180}
        client.close()
    finally:
        await state.stop()


# ------------------------------------------------------------ response ids


async def test_response_ids_reach_the_other_replicas(prefix: str) -> None:
    config = state_config(REDIS_URL, prefix, response_ids_ttl_s=3600, timeout_ms=2000)
    a, b = RedisState(config), RedisState(config)
    await a.start()
    await b.start()
    try:
        mine, theirs = ResponseOwners(store=a.owners), ResponseOwners(store=b.owners)
        mine.remember("resp_abc", "cloud", "team-a")
        await drain(a)
        assert theirs.owner("resp_abc", "team-a") is None  # the policy reads the local map only ...
        await theirs.fetch("resp_abc")  # ... filled before it runs
        assert theirs.owner("resp_abc", "team-a") == "cloud"
        # Bound to the key that minted it, on the other replica too.
        assert theirs.owner("resp_abc", "team-b") is None and theirs.foreign("resp_abc", "team-b")
        assert not theirs.foreign("resp_abc", "team-a")
        await theirs.fetch("x" * 10_000)  # a client's huge id is never a key
        client = redis.Redis.from_url(REDIS_URL)
        assert 0 < client.pttl(a.owners.key("resp_abc")) <= 3600 * 1000
        client.close()
    finally:
        await a.stop()
        await b.stop()


# ------------------------------------------------------------------ config


def test_no_state_key_means_in_process() -> None:
    state = shared_state(None)
    assert isinstance(state, InProcess) and isinstance(state.slots, LocalSlots)
    assert state.status() is None and state.slots.shared_up() is None


@pytest.mark.parametrize(
    ("state", "message"),
    [
        (
            {"redis_url": "http://cache:6379"},
            "state.redis_url: must start with redis://, rediss:// or unix://",
        ),
        ({"redis_url": "redis://:hunter2@cache:6379/0"}, "state.replicas: Field required"),
        ({"redis_url": "redis://cache", "replicas": 0}, "state.replicas: Input should be greater than 0"),
        ({"redis_url": "redis://cache", "replicas": 2, "ttl": 1}, "state.ttl: unknown key"),
        ({"redis_url": "redis://cache", "replicas": 2, "key_prefix": "a b"}, "state.key_prefix:"),
    ],
)
def test_state_config_errors_are_one_line(state: dict[str, Any], message: str) -> None:
    raw = {"backends": {"local": {"kind": "vllm", "base_url": "http://x/v1", "model": "m"}}, "state": state}
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, env={})
    text = str(caught.value)
    assert text.startswith(message) and "\n" not in text and "hunter2" not in text
