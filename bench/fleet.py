"""A fleet of agent sessions on one simulated Spark: today's admission against admission by tokens.

Starts a simulated Spark (``python -m router.fake.spark``: FIFO chunked prefill at 700
tokens/s, decode at 20 tokens/s per sequence, 32 sequences, 825,000 KV tokens, vLLM's
prefix cache), a fake OpenAI and a fake Anthropic (first token after 1.5 simulated s),
and two proxies in turn, each on a fresh box with the same seeded traffic: **today**
(32 slots, vLLM's waiting gauge, ``first_byte_s: 60``) and **tokens** (the same plus
``max_ttft_s: 30``, ``router/forward/admission.py``).

The traffic: ``--sessions`` sessions starting over ``--spread`` simulated seconds, shaped
like Claude Code (Messages), Codex (Responses) and a chat agent (Chat Completions): long
shared tools and system prompts, whole histories resent every turn, tool results and
think time between turns, one turn in twelve asked of the cloud (a team rule on a
header). The box runs ``--scale`` times faster than the wall clock, the proxies' timeouts
and rates are scaled alike, and every figure is printed in simulated seconds: TTFT
p50/p95 for local and for all turns, the local share of prompt tokens, spills by
reason, requests abandoned mid-prefill, preemptions, cloud spend. bench/README.md
describes the traffic in full.

    .venv/bin/python bench/fleet.py [--sessions 28] [--spread 600] [--scale 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.overhead import start, stop  # noqa: E402
from tests.harness import free_port  # noqa: E402

PY = sys.executable
T0 = [0.0]  # perf_counter when the current mode's traffic began
CLOUD_TTFT_S = 1.5
PRICES = {"cloud": (1.25, 10.0), "claude": (3.0, 15.0)}  # $ per million input / output tokens
WORDS = [
    "def",
    "class",
    "return",
    "import",
    "self",
    "value",
    "index",
    "error",
    "path",
    "file",
    "test",
    "assert",
    "config",
    "request",
    "token",
    "cache",
    "stream",
    "buffer",
    "parse",
    "result",
    "async",
    "await",
    "yield",
    "lambda",
    "dict",
    "list",
    "tuple",
    "none",
]


def text(rng: random.Random, tokens: int) -> str:
    """About ``tokens`` tokens of code-like text (the box counts four bytes a token)."""
    out: list[str] = []
    size = 0
    while size < tokens * 4:
        word = rng.choice(WORDS) + rng.choice(("", "_", ".", "(", " ", "\n")) + str(rng.randint(0, 999))
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


# ------------------------------------------------------------------ sessions


@dataclass
class Session:
    kind: str  # claude | codex | chat
    start: float  # simulated seconds
    turns: int
    rng: random.Random
    history: list[Any] = field(default_factory=list)

    @property
    def api(self) -> str:
        return {"claude": "messages", "codex": "responses", "chat": "chat"}[self.kind]

    def think(self) -> float:
        return self.rng.uniform(20, 90) if self.kind == "chat" else self.rng.uniform(2, 15)

    def user_turn(self, first: bool) -> str:
        if self.kind == "chat":
            return text(self.rng, self.rng.randint(1500, 6000) if first else self.rng.randint(300, 3000))
        if first:
            return text(self.rng, 2000)  # the task, with the client's reminders
        # A tool result: mostly small (a grep, an edit, a test run), sometimes a file or a log.
        size = self.rng.choices(((200, 1000), (1000, 3000), (3000, 8000)), weights=(6, 3, 1))[0]
        return text(self.rng, self.rng.randint(*size))


@dataclass(frozen=True)
class Shared:
    """What every session of a kind sends unchanged: its client's tools and system prompt."""

    claude_tools: list[dict[str, Any]]
    claude_system: str
    codex_tools: list[dict[str, Any]]
    codex_instructions: str
    chat_system: str

    @classmethod
    def make(cls, rng: random.Random) -> Shared:
        def tools(n: int, tokens: int, anthropic: bool) -> list[dict[str, Any]]:
            out = []
            for i in range(n):
                schema = {"type": "object", "properties": {"arg": {"type": "string"}}}
                desc = text(rng, tokens // n)
                if anthropic:
                    out.append({"name": f"tool_{i}", "description": desc, "input_schema": schema})
                else:
                    out.append(
                        {"type": "function", "name": f"tool_{i}", "description": desc, "parameters": schema}
                    )
            return out

        return cls(
            tools(16, 12_000, True), text(rng, 4000), tools(8, 3000, False), text(rng, 5000), text(rng, 3000)
        )


def body(session: Session, shared: Shared, env: str, out_tokens: int) -> dict[str, Any]:
    if session.kind == "claude":
        system = [{"type": "text", "text": shared.claude_system}, {"type": "text", "text": env}]
        return {
            "model": "claude-sonnet-4-5",
            "max_tokens": out_tokens,
            "stream": True,
            "system": system,
            "tools": shared.claude_tools,
            "messages": session.history,
        }
    if session.kind == "codex":
        return {
            "model": "gpt-5.1-codex",
            "instructions": shared.codex_instructions + env,
            "tools": shared.codex_tools,
            "input": session.history,
            "stream": True,
            "store": False,
            "max_output_tokens": out_tokens,
        }
    return {
        "model": "auto",
        "messages": [{"role": "system", "content": shared.chat_system}, *session.history],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": out_tokens,
    }


def add_turn(session: Session, role: str, content: str) -> None:
    if session.kind == "codex":
        kind = "input_text" if role == "user" else "output_text"
        session.history.append(
            {"type": "message", "role": role, "content": [{"type": kind, "text": content}]}
        )
    else:
        session.history.append({"role": role, "content": content})


# ------------------------------------------------------------------ one turn


@dataclass
class Turn:
    session: int
    kind: str
    cloud_asked: bool
    sent_at: float = 0.0  # simulated seconds since the run began
    body_bytes: int = 0
    status: int = 0
    route: str = ""
    fallback: bool = False
    ttft: float | None = None  # simulated seconds
    prompt: int = 0
    cached: int = 0
    completion: int = 0


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
    path = {"messages": "/v1/messages", "responses": "/v1/responses", "chat": "/v1/chat/completions"}[
        session.api
    ]
    headers = {"x-bench": "cloud" if turn.cloud_asked else "local", "anthropic-version": "2023-06-01"}
    t0 = time.perf_counter()
    turn.sent_at = (t0 - T0[0]) * scale
    data = orjson.dumps(payload)
    turn.body_bytes = len(data)
    async with http.post(proxy + path, data=data, headers=headers) as response:
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


async def run_session(
    index: int,
    session: Session,
    shared: Shared,
    proxy: str,
    scale: float,
    http: aiohttp.ClientSession,
    turns: list[Turn],
) -> None:
    await asyncio.sleep(max(0.0, session.start / scale - (time.perf_counter() - T0[0])))
    env = f"<env>cwd=/srv/project-{index} session={index} {text(session.rng, 600)}</env>"
    add_turn(session, "user", session.user_turn(first=True))
    for _ in range(session.turns):
        turn = Turn(index, session.kind, session.rng.random() < 1 / 12)
        out_tokens = session.rng.randint(150, 700)
        try:
            await send(http, proxy, session, body(session, shared, env, out_tokens), turn, scale)
        except (aiohttp.ClientError, TimeoutError):
            turn.status = 599
        turns.append(turn)
        add_turn(session, "assistant", text(session.rng, max(50, turn.completion or out_tokens)))
        await asyncio.sleep(session.think() / scale)
        add_turn(session, "user", session.user_turn(first=False))


def sessions_for(seed: int, n: int, spread: float) -> tuple[Shared, list[Session]]:
    rng = random.Random(seed)
    shared = Shared.make(rng)
    kinds = ("claude", "codex", "chat")
    out = [
        Session(kinds[i % 3], rng.uniform(0, spread), rng.randint(10, 20), random.Random(rng.random()))
        for i in range(n)
    ]
    return shared, out


# ------------------------------------------------------------------ the servers


def proxy_config(tmp: Path, name: str, box: int, cloud: int, claude: int, scale: float, tokens: bool) -> Path:
    local: dict[str, Any] = {
        "kind": "vllm",
        "base_url": f"http://127.0.0.1:{box}/v1",
        "model": "laguna",
        "max_concurrency": 32,
        "context_window": 262144,
        "timeouts": {"first_byte_s": 60 / scale},
    }
    if tokens:
        local.update({"max_ttft_s": 30 / scale, "prefill_tps": 800 * scale, "decode_tps": 20 * scale})
    rule = lambda where, intent: {"name": where, "match": {"header": {"x-bench": where}}, "intent": intent}  # noqa: E731
    raw = {
        "database": {"enabled": False},
        "backends": {
            "local": local,
            "cloud": {
                "kind": "openai",
                "base_url": f"http://127.0.0.1:{cloud}/v1",
                "model": "gpt-4.1",
                "api_key": "sk-bench-0123456789",
            },
            "claude": {
                "kind": "anthropic",
                "base_url": f"http://127.0.0.1:{claude}",
                "model": "claude-sonnet-4-5",
                "api_key": "sk-ant-bench-0123456789",
            },
        },
        "routing": {
            "rules": [rule("cloud", "math"), rule("local", "coding")],
            "fallbacks": {"local": ["cloud"]},
            "capacity": {"metrics_interval_s": 2 / scale},
        },
        "health": {"interval_s": 5 / scale, "open_s": 10 / scale},
    }
    path = tmp / f"fleet-{name}.yaml"
    path.write_bytes(orjson.dumps(raw))
    return path


def spills_by_reason(text_: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for match in re.finditer(r'offload_fallbacks_total\{[^}]*reason="([^"]+)"[^}]*\} (\S+)', text_):
        out[match[1]] = out.get(match[1], 0) + int(float(match[2]))
    return {reason: n for reason, n in out.items() if n}


async def run_mode(name: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    box, cloud, claude, proxy = free_port(), free_port(), free_port(), free_port()
    scale = args.scale
    log = (tmp / f"fleet-{name}.log").open("wb")  # not a pipe: a full one would stall a server
    procs = [
        start([PY, "-m", "router.fake.spark", "--port", str(box), "--scale", str(scale), "--max-output", "1000"], box, log),
        start([PY, "-m", "router.fake.upstream", "--mode", "cloud", "--port", str(cloud), "--first-byte-delay", str(CLOUD_TTFT_S / scale)], cloud, log),
        start([PY, "-m", "router.fake.upstream", "--mode", "anthropic", "--port", str(claude), "--first-byte-delay", str(CLOUD_TTFT_S / scale)], claude, log),
    ]  # fmt: skip
    config = proxy_config(tmp, name, box, cloud, claude, scale, tokens=name == "tokens")
    procs.append(
        start(
            [PY, "-m", "router.ops.cli", "serve", "--config", str(config), "--port", str(proxy)], proxy, log
        )
    )
    try:
        shared, sessions = sessions_for(args.seed, args.sessions, args.spread)
        turns: list[Turn] = []
        url = f"http://127.0.0.1:{proxy}"
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        async with aiohttp.ClientSession(timeout=timeout, connector=aiohttp.TCPConnector(limit=0)) as http:
            T0[0] = time.perf_counter()
            await asyncio.gather(
                *(run_session(i, s, shared, url, scale, http, turns) for i, s in enumerate(sessions))
            )
            duration = (time.perf_counter() - T0[0]) * scale
            async with http.get(url + "/metrics") as r:
                metrics = await r.text()
            async with http.get(f"http://127.0.0.1:{box}/_fake/state") as r:
                box_state = await r.json()
            async with http.get(url + "/readyz") as r:
                ready = await r.json()
    finally:
        stop(procs)
        log.close()
    if args.dump:
        Path(args.dump).with_suffix(f".{name}.jsonl").write_bytes(
            b"".join(orjson.dumps(t.__dict__) + b"\n" for t in turns)
        )
    return summarise(name, turns, metrics, box_state, ready, duration)


# ------------------------------------------------------------------ figures


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarise(
    name: str, turns: list[Turn], metrics: str, box: dict[str, Any], ready: dict[str, Any], duration: float
) -> dict[str, Any]:
    ok = [t for t in turns if t.status == 200 and t.ttft is not None]
    local = [t for t in ok if t.route == "local"]
    spend = sum(
        (t.prompt * PRICES[t.route][0] + t.completion * PRICES[t.route][1]) / 1e6
        for t in ok
        if t.route in PRICES
    )
    all_prompt = sum(t.prompt for t in ok) or 1
    endpoint = ready["backends"]["local"]["endpoints"][0]
    learned = (endpoint.get("admission") or {}).get("bytes_per_token")
    errors = [abs(t.body_bytes / learned - t.prompt) / t.prompt for t in local if learned and t.prompt]
    return {
        "mode": name,
        "turns": len(turns),
        "failed": len(turns) - len(ok),
        "duration_s": duration,
        "local_p50": pct([t.ttft for t in local if t.ttft is not None], 0.5),
        "local_p95": pct([t.ttft for t in local if t.ttft is not None], 0.95),
        "all_p50": pct([t.ttft for t in ok if t.ttft is not None], 0.5),
        "all_p95": pct([t.ttft for t in ok if t.ttft is not None], 0.95),
        "local_share": sum(t.prompt for t in local) / all_prompt,
        "local_cache_hit": sum(t.cached for t in local) / (sum(t.prompt for t in local) or 1),
        "spills": spills_by_reason(metrics),
        "abandoned": int(box.get("cancelled", 0)),
        "preemptions": int(box.get("preemptions", 0)),
        "cloud_spend": spend,
        "admission": endpoint.get("admission"),
        "estimate_error_p50": pct(errors, 0.5),
        "estimate_error_p95": pct(errors, 0.95),
    }


def show(results: list[dict[str, Any]], scale: float) -> None:
    print(f"{'':28}" + "".join(f"{r['mode']:>14}" for r in results))
    rows = [
        ("turns (failed)", lambda r: f"{r['turns']} ({r['failed']})"),
        ("simulated duration s", lambda r: f"{r['duration_s']:.0f}"),
        ("TTFT local p50 s", lambda r: f"{r['local_p50']:.1f}"),
        ("TTFT local p95 s", lambda r: f"{r['local_p95']:.1f}"),
        ("TTFT all turns p50 s", lambda r: f"{r['all_p50']:.1f}"),
        ("TTFT all turns p95 s", lambda r: f"{r['all_p95']:.1f}"),
        ("local share of prompt tok", lambda r: f"{r['local_share']:.1%}"),
        ("local prefix-cache hits", lambda r: f"{r['local_cache_hit']:.1%}"),
        ("abandoned on the box", lambda r: str(r["abandoned"])),
        ("box preemptions", lambda r: str(r["preemptions"])),
        ("cloud spend $", lambda r: f"{r['cloud_spend']:.2f}"),
    ]
    for label, cell in rows:
        print(f"{label:28}" + "".join(f"{cell(r):>14}" for r in results))
    for r in results:
        spills = ", ".join(f"{k} {v}" for k, v in sorted(r["spills"].items())) or "none"
        print(f"spills by reason ({r['mode']}): {spills}")
    today, tokens = results[0], results[-1]
    print(f"all-turn p95, tokens / today: {tokens['all_p95'] / today['all_p95']:.2f}")
    learned = tokens.get("admission") or {}
    if learned:
        prefill = float(learned["prefill_tps"]) / scale
        decode = float(learned["decode_tps"]) / scale
        print(
            f"learned by the tokens proxy: prefill {prefill:.0f} tok/s (box: 700), decode {decode:.1f} tok/s "
            f"(box: 20), {learned['bytes_per_token']} bytes a token (box: 4 bytes of prompt text)"
        )
        print(
            f"prompt estimate at the learned ratio, error against the box's usage: "
            f"p50 {tokens['estimate_error_p50']:.1%}, p95 {tokens['estimate_error_p95']:.1%}"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=28)
    parser.add_argument(
        "--spread", type=float, default=600.0, help="simulated seconds over which sessions start"
    )
    parser.add_argument("--scale", type=float, default=20.0, help="simulated seconds per real second")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--modes", default="today,tokens")
    parser.add_argument("--dump", help="write each mode's turns to DUMP.<mode>.jsonl")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for mode in args.modes.split(","):
            results.append(await run_mode(mode, args, Path(tmp)))
    show(results, args.scale)


if __name__ == "__main__":
    asyncio.run(main())
