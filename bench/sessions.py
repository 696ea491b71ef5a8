"""What finding a request's session costs on the request path, against the decision itself.

For each recorded agent request (tests/data/agent_requests: Claude Code 2.1, Codex 0.171)
and a chat request without ids (a 4,000-character system prompt and first turn, whose
session is its hashed prefix), the median time of ``router.sessions.session_of`` and of
the endpoint order for two boxes (``router.forward.affinity.rendezvous``), beside the
packaged policy's ``decide`` on the same body in the same run (the ratio is the figure:
the machine is shared).

    .venv/bin/python bench/sessions.py [--iterations 5000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from router.decide.policy import Policy, load_classifier  # noqa: E402
from router.dialects import BY_PATH  # noqa: E402
from router.forward.affinity import rendezvous  # noqa: E402
from router.sessions import session_of  # noqa: E402
from tests.harness import make_config  # noqa: E402

RECORDED = ROOT / "tests" / "data" / "agent_requests"


class _Endpoint:
    def __init__(self, url: str) -> None:
        self.url = url


def median_us(fn: Callable[[], Any], iterations: int) -> float:
    times = []
    for _ in range(iterations):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def cases() -> list[tuple[str, str, dict[str, Any], dict[str, str]]]:
    found = []
    for name in ("claude_task", "claude_tool_result", "codex_task", "codex_tool_result"):
        data = orjson.loads((RECORDED / f"{name}.json").read_bytes())
        dialect = BY_PATH["/v1" + data["path"].removeprefix("/v1").split("?")[0]]
        found.append((name, dialect.path, data["body"], data["headers"]))
    chat = {"messages": [{"role": "system", "content": "s" * 4000}, {"role": "user", "content": "u" * 4000}]}
    found.append(("chat, no ids (prefix)", "/chat/completions", chat, {}))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=5000)
    args = parser.parse_args()
    policy = Policy(make_config("http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"), load_classifier(None))
    boxes = [_Endpoint("http://spark-1:8888/v1"), _Endpoint("http://spark-2:8888/v1")]
    print(f"{'request':<24}{'session_of':>12}{'rendezvous':>12}{'decide':>10}{'ratio':>8}")
    for name, path, body, headers in cases():
        s, r, d = measure(policy, BY_PATH["/v1" + path], body, headers, boxes, args.iterations)
        print(f"{name:<24}{s:>10.2f}us{r:>10.2f}us{d:>8.1f}us{(s + r) / d:>8.3f}")


def measure(
    policy: Policy,
    dialect: Any,
    body: dict[str, Any],
    headers: dict[str, str],
    boxes: list[_Endpoint],
    n: int,
) -> tuple[float, float, float]:
    """Median µs of finding the session, of ordering the boxes for it, and of deciding."""
    size = len(orjson.dumps(body))
    session = session_of(dialect.api, body, headers) or ""
    s = median_us(lambda: session_of(dialect.api, body, headers), n)
    r = median_us(lambda: rendezvous(session, boxes), n)
    d = median_us(lambda: policy.decide(body, headers, size, dialect), max(n // 5, 200))
    return s, r, d


if __name__ == "__main__":
    main()
