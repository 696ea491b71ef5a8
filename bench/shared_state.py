"""Shared state through Redis (``state:``): what it costs per request, and what it buys.

Two measurements, each against a baseline in the same run:

1. **Added latency.** Two proxies (``offload serve``) in front of one instant fake
   vLLM: one counts slots and limits in process, the other through a loopback Redis
   (``state:``). One request at a time, the same request to each in every round (the
   order flips every round): the p50 and p99 differences. Two cases: a key without
   per-key limits (one slot lease per request: take, then release in the background)
   and a key with limits (plus the shared admission and settlement).
2. **Local share.** Two replicas in front of one fake vLLM box of 32 slots and a fake
   cloud, fed the same burst trace: *static halves* (``max_concurrency: 16`` each, no
   Redis, what the docs asked before) against *shared* (``max_concurrency: 32`` with
   ``state: {replicas: 2}``). A load balancer rarely splits a burst evenly (agents keep
   their connections), so each burst sends a random share, from half to all of it, to
   one replica. Bursts alternate between the two pairs; the local share is the fraction
   of requests the box answered (``x-offload-route``). The box's peak in-flight count is
   sampled too: shared capacity must never overfill it.

    .venv/bin/python bench/shared_state.py [--rounds 2000] [--bursts 40] [--delay-ms 300]
        [--redis-url redis://127.0.0.1:6379/0]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.overhead import start  # noqa: E402  (one way to start and wait for a server)

AGENTS_KEY = "sk-bench-agents"
LIMITED_KEY = "sk-bench-limited"
BODY = {"model": "local", "messages": [{"role": "user", "content": "write a function that adds two numbers"}]}
BOX_SLOTS = 32
BOUND_MS = 0.3  # the bound for the added p50 of the slots
SLOTS_ONLY = "slots"  # a key without per-key limits: only the slot lease is shared


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fake(mode: str, *args: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [sys.executable, "-m", "router.fake.upstream", "--port", str(port), "--mode", mode, *args]
    return start(cmd, port), f"http://127.0.0.1:{port}"


def proxy(
    work: Path, name: str, local: str, cloud: str | None, concurrency: int, state: dict[str, Any] | None
) -> tuple[subprocess.Popen[bytes], str]:
    backends: dict[str, Any] = {
        "local": {"kind": "vllm", "base_url": f"{local}/v1", "model": "m", "max_concurrency": concurrency}
    }
    routing: dict[str, Any] = {"default": "local"}
    if cloud is not None:
        backends["cloud"] = {"kind": "openai", "base_url": f"{cloud}/v1", "model": "c", "api_key": "sk-cloud"}
        routing["fallbacks"] = {"local": ["cloud"]}
    config = {
        "database": {"enabled": False},
        "auth": {
            "keys": [
                {"name": "agents", "key": AGENTS_KEY},
                # Limits high enough never to refuse: the cost of counting, not of refusing.
                {
                    "name": "limited",
                    "key": LIMITED_KEY,
                    "requests_per_minute": 10**7,
                    "tokens_per_minute": 10**9,
                },
            ]
        },
        "backends": backends,
        "routing": routing,
        **({"state": state} if state else {}),
    }
    path = work / f"{name}.yaml"
    path.write_text(orjson.dumps(config).decode())  # JSON is YAML
    port = free_port()
    cmd = [sys.executable, "-m", "router.ops.cli", "serve", "--config", str(path), "--port", str(port)]
    return start(cmd, port), f"http://127.0.0.1:{port}"


async def configure(root: str, **behaviour: Any) -> None:
    async with aiohttp.ClientSession() as session, session.post(f"{root}/_fake/config", json=behaviour) as r:
        r.raise_for_status()


# ------------------------------------------------------------------ added latency


async def timed(session: aiohttp.ClientSession, root: str, key: str) -> float:
    t = time.perf_counter()
    async with session.post(
        f"{root}/v1/chat/completions", json=BODY, headers={"Authorization": f"Bearer {key}"}
    ) as r:
        await r.read()
        assert r.status == 200, r.status
    return time.perf_counter() - t


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def script_alone(redis_url: str, calls: int = 2000) -> float:
    """p50 of the lease script (take, then its release) called from this process: the
    round trip without a proxy around it."""
    import redis.asyncio as aioredis

    from router.forward.shared_redis import TAKE

    client = aioredis.Redis.from_url(redis_url)
    take = client.register_script(TAKE)
    key = f"offload-bench-{uuid.uuid4().hex[:8]}:slots"
    times = []
    try:
        for i in range(calls):
            t = time.perf_counter()
            await take(keys=[key], args=["", 10_000, 10**6, f"b:{i}", *([f"b:{i - 1}"] if i else [])])
            times.append(time.perf_counter() - t)
    finally:
        await client.delete(key)
        await client.aclose()
    return statistics.median(times) * 1000


async def latency(rounds: int, in_process: str, shared: str, redis_url: str) -> dict[str, dict[str, float]]:
    cases = [(SLOTS_ONLY, AGENTS_KEY), ("slots + key limits", LIMITED_KEY)]
    proxies = (("in", in_process), ("shared", shared))
    times: dict[tuple[str, str], list[float]] = {(c, p): [] for c, _ in cases for p, _ in proxies}
    async with aiohttp.ClientSession() as session:
        for _ in range(500):  # warm both: connections, Redis scripts, the classifier's caches
            for _, key in cases:
                await timed(session, in_process, key)
                await timed(session, shared, key)
        rng = random.Random(0)
        for _ in range(rounds):
            # Every case on both proxies in each round, in a random order: drift and whatever
            # a request leaves behind land on every side alike.
            sends = [(label, key, which, root) for label, key in cases for which, root in proxies]
            rng.shuffle(sends)
            for label, key, which, root in sends:
                times[label, which].append(await timed(session, root, key))
    out: dict[str, dict[str, float]] = {"lease script alone": {"p50_ms": await script_alone(redis_url)}}
    for label, _ in cases:
        base, with_redis = times[label, "in"], times[label, "shared"]
        out[label] = {
            "in_process_p50_ms": statistics.median(base) * 1000,
            "shared_p50_ms": statistics.median(with_redis) * 1000,
            "added_p50_ms": (statistics.median(with_redis) - statistics.median(base)) * 1000,
            "added_p99_ms": (pct(with_redis, 0.99) - pct(base, 0.99)) * 1000,
        }
    return out


# ------------------------------------------------------------------ local share


@dataclass
class Pair:
    name: str
    roots: list[str]
    local: int = 0
    total: int = 0
    failed: int = 0
    peaks: list[int] = field(default_factory=list)


async def peak_while(box: str, work: asyncio.Future[Any]) -> int:
    """The most requests the box held at once while ``work`` ran."""
    peak = 0
    async with aiohttp.ClientSession() as session:
        while not work.done():
            async with session.get(f"{box}/_fake/state") as r:
                peak = max(peak, (await r.json())["active"])
            await asyncio.sleep(0.005)
    return peak


async def one_burst(session: aiohttp.ClientSession, pair: Pair, box: str, size: int, skew: float) -> None:
    heavy = round(size * skew)
    targets = [pair.roots[0]] * heavy + [pair.roots[1]] * (size - heavy)

    async def send(root: str) -> str | None:
        headers = {"Authorization": f"Bearer {AGENTS_KEY}"}
        async with session.post(f"{root}/v1/chat/completions", json=BODY, headers=headers) as r:
            await r.read()
            return r.headers.get("x-offload-route") if r.status == 200 else None

    work = asyncio.ensure_future(asyncio.gather(*(send(root) for root in targets)))
    peak = await peak_while(box, work)
    routes = await work
    pair.peaks.append(peak)
    pair.total += size
    pair.local += routes.count("local")
    pair.failed += routes.count(None)


async def local_share(bursts: int, seed: int, pairs: list[tuple[Pair, str]]) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    trace = [(rng.choice((16, 24, 32, 40, 48)), rng.uniform(0.5, 1.0)) for _ in range(bursts)]
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=120)
    ) as session:
        for size, skew in trace:
            for pair, box in pairs:  # the same burst to each pair, one after the other
                await one_burst(session, pair, box, size, skew)
    return [
        {
            "pair": pair.name,
            "requests": pair.total,
            "local": pair.local,
            "local_share": pair.local / pair.total,
            "failed": pair.failed,
            "box_peak": max(pair.peaks),
        }
        for pair, _ in pairs
    ]


# ------------------------------------------------------------------ main


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2000, help="latency rounds (each: 4 requests)")
    parser.add_argument("--bursts", type=int, default=40, help="bursts in the local-share trace")
    parser.add_argument("--delay-ms", type=float, default=300, help="the fake box's answer time in the trace")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument(
        "--redis-url", default=os.environ.get("OFFLOAD_REDIS_URL", "redis://127.0.0.1:6379/0")
    )
    opts = parser.parse_args()

    client = redis.Redis.from_url(opts.redis_url, socket_timeout=2)
    client.ping()
    prefix = f"offload-bench-{uuid.uuid4().hex[:8]}"
    work = Path(tempfile.mkdtemp(prefix="offload-bench-shared-"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        box_proc, box = fake("vllm")
        cloud_proc, cloud = fake("cloud", "--api-key", "sk-cloud")
        procs += [box_proc, cloud_proc]

        if opts.rounds:
            state = {"redis_url": opts.redis_url, "replicas": 1, "key_prefix": f"{prefix}-lat"}
            p1, in_process = proxy(work, "in-process", box, None, BOX_SLOTS, None)
            p2, shared = proxy(work, "shared", box, None, BOX_SLOTS, state)
            procs += [p1, p2]
            print(
                f"added latency: one request at a time, {opts.rounds} rounds, instant fake vLLM, loopback Redis"
            )
            figures = await latency(opts.rounds, in_process, shared, opts.redis_url)
            alone = figures.pop("lease script alone")["p50_ms"]
            for label, f in figures.items():
                # The bound is the slots' (one lease per request); key limits add their own round trip.
                bound = f" ({'within' if f['added_p50_ms'] <= BOUND_MS else 'OVER'} {BOUND_MS} ms)"
                print(
                    f"  {label:18} in process p50 {f['in_process_p50_ms']:.3f} ms, shared p50 "
                    f"{f['shared_p50_ms']:.3f} ms: added p50 {f['added_p50_ms']:+.3f} ms"
                    f"{bound if label == SLOTS_ONLY else ''}, added p99 {f['added_p99_ms']:+.3f} ms"
                )
            print(f"  the lease script alone, from this process (no proxy): p50 {alone:.3f} ms")
            for p in (p1, p2):
                p.terminate()

        if opts.bursts:
            await configure(box, first_byte_delay=opts.delay_ms / 1000)
            state = {"redis_url": opts.redis_url, "replicas": 2, "key_prefix": f"{prefix}-share"}
            static = Pair("static halves (16 + 16, in process)", [])
            shared_pair = Pair("shared (32, Redis)", [])
            for i in range(2):
                p, root = proxy(work, f"static-{i}", box, cloud, BOX_SLOTS // 2, None)
                procs.append(p)
                static.roots.append(root)
                p, root = proxy(work, f"shared-{i}", box, cloud, BOX_SLOTS, state)
                procs.append(p)
                shared_pair.roots.append(root)
            print(
                f"\nlocal share: 2 replicas, a {BOX_SLOTS}-slot box answering in {opts.delay_ms:g} ms, "
                f"{opts.bursts} bursts of 16-48 requests, 50-100 % of each to one replica (seed {opts.seed})"
            )
            rows = await local_share(opts.bursts, opts.seed, [(static, box), (shared_pair, box)])
            for row in rows:
                print(
                    f"  {row['pair']:36} local {row['local']:5}/{row['requests']:5} = "
                    f"{row['local_share']:.1%}, failed {row['failed']}, box peak {row['box_peak']}"
                )
            gain = rows[1]["local_share"] - rows[0]["local_share"]
            print(
                f"  shared - static: {gain:+.1%} of requests served locally ({rows[1]['local_share'] / rows[0]['local_share']:.2f}x)"
            )
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        for key in client.scan_iter(f"{prefix}*"):
            client.delete(key)
        client.close()


if __name__ == "__main__":
    asyncio.run(main())
