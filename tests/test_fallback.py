"""Fallback, health and capacity, with real processes: the fleet never waits on a dead or full box."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from router.fake.upstream import start_in_thread
from tests.conftest import fake_config, fake_state
from tests.harness import ProxyServer, free_port, make_config, wait_until

ROOT = Path(__file__).resolve().parent.parent
USER = [{"role": "user", "content": "refactor this function to use a dict lookup"}]


class FakeProcess:
    """The fake vLLM as its own process, so a test can kill it like a crashed box."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeProcess:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "router.fake.upstream", "--port", str(self.port), "--mode", "vllm"],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert wait_until(self._listening, timeout=20), "fake upstream did not start"
        return self

    def _listening(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), 0.2).close()
            return True
        except OSError:
            return False

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def configure(self, **behaviour: object) -> None:
        httpx.post(f"http://127.0.0.1:{self.port}/_fake/config", json=behaviour, timeout=5).raise_for_status()

    def state(self) -> dict:
        return httpx.get(f"http://127.0.0.1:{self.port}/_fake/state", timeout=5).json()


@pytest.fixture
def local_process() -> Iterator[FakeProcess]:
    fake = FakeProcess().start()
    yield fake
    if fake.proc and fake.proc.poll() is None:
        fake.kill()


def served_by(response: httpx.Response) -> str:
    return response.headers["x-offload-route"]


async def fire(url: str, n: int, **kw: object) -> list[httpx.Response]:
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=200)) as client:
        return await asyncio.gather(
            *(client.post(url, json={"model": "auto", "messages": USER, **kw}) for _ in range(n))
        )


# --------------------------------------------------------------- down box


def test_closed_port_falls_back_and_the_breaker_stops_trying(cloud_fake):
    port = free_port()  # nothing listens here: a box that is booting
    server = ProxyServer(make_config(f"http://127.0.0.1:{port}/v1", cloud_fake.url))
    try:
        c = openai.OpenAI(base_url=server.base_url, api_key="x")
        raw = c.chat.completions.with_raw_response.create(model="auto", messages=USER)
        assert raw.headers["x-offload-route"] == "cloud" and raw.headers["x-offload-fallback"] == "1"
        # The probe sees the port closed and opens the breaker.
        assert wait_until(
            lambda: server.get("/readyz").json()["backends"]["local"]["endpoints"][0]["breaker"] == "open"
        )
        assert server.get("/readyz").json()["backends"]["local"]["up"] is False
        assert 'offload_backend_breaker_state{backend="local"} 2.0' in server.get("/metrics").text
        rows_before = len(server.state.recorder.rows)
        for _ in range(5):
            raw = c.chat.completions.with_raw_response.create(model="auto", messages=USER)
            assert raw.headers["x-offload-fallback"] == "1"
        reasons = {r.fallback_reason for r in server.state.recorder.rows[rows_before:]}
        assert reasons == {"backend_down"}  # skipped without a connection attempt
    finally:
        server.stop()


def test_open_breaker_costs_about_nothing(cloud_fake):
    """With the breaker open, a fallback costs about what a direct cloud request costs."""
    server = ProxyServer(make_config(f"http://127.0.0.1:{free_port()}/v1", cloud_fake.url))
    try:
        assert wait_until(lambda: not server.get("/readyz").json()["backends"]["local"]["up"])
        body = {"model": "auto", "messages": USER}
        direct = {"model": "cloud", "messages": USER}
        with httpx.Client(base_url=server.base_url, timeout=10) as h:
            for _ in range(20):  # warm up
                h.post("/chat/completions", json=body)
                h.post("/chat/completions", json=direct)
            fallback_t, direct_t = [], []
            for _ in range(100):
                t = time.perf_counter()
                assert h.post("/chat/completions", json=body).headers["x-offload-fallback"] == "1"
                fallback_t.append(time.perf_counter() - t)
                t = time.perf_counter()
                assert h.post("/chat/completions", json=direct).headers["x-offload-fallback"] == "0"
                direct_t.append(time.perf_counter() - t)
        fallback_t.sort()
        direct_t.sort()
        assert fallback_t[50] < direct_t[50] * 1.5 + 0.001, (fallback_t[50], direct_t[50])
    finally:
        server.stop()


def test_killed_box_with_requests_in_flight_loses_none(local_process, cloud_fake):
    server = ProxyServer(make_config(local_process.url, cloud_fake.url))
    try:
        local_process.configure(first_byte_delay=2.0)
        url = server.base_url + "/chat/completions"

        async def scenario() -> list[httpx.Response]:
            in_flight = asyncio.ensure_future(fire(url, 20))
            await asyncio.to_thread(wait_until, lambda: local_process.state()["active"] == 20, 10)
            local_process.kill()
            more = await fire(url, 20)  # and more keep arriving
            return [*(await in_flight), *more]

        responses = asyncio.run(scenario())
        assert [r.status_code for r in responses] == [200] * 40
        assert {served_by(r) for r in responses} == {"cloud"}
        assert all(r.headers["x-offload-fallback"] == "1" for r in responses)
        assert server.state.pool["local"].in_flight == 0
    finally:
        server.stop()


def test_traffic_returns_within_a_probe_interval(local_process, cloud_fake):
    server = ProxyServer(make_config(local_process.url, cloud_fake.url))
    try:
        local_process.kill()
        assert wait_until(lambda: not server.get("/readyz").json()["backends"]["local"]["up"])
        assert (
            served_by(server.post("/v1/chat/completions", json={"model": "auto", "messages": USER}))
            == "cloud"
        )
        local_process.start()  # same port: the box is back
        interval = server.config.health.interval_s
        assert wait_until(self_healthy := lambda: server.get("/readyz").json()["backends"]["local"]["up"], 10)
        back = time.monotonic()
        assert self_healthy()
        assert (
            served_by(server.post("/v1/chat/completions", json={"model": "auto", "messages": USER}))
            == "local"
        )
        assert time.monotonic() - back < interval * 5
    finally:
        server.stop()


def test_server_errors_and_admission_503_fall_back(local_fake, cloud_fake):
    server = ProxyServer(make_config(local_fake.url, cloud_fake.url))
    try:
        breaker = server.state.pool["local"].endpoints[0].breaker
        for status in (500, 503, 408):
            # One failed request at a time: a successful local request in between
            # clears the count, so the breaker never opens (failing requests in a row
            # would open it, and then only a successful trial request closes it again).
            ok = server.post("/v1/chat/completions", json={"model": "local", "messages": USER})
            assert served_by(ok) == "local" and breaker.failures == 0 and server.state.pool["local"].up
            fake_config(local_fake, fail_status=status, fail_count=1)
            response = server.post("/v1/chat/completions", json={"model": "auto", "messages": USER})
            assert response.status_code == 200 and served_by(response) == "cloud"
            assert server.state.recorder.rows[-1].fallback_reason == f"http_{status}"
        # A client error is the client's: no fallback, the upstream's answer.
        ok = server.post("/v1/chat/completions", json={"model": "local", "messages": USER})
        assert served_by(ok) == "local" and breaker.failures == 0 and server.state.pool["local"].up
        fake_config(local_fake, fail_status=400, fail_count=1)
        response = server.post("/v1/chat/completions", json={"model": "auto", "messages": USER})
        assert response.status_code == 400 and served_by(response) == "local"
    finally:
        server.stop()


def test_no_first_byte_in_time_moves_a_stream(local_fake, cloud_fake):
    config = make_config(local_fake.url, cloud_fake.url)
    timeouts = config.backends["local"].timeouts.model_copy(update={"first_byte_s": 0.3})
    local = config.backends["local"].model_copy(update={"timeouts": timeouts})
    config = config.model_copy(update={"backends": {**config.backends, "local": local}})
    server = ProxyServer(config)
    try:
        fake_config(local_fake, first_byte_delay=3.0)
        c = openai.OpenAI(base_url=server.base_url, api_key="x")
        raw = c.chat.completions.with_raw_response.create(model="auto", messages=USER, stream=True)
        text = "".join(ch.choices[0].delta.content or "" for ch in raw.parse() if ch.choices)
        assert text and raw.headers["x-offload-route"] == "cloud"
        # A stream's row is recorded as its generator closes, just after [DONE] went out.
        rows = server.state.recorder.rows
        assert wait_until(lambda: rows and rows[-1].fallback_reason == "first_byte_timeout")
        assert wait_until(lambda: fake_state(local_fake)["active"] == 0)  # the slow attempt was cancelled
    finally:
        server.stop()


# ---------------------------------------------------------------- full box


def capacity_config(local_url: str, cloud_url: str, policy: str) -> object:
    config = make_config(local_url, cloud_url)
    local = config.backends["local"].model_copy(update={"max_concurrency": 4})
    capacity = config.routing.capacity.model_copy(update={"policy": policy, "queue_timeout_s": 30.0})
    routing = config.routing.model_copy(update={"capacity": capacity})
    return config.model_copy(update={"backends": {**config.backends, "local": local}, "routing": routing})


def test_full_box_spills_the_surplus_to_the_cloud(local_fake, cloud_fake):
    server = ProxyServer(capacity_config(local_fake.url, cloud_fake.url, "spill"))
    try:
        fake_config(local_fake, first_byte_delay=1.0)
        responses = asyncio.run(fire(server.base_url + "/chat/completions", 12))
        routes = [served_by(r) for r in responses]
        assert routes.count("local") == 4 and routes.count("cloud") == 8
        assert all(r.status_code == 200 for r in responses)
        spilled = [row for row in server.state.recorder.rows if row.backend == "cloud"]
        assert {row.fallback_reason for row in spilled} == {"capacity"}
        assert 'offload_capacity_spills_total{backend="local"} 8.0' in server.get("/metrics").text
    finally:
        server.stop()


def test_full_box_queues_then_proceeds(local_fake, cloud_fake):
    server = ProxyServer(capacity_config(local_fake.url, cloud_fake.url, "queue"))
    try:
        fake_config(local_fake, first_byte_delay=0.5)
        responses = asyncio.run(fire(server.base_url + "/chat/completions", 12))
        assert [served_by(r) for r in responses] == ["local"] * 12
        assert max(row.latency_ms for row in server.state.recorder.rows) > 2 * 500  # some waited for a slot
    finally:
        server.stop()


def test_waiting_queue_on_vllm_counts_as_full(local_fake, cloud_fake):
    config = make_config(local_fake.url, cloud_fake.url)
    capacity = config.routing.capacity.model_copy(update={"metrics_interval_s": 0.1})
    config = config.model_copy(update={"routing": config.routing.model_copy(update={"capacity": capacity})})
    server = ProxyServer(config)
    try:
        fake_config(local_fake, waiting=3)
        assert wait_until(
            lambda: server.get("/readyz").json()["backends"]["local"]["endpoints"][0]["waiting"] == 3
        )
        response = server.post("/v1/chat/completions", json={"model": "auto", "messages": USER})
        assert served_by(response) == "cloud" and response.headers["x-offload-fallback"] == "1"
        fake_config(local_fake, waiting=0)
        assert wait_until(
            lambda: server.get("/readyz").json()["backends"]["local"]["endpoints"][0]["waiting"] == 0
        )
        assert (
            served_by(server.post("/v1/chat/completions", json={"model": "auto", "messages": USER}))
            == "local"
        )
    finally:
        server.stop()


# ---------------------------------------------------------- several Sparks


def test_several_endpoints_balance_and_fail_separately(cloud_fake):
    """Without session affinity (``affinity: false``) the endpoint with fewest in flight."""
    a, b = start_in_thread("vllm"), start_in_thread("vllm")
    config = make_config(a.url, cloud_fake.url)
    local = config.backends["local"].model_copy(
        update={"endpoints": [a.url, b.url], "base_url": None, "affinity": False}
    )
    server = ProxyServer(config.model_copy(update={"backends": {**config.backends, "local": local}}))
    try:
        fake_config(a, first_byte_delay=0.5)
        fake_config(b, first_byte_delay=0.5)
        responses = asyncio.run(fire(server.base_url + "/chat/completions", 10))
        assert all(served_by(r) == "local" for r in responses)
        assert fake_state(a)["completed"] == 5 and fake_state(b)["completed"] == 5
        a.stop()  # one Spark goes away: the other carries on, nothing spills
        assert wait_until(
            lambda: server.get("/readyz").json()["backends"]["local"]["endpoints"][0]["up"] is False
        )
        fake_config(b, first_byte_delay=0.0)
        responses = asyncio.run(fire(server.base_url + "/chat/completions", 6))
        assert all(served_by(r) == "local" and r.headers["x-offload-fallback"] == "0" for r in responses)
        assert fake_state(b)["completed"] == 11
    finally:
        server.stop()
        b.stop()


# ------------------------------------------------------------ cancellation


def test_disconnect_mid_stream_frees_the_slot_before_the_next_token(proxy, local_fake):
    fake_config(local_fake, chunk_delay=2.0)  # the next token is 2 s away
    with httpx.stream(
        "POST",
        proxy.base_url + "/chat/completions",
        json={"model": "local", "messages": USER, "stream": True},
    ) as response:
        chunks = response.iter_raw()  # kept: a dropped iterator would close the stream
        assert next(chunks).startswith(b"data: ")
        assert fake_state(local_fake)["active"] == 1
        closed = time.monotonic()
    # Freed long before the upstream would have finished the token it was on.
    assert wait_until(lambda: fake_state(local_fake)["active"] == 0, timeout=1.9)
    assert time.monotonic() - closed < 1.0
    assert fake_state(local_fake)["cancelled"] == 1
    assert wait_until(lambda: proxy.state.pool["local"].in_flight == 0)
    rows = proxy.state.recorder.rows
    assert wait_until(lambda: rows and rows[-1].status == 499)
    row = proxy.state.recorder.rows[-1]
    assert row.tokens_estimated and row.error_type == "client_disconnected"
