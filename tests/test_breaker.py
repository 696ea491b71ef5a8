"""The circuit breaker: a passing health probe does not close what failing requests opened.

vLLM's ``GET /health`` can answer 200 while every completion fails (an engine
that is up but broken). The breaker must then keep the box out of the traffic
and let only its half-open trials through, one real request each, instead of
closing on every passing probe and sending a burst of doomed requests to the
box after each one. A box that was down (failing probe) and comes back is
still taken back by its probe; that is in tests/test_fallback.py.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import openai
import pytest

from router.fake.upstream import RunningFake
from router.forward.backends import Backend, Pool
from router.forward.breaker import CLOSED, HALF_OPEN, OPEN, Breaker
from tests.conftest import fake_config, fake_state
from tests.harness import ProxyServer, make_config, wait_until

PROBE, REQUESTS = "probe", "requests"  # Breaker.opened_by
USER = [{"role": "user", "content": "refactor this function to use a dict lookup"}]
INTERVAL_S, OPEN_S, THRESHOLD = 0.05, 1.0, 2  # a trial is due once per 20 probe intervals


# ------------------------------------------------------------ state machine


def opened_long_ago(breaker: Breaker) -> None:
    """As if ``open_s`` had passed since it opened, without waiting for it."""
    breaker.opened_at -= breaker.open_s


def test_passing_probe_does_not_close_a_breaker_that_requests_opened() -> None:
    b = Breaker(threshold=2, open_s=10.0)
    b.failure()
    b.failure()
    assert (b.state, b.opened_by) == (OPEN, REQUESTS)
    for _ in range(5):
        b.probe_passed()
        assert b.state == OPEN and not b.allow()  # no request before its open_s is over
    opened_long_ago(b)
    b.probe_passed()
    assert b.allow() and b.state == HALF_OPEN  # one trial
    assert not b.allow()  # and only one
    b.probe_passed()
    b.failure()  # the trial failed: open for another open_s
    assert (b.state, b.opened_by) == (OPEN, REQUESTS) and not b.allow()
    opened_long_ago(b)
    assert b.allow()
    b.success()  # the trial succeeded: closed
    assert (b.state, b.opened_by, b.failures) == (CLOSED, None, 0)


def test_passing_probe_closes_a_breaker_that_a_failing_probe_opened() -> None:
    b = Breaker(threshold=2, open_s=10.0)
    b.trip()
    assert (b.state, b.opened_by) == (OPEN, PROBE)
    b.probe_passed()
    assert (b.state, b.opened_by, b.failures) == (CLOSED, None, 0)
    # Requests opened it, then the box went down: when it is back, the probe takes it back.
    b.failure()
    b.failure()
    b.trip()
    b.probe_passed()
    assert b.state == CLOSED


def test_only_a_successful_request_clears_request_failures() -> None:
    b = Breaker(threshold=2, open_s=10.0)
    for _ in range(5):
        b.failure()
        b.success()  # a request in between worked: isolated failures never add up
    assert b.state == CLOSED
    b.failure()
    for _ in range(5):
        b.probe_passed()  # /health passing says nothing about requests
    assert b.state == CLOSED
    b.failure()  # low traffic: the second failure in a row, probes or not
    assert (b.state, b.opened_by) == (OPEN, REQUESTS)


def test_late_failures_do_not_extend_an_open_breaker_or_change_its_cause() -> None:
    b = Breaker(threshold=2, open_s=10.0)
    b.trip()
    opened_at = b.opened_at
    b.failure()  # requests in flight when the box died, failing late
    b.failure()
    assert (b.opened_at, b.opened_by) == (opened_at, PROBE)


def test_trial_that_ends_without_a_verdict_goes_to_the_next_request() -> None:
    b = Breaker(threshold=2, open_s=10.0)
    b.failure()
    b.failure()
    opened_long_ago(b)
    assert b.allow() and not b.allow()
    b.release()  # the client went away before the upstream answered
    assert b.allow() and b.state == HALF_OPEN


def test_trial_goes_out_next_to_a_healthy_endpoint() -> None:
    """Several Sparks: one that failed requests still gets its trial while another serves."""
    config = make_config("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1")
    local = config.backends["local"].model_copy(
        update={"endpoints": ["http://a:8888/v1", "http://b:8888/v1"], "base_url": None}
    )
    backend = Backend("local", local, config.health)
    a, b = backend.endpoints
    for _ in range(config.health.failure_threshold):
        backend.report(a, ok=False)
    assert (a.up, a.breaker.state, backend.up) == (False, OPEN, True)
    assert backend._pick() is b
    opened_long_ago(a.breaker)
    assert backend._pick() is a  # the trial
    assert backend._pick() is b  # the rest meanwhile
    backend.report(a, ok=True)
    assert a.up and a.breaker.state == CLOSED


# ----------------------------------------------------------- real processes


def count_passing_probes(pool: Pool, backend: str) -> dict[str, int]:
    """Wrap the pool's real health probe to count the ones that passed for ``backend``."""
    seen = {"passed": 0}
    probe = pool.probe

    async def counting(b: Any, endpoint: Any) -> bool:
        ok = await probe(b, endpoint)
        if ok and b.name == backend:
            seen["passed"] += 1
        return ok

    pool.probe = counting  # type: ignore[method-assign]
    return seen


def ask(client: openai.OpenAI, stream: bool) -> tuple[str, str]:
    """One chat request through the proxy: (x-offload-route, x-offload-fallback)."""
    raw = client.chat.completions.with_raw_response.create(model="auto", messages=USER, stream=stream)
    if stream:
        text = "".join(ch.choices[0].delta.content or "" for ch in raw.parse() if ch.choices)
    else:
        text = raw.parse().choices[0].message.content or ""
    assert text
    return raw.headers["x-offload-route"], raw.headers["x-offload-fallback"]


async def burst(base_url: str, n: int) -> list[tuple[str, str]]:
    """``n`` requests at once: enough failures in a row to open the breaker between two probes."""
    async with openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0) as client:
        raws = await asyncio.gather(
            *(client.chat.completions.with_raw_response.create(model="auto", messages=USER) for _ in range(n))
        )
    return [(raw.headers["x-offload-route"], raw.headers["x-offload-fallback"]) for raw in raws]


def local_endpoint(server: ProxyServer) -> dict[str, Any]:
    return server.get("/readyz").json()["backends"]["local"]["endpoints"][0]


def test_health_200_but_failing_requests_get_only_half_open_trials(
    local_fake: RunningFake, cloud_fake: RunningFake, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="offload.backends")
    config = make_config(
        local_fake.url,
        cloud_fake.url,
        health={"interval_s": INTERVAL_S, "open_s": OPEN_S, "failure_threshold": THRESHOLD},
    )
    server = ProxyServer(config)
    try:
        probes = count_passing_probes(server.state.pool, "local")
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        fake_config(local_fake, fail_status=500)  # every completion fails; /health still says 200

        # Failing requests open the breaker; every client request is answered by the cloud.
        for _ in range(20):
            assert asyncio.run(burst(server.base_url, 4 * THRESHOLD)) == [("cloud", "1")] * 4 * THRESHOLD
            if local_endpoint(server)["breaker"] == "open":
                break
        received_at_open = len(fake_state(local_fake)["received"])
        probes_at_open = probes["passed"]

        # Traffic keeps coming over many passing probes: the box sees only trials.
        trials = passed = 0
        shown_up = []  # what /readyz said after each request
        for i in range(5000):
            assert ask(client, stream=i % 2 == 1) == ("cloud", "1")
            readyz = server.get("/readyz").json()["backends"]["local"]
            shown_up.append(readyz["up"] or readyz["endpoints"][0]["up"])
            trials = len(fake_state(local_fake)["received"]) - received_at_open
            passed = probes["passed"] - probes_at_open
            if trials >= 2 and passed >= 20:
                break
        assert trials >= 2, "no half-open trial went out"
        # Before the fix, every passing probe closed the breaker and THRESHOLD requests
        # hit the box again (about 2 per probe); a trial is due once per 20 intervals.
        assert trials * 4 <= passed, (trials, passed)
        assert not any(shown_up)  # down all along, never flapping back up
        assert local_fake.fake.completed == 0
        assert local_endpoint(server)["breaker_opened_by"] == "requests"
        metrics = server.get("/metrics").text
        assert 'offload_backend_up{backend="local"} 0.0' in metrics
        assert 'offload_backend_breaker_state{backend="local"} 2.0' in metrics

        # The box is fixed: the next trial succeeds and the traffic is local again.
        fake_config(local_fake, fail_status=0)
        received_before = len(fake_state(local_fake)["received"])
        for i in range(5000):
            route, fallback = ask(client, stream=i % 2 == 1)
            if route == "local":
                assert fallback == "0"
                break
            assert (route, fallback) == ("cloud", "1")
        assert route == "local"
        assert len(fake_state(local_fake)["received"]) == received_before + 1  # that was the trial
        for i in range(20):
            assert ask(client, stream=i % 2 == 1) == ("local", "0")
        assert wait_until(lambda: local_fake.fake.completed == 21)
        endpoint = local_endpoint(server)
        assert (endpoint["up"], endpoint["breaker"], endpoint["breaker_opened_by"]) == (True, "closed", None)
        metrics = server.get("/metrics").text
        assert 'offload_backend_up{backend="local"} 1.0' in metrics
        assert 'offload_backend_breaker_state{backend="local"} 0.0' in metrics

        # Each transition is logged once, not at every probe or trial.
        messages = [r.getMessage() for r in caplog.records if r.name == "offload.backends"]
        down = [m for m in messages if local_fake.url in m and " is down" in m]
        up = [m for m in messages if local_fake.url in m and " is up" in m]
        assert len(down) == 1 and "requests in a row failed" in down[0], messages
        assert len(up) == 1 and "trial request succeeded" in up[0], messages
    finally:
        server.stop()


def test_low_traffic_to_a_box_that_fails_requests_opens_the_breaker(
    local_fake: RunningFake, cloud_fake: RunningFake
) -> None:
    """One request every few probe intervals: the failures still add up, so after
    ``failure_threshold`` of them requests stop trying the broken box first."""
    config = make_config(
        local_fake.url,
        cloud_fake.url,
        health={"interval_s": INTERVAL_S, "open_s": 60.0, "failure_threshold": THRESHOLD},
    )
    server = ProxyServer(config)
    try:
        probes = count_passing_probes(server.state.pool, "local")
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        fake_config(local_fake, fail_status=500)  # every completion fails; /health still says 200
        for i in range(3 * THRESHOLD):
            seen = probes["passed"]
            assert wait_until(lambda seen=seen: probes["passed"] >= seen + 2)  # probes in between
            assert ask(client, stream=i % 2 == 1) == ("cloud", "1")
        # Before: every passing probe cleared the count, so all 6 tried the box first.
        assert len(fake_state(local_fake)["received"]) == THRESHOLD
        assert local_endpoint(server)["breaker_opened_by"] == "requests"
    finally:
        server.stop()
