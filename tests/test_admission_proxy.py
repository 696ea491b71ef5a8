"""Admission by expected time to first token, through the real proxy, against the simulated
Spark (router/fake/spark.py) and the fake cloud: what an agent fleet notices."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from router.config import parse_config
from router.fake.server import Fake
from router.fake.spark import SparkFake
from router.fake.spark_engine import SparkSpec
from router.fake.upstream import RunningFake, start_in_thread
from router.ops.demo import simulated_backends
from tests.harness import CLOUD_KEY, ProxyServer, wait_until

LOCAL_ONLY_KEY = "sk-local-only-0123456789"


@pytest.fixture
def cloud() -> Iterator[RunningFake]:
    running = start_in_thread("cloud")
    yield running
    running.stop()


def proxy(box: RunningFake, cloud: RunningFake, local: dict[str, Any], **extra: Any) -> ProxyServer:
    backends = simulated_backends(box.url, cloud.url, CLOUD_KEY)
    backends["local"].update(local)
    raw: dict[str, Any] = {
        "database": {"enabled": False},
        "backends": backends,
        "routing": {
            "default": "local",
            "fallbacks": {"local": ["cloud"]},
            "capacity": {"metrics_interval_s": 0.1},
        },
        "health": {"interval_s": 0.2, "open_s": 0.5, "failure_threshold": 2},
        **extra,
    }
    return ProxyServer(parse_config(raw, env={}))


def spark(**spec: Any) -> RunningFake:
    max_output = spec.pop("max_output", 5)
    return RunningFake(SparkFake(SparkSpec(**spec), max_output=max_output))


def body(i: int, kilobytes: int) -> dict[str, Any]:
    """A streamed coding turn of about ``kilobytes`` KB, distinct per ``i`` (no shared cache)."""
    filler = f"session {i} " + ("def parse(x): return x  # " * (kilobytes * 40))[: kilobytes * 1000]
    return {
        "model": "auto",
        "stream": True,
        "messages": [{"role": "user", "content": f"write a python function for this code {filler}"}],
    }


def send_all(
    server: ProxyServer, bodies: list[dict[str, Any]], headers: dict[str, str] | None = None
) -> list[httpx.Response]:
    def one(b: dict[str, Any]) -> httpx.Response:
        response = httpx.post(server.base_url + "/chat/completions", json=b, headers=headers, timeout=60)
        response.read()
        return response

    with ThreadPoolExecutor(len(bodies)) as pool:
        return list(pool.map(one, bodies))


def reasons(server: ProxyServer) -> list[str | None]:
    return [row.fallback_reason for row in server.state.recorder.rows]  # type: ignore[attr-defined]


def test_a_burst_of_long_prompts_spills_by_ttft(cloud: RunningFake) -> None:
    box = spark(prefill_tps=8000)
    server = proxy(box, cloud, {"max_ttft_s": 3.0, "prefill_tps": 8000})
    try:
        responses = send_all(server, [body(i, 32) for i in range(5)])  # ~10K tokens, 1.25 s each
        assert all(r.status_code == 200 for r in responses)
        routes = [r.headers["x-offload-route"] for r in responses]
        assert 1 <= routes.count("local") <= 2
        assert reasons(server).count("ttft") == routes.count("cloud") >= 3
        rows = [r for r in server.state.recorder.rows if r.route == "local"]  # type: ignore[attr-defined]
        assert all(r.expected_ttft_ms is not None and r.ttft_ms is not None for r in rows)
    finally:
        server.stop()
        box.stop()


def test_a_kv_bound_burst_spills_by_kv_with_the_capacity_vllm_reports(cloud: RunningFake) -> None:
    box = spark(prefill_tps=100_000, decode_tps=20, kv_tokens=30_000, max_output=40)  # each holds ~2 s
    server = proxy(box, cloud, {"max_ttft_s": 100.0, "prefill_tps": 100_000})
    try:

        def capacity() -> Any:
            endpoint = server.get("/readyz").json()["backends"]["local"]["endpoints"][0]
            return endpoint["admission"]["kv_capacity_tokens"]

        assert wait_until(lambda: capacity() == 30_000)  # from vllm:cache_config_info
        responses = send_all(server, [body(i, 24) for i in range(5)])  # ~7.9K tokens of KV each
        assert all(r.status_code == 200 for r in responses)
        assert reasons(server).count("kv") >= 1
        assert [r.headers["x-offload-route"] for r in responses].count("local") == 3
    finally:
        server.stop()
        box.stop()


def test_a_key_restricted_to_the_local_route_queues_instead_of_spilling(cloud: RunningFake) -> None:
    box = spark(prefill_tps=8000)
    auth = {"keys": [{"name": "local-only", "key": LOCAL_ONLY_KEY, "routes": ["local"]}]}
    local = {"max_ttft_s": 1.0, "prefill_tps": 8000, "queue_tokens": 100_000}
    server = proxy(box, cloud, local, auth=auth)
    try:
        headers = {"Authorization": f"Bearer {LOCAL_ONLY_KEY}"}
        responses = send_all(server, [body(i, 32) for i in range(4)], headers)
        assert [r.status_code for r in responses] == [200] * 4, [r.text for r in responses]
        assert {r.headers["x-offload-route"] for r in responses} == {"local"}
        assert {r.headers["x-offload-fallback"] for r in responses} == {"0"}
        ttfts = sorted(r.ttft_ms for r in server.state.recorder.rows)  # type: ignore[attr-defined]
        assert ttfts[-1] > 2.5 * ttfts[0]  # they took turns on the box
    finally:
        server.stop()
        box.stop()


def test_past_the_token_bound_of_the_queue_a_restricted_key_is_refused(cloud: RunningFake) -> None:
    box = spark(prefill_tps=8000)
    auth = {"keys": [{"name": "local-only", "key": LOCAL_ONLY_KEY, "routes": ["local"]}]}
    server = proxy(box, cloud, {"max_ttft_s": 1.0, "prefill_tps": 8000, "queue_tokens": 0}, auth=auth)
    try:
        headers = {"Authorization": f"Bearer {LOCAL_ONLY_KEY}"}
        responses = send_all(server, [body(i, 32) for i in range(3)], headers)
        assert sorted(r.status_code for r in responses) == [200, 503, 503]
        refused = next(r for r in responses if r.status_code == 503)
        assert "max_ttft_s" in refused.json()["error"]["message"]
    finally:
        server.stop()
        box.stop()


def test_vllms_queue_full_503_is_a_spill_not_a_breaker_failure(cloud: RunningFake) -> None:
    box = spark(max_num_queued_reqs=0)  # every request finds the queue full
    server = proxy(box, cloud, {})
    try:
        for i in range(4):  # twice the breaker's failure threshold
            response = server.post("/v1/chat/completions", json=body(i, 1))
            assert response.status_code == 200 and response.headers["x-offload-route"] == "cloud"
        assert reasons(server) == ["capacity"] * 4
        local = server.get("/readyz").json()["backends"]["local"]
        assert local["up"] and local["endpoints"][0]["breaker"] == "closed"
    finally:
        server.stop()
        box.stop()


def test_a_slow_but_progressing_prefill_is_not_abandoned(cloud: RunningFake) -> None:
    """A 3 s prefill against first_byte_s 1: today's deadline abandons it mid-prefill; the
    deadline from its expected TTFT lets it finish, on the box."""
    for max_ttft_s, route in ((None, "cloud"), (10.0, "local")):
        box = spark(prefill_tps=5000)
        local: dict[str, Any] = {"timeouts": {"first_byte_s": 1.0}, "prefill_tps": 5000}
        if max_ttft_s:
            local["max_ttft_s"] = max_ttft_s
        server = proxy(box, cloud, local)
        try:
            response = send_all(server, [body(0, 60)])[0]  # ~15K tokens: 3 s of prefill
            assert response.status_code == 200 and response.headers["x-offload-route"] == route
            fake = box.fake
            assert isinstance(fake, SparkFake)
            assert fake.cancelled == (1 if route == "cloud" else 0)
        finally:
            server.stop()
            box.stop()


def test_a_hung_upstream_is_still_cut_off(cloud: RunningFake) -> None:
    hung = RunningFake(Fake("vllm"))
    hung.fake.behaviour.header_delay = 30.0
    server = proxy(hung, cloud, {"max_ttft_s": 5.0, "timeouts": {"first_byte_s": 0.5}})
    try:
        with httpx.Client(timeout=20) as client:
            response = client.post(server.base_url + "/chat/completions", json=body(0, 1))
        assert response.status_code == 200 and response.headers["x-offload-route"] == "cloud"
        assert reasons(server) == ["first_byte_timeout"]
        assert response.elapsed.total_seconds() < 5.0
    finally:
        server.stop()
        hung.stop()
