"""The JSON depth check on the agent bodies of ``bench/overhead.py``: the recursive walk the proxy
uses against the explicit-stack walk, beside ``orjson.loads`` of the same body.

    .venv/bin/python bench/intake.py [--number 5000]

Prints microseconds per call (best of five repeats) and the ratio of the two walks, per API.
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from overhead import chat_body, messages_body, responses_body  # noqa: E402  (bench/ is on the path)

from router.edge.intake import _depth_exceeds, _depth_exceeds_iterative  # noqa: E402


def per_call_us(fn: object, number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--number", type=int, default=5000)
    ap.add_argument("--limit", type=int, default=64, help="server.max_json_depth")
    args = ap.parse_args(argv)
    for api, make in (("chat", chat_body), ("responses", responses_body), ("messages", messages_body)):
        raw = orjson.dumps(make(False))
        body = orjson.loads(raw)
        parse = per_call_us(lambda raw=raw: orjson.loads(raw), args.number)
        walk = per_call_us(lambda body=body: _depth_exceeds_iterative(body, args.limit), args.number)
        rec = per_call_us(lambda body=body: _depth_exceeds(body, args.limit), args.number)
        print(
            f"{api:<10} {len(raw) / 1024:5.1f} KB  orjson.loads {parse:5.1f} us  "
            f"explicit stack {walk:5.1f} us  recursive {rec:5.1f} us  ratio {rec / walk:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
