"""A fleet of agent sessions on simulated Sparks: admission, endpoint affinity and the switch cost.

Starts one or two simulated Sparks (``bench/fleet_box.py``, i.e. ``router.fake.spark``:
FIFO chunked prefill at 700 tokens/s, decode at 20 tokens/s per sequence, 32 sequences,
825,000 KV tokens, vLLM's prefix cache), a fake OpenAI and a fake Anthropic (first token
after 1.5 simulated s), and one proxy per mode in turn, each on fresh boxes with the same
seeded traffic (``bench/fleet_traffic.py``). The modes:

* one box (``--boxes 1``, default ``--modes today,tokens``): **today** (32 slots, vLLM's
  waiting gauge, ``first_byte_s: 60``) and **tokens** (the same plus ``max_ttft_s: 30``);
* two boxes as the ``endpoints:`` of the local backend (``--boxes 2``, default
  ``--modes today,affinity``), both with ``max_ttft_s: 30``: **today** (``affinity: false``,
  ``strip_billing_header: false``: least in flight, the billing header reaching vLLM) and
  **affinity** (the defaults);
* ``switch-off`` / ``switch-on``: the defaults with ``routing.switch_cost`` off or on, on
  traffic where one turn in six is a question the classifier decides.

The box runs ``--scale`` times faster than the wall clock, the proxies' timeouts and rates
are scaled alike, and every figure is printed in simulated seconds (bench/fleet_report.py
says what each is; bench/README.md describes the traffic).

    .venv/bin/python bench/fleet.py [--boxes 1] [--sessions 28] [--turns N] [--spread 600] [--scale 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.fleet_report import Turn, counter, show, summarise  # noqa: E402
from bench.fleet_traffic import Session, Shared, add_turn, as_the_box_sees, body, reusable, sessions_for, text  # noqa: E402
from bench.overhead import start, stop  # noqa: E402
from tests.harness import free_port  # noqa: E402

PY = sys.executable
T0 = [0.0]  # perf_counter when the current mode's traffic began
CLOUD_TTFT_S = 1.5
PATHS = {"messages": "/v1/messages", "responses": "/v1/responses", "chat": "/v1/chat/completions"}


def usage_of(event: Any) -> dict[str, Any] | None:
    if not isinstance(event, dict):
        return None
    for holder in (event, event.get("response"), event.get("message")):
        if isinstance(holder, dict) and isinstance(holder.get("usage"), dict):
            return holder["usage"]
    return None


def count(turn: Turn, usage: dict[str, Any]) -> None:
    details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details") or {}
    read = int(usage.get("cache_read_input_tokens") or 0)
    if "prompt_tokens" in usage:
        turn.prompt, turn.completion = int(usage["prompt_tokens"]), int(usage.get("completion_tokens") or 0)
    else:
        turn.prompt = (
            int(usage.get("input_tokens") or 0) + read + int(usage.get("cache_creation_input_tokens") or 0)
        )
        turn.completion = int(usage.get("output_tokens") or 0)
    turn.cached = read or int((details or {}).get("cached_tokens") or 0)


async def send(
    http: aiohttp.ClientSession,
    proxy: str,
    session: Session,
    payload: dict[str, Any],
    turn: Turn,
    scale: float,
) -> None:
    headers = {"anthropic-version": "2023-06-01", **session.headers()}
    if turn.asked != "auto":
        headers["x-bench"] = turn.asked
    t0 = time.perf_counter()
    turn.sent_at = (t0 - T0[0]) * scale
    data = orjson.dumps(payload)
    turn.body_bytes = len(data)
    async with http.post(proxy + PATHS[session.api], data=data, headers=headers) as response:
        turn.status = response.status
        turn.route = response.headers.get("x-offload-route", "")
        turn.fallback = response.headers.get("x-offload-fallback") == "1"
        if response.status != 200:
            await response.read()
            return
        async for line in response.content:
            if not line.startswith(b"data: "):
                continue
            if turn.ttft is None:
                turn.ttft = (time.perf_counter() - t0) * scale
            if line.startswith(b"data: [DONE]"):
                continue
            try:
                usage = usage_of(orjson.loads(line[6:]))
            except orjson.JSONDecodeError:
                continue
            if usage:
                count(turn, usage)


class Run:
    """One mode's traffic: every session's turns, and what an ideal box could have cached."""

    def __init__(self, shared: Shared, proxy: str, scale: float, asks: bool) -> None:
        self.shared, self.proxy, self.scale, self.asks = shared, proxy, scale, asks
        self.turns: list[Turn] = []
        self.client_prefix: dict[str, list[bytes]] = {}  # a client's first local prompt, as blocks

    def next_turn(self, session: Session, number: int, ask: bool) -> tuple[Turn, str | None]:
        """The turn's question: one the user typed (``ask``: the classifier decides) or the
        team's rule on a header, one turn in twelve to the cloud."""
        if ask:
            return Turn(session.index, number, session.kind, "auto"), "auto"
        cloud = session.rng.random() < 1 / 12
        return Turn(session.index, number, session.kind, "cloud" if cloud else "local"), None

    async def session(self, session: Session, http: aiohttp.ClientSession) -> None:
        await asyncio.sleep(max(0.0, session.start / self.scale - (time.perf_counter() - T0[0])))
        env = f"<env>cwd=/srv/project-{session.index} session={session.index} {text(session.rng, 600)}</env>"
        add_turn(session, "user", session.user_turn(first=True))
        ask = False
        for number in range(session.turns):
            turn, model = self.next_turn(session, number, ask)
            out_tokens = session.rng.randint(150, 700)
            payload = body(session, self.shared, env, out_tokens, model)
            blocks = as_the_box_sees(session, payload)
            held = session.blocks or self.client_prefix.get(session.kind, [])
            turn.ideal = reusable(blocks, held)
            try:
                await send(http, self.proxy, session, payload, turn, self.scale)
            except (aiohttp.ClientError, TimeoutError):
                turn.status = 599
            if turn.route == "local" and turn.status == 200:
                session.blocks = blocks
                self.client_prefix.setdefault(session.kind, blocks)
            self.turns.append(turn)
            add_turn(session, "assistant", text(session.rng, out_tokens))  # the same bytes in every mode
            await asyncio.sleep(session.think() / self.scale)
            # With asks, one turn in six is a question the user types instead of a tool result.
            ask = self.asks and session.rng.random() < 1 / 6
            add_turn(session, "user", session.ask() if ask else session.user_turn(first=False))


# ------------------------------------------------------------------ the servers


def local_backend(mode: str, boxes: list[int], scale: float) -> dict[str, Any]:
    urls = [f"http://127.0.0.1:{port}/v1" for port in boxes]
    local: dict[str, Any] = {
        "kind": "vllm",
        "model": "laguna",
        "max_concurrency": 32,
        "context_window": 262144,
        "timeouts": {"first_byte_s": 60 / scale},
        **({"base_url": urls[0]} if len(urls) == 1 else {"endpoints": urls}),
    }
    if mode != "today" or len(urls) > 1:
        local.update({"max_ttft_s": 30 / scale, "prefill_tps": 800 * scale, "decode_tps": 20 * scale})
    if mode == "today" and len(urls) > 1:
        local.update({"affinity": False, "strip_billing_header": False})
    return local


def proxy_config(tmp: Path, mode: str, boxes: list[int], cloud: int, claude: int, scale: float) -> Path:
    def rule(where: str, intent: str) -> dict[str, Any]:
        return {"name": where, "match": {"header": {"x-bench": where}}, "intent": intent}

    cloud_price = {"input_per_mtok": 1.25, "output_per_mtok": 10.0}
    claude_price = {"input_per_mtok": 3.0, "output_per_mtok": 15.0}
    raw = {
        "database": {"enabled": False},
        "backends": {
            "local": local_backend(mode, boxes, scale),
            "cloud": {
                "kind": "openai",
                "base_url": f"http://127.0.0.1:{cloud}/v1",
                "model": "gpt-4.1",
                "api_key": "sk-bench-0123456789",
                "price": cloud_price,
            },
            "claude": {
                "kind": "anthropic",
                "base_url": f"http://127.0.0.1:{claude}",
                "model": "claude-sonnet-4-5",
                "api_key": "sk-ant-bench-0123456789",
                "price": claude_price,
            },
        },
        "routing": {
            "rules": [rule("cloud", "math"), rule("local", "coding")],
            "fallbacks": {"local": ["cloud"]},
            "capacity": {"metrics_interval_s": 2 / scale},
            # half_s is a re-prefill time: scaled like every other duration the proxy is told.
            "switch_cost": {"enabled": mode != "switch-off", "half_usd": 0.05, "half_s": 30 / scale},
        },
        "health": {"interval_s": 5 / scale, "open_s": 10 / scale},
    }
    path = tmp / f"fleet-{mode}.yaml"
    path.write_bytes(orjson.dumps(raw))
    return path


async def read_servers(http: aiohttp.ClientSession, proxy: str, boxes: list[int]) -> dict[str, Any]:
    async def get(url: str, as_json: bool) -> Any:
        async with http.get(url) as r:
            return await (r.json() if as_json else r.text())

    out: dict[str, Any] = {
        "metrics": await get(proxy + "/metrics", False),
        "ready": await get(proxy + "/readyz", True),
    }
    out["boxes"] = []
    for port in boxes:
        base = f"http://127.0.0.1:{port}"
        prompt = counter(await get(base + "/metrics", False), "vllm:prompt_tokens_total")
        out["boxes"].append(
            {
                "prompt": sum(prompt.values()),
                "visits": await get(base + "/_bench/visits", True),
                "state": await get(base + "/_fake/state", True),
            }
        )
    return out


async def run_mode(mode: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    boxes = [free_port() for _ in range(args.boxes)]
    cloud, claude, proxy = free_port(), free_port(), free_port()
    scale = args.scale
    log = (tmp / f"fleet-{mode}.log").open("wb")  # not a pipe: a full one would stall a server
    box = [PY, str(ROOT / "bench" / "fleet_box.py"), "--scale", str(scale), "--max-output", "1000"]
    fake = [PY, "-m", "router.fake.upstream", "--first-byte-delay", str(CLOUD_TTFT_S / scale)]
    procs = [start([*box, "--port", str(port)], port, log) for port in boxes]
    procs.append(start([*fake, "--mode", "cloud", "--port", str(cloud)], cloud, log))
    procs.append(start([*fake, "--mode", "anthropic", "--port", str(claude)], claude, log))
    config = proxy_config(tmp, mode, boxes, cloud, claude, scale)
    serve = [PY, "-m", "router.ops.cli", "serve", "--config", str(config), "--port", str(proxy)]
    procs.append(start(serve, proxy, log))
    try:
        shared, sessions = sessions_for(args.seed, args.sessions, args.spread, args.turns)
        url = f"http://127.0.0.1:{proxy}"
        run = Run(shared, url, scale, asks=any(m.startswith("switch") for m in args.modes.split(",")))
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        async with aiohttp.ClientSession(timeout=timeout, connector=aiohttp.TCPConnector(limit=0)) as http:
            T0[0] = time.perf_counter()
            await asyncio.gather(*(run.session(s, http) for s in sessions))
            duration = (time.perf_counter() - T0[0]) * scale
            servers = await read_servers(http, url, boxes)
    finally:
        stop(procs)
        log.close()
    if args.dump:
        Path(args.dump).with_suffix(f".{mode}.jsonl").write_bytes(
            b"".join(orjson.dumps(t.__dict__) + b"\n" for t in run.turns)
        )
    return summarise(mode, run.turns, servers, duration)


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--boxes", type=int, choices=(1, 2), default=1)
    parser.add_argument("--sessions", type=int, default=28)
    parser.add_argument("--turns", type=int, help="turns per session (default: 10 to 20 at random)")
    parser.add_argument(
        "--spread", type=float, default=600.0, help="simulated seconds over which sessions start"
    )
    parser.add_argument("--scale", type=float, default=20.0, help="simulated seconds per real second")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--modes", help="default: today,tokens (one box), today,affinity (two)")
    parser.add_argument("--dump", help="write each mode's turns to DUMP.<mode>.jsonl")
    args = parser.parse_args()
    args.modes = args.modes or ("today,tokens" if args.boxes == 1 else "today,affinity")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for mode in args.modes.split(","):
            results.append(await run_mode(mode, args, Path(tmp)))
    show(results, args.scale)


if __name__ == "__main__":
    asyncio.run(main())
