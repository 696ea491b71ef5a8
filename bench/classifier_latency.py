"""Decision time of ``IntentModel.predict`` for a 4 KB and a 1 MB request.

    /work/main/.venv/bin/python bench/classifier_latency.py [--weights PATH] [--iterations 3000]

Prints p50/p99 (and min/p90) in microseconds per request size and the 1 MB / 4 KB ratio. On a
shared machine p99 mostly measures preemption by other processes; p90 and min show the compute. The requests look
like coding-agent traffic: a system prompt, a history, and a last user turn with pasted code.
"""

from __future__ import annotations

import argparse
import gc
import time
from typing import Any

from classifier.model import IntentModel

_CODE = (
    "def apply_discount(order, code):\n    if code in DISCOUNTS:\n        order.total -= order.total * DISCOUNTS[code]\n"
    '    return order.total\n\nTraceback (most recent call last):\n  File "app.py", line 12, in <module>\n'
    "TypeError: unsupported operand type(s) for -=: 'str' and 'float'\n"
)
_TOOLS = [
    {
        "type": "function",
        "function": {"name": "read_file", "description": "Read a file from the workspace", "parameters": {}},
    },
    {
        "type": "function",
        "function": {"name": "run_command", "description": "Run a shell command", "parameters": {}},
    },
]


def make_request(size: int) -> dict[str, Any]:
    """A chat request whose serialized text is about ``size`` bytes (most in the last user turn
    and a long history, the way big agent requests look)."""
    user = "Why does this fail? Fix it and add a test.\n```python\n"
    user += (_CODE * (size // (2 * len(_CODE)) + 1))[: size // 2] + "\n```"
    history = []
    per_turn = "previous output " * 64
    while sum(len(m["content"]) for m in history) < size // 2 - 256:
        history += [{"role": "user", "content": per_turn}, {"role": "assistant", "content": per_turn}]
    return {
        "model": "auto",
        "messages": [
            {"role": "system", "content": "You are a coding agent. " * 20},
            *history,
            {"role": "user", "content": user},
        ],
        "tools": _TOOLS,
    }


def measure(
    model: IntentModel, request: dict[str, Any], iterations: int
) -> tuple[float, float, float, float]:
    """min, p50, p90, p99 in microseconds (GC disabled during timing: we measure our code, not a
    collection that some other allocation triggered)."""
    for _ in range(200):
        model.predict(request)
    times = []
    gc.disable()
    try:
        for _ in range(iterations):
            t0 = time.perf_counter_ns()
            model.predict(request)
            times.append(time.perf_counter_ns() - t0)
    finally:
        gc.enable()
    times.sort()
    return (
        times[0] / 1e3,
        times[len(times) // 2] / 1e3,
        times[int(len(times) * 0.90)] / 1e3,
        times[int(len(times) * 0.99)] / 1e3,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", default=None)
    ap.add_argument("--iterations", type=int, default=3000)
    args = ap.parse_args(argv)
    model = IntentModel.load(args.weights)
    results = {}
    for label, size in (("4KB", 4096), ("1MB", 1 << 20)):
        req = make_request(size)
        lo, p50, p90, p99 = measure(model, req, args.iterations)
        results[label] = (p50, p99)
        print(
            f"{label:>4}: p50 {p50:7.1f} us   p99 {p99:7.1f} us   (min {lo:.1f}, p90 {p90:.1f})   -> {model.predict(req)}"
        )
    r50 = results["1MB"][0] / results["4KB"][0]
    r99 = results["1MB"][1] / results["4KB"][1]
    print(f"ratio 1MB/4KB: p50 {r50:.2f}x  p99 {r99:.2f}x   (weights {model.version})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
