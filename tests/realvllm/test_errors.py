"""Errors as the real vLLM gives them reach each client in its own API's shape; the rule
that should catch a too-long prompt first (the local context window) does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from router.fake.upstream import RunningFake
from router.forward import vllm_metrics
from tests.harness import ProxyServer, wait_until
from tests.realvllm.conftest import real_config
from tests.realvllm.server import VllmServer
from tests.realvllm.wire import APIS, body_for, row_for, send

ANTHROPIC_TYPES = {"invalid_request_error", "not_found_error", "api_error", "overloaded_error"}


def too_long(api: str) -> dict[str, Any]:
    """About 70,000 tokens: more than the server's max-model-len (65,536)."""
    return body_for(api, "plain", False, "hello " * 70_000)


def assert_client_shape(api: str, response: httpx.Response, status: int, words: str) -> dict[str, Any]:
    """The error as that API's clients read it (the SDKs pick the exception by status)."""
    assert response.status_code == status, response.text[:500]
    body = response.json()
    if api == "messages":
        assert body["type"] == "error" and set(body["error"]) >= {"type", "message"}
        assert body["error"]["type"] in ANTHROPIC_TYPES, body  # Anthropic's vocabulary, not vLLM's
        message = body["error"]["message"]
    else:
        error = body["error"]
        assert set(error) == {"message", "type", "param", "code"}, error
        assert error["code"] is None or isinstance(error["code"], str), error  # Codex reads a string
        message = error["message"]
    assert words in message, message
    return body


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("api", APIS)
def test_context_length_exceeded_at_vllm(real_proxy: ProxyServer, api: str, stream: bool) -> None:
    """Pinned to the local box, a prompt over its window gets vLLM's 400, before any stream."""
    body = too_long(api)
    if stream:
        body["stream"] = True
    response = send(real_proxy, api, body)
    assert_client_shape(api, response, 400, "maximum context length is 65536 tokens")
    row = row_for(real_proxy, response)
    assert (row.status, row.backend, row.fallback) == (400, "local", False)


@pytest.mark.parametrize("api", APIS)
def test_the_context_window_rule_catches_it_first(
    real_proxy: ProxyServer, vllm: VllmServer, api: str
) -> None:
    """Not pinned, the same prompt never reaches vLLM: the policy sends it to the cloud."""
    if api == "messages":
        pytest.skip("the proxy's cloud for Messages is an Anthropic backend, absent from this config")
    before = _prompt_tokens_seen(vllm)
    body = {**too_long(api), "model": "auto"}  # not "local": that pins the route
    response = httpx.post(real_proxy.url + ("/v1/chat/completions" if api == "chat" else "/v1/responses"),
                          json=body, timeout=120)  # fmt: skip
    assert response.status_code == 200, response.text[:500]
    row = row_for(real_proxy, response)
    assert (row.reason, row.backend) == ("context_overflow", "cloud")
    assert _prompt_tokens_seen(vllm) == before  # vLLM never tokenised it


def _prompt_tokens_seen(vllm: VllmServer) -> float:
    text = vllm.metrics()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("vllm:prompt_tokens_total")
    )


@pytest.fixture
def misnamed_proxy(vllm: VllmServer, tier_cloud: RunningFake) -> Iterator[ProxyServer]:
    """A local backend whose model name the server does not serve (an operator's typo)."""
    server = ProxyServer(real_config(vllm.url, tier_cloud.url, local={"model": "tiny-typo"}))
    yield server
    server.stop()


@pytest.mark.parametrize("api", APIS)
def test_unknown_model(misnamed_proxy: ProxyServer, api: str) -> None:
    response = send(misnamed_proxy, api, body_for(api, "plain", False))
    body = assert_client_shape(api, response, 404, "The model `tiny-typo` does not exist")
    if api == "messages":
        assert body["error"]["type"] == "not_found_error"


# Input the proxy lets through (it checks only what it must read) and vLLM refuses.
MALFORMED = {
    "chat": (
        {"messages": [{"role": "user", "content": [{"type": "no_such_part", "x": 1}]}]},
        "validation error",
    ),
    "responses": ({"input": [{"type": "message", "role": "user", "content": 7}]}, "validation error"),
    "messages": (
        {"messages": [{"role": "user", "content": [{"type": "no_such_block"}]}]},
        "validation error",
    ),
}


@pytest.mark.parametrize("api", APIS)
def test_malformed_input(real_proxy: ProxyServer, vllm: VllmServer, api: str) -> None:
    body = body_for(api, "plain", False)
    fields, words = MALFORMED[api]
    body.update(fields)
    response = send(real_proxy, api, body)
    assert_client_shape(api, response, 400, words)
    row = row_for(real_proxy, response)
    assert (row.status, row.backend) == (400, "local")
    # A client's mistake is not the box's failure: its breaker stays closed.
    assert wait_until(lambda: real_proxy.state.pool["local"].endpoints[0].up)
    assert vllm_metrics.parse(vllm.metrics()).missing == ()
