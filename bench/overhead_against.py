"""bench/overhead.py for this checkout and another one (an earlier commit), interleaved, one run.

A restructuring must not make the proxy slower. This runs ``bench/overhead.py`` of both
checkouts in turns (``--rounds`` each, the order flipping every round, so that drift on a
shared machine lands on both sides), each with its own interpreter and its own code, and
prints each case's added p50 (proxy minus direct, measured inside each run) and the
throughput ratio to direct, as medians over the rounds, side by side. Usage::

    git worktree add /tmp/base <commit> && (cd /tmp/base && make install)
    .venv/bin/python bench/overhead_against.py --base /tmp/base [--rounds 3] [-- overhead.py options]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent


def run(checkout: Path, args: list[str], out: Path) -> dict[str, Any]:
    python = checkout / ".venv" / "bin" / "python"
    cmd = [str(python), "bench/overhead.py", *args, "--json", str(out)]
    subprocess.run(cmd, cwd=checkout, check=True, stdout=subprocess.DEVNULL)
    result: dict[str, Any] = orjson.loads(out.read_bytes())
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base", type=Path, required=True, help="the other checkout (with its .venv)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("rest", nargs="*", help="options for bench/overhead.py (after --)")
    opts = parser.parse_args()
    args = opts.rest or ["--requests", "400", "--seconds", "4"]
    sides = {"base": opts.base.resolve(), "this": ROOT}
    runs: dict[str, list[dict[str, Any]]] = {"base": [], "this": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(opts.rounds):
            order = ("base", "this") if i % 2 == 0 else ("this", "base")
            for side in order:
                runs[side].append(run(sides[side], args, Path(tmp) / f"{side}-{i}.json"))
                print(f"round {i + 1}/{opts.rounds}: {side} done", file=sys.stderr, flush=True)
    cases = [k for k, v in runs["this"][0].items() if isinstance(v, dict) and "added_p50_ms" in v]
    print(f"bench/overhead.py {' '.join(args)}; medians of {opts.rounds} interleaved runs each")
    print(f"{'case':28s} {'base added p50':>15s} {'this added p50':>15s} {'this - base':>12s}")
    for case in cases:
        base = statistics.median(r[case]["added_p50_ms"] for r in runs["base"])
        this = statistics.median(r[case]["added_p50_ms"] for r in runs["this"])
        print(f"{case:28s} {base:12.2f} ms {this:12.2f} ms {this - base:+9.2f} ms")
    if "rps" in runs["this"][0]:
        for side in ("base", "this"):
            ratios = [r["rps"]["proxy"] / r["rps"]["direct"] for r in runs[side]]
            rps = statistics.median(r["rps"]["proxy"] for r in runs[side])
            print(
                f"throughput {side}: {rps:,.0f} req/s proxied, ratio to direct {statistics.median(ratios):.3f}"
            )


if __name__ == "__main__":
    main()
