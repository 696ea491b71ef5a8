"""Which HTTP client should the proxy use upstream? Measured, not assumed.

Each client sends the same small chat request to a fake vLLM (separate
process, no added latency) from one event loop with 32 requests in flight,
for a fixed time; the figure is requests per second, also as a ratio to
aiohttp. The upstream client's cost per request is what bounds a
single-worker proxy's throughput. Usage:

    .venv/bin/python bench/upstream_client.py [--seconds 5] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from overhead import BODY, free_port, start  # noqa: E402

Send = Callable[[], Awaitable[None]]


async def measure(send: Send, concurrency: int, seconds: float) -> float:
    done = 0
    stop = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() < stop:
            await send()
            done += 1

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return done / (time.perf_counter() - t0)


async def with_aiohttp(url: str, body: bytes, concurrency: int, seconds: float) -> float:
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=4.0)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def send() -> None:
            async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as r:
                await r.read()

        return await measure(send, concurrency, seconds)


async def with_httpx(url: str, body: bytes, concurrency: int, seconds: float) -> float:
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=concurrency, keepalive_expiry=4.0)
    async with httpx.AsyncClient(limits=limits) as client:

        async def send() -> None:
            r = await client.post(url, content=body, headers={"Content-Type": "application/json"})
            r.read()

        return await measure(send, concurrency, seconds)


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=32)
    opts = parser.parse_args()
    port = free_port()
    fake = start([sys.executable, "-m", "router.fake.upstream", "--port", str(port), "--mode", "vllm"], port)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    body = orjson.dumps(BODY)
    try:
        results = {}
        for name, run in (("aiohttp", with_aiohttp), ("httpx", with_httpx)):
            await run(url, body, opts.concurrency, 1.0)  # warm up
            results[name] = await run(url, body, opts.concurrency, opts.seconds)
        print(f"{opts.concurrency} in flight, {opts.seconds:.0f} s each, one event loop:")
        for name, rps in results.items():
            print(f"  {name:10s} {rps:8.0f} req/s   ratio to aiohttp {rps / results['aiohttp']:.3f}")
    finally:
        fake.terminate()
        fake.wait(10)


if __name__ == "__main__":
    asyncio.run(main())
