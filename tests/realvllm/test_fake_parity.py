"""The fake vLLM (router/fake/) against the real one: the same requests, sent
straight to each, give the same shapes: keys and value types of every JSON body, SSE
event names in order, usage fields, error bodies, the ids' formats, /v1/models and the
/metrics families the router reads. The fake is the fast tier for everything else; a
difference found here is fixed in the fake and recorded in docs/protocols.md.

Left out on purpose: tool calls (the fake answers a turn offering tools with a call, so
agents can be driven through a tool loop; the tiny model never calls one) and the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from router.fake.protocol import Behaviour
from router.fake.upstream import RunningFake, start_in_thread
from router.forward import vllm_metrics
from tests.realvllm.server import MODEL_NAME, VllmServer, recipe
from tests.realvllm.wire import PATHS, body_for, events

# Ids: prefix, then hex (vLLM 0.32 uses 16 hex digits of a random id).
ID_FORMATS = {
    "chat": r"chatcmpl-[0-9a-f]{16}",
    "responses": r"resp_[0-9a-f]{16}",
    "messages": r"chatcmpl-[0-9a-f]{16}",
    "item": r"(msg|rs)_[0-9a-f]{16}",
}


@pytest.fixture(scope="module")
def fake() -> Iterator[RunningFake]:
    running = start_in_thread("vllm", model=MODEL_NAME)
    running.fake.max_model_len = recipe().max_model_len
    running.fake.strict_model = True
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def fresh_behaviour(fake: RunningFake) -> None:
    fake.fake.behaviour = Behaviour()


def shape(value: Any) -> Any:
    """Keys and value types, recursively; a list by its elements' shapes, runs of the same
    shape collapsed (how many tokens or blocks of one kind is the model's business)."""
    if isinstance(value, dict):
        return {key: shape(v) for key, v in sorted(value.items())}
    if isinstance(value, list):
        shapes: list[Any] = []
        for item in map(shape, value):
            if not shapes or shapes[-1] != item:
                shapes.append(item)
        return shapes
    if isinstance(value, bool) or value is None:
        return repr(value) if value is None else "bool"
    return "number" if isinstance(value, int | float) else type(value).__name__


def stream_shape(raw: str) -> list[tuple[str | None, Any]]:
    """Each event's name and shape, runs of the same (deltas) collapsed to one."""
    out: list[tuple[str | None, Any]] = []
    for name, data in events(raw):
        item = (name, data if data == "[DONE]" else shape(data))
        if not out or out[-1] != item:
            out.append(item)
    return out


def post(root: str, api: str, body: dict[str, Any]) -> httpx.Response:
    path = "/v1/messages/count_tokens" if api == "count_tokens" else PATHS[api]
    return httpx.post(root + path, json={**body, "model": MODEL_NAME}, timeout=120)


def both(
    vllm: VllmServer, fake: RunningFake, api: str, body: dict[str, Any]
) -> tuple[httpx.Response, httpx.Response]:
    return post(vllm.root, api, body), post(fake.root, api, body)


def _thinking(api: str, stream: bool) -> dict[str, Any]:
    """Thinking on as the proxy sends it to vLLM: chat_template_kwargs.enable_thinking."""
    body = body_for(api, "thinking", stream)
    body["chat_template_kwargs"] = {"enable_thinking": True}
    return body


CASES = {
    "plain": lambda api, stream: body_for(api, "plain", stream),
    "thinking": _thinking,
}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("api", ["chat", "responses", "messages"])
def test_same_shapes(vllm: VllmServer, fake: RunningFake, api: str, case: str, stream: bool) -> None:
    # The tiny model's thinking turns are all reasoning (it never closes <think>): the fake
    # answers the same way when it has no text to say after its reasoning.
    fake.fake.behaviour = Behaviour(reply_tokens=[] if case == "thinking" else Behaviour().reply_tokens)
    real, faked = both(vllm, fake, api, CASES[case](api, stream))
    assert (real.status_code, faked.status_code) == (200, 200), (real.text[:300], faked.text[:300])
    assert faked.headers["content-type"].split(";")[0] == real.headers["content-type"].split(";")[0]
    if stream:
        assert stream_shape(faked.text) == stream_shape(real.text)
        first = events(real.text)[0][1], events(faked.text)[0][1]
        ids = [_id_of(api, data) for data in first]
    else:
        assert shape(faked.json()) == shape(real.json())
        ids = [_id_of(api, real.json()), _id_of(api, faked.json())]
    for found in ids:
        assert re.fullmatch(ID_FORMATS[api], found), found


def _id_of(api: str, data: dict[str, Any]) -> str:
    if api == "responses":
        return data["response"]["id"] if "response" in data else data["id"]
    return data["message"]["id"] if "message" in data and api == "messages" else data["id"]


def test_chat_stream_without_include_usage(vllm: VllmServer, fake: RunningFake) -> None:
    body = body_for("chat", "plain", True)
    del body["stream_options"]
    real, faked = both(vllm, fake, "chat", body)
    assert stream_shape(faked.text) == stream_shape(real.text)


def test_count_tokens(vllm: VllmServer, fake: RunningFake) -> None:
    body = body_for("messages", "tool_loop", False)
    del body["max_tokens"]
    real, faked = both(vllm, fake, "count_tokens", body)
    assert shape(faked.json()) == shape(real.json())


ERRORS = {
    "context_length": lambda api: body_for(api, "plain", False, "hello " * 70_000),
    "unknown_model": lambda api: {**body_for(api, "plain", False), "model_override": "nope"},
    "messages_without_max_tokens": lambda api: {
        k: v for k, v in body_for(api, "plain", False).items() if k != "max_tokens"
    },
}


@pytest.mark.parametrize("error", sorted(ERRORS))
@pytest.mark.parametrize("api", ["chat", "responses", "messages"])
def test_same_error_bodies(vllm: VllmServer, fake: RunningFake, api: str, error: str) -> None:
    if error == "messages_without_max_tokens" and api != "messages":
        pytest.skip("Messages only")
    body = ERRORS[error](api)
    model = body.pop("model_override", MODEL_NAME)
    path = PATHS[api]
    real = httpx.post(vllm.root + path, json={**body, "model": model}, timeout=120)
    faked = httpx.post(fake.root + path, json={**body, "model": model}, timeout=120)
    assert faked.status_code == real.status_code, (real.text[:300], faked.text[:300])
    assert shape(faked.json()) == shape(real.json()), (real.text[:300], faked.text[:300])
    real_error, fake_error = real.json()["error"], faked.json()["error"]
    assert fake_error["type"] == real_error["type"]
    assert fake_error.get("param") == real_error.get("param")
    assert fake_error.get("code") == real_error.get("code")


def test_models(vllm: VllmServer, fake: RunningFake) -> None:
    real = httpx.get(vllm.url + "/models", timeout=10).json()
    faked = httpx.get(fake.url + "/models", timeout=10).json()
    assert shape(faked) == shape(real)
    assert faked["data"][0]["max_model_len"] == real["data"][0]["max_model_len"]


def test_metrics_families_the_router_reads(vllm: VllmServer, fake: RunningFake) -> None:
    real, faked = (
        vllm_metrics.parse(vllm.metrics()),
        vllm_metrics.parse(httpx.get(fake.root + "/metrics").text),
    )
    assert real.missing == () and faked.missing == ()
    assert set(faked.cache_config) >= {"block_size", "enable_prefix_caching", "num_gpu_blocks"}
    assert set(faked.cache_config) <= set(real.cache_config)
    assert real.cache_config["enable_prefix_caching"] == faked.cache_config["enable_prefix_caching"] == "True"
