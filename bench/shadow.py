"""Does a shadow run delay the client's answer? Shadowed against unshadowed requests, one run.

Starts a fake vLLM box and a fake cloud (``router.fake.upstream``) and two real proxies
(``offload serve``) that differ in one thing: one copies cloud-bound maths to the idle
box (``routing.shadow_runs``), the other does not. A team rule (``routing.rules``) makes
the request maths whatever the classifier says. The same request goes to the two proxies
in turn; the box answers slower than the cloud, so copies are still running when the
next request arrives. Prints p50/p99 latency through each proxy and the difference: what
shadowing adds to a client's answer.

    .venv/bin/python bench/shadow.py [--requests 1000] [--cloud-ms 5] [--box-ms 40]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.overhead import pct, start  # noqa: E402
from tests.harness import free_port  # noqa: E402

BODY = {"model": "auto", "messages": [{"role": "user", "content": "Integrate x^2 from 0 to 3, exactly."}]}


def config(local: int, cloud: int, tmp: Path, shadow: bool) -> Path:
    rule = lambda name, intent: {"name": name, "match": {"header": {"x-bench": name}}, "intent": intent}  # noqa: E731
    raw = {
        "database": {"enabled": False},
        "backends": {
            "local": {
                "kind": "vllm",
                "base_url": f"http://127.0.0.1:{local}/v1",
                "model": "m",
                "max_concurrency": 32,
            },
            "local-thinking": {"variant_of": "local", "thinking": "on"},
            "cloud": {
                "kind": "openai",
                "base_url": f"http://127.0.0.1:{cloud}/v1",
                "model": "c",
                "api_key": "sk-bench-0123456789",
            },
        },
        "routing": {
            "rules": [rule("maths", "math")],
            "shadow_runs": {
                "enabled": shadow,
                "intents": {"math": {"arm": "local-thinking", "rate": 1.0}},
                "max_per_minute": 1_000_000,
            },
        },
    }
    path = tmp / f"shadow-{shadow}.yaml"
    path.write_bytes(orjson.dumps(raw))
    return path


async def measure(urls: dict[str, str], n: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {kind: [] for kind in urls}
    async with httpx.AsyncClient(timeout=30) as client:
        for i in range(n + 50):
            kind = "shadowed" if i % 2 else "unshadowed"
            t = time.perf_counter()
            response = await client.post(
                urls[kind] + "/v1/chat/completions", json=BODY, headers={"x-bench": "maths"}
            )
            elapsed = (time.perf_counter() - t) * 1000
            assert response.status_code == 200 and response.headers["x-offload-route"] == "cloud"
            if i >= 50:  # warm-up
                times[kind].append(elapsed)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--cloud-ms", type=float, default=5.0)
    parser.add_argument("--box-ms", type=float, default=40.0)
    opts = parser.parse_args()
    ports = {"local": free_port(), "cloud": free_port(), "shadowed": free_port(), "unshadowed": free_port()}
    fake = [sys.executable, "-m", "router.fake.upstream", "--port"]
    procs = [
        start([*fake, str(ports["local"]), "--mode", "vllm", "--first-byte-delay", str(opts.box_ms / 1000)], ports["local"]),
        start(
            [*fake, str(ports["cloud"]), "--mode", "cloud", "--api-key", "sk-bench-0123456789",
             "--model", "c", "--first-byte-delay", str(opts.cloud_ms / 1000)],
            ports["cloud"],
        ),
    ]  # fmt: skip
    try:
        with tempfile.TemporaryDirectory() as tmp:
            urls = {}
            for kind in ("shadowed", "unshadowed"):
                path = config(ports["local"], ports["cloud"], Path(tmp), shadow=kind == "shadowed")
                serve = [
                    sys.executable,
                    "-m",
                    "router.ops.cli",
                    "serve",
                    "--config",
                    str(path),
                    "--port",
                    str(ports[kind]),
                ]
                procs.append(start(serve, ports[kind]))
                urls[kind] = f"http://127.0.0.1:{ports[kind]}"
            times = asyncio.run(measure(urls, 2 * opts.requests))
            metrics = httpx.get(urls["shadowed"] + "/metrics").text
    finally:
        for proc in procs:
            proc.terminate()
    copies = sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("offload_shadow_runs_total{")
    )
    print(
        f"{opts.requests} cloud-bound maths requests through each proxy (with and without shadow runs), interleaved;"
    )
    print(
        f"cloud answers in {opts.cloud_ms:g} ms, the box in {opts.box_ms:g} ms; shadow runs counted: {copies:.0f}"
    )
    for kind in ("unshadowed", "shadowed"):
        print(f"  {kind:<11} p50 {pct(times[kind], 50):7.2f} ms   p99 {pct(times[kind], 99):7.2f} ms")
    p50 = pct(times["shadowed"], 50) - pct(times["unshadowed"], 50)
    p99 = pct(times["shadowed"], 99) - pct(times["unshadowed"], 99)
    print(f"  added by shadowing: p50 {p50:+.2f} ms, p99 {p99:+.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
