"""The usage journal (router/ledger/journal.py ``Journal``): what it costs and what it saves.

Two real proxies (``offload serve``, SQLite accounting) in front of one fake vLLM
upstream, identical but for ``database.journal``, measured in the same run:

1. added latency: the same non-streaming request one at a time, alternating
   between the two proxies (p50/p99, and the ratio journal-on / journal-off);
2. throughput: 32 connections, in slices alternating between the two (req/s
   and the ratio);
3. SIGKILL: each proxy (default writer settings: a flush every second) under
   load at a fixed request rate, killed with SIGKILL at a different moment each
   round, restarted (the journal is replayed at start) and stopped; rows in
   SQL against the requests answered before the kill.

    .venv/bin/python bench/journal.py [--requests 2000] [--seconds 8] [--rate 150] [--kills 3]

Not part of CI. Figures in bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from overhead import pct, start  # noqa: E402  (bench/ is on the path when run as a script)

from tests.harness import USER, free_port  # noqa: E402

BODY = orjson.dumps({"model": "local", "messages": USER})


def config(tmp: Path, upstream: str, journal: bool) -> Path:
    path = tmp / "router.yaml"
    path.write_text(
        orjson.dumps(
            {
                "database": {
                    "url": f"sqlite:///{tmp / 'usage.db'}",
                    "spool_path": str(tmp / "spool.jsonl"),
                    "journal": journal,
                },
                "backends": {
                    "local": {"kind": "vllm", "base_url": upstream, "model": "m", "max_concurrency": 1024}
                },
            }
        ).decode()
    )
    return path


def serve(path: Path, port: int) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "router.ops.cli", "serve", "--config", str(path), "--port", str(port)]
    return start(cmd, port)


async def post(session: aiohttp.ClientSession, url: str) -> bool:
    async with session.post(url, data=BODY, headers={"Content-Type": "application/json"}) as resp:
        await resp.read()
        return resp.status == 200


async def latency(urls: dict[str, str], n: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in urls}
    async with aiohttp.ClientSession() as session:
        for i in range(n + 200):
            for name, url in urls.items():
                t = time.perf_counter()
                assert await post(session, url)
                if i >= 200:  # warm-up rounds not counted
                    times[name].append(time.perf_counter() - t)
    return times


async def throughput(url: str, seconds: float, concurrency: int = 32) -> float:
    done = 0
    deadline = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            nonlocal done
            while time.perf_counter() < deadline:
                ok = await post(session, url)  # not `done += await ...`: that reads done before awaiting
                done += ok

        t = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return done / (time.perf_counter() - t)


async def load_until_killed(url: str, proc: subprocess.Popen[bytes], rate: float, seconds: float) -> int:
    """Requests at ``rate`` per second (open loop) until SIGKILL at ``seconds``; answered ones."""
    answered = 0
    killed = False
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:

        async def one() -> None:
            nonlocal answered
            try:
                ok = await post(session, url)
            except (aiohttp.ClientError, TimeoutError):
                return
            if ok and not killed:
                answered += 1

        tasks = []
        t0 = time.perf_counter()
        i = 0
        while (now := time.perf_counter() - t0) < seconds:
            if i < now * rate:
                tasks.append(asyncio.create_task(one()))
                i += 1
            else:
                await asyncio.sleep(min(0.001, i / rate - now))
        killed = True  # set before the signal: nothing answered after it is counted
        proc.send_signal(signal.SIGKILL)
        await asyncio.gather(*tasks)
    proc.wait(10)
    return answered


def rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute('SELECT count(*) FROM "usage"').fetchone()[0])


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=2000, help="one-at-a-time rounds")
    parser.add_argument("--seconds", type=float, default=8.0, help="each throughput run")
    parser.add_argument("--rate", type=float, default=150.0, help="requests/s before each SIGKILL")
    parser.add_argument("--kills", type=int, default=3, help="SIGKILL rounds per variant")
    opts = parser.parse_args()

    up = free_port()
    fake = start([sys.executable, "-m", "router.fake.upstream", "--port", str(up), "--mode", "vllm"], up)
    upstream = f"http://127.0.0.1:{up}/v1"
    procs: list[subprocess.Popen[bytes]] = [fake]
    with tempfile.TemporaryDirectory(prefix="offload-journal-") as tmpdir:
        tmp = Path(tmpdir)
        try:
            urls = {}
            for name, journal in (("off", False), ("on", True)):
                (tmp / name).mkdir()
                port = free_port()
                procs.append(serve(config(tmp / name, upstream, journal), port))
                urls[name] = f"http://127.0.0.1:{port}/v1/chat/completions"
            times = await latency(urls, opts.requests)
            print(f"one at a time, non-streaming, {opts.requests} rounds alternating:")
            for p in (50, 99):
                off, on = pct(times["off"], p) * 1000, pct(times["on"], p) * 1000
                print(f"  p{p}: journal off {off:.3f} ms, on {on:.3f} ms, ratio {on / off:.3f}")
            slices: dict[str, list[float]] = {name: [] for name in urls}
            for _ in range(4):  # alternating slices: a neighbour's burst hits both alike
                for name, url in urls.items():
                    slices[name].append(await throughput(url, opts.seconds / 4))
            rps = {name: sum(values) / len(values) for name, values in slices.items()}
            print(
                f"32 connections, {opts.seconds:g} s each in 4 alternating slices: off {rps['off']:.0f} req/s, "
                f"on {rps['on']:.0f} req/s, ratio {rps['on'] / rps['off']:.3f}"
            )
            for proc in procs[1:]:
                proc.terminate()
                proc.wait(30)
            procs = [fake]

            print(f"\nSIGKILL after 3-4 s at {opts.rate:g} req/s, then restart and replay:")
            for name, journal in (("off", False), ("on", True)):
                for k in range(opts.kills):
                    work = tmp / f"kill-{name}-{k}"
                    work.mkdir()
                    path = config(work, upstream, journal)
                    port = free_port()
                    proc = serve(path, port)
                    url = f"http://127.0.0.1:{port}/v1/chat/completions"
                    answered = await load_until_killed(url, proc, opts.rate, 3.0 + 0.37 * k)
                    again = serve(path, port)
                    again.terminate()
                    again.wait(30)
                    got = rows(work / "usage.db")
                    print(f"  journal {name}: {answered} answered, {got} rows, {max(answered - got, 0)} lost")
        finally:
            for proc in reversed(procs):
                proc.terminate()
                proc.wait(30)


if __name__ == "__main__":
    asyncio.run(main())
