"""Issue 13, item 7: tokens per minute hold under concurrency.

Admission reserves an estimate (prompt from the body's size, plus the output cap
or a configured default) and the end of the request settles it with the real
usage, so 200 concurrent requests cannot all slip in under a budget before any
of them has been charged (before: 200 requests on a 1,000-token budget used 6,600).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from router.config import ClientKey, Config, parse_config
from router.edge.limits import RateLimits, estimate_tokens
from router.errors import ProxyError
from tests.harness import CLOUD_KEY, CLOUD_MODEL, LOCAL_MODEL, USER, ProxyServer

BUDGET = 1000


def limits(tpm: int | None = BUDGET, rpm: int | None = None) -> tuple[RateLimits, list[float]]:
    now = [1000.0]
    key = ClientKey(name="k", key="x", tokens_per_minute=tpm, requests_per_minute=rpm)
    return RateLimits([key], clock=lambda: now[0]), now


def refused(rate: RateLimits, reserve: int) -> ProxyError:
    with pytest.raises(ProxyError) as caught:
        rate.admit("k", reserve)
    assert caught.value.status == 429
    return caught.value


def test_concurrent_admissions_stop_at_the_budget_and_settling_makes_room() -> None:
    rate, now = limits()
    held = [rate.admit("k", 150) for _ in range(6)]  # 900 of 1,000 reserved, none charged yet
    error = refused(rate, 150)
    assert error.param == "tokens" and error.headers["Retry-After"] == "1"  # requests in flight settle soon
    rate.settle(held[0], 40)  # the real usage replaces the estimate: 750 held + 40 used
    held.append(rate.admit("k", 150))
    assert sum(r.tokens for r in held if not r.settled) == 900
    for r in held[1:]:
        rate.settle(r, 40)
    window = rate._windows["k"]
    assert (window.token_sum, window.reserved) == (7 * 40, 0)


def test_an_estimate_above_the_whole_budget_runs_alone_then_waits_for_the_window() -> None:
    rate, now = limits()
    big = rate.admit("k", 5000)  # alone on an idle key: admitted, or it never could be
    refused(rate, 1)
    now[0] += 5
    rate.settle(big, 4000)
    error = refused(rate, 1)
    assert error.headers["Retry-After"] == "60"  # the 4,000 tokens leave the window in 60 s
    now[0] += 60
    rate.settle(rate.admit("k", 10), 10)


def test_settle_counts_once_and_an_unsettled_reservation_lapses() -> None:
    rate, now = limits()
    lost = rate.admit("k", 900)  # a request that never reached settle()
    refused(rate, 200)
    now[0] += 61  # a minute on, its hold lapses
    kept = rate.admit("k", 200)
    rate.settle(lost, 30)  # ended after all: its usage still counts, once
    rate.settle(lost, 30)
    rate.settle(kept, 20)
    rate.settle(kept, 20)
    assert rate._windows["k"].token_sum == 50 and rate._windows["k"].reserved == 0


def test_requests_per_minute_still_counted_and_unlimited_callers_untouched() -> None:
    rate, now = limits(tpm=None, rpm=2)
    rate.settle(rate.admit("k", 10_000), 10_000)
    rate.admit("k", 10_000)
    assert refused(rate, 0).param == "requests"
    free = rate.admit(None, 10**9)
    rate.settle(free, 10**9)
    rate.settle(rate.admit("someone-else", 10**9), 10**9)


def test_estimate_uses_the_clients_output_cap_else_the_default() -> None:
    assert estimate_tokens(400) == 100 + 1024
    assert estimate_tokens(400, {"max_tokens": 50}) == 150
    assert estimate_tokens(400, {"max_completion_tokens": 60}) == 160
    assert estimate_tokens(400, {"max_output_tokens": 70}) == 170  # Responses
    assert estimate_tokens(400, {"max_tokens": True}, default_output=7) == 107  # not a number
    assert estimate_tokens(400, {"max_tokens": -5}, default_output=7) == 107


def budgeted(local: Any, cloud: Any, name: str, budget: int, *, reserve_output: int) -> Config:
    """The demo's two backends and one key ``k-<name>`` with a tokens-per-minute budget."""
    return parse_config(
        {
            "server": {"reserve_output_tokens": reserve_output},
            "database": {"enabled": False},
            "auth": {"keys": [{"name": name, "key": f"k-{name}", "tokens_per_minute": budget}]},
            "backends": {
                "local": {"kind": "vllm", "base_url": local.url, "model": LOCAL_MODEL},
                "cloud": {
                    "kind": "openai",
                    "base_url": cloud.url,
                    "model": CLOUD_MODEL,
                    "api_key": CLOUD_KEY,
                },
            },
        },
        env={},
    )


async def test_200_concurrent_requests_stay_within_the_budget(local_fake, cloud_fake) -> None:
    """Through the real proxy: at most the budget plus one request's worth is spent."""
    config = budgeted(local_fake, cloud_fake, "thrifty", BUDGET, reserve_output=40)
    server = await asyncio.to_thread(ProxyServer, config)
    try:
        headers = {"Authorization": "Bearer k-thrifty"}
        body = {"model": "local", "messages": USER, "max_tokens": 20}
        limits_ = httpx.Limits(max_connections=200)
        async with httpx.AsyncClient(base_url=server.base_url, timeout=30, limits=limits_) as client:
            responses = await asyncio.gather(
                *(client.post("/chat/completions", json=body, headers=headers) for _ in range(200))
            )
    finally:
        await asyncio.to_thread(server.stop)
    statuses = [r.status_code for r in responses]
    assert set(statuses) <= {200, 429}, statuses
    rows = [r for r in server.app.state.proxy.recorder.rows if r.status == 200]
    spent = [r.prompt_tokens + r.completion_tokens for r in rows]
    assert len(rows) == statuses.count(200) >= 2  # concurrency, not one request at a time
    assert sum(spent) <= BUDGET + max(spent), f"{sum(spent)} tokens spent on a {BUDGET}-token budget"


async def test_chunked_bodies_and_their_max_tokens_are_reserved(local_fake, cloud_fake) -> None:
    """A chunked body has no Content-Length: its reservation comes from the body as read,
    plus its own max_tokens (before: 0 bytes and the default output, so ten concurrent
    chunked requests used four times a 5,000-token budget)."""
    budget, max_tokens = 5000, 2000
    config = budgeted(local_fake, cloud_fake, "chunky", budget, reserve_output=10)
    from tests.conftest import fake_config

    fake_config(local_fake, first_byte_delay=1.0)  # all ten are in flight together
    server = await asyncio.to_thread(ProxyServer, config)
    payload = orjson.dumps(
        {"model": "local", "messages": [{"role": "user", "content": "x" * 2000}], "max_tokens": max_tokens}
    )

    async def chunked() -> AsyncIterator[bytes]:
        for start in range(0, len(payload), 500):
            yield payload[start : start + 500]

    try:
        headers = {"Authorization": "Bearer k-chunky", "content-type": "application/json"}
        async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
            responses = await asyncio.gather(
                *(client.post("/chat/completions", content=chunked(), headers=headers) for _ in range(10))
            )
    finally:
        await asyncio.to_thread(server.stop)
    statuses = [r.status_code for r in responses]
    assert all("content-length" not in r.request.headers for r in responses)  # really chunked
    reserved_each = estimate_tokens(len(payload), orjson.loads(payload), default_output=10)
    assert reserved_each >= max_tokens
    # Reserved per request: at most the budget's worth of them (plus one) are let in together.
    assert statuses.count(200) <= budget // reserved_each + 1, statuses
    assert statuses.count(429) >= 10 - (budget // reserved_each + 1)
