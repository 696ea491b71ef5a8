"""What the proxy adds over calling the upstream directly, measured in one run.

Starts a fixed-latency fake vLLM upstream and the real proxy (``offload serve``,
one worker) as separate processes, then:

1. one request at a time, alternating direct and proxied: added p50/p99 for
   non-streaming requests, and for streams time to first byte and total;
2. 32 concurrent connections: requests per second direct and proxied.

Every figure is also given as a ratio to direct, since these machines are
shared and noisy. Usage:

    .venv/bin/python bench/overhead.py [--requests 2000] [--latency-ms 5] [--accounting | --compare-accounting]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.harness import free_port  # noqa: E402

BODY = {"model": "auto", "messages": [{"role": "user", "content": "write a function that adds two numbers"}]}


def start(cmd: list[str], port: int) -> subprocess.Popen[bytes]:
    """Start a server process and wait until its port accepts connections."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc
        except OSError:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"{cmd[:4]} exited: {err[-2000:]}") from None
            time.sleep(0.05)
    raise RuntimeError(f"{cmd[:4]} did not start")


def proxy_config(upstream: str, accounting: bool, tmp: Path) -> Path:
    db = (
        {"url": f"sqlite:///{tmp / 'bench.db'}", "spool_path": str(tmp / "spool.jsonl")} if accounting else {}
    )
    config = {
        "database": {"enabled": accounting, **db},
        "backends": {"local": {"kind": "vllm", "base_url": upstream, "model": "m", "max_concurrency": 1024}},
        "routing": {"default": "local"},
    }
    path = tmp / "bench.yaml"
    path.write_text(orjson.dumps(config).decode())  # JSON is YAML
    return path


async def one(session: aiohttp.ClientSession, url: str, body: bytes, stream: bool) -> tuple[float, float]:
    """(time to first byte, total) in seconds."""
    t0 = time.perf_counter()
    async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as resp:
        if stream:
            first = await resp.content.readany()
            t1 = time.perf_counter()
            rest = await resp.read()
            data = first + rest
            assert data.endswith(b"data: [DONE]\n\n"), data[-80:]
        else:
            data = await resp.read()
            t1 = time.perf_counter()
        assert resp.status == 200, data[:200]
    return t1 - t0, time.perf_counter() - t0


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


async def sequential(paths: dict[str, str], n: int, stream: bool) -> dict[str, float]:
    """Alternate one request on each path, ``n`` rounds; figures relative to ``direct``."""
    body = orjson.dumps({**BODY, "stream": stream})
    ttfb: dict[str, list[float]] = {name: [] for name in paths}
    total: dict[str, list[float]] = {name: [] for name in paths}
    async with aiohttp.ClientSession() as session:
        for _ in range(50):  # warm up every path
            for url in paths.values():
                await one(session, url, body, stream)
        for _ in range(n):
            for name, url in paths.items():
                a, b = await one(session, url, body, stream)
                ttfb[name].append(a)
                total[name].append(b)
    ms = 1000.0
    base = total["direct"]
    out = {"direct_p50_ms": pct(base, 50) * ms}
    for name in paths:
        if name == "direct":
            continue
        mine = total[name]
        out[f"{name}_p50_ms"] = pct(mine, 50) * ms
        out[f"{name}_added_p50_ms"] = (pct(mine, 50) - pct(base, 50)) * ms
        out[f"{name}_added_p99_ms"] = (pct(mine, 99) - pct(base, 99)) * ms
        out[f"{name}_added_mean_ms"] = (statistics.fmean(mine) - statistics.fmean(base)) * ms
        out[f"{name}_ratio_p50"] = pct(mine, 50) / pct(base, 50)
        if stream:
            out[f"{name}_added_ttfb_p50_ms"] = (pct(ttfb[name], 50) - pct(ttfb["direct"], 50)) * ms
            out[f"{name}_added_ttfb_p99_ms"] = (pct(ttfb[name], 99) - pct(ttfb["direct"], 99)) * ms
    return out


async def throughput(url: str, concurrency: int, seconds: float) -> float:
    body = orjson.dumps(BODY)
    done = 0
    stop = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            nonlocal done
            while time.perf_counter() < stop:
                await one(session, url, body, False)
                done += 1

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return done / (time.perf_counter() - t0)


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=2000, help="sequential requests per path and mode")
    parser.add_argument("--latency-ms", type=float, default=5.0, help="the fake upstream's fixed latency")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0, help="duration of each throughput run")
    parser.add_argument("--accounting", action="store_true", help="run the proxy with SQLite accounting on")
    parser.add_argument(
        "--compare-accounting",
        action="store_true",
        help="two proxies, accounting off and on, in the same run",
    )
    opts = parser.parse_args()

    up_port = free_port()
    tmp = Path(tempfile.mkdtemp(prefix="offload-bench-"))
    fake = start(
        [
            sys.executable, "-m", "tests.fakeupstream", "--port", str(up_port), "--mode", "vllm",
            "--first-byte-delay", str(opts.latency_ms / 1000),
        ],
        up_port,
    )  # fmt: skip
    upstream = f"http://127.0.0.1:{up_port}/v1"
    procs = [fake]
    paths = {"direct": f"{upstream}/chat/completions"}
    variants = (
        {"proxy": opts.accounting} if not opts.compare_accounting else {"proxy": False, "proxy_acct": True}
    )
    try:
        for name, accounting in variants.items():
            port = free_port()
            work = tmp / name
            work.mkdir()
            config = proxy_config(upstream, accounting, work)
            cmd = [sys.executable, "-m", "router.cli", "serve", "--config", str(config), "--port", str(port)]
            procs.append(start(cmd, port))
            paths[name] = f"http://127.0.0.1:{port}/v1/chat/completions"
        mode = "compared" if opts.compare_accounting else ("on" if opts.accounting else "off")
        print(f"fake upstream latency {opts.latency_ms} ms; accounting {mode}")
        for stream in (False, True):
            result = await sequential(paths, opts.requests, stream)
            label = "streaming" if stream else "non-streaming"
            print(f"\none at a time, {label} ({opts.requests} rounds, alternating):")
            for key, value in result.items():
                print(f"  {key:32s} {value:8.3f}")
        print(f"\n{opts.concurrency} concurrent connections, non-streaming, {opts.seconds:.0f} s each:")
        rps = {name: await throughput(url, opts.concurrency, opts.seconds) for name, url in paths.items()}
        for name, value in rps.items():
            print(f"  {name + '_rps':32s} {value:8.0f}   ratio to direct {value / rps['direct']:.3f}")
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(30)


if __name__ == "__main__":
    asyncio.run(main())
