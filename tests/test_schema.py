"""Property tests for parsing and routing, and schemathesis against the live proxy.

The properties: whatever bytes or JSON arrive, intake and policy either return
or raise :class:`ProxyError` (which becomes an OpenAI-shaped 4xx); nothing
else escapes to become a 500. Schemathesis then drives the real proxy over a
socket from the OpenAPI document it serves, with the fake upstreams answering,
and requires that no answer is a 5xx and every error has OpenAI's shape.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from router.config import ServerConfig
from router.decide.policy import Policy, load_classifier
from router.edge.intake import check_chat, check_completions, check_embeddings, parse_json_object
from router.errors import ProxyError
from router.fake.upstream import start_in_thread
from tests.conftest import CLOUD_KEY
from tests.harness import ProxyServer, make_config

LIMITS = ServerConfig(max_json_depth=16, max_messages=50)
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Any JSON value (orjson cannot encode integers past 64 bits: keep them in range).
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
# Bodies that look like requests: the field names the proxy reads, any values.
FIELDS = [
    "model",
    "stream",
    "stream_options",
    "max_tokens",
    "max_completion_tokens",
    "messages",
    "tools",
    "prompt",
    "input",
    "tool_choice",
]
parts = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image_url", "input_audio", "x"])}, optional={"text": json_values}
)
messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "system"]) | json_values},
        optional={
            "content": st.text(max_size=40) | st.lists(parts | json_values, max_size=3) | json_values,
            "tool_calls": st.lists(
                st.fixed_dictionaries({"id": st.sampled_from(["chatcmpl-tool-1", "call_1"]) | json_values}),
                max_size=2,
            )
            | json_values,
        },
    )
    | json_values,
    max_size=5,
)
request_like = st.dictionaries(
    st.sampled_from(FIELDS),
    json_values | messages | st.sampled_from(["auto", "local", "cloud", "gpt-5.1"]),
    max_size=6,
)
bodies = request_like | st.dictionaries(st.text(max_size=10), json_values, max_size=5)


def only_proxy_errors(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except ProxyError as exc:
        assert 400 <= exc.status < 500 and exc.message


# ------------------------------------------------------------------ intake


@FAST
@given(st.binary(max_size=200))
def test_parse_any_bytes_returns_a_dict_or_raises_proxy_error(raw: bytes) -> None:
    try:
        body = parse_json_object(raw, LIMITS)
    except ProxyError as exc:
        assert exc.status == 400
    else:
        assert isinstance(body, dict)


@FAST
@given(json_values)
def test_parse_any_json_value(value: Any) -> None:
    only_proxy_errors(parse_json_object, orjson.dumps(value), LIMITS)


@FAST
@given(st.integers(min_value=1, max_value=3000))
def test_parse_any_depth(depth: int) -> None:
    raw = b'{"x": ' + b"[" * depth + b"]" * depth + b"}"
    only_proxy_errors(parse_json_object, raw, LIMITS)


@FAST
@given(bodies)
def test_checks_raise_only_proxy_errors(body: dict[str, Any]) -> None:
    only_proxy_errors(check_chat, body, LIMITS)
    only_proxy_errors(check_completions, body)
    only_proxy_errors(check_embeddings, body)


# ------------------------------------------------------------------ policy


@pytest.fixture(scope="module")
def policies() -> list[Policy]:
    config = make_config("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1")
    shadow = make_config(
        "http://127.0.0.1:9/v1",
        "http://127.0.0.1:9/v1",
        routing={"default": "local", "mode": "shadow", "shadow_backend": "local"},
    )
    found = [Policy(config, None), Policy(shadow, None)]
    classifier = load_classifier(None)
    if classifier is not None:
        found.append(Policy(config, classifier))
    return found


@FAST
@given(
    body=bodies,
    route=st.none() | st.sampled_from(["local", "cloud", " CLOUD ", "mars", ""]) | st.text(max_size=8),
    size=st.integers(min_value=0, max_value=10**8),
)
def test_policy_decides_any_dict_or_raises_proxy_error(
    policies: list[Policy], body: dict[str, Any], route: str | None, size: int
) -> None:
    headers = {"x-offload-route": route} if route is not None else {}
    for policy in policies:
        try:
            decision = policy.decide(body, headers, size)
        except ProxyError as exc:
            assert exc.status == 400
        else:
            assert decision.backend in policy.config.backends
            assert decision.route in ("local", "cloud")


# ------------------------------------------------------------- schemathesis


@pytest.fixture(scope="module")
def live() -> Iterator[ProxyServer]:
    local = start_in_thread("vllm", model="poolside/Laguna-S-2.1-NVFP4")
    cloud = start_in_thread("cloud", api_key=CLOUD_KEY, model="gpt-5.1")
    server = ProxyServer(make_config(local.url, cloud.url))
    yield server
    server.stop()
    local.stop()
    cloud.stop()


@pytest.fixture(scope="module")
def api_schema(live: ProxyServer) -> Any:
    return schemathesis.openapi.from_url(live.url + "/openapi.json")


# Every operation the document describes (checked below, so a new endpoint is
# not silently left out). Built by hand: schemathesis' pytest plugin
# (``from_fixture(...).parametrize()``) does not run under pytest 9.
OPERATIONS = [
    ("/v1/chat/completions", "POST"),
    ("/v1/completions", "POST"),
    ("/v1/embeddings", "POST"),
    ("/v1/responses", "POST"),
    ("/v1/messages", "POST"),
    ("/v1/messages/count_tokens", "POST"),
    ("/v1/models", "GET"),
    ("/offload/route", "POST"),
    ("/offload/state", "GET"),
    ("/offload/state", "POST"),
    ("/healthz", "GET"),
    ("/readyz", "GET"),
    ("/metrics", "GET"),
]


@pytest.mark.parametrize(("path", "method"), OPERATIONS, ids=[f"{m} {p}" for p, m in OPERATIONS])
def test_api_never_answers_5xx(api_schema: Any, live: ProxyServer, path: str, method: str) -> None:
    operation = api_schema[path][method]
    # Valid bodies (forwarded: the fakes answer) and invalid ones (the proxy's 400s).
    cases = operation.as_strategy(GenerationMode.POSITIVE) | operation.as_strategy(GenerationMode.NEGATIVE)

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(case=cases)
    def run(case: Any) -> None:
        response = case.call(base_url=live.url, timeout=30)
        where = (case.method, case.path, response.status_code, response.text[:300])
        assert response.status_code < 500, where
        if response.status_code >= 400:
            body = response.json()
            if path.startswith("/v1/messages"):  # Anthropic's shape, whoever refused it
                assert body["type"] == "error" and {"type", "message"} <= set(body["error"]), where
            else:
                assert set(body["error"]) == {"message", "type", "param", "code"}, where

    run()


def test_openapi_document_lists_the_forwarding_endpoints(live: ProxyServer) -> None:
    paths = live.get("/openapi.json").json()["paths"]
    assert {(p, m.upper()) for p, methods in paths.items() for m in methods} == set(OPERATIONS)
    for path in (*(p for p, m in OPERATIONS if m == "POST"),):
        assert "requestBody" in paths[path]["post"]
