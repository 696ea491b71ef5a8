"""The proxy's /metrics after known traffic, parsed as Prometheus would (no Prometheus needed).

Every test sends a known mix of requests through a real ProxyServer to the
fake upstreams, scrapes ``/metrics`` and compares the ``offload_*`` series
with what the traffic must have produced.
"""

from __future__ import annotations

import socket
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from router.decide.reasons import DECIDED, all_texts
from router.edge.metrics import REJECT_REASONS
from router.fake.upstream import RunningFake, start_in_thread
from tests.conftest import CLOUD_KEY, fake_config
from tests.harness import ProxyServer, make_config, wait_until

CLIENT_KEY = "sk-offload-client-abcdef0123456789"
RPM_KEY = "sk-offload-rpm-abcdef0123456789"
TPM_KEY = "sk-offload-tpm-abcdef0123456789"
CLOUD_ONLY_KEY = "sk-offload-cloud-only-abcdef0123"
ADMIN_KEY = "sk-offload-admin-abcdef0123456789"
USER = "alice@example.com"
# Every label name the proxy may use; anything else would be a new dimension to review.
KNOWN_LABELS = {
    "route",
    "api",
    "backend",
    "intent",
    "status_class",
    "fallback",
    "direction",
    "from_backend",
    "to_backend",
    "reason",
    "le",
}
TOOLS = [{"type": "function", "function": {"name": "run_shell", "parameters": {"type": "object"}}}]


# ------------------------------------------------------------------ helpers


def scrape(proxy: ProxyServer) -> list[Sample]:
    response = proxy.get("/metrics")
    assert response.status_code == 200
    return [s for family in text_string_to_metric_families(response.text) for s in family.samples]


def series(samples: list[Sample], name: str, keys: tuple[str, ...]) -> dict[tuple[str, ...], float]:
    """``name``'s non-zero samples keyed by the given label values (summed over other labels).

    Zero series are left out: the proxy creates the common ones at zero up
    front (see test_common_series_exist_at_zero_before_any_traffic).
    """
    out: Counter[tuple[str, ...]] = Counter()
    for s in samples:
        if s.name == name:
            out[tuple(s.labels[k] for k in keys)] += s.value
    return {k: v for k, v in out.items() if v}


def chat(
    proxy: ProxyServer,
    model: str,
    *,
    stream: bool = False,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> httpx.Response:
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": "fix this test"}],
        **extra,
    }
    if stream:
        body.update(stream=True, stream_options={"include_usage": True})
    return proxy.post("/v1/chat/completions", json=body, headers=headers or {})


def tool_turn(proxy: ProxyServer) -> httpx.Response:
    """A tool-loop turn (tools + a tool result last): the policy keeps it local, intent ``tools``."""
    call = {"id": "chatcmpl-tool-1", "type": "function", "function": {"name": "run_shell", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "run the tests"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "chatcmpl-tool-1", "content": "1 failed"},
    ]
    return proxy.post("/v1/chat/completions", json={"model": "auto", "messages": messages, "tools": TOOLS})


def usage_of(response: httpx.Response) -> dict[str, int]:
    """The usage the upstream reported, as the client received it (whole body or the SSE usage chunk)."""
    assert response.status_code == 200, response.text
    if not response.headers["content-type"].startswith("text/event-stream"):
        return response.json()["usage"]
    for line in response.text.splitlines():
        if line.startswith("data: {"):
            event = orjson.loads(line[len("data: ") :])
            if event.get("usage"):
                return event["usage"]
    raise AssertionError(f"no usage chunk in {response.text!r}")


def tokens_by_route(responses: list[httpx.Response]) -> dict[tuple[str, str], float]:
    out: Counter[tuple[str, str]] = Counter()
    for r in responses:
        usage = usage_of(r)
        route = r.headers["x-offload-route"]  # the backend that served (named like its route here)
        out[(route, "prompt")] += usage["prompt_tokens"]
        out[(route, "completion")] += usage["completion_tokens"]
    return dict(out)


@pytest.fixture
def own_fakes() -> Iterator[tuple[RunningFake, RunningFake]]:
    """Fakes this test may stop itself (the shared fixtures stop theirs at teardown)."""
    local = start_in_thread("vllm", model="poolside/Laguna-S-2.1-NVFP4")
    cloud = start_in_thread("cloud", api_key=CLOUD_KEY, model="gpt-5.1")
    running = [local, cloud]
    yield local, cloud
    for fake in running:
        if fake._thread.is_alive():
            fake.stop()


# ------------------------------------------------------------------ tests


def test_common_series_exist_at_zero_before_any_traffic(proxy: ProxyServer) -> None:
    """rate() misses a series' first increment, so a lone fallback needs its series to exist."""
    samples = scrape(proxy)
    fallbacks = {
        (s.labels["from_backend"], s.labels["to_backend"], s.labels["reason"]): s.value
        for s in samples
        if s.name == "offload_fallbacks_total"
    }
    assert fallbacks[("local", "cloud", "http_503")] == 0
    assert fallbacks[("local", "cloud", "backend_down")] == 0
    requests = {s.labels["route"] for s in samples if s.name == "offload_requests_total"}
    assert requests == {"local", "cloud", "none"}  # "none": no backend answered (5xx, 499)
    unanswered = {
        (s.labels["intent"], s.labels["status_class"]): s.value
        for s in samples
        if s.name == "offload_requests_total" and s.labels["route"] == "none"
    }
    assert unanswered[("none", "5xx")] == unanswered[("coding", "4xx")] == 0
    rejected = {s.labels["reason"]: s.value for s in samples if s.name == "offload_rejected_requests_total"}
    assert rejected == dict.fromkeys(REJECT_REASONS, 0)
    decided = {s.labels["reason"]: s.value for s in samples if s.name == "offload_decisions_total"}
    assert decided == dict.fromkeys(all_texts(DECIDED, []), 0)  # every reason of a decision (no rules here)


def test_requests_and_tokens_match_the_traffic(proxy: ProxyServer) -> None:
    responses = [chat(proxy, "local") for _ in range(3)]
    responses += [chat(proxy, "local", stream=True) for _ in range(2)]
    responses.append(tool_turn(proxy))
    responses += [chat(proxy, "cloud") for _ in range(2)]
    responses.append(chat(proxy, "cloud", stream=True))
    expected_tokens = tokens_by_route(responses)  # also checks every answer was a 200

    samples = scrape(proxy)
    keys = ("route", "backend", "intent", "status_class", "fallback")
    assert series(samples, "offload_requests_total", keys) == {
        ("local", "local", "none", "2xx", "0"): 5,  # model alias: no intent
        ("local", "local", "tools", "2xx", "0"): 1,  # the tool-loop rule
        ("cloud", "cloud", "none", "2xx", "0"): 3,
    }
    tokens = series(samples, "offload_tokens_total", ("route", "direction"))
    assert tokens == expected_tokens
    assert series(samples, "offload_request_duration_seconds_count", ("route",)) == {
        ("local",): 6,
        ("cloud",): 3,
    }
    assert series(samples, "offload_decision_seconds_count", ()) == {(): 9}
    assert series(samples, "offload_decisions_total", ("reason",)) == {
        ("override_model",): 8,
        ("tool_loop",): 1,
    }
    # Nothing fell back, nothing is in flight once every answer has been read.
    assert series(samples, "offload_fallbacks_total", ("reason",)) == {}
    in_flight = {s.labels["backend"]: s.value for s in samples if s.name == "offload_backend_in_flight"}
    assert in_flight == {"local": 0, "cloud": 0}


def test_fallback_is_counted_with_its_reason(proxy: ProxyServer, local_fake: RunningFake) -> None:
    fake_config(local_fake, fail_status=503, fail_count=1)
    response = chat(proxy, "local")
    assert response.headers["x-offload-route"] == "cloud"
    assert response.headers["x-offload-fallback"] == "1"

    samples = scrape(proxy)
    fallbacks = series(samples, "offload_fallbacks_total", ("from_backend", "to_backend", "reason"))
    assert fallbacks == {("local", "cloud", "http_503"): 1}
    keys = ("route", "backend", "status_class", "fallback")
    assert series(samples, "offload_requests_total", keys) == {("cloud", "cloud", "2xx", "1"): 1}
    assert series(samples, "offload_tokens_total", ("route", "direction")) == tokens_by_route([response])


def test_client_error_is_counted_as_4xx(proxy: ProxyServer, cloud_fake: RunningFake) -> None:
    fake_config(cloud_fake, fail_status=400, fail_count=1)
    assert chat(proxy, "cloud").status_code == 400
    assert chat(proxy, "cloud").status_code == 200
    keys = ("route", "status_class", "fallback")
    assert series(scrape(proxy), "offload_requests_total", keys) == {
        ("cloud", "4xx", "0"): 1,
        ("cloud", "2xx", "0"): 1,
    }


def test_rejected_request_adds_no_tokens(proxy: ProxyServer, cloud_fake: RunningFake) -> None:
    fake_config(cloud_fake, fail_status=400, fail_count=1)
    assert chat(proxy, "cloud", messages=[{"role": "user", "content": "x " * 400}]).status_code == 400
    assert series(scrape(proxy), "offload_tokens_total", ("route", "direction")) == {}


def test_backend_up_follows_the_health_probe(own_fakes: tuple[RunningFake, RunningFake]) -> None:
    local, cloud = own_fakes
    proxy = ProxyServer(make_config(local.url, cloud.url))  # health probe every 0.2 s
    try:

        def gauge(name: str) -> dict[str, float]:
            return {s.labels["backend"]: s.value for s in scrape(proxy) if s.name == name}

        assert wait_until(lambda: gauge("offload_backend_up") == {"local": 1, "cloud": 1}, timeout=5)
        assert gauge("offload_backend_breaker_state") == {"local": 0, "cloud": 0}

        local.stop()  # the box goes away: connection refused from now on
        assert wait_until(lambda: gauge("offload_backend_up")["local"] == 0, timeout=5)
        assert gauge("offload_backend_up")["cloud"] == 1
        assert gauge("offload_backend_breaker_state")["local"] == 2  # the failed probe opened it

        # A local request now goes to the cloud without trying the box.
        response = chat(proxy, "local")
        assert response.headers["x-offload-fallback"] == "1"
        fallbacks = series(scrape(proxy), "offload_fallbacks_total", ("from_backend", "to_backend", "reason"))
        # backend_down normally; connect_error if a half-open trial happened to be due.
        assert sum(fallbacks.values()) == 1
        assert set(fallbacks) <= {("local", "cloud", "backend_down"), ("local", "cloud", "connect_error")}
    finally:
        proxy.stop()


def test_labels_never_carry_ids_keys_or_users(local_fake: RunningFake, cloud_fake: RunningFake) -> None:
    config = make_config(
        local_fake.url, cloud_fake.url, auth={"keys": [{"name": "ci-bot", "key": CLIENT_KEY}]}
    )
    proxy = ProxyServer(config)
    try:
        auth = {"Authorization": f"Bearer {CLIENT_KEY}", "x-request-id": "client-chosen-id-42"}
        extra = {"user": USER, "metadata": {"session": "sess-9876"}}
        responses = [
            chat(proxy, "local", headers=auth, **extra),
            chat(proxy, "cloud", headers=auth, stream=True, **extra),
            chat(proxy, "auto", headers=auth, **extra),
        ]
        fake_config(local_fake, fail_status=503, fail_count=1)
        responses.append(chat(proxy, "local", headers=auth, **extra))  # a fallback, too
        assert proxy.post("/v1/chat/completions", json={"model": "local"}).status_code == 401
        assert all(r.status_code == 200 for r in responses)
        request_ids = {r.headers["x-request-id"] for r in responses}

        samples = [s for s in scrape(proxy) if s.name.startswith("offload_")]
        assert samples
        forbidden = [*request_ids, "client-chosen-id-42", CLIENT_KEY, CLOUD_KEY, USER, "alice", "sess-9876"]
        for s in samples:
            assert set(s.labels) <= KNOWN_LABELS, s
            for value in s.labels.values():
                assert not any(bad in value for bad in forbidden), s
                # Label values come from small fixed sets: short identifiers only.
                assert len(value) <= 32 and " " not in value, s
    finally:
        proxy.stop()


# ------------------------------------------------------------------ rejected requests


def rejected(samples: list[Sample]) -> dict[str, float]:
    """offload_rejected_requests_total by reason, zeros included (every reason exists from the start)."""
    return {s.labels["reason"]: s.value for s in samples if s.name == "offload_rejected_requests_total"}


def stalled_body(port: int) -> int:
    """Send headers and part of a body, then nothing: the status the proxy answers with."""
    body = orjson.dumps({"model": "local", "messages": [{"role": "user", "content": "fix this test"}]})
    head = (
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {CLIENT_KEY}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + body[:10])
        status_line = sock.makefile("rb").readline()
    return int(status_line.split()[1])


@pytest.fixture
def guarded(local_fake: RunningFake, cloud_fake: RunningFake) -> Iterator[ProxyServer]:
    """A proxy with keys, per-key limits, a route-restricted key and small intake limits."""
    config = make_config(
        local_fake.url,
        cloud_fake.url,
        auth={
            "keys": [
                {"name": "ci-bot", "key": CLIENT_KEY},
                {"name": "rpm-bot", "key": RPM_KEY, "requests_per_minute": 1},
                {"name": "tpm-bot", "key": TPM_KEY, "tokens_per_minute": 1},
                {"name": "cloud-only", "key": CLOUD_ONLY_KEY, "routes": ["cloud"]},
            ],
            "admin_keys": [{"name": "ops", "key": ADMIN_KEY}],
        },
        server={"max_body_bytes": 4096, "body_read_timeout_s": 0.5},
    )
    server = ProxyServer(config)
    yield server
    server.stop()


def test_rejected_requests_are_counted_once_by_reason(guarded: ProxyServer) -> None:
    """Every way the proxy refuses a request before forwarding, counted exactly once under a
    fixed reason, and never also in offload_requests_total (those requests have no usage row)."""
    proxy = guarded

    def client(key: str) -> openai.OpenAI:
        # No retries: the SDK would retry a 429 or 408 by itself and count twice.
        return openai.OpenAI(base_url=proxy.base_url, api_key=key, max_retries=0)

    def ask(key: str, model: str = "local", content: str = "fix this test", **extra: Any) -> Any:
        messages = [{"role": "user", "content": content}]
        return client(key).chat.completions.create(model=model, messages=messages, **extra)

    good = client(CLIENT_KEY)
    assert rejected(scrape(proxy)) == dict.fromkeys(REJECT_REASONS, 0)

    # unauthorized: a wrong key (forwarding endpoint and /v1/models), no Authorization header at all
    with pytest.raises(openai.AuthenticationError):
        ask("sk-not-a-key")
    with pytest.raises(openai.AuthenticationError):
        client("sk-not-a-key").models.list()
    assert proxy.post("/v1/chat/completions", json={"model": "local"}).status_code == 401

    # rate limits: one request per minute, one token per minute (the first request spends it)
    assert ask(RPM_KEY).choices[0].message.content
    with pytest.raises(openai.RateLimitError) as limited:
        ask(RPM_KEY)
    assert limited.value.body["param"] == "requests"
    assert ask(TPM_KEY).choices[0].message.content
    with pytest.raises(openai.RateLimitError) as limited:
        ask(TPM_KEY, stream=True)
    assert limited.value.body["param"] == "tokens"

    # forbidden: a route the key may not use; an admin endpoint with a client key
    with pytest.raises(openai.PermissionDeniedError):
        ask(CLOUD_ONLY_KEY, model="local")
    auth = {"Authorization": f"Bearer {CLIENT_KEY}"}
    assert proxy.get("/offload/state", headers=auth).status_code == 403

    # too_large, body_timeout: server.max_body_bytes 4096, body_read_timeout_s 0.5
    with pytest.raises(openai.APIStatusError) as too_large:
        ask(CLIENT_KEY, content="x" * 5000)
    assert too_large.value.status_code == 413
    assert stalled_body(proxy.port) == 408

    # invalid_request: not JSON, no messages, an unknown route header
    bad_json = proxy.post("/v1/chat/completions", content=b'{"model": "local",', headers=auth)
    assert bad_json.status_code == 400
    with pytest.raises(openai.BadRequestError):
        good.chat.completions.create(model="local", messages=[])
    with pytest.raises(openai.BadRequestError):
        ask(CLIENT_KEY, extra_headers={"x-offload-route": "elsewhere"})

    samples = scrape(proxy)
    assert rejected(samples) == {
        **dict.fromkeys(REJECT_REASONS, 0),
        "unauthorized": 3,
        "rate_limited_requests": 1,
        "rate_limited_tokens": 1,
        "forbidden": 2,
        "too_large": 1,
        "body_timeout": 1,
        "invalid_request": 3,
    }
    # Only the two first rate-limited requests were served; no rejection is also a request here.
    keys = ("route", "status_class")
    assert series(samples, "offload_requests_total", keys) == {("local", "2xx"): 2}

    # The proxy keeps serving, streams included, and counts them as requests, not rejections.
    assert good.chat.completions.create(model="local", messages=[{"role": "user", "content": "hi"}])
    stream = good.chat.completions.create(
        model="cloud", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    assert [chunk for chunk in stream]
    assert [m.id for m in good.models.list()]
    after = scrape(proxy)
    assert rejected(after) == rejected(samples)
    assert wait_until(
        lambda: (
            series(scrape(proxy), "offload_requests_total", keys)
            == {("local", "2xx"): 3, ("cloud", "2xx"): 1}
        )
    )


def test_request_no_backend_served_is_a_request_not_a_rejection(
    own_fakes: tuple[RunningFake, RunningFake],
) -> None:
    """A 5xx because every backend is down is counted once, in offload_requests_total{route="none"}."""
    local, cloud = own_fakes
    proxy = ProxyServer(make_config(local.url, cloud.url))
    try:
        local.stop()
        cloud.stop()
        response = chat(proxy, "local")
        assert response.status_code in (502, 503)
        assert response.headers["x-offload-route"] == "none"
        samples = scrape(proxy)
        keys = ("route", "backend", "status_class")
        assert series(samples, "offload_requests_total", keys) == {("none", "none", "5xx"): 1}
        assert rejected(samples) == dict.fromkeys(REJECT_REASONS, 0)
    finally:
        proxy.stop()
