"""The real server's /metrics: every family the router reads is there, with the labels it
expects, and the proxy reads them; the rows' token counts (cached ones included) are the
counts vLLM itself keeps, for all three APIs, streamed and not."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from router.forward import vllm_metrics
from tests.harness import ProxyServer, wait_until
from tests.realvllm.server import MODEL_NAME, VllmServer
from tests.realvllm.wire import APIS, answer_of, body_for, reported_usage, row_for, send, unique

CAPTURED = Path(__file__).resolve().parent.parent / "data" / "vllm_metrics_0.32.txt"
SAMPLE = re.compile(r"(vllm:[a-z_:]+)(?:\{(.*)\})? ")
COUNTERS = ("vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:prefix_cache_hits_total")


def _families(text: str) -> set[str]:
    return {m[1] for m in map(SAMPLE.match, text.splitlines()) if m}


def test_every_family_the_router_reads_is_exported(vllm: VllmServer) -> None:
    text = vllm.metrics()
    metrics = vllm_metrics.parse(text)
    assert metrics.missing == (), (
        f"vLLM no longer exports {metrics.missing}: update router/forward/vllm_metrics.py"
    )
    assert metrics.cache_config["enable_prefix_caching"] == "True"  # the recipe asks for it
    assert metrics.block_size and metrics.block_size > 0
    # Labels: one sample per engine, named by the served model.
    for line in text.splitlines():
        match = SAMPLE.match(line)
        if match and match[1] in vllm_metrics.LOAD_GAUGES:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', match[2] or ""))
            assert set(labels) == {"engine", "model_name"} and labels["model_name"] == MODEL_NAME, line


def test_the_captured_text_is_still_what_vllm_exports(vllm: VllmServer) -> None:
    """tests/data/vllm_metrics_0.32.txt (the fast tier's parsing fixture) names no family
    that the server does not export."""
    assert _families(CAPTURED.read_text()) <= _families(vllm.metrics())


def test_the_proxy_reads_them(real_proxy: ProxyServer, block_size: int) -> None:
    def endpoint() -> dict:
        return real_proxy.get("/readyz").json()["backends"]["local"]["endpoints"][0]

    assert wait_until(lambda: endpoint()["cache_block_size"] is not None, timeout=15), endpoint()
    state = endpoint()
    assert state["cache_block_size"] == block_size and state["metrics_missing"] == []
    assert state["prefix_cache_queries"] is not None and state["prefix_cache_hits"] is not None


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("api", APIS)
def test_rows_equal_vllms_own_counts(
    real_proxy: ProxyServer, vllm: VllmServer, block_size: int, api: str, stream: bool
) -> None:
    """The same long prompt twice: the second is a prefix-cache hit. What the rows say (prompt,
    completion, cached) is what vLLM counted (prompt_tokens, generation_tokens, prefix_cache_hits)
    and what it reported to the client."""
    text = unique("reverse the list " * (4 * block_size))
    before = vllm.counters(*COUNTERS)
    rows = []
    for _ in range(2):
        response = send(real_proxy, api, body_for(api, "plain", stream, text))
        assert response.status_code == 200, response.text[:300]
        row = row_for(real_proxy, response)
        assert (row.prompt_tokens, row.completion_tokens, row.cached_tokens) == reported_usage(
            api, answer_of(response, stream), stream
        )
        rows.append(row)
    assert rows[0].cached_tokens == 0 and rows[1].cached_tokens >= 3 * block_size
    sums = tuple(
        sum(getattr(r, f) for r in rows) for f in ("prompt_tokens", "completion_tokens", "cached_tokens")
    )

    def delta() -> tuple[float, ...]:
        return tuple(a - b for a, b in zip(vllm.counters(*COUNTERS), before, strict=True))

    assert wait_until(lambda: delta() == sums, timeout=10), (delta(), sums)
