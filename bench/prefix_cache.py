"""What vLLM's prefix cache does for a resent agent turn, on the real CPU build (no GPU).

Starts the real-vLLM tier's server (``make vllm`` first: tests/realvllm), sends each
recorded Codex and Claude Code body (tests/data/agent_requests) straight to it twice, and
prints, per body, the prompt tokens, the cached tokens vLLM reported for the second send,
and the time to the first streamed event that carries output, first send against second
(the ratio is the figure: a baseline in the same run)::

    .venv/bin/python bench/prefix_cache.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.realvllm.server import MODEL_NAME, Fleet, tiny_model, vllm_python  # noqa: E402
from tests.realvllm.wire import events, reported_usage  # noqa: E402

OUTPUT_EVENTS = ("response.output_text.delta", "response.reasoning_text.delta", "content_block_delta")


def first_output(root: str, path: str, body: dict) -> tuple[float, tuple[int, int, int]] | int:
    """Seconds to the first output event and the usage vLLM reported, or the refusal's status."""
    api = "messages" if path.startswith("/v1/messages") else "responses"
    started = time.perf_counter()
    first = None
    raw = b""
    url = root + path.split("?")[0]
    with httpx.stream("POST", url, json={**body, "model": MODEL_NAME}, timeout=600) as response:
        if response.status_code != 200:
            return response.status_code
        for chunk in response.iter_bytes():
            raw += chunk
            if first is None and any(e.encode() in raw for e in OUTPUT_EVENTS):
                first = time.perf_counter() - started
    return first or float("nan"), reported_usage(api, events(raw.decode()), True)


def main() -> None:
    python, why = vllm_python()
    if python is None:
        raise SystemExit(why)
    with tempfile.TemporaryDirectory() as logs:
        fleet = Fleet(python, tiny_model(python), Path(logs))
        try:
            [server] = fleet.servers(1)
            print(f"vLLM ready in {server.ready_s:.1f} s")
            print("cached: tokens vLLM read from its prefix cache, first send / second send")
            print(f"{'body':<28}{'prompt':>8}{'cached':>14}{'1st (s)':>9}{'2nd (s)':>9}{'ratio':>7}")
            for path in sorted((ROOT / "tests" / "data" / "agent_requests").glob("*.json")):
                recorded = json.loads(path.read_text())
                body = {**recorded["body"], "stream": True}
                first = first_output(server.root, recorded["path"], body)
                if isinstance(first, int):  # sent straight to vLLM, without the proxy's fixes
                    print(f"{path.stem:<28}refused by vLLM with {first}")
                    continue
                second = first_output(server.root, recorded["path"], body)
                assert not isinstance(second, int)
                (t1, (_, _, cached1)), (t2, (prompt, _, cached2)) = first, second
                hits = f"{cached1}/{cached2}"
                print(f"{path.stem:<28}{prompt:>8}{hits:>14}{t1:>9.2f}{t2:>9.2f}{t1 / t2:>7.1f}")
        finally:
            fleet.stop()


if __name__ == "__main__":
    main()
