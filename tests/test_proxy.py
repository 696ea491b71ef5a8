"""The proxy core, driven by the official openai SDK against real fake upstreams."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import httpx
import openai
import pytest

from tests.conftest import CLOUD_KEY, fake_config, fake_state
from tests.harness import TOOLS, USER, ProxyServer, free_port, make_config, wait_until


def client(proxy: ProxyServer, **kw: object) -> openai.OpenAI:
    return openai.OpenAI(base_url=proxy.base_url, api_key="unused", **kw)  # type: ignore[arg-type]


def last_body(fake: object) -> dict:
    return fake_state(fake)["received"][-1]["body"]  # type: ignore[arg-type]


# ------------------------------------------------------------- happy paths


def test_plain_completion_goes_to_local_with_route_headers(proxy, local_fake):
    raw = client(proxy).chat.completions.with_raw_response.create(model="auto", messages=USER)
    completion = raw.parse()
    assert completion.choices[0].message.content == "Hello there, I am a fake model."
    assert raw.headers["x-offload-route"] == "local"
    assert raw.headers["x-offload-fallback"] == "0"
    assert "x-offload-intent" in raw.headers
    sent = last_body(local_fake)
    assert sent["model"] == "poolside/Laguna-S-2.1-NVFP4"  # rewritten from "auto"
    assert sent["chat_template_kwargs"] == {"enable_thinking": False}  # backend extra_body merged


def test_stream_without_include_usage_hides_the_usage_chunk(proxy, local_fake):
    chunks = list(client(proxy).chat.completions.create(model="local", messages=USER, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello there, I am a fake model."
    assert all(c.choices for c in chunks), "the usage chunk the proxy asked for leaked to the client"
    assert all(getattr(c, "usage", None) is None for c in chunks)
    # …but the proxy did ask the upstream for it, and counted the tokens.
    assert last_body(local_fake)["stream_options"] == {"include_usage": True}
    assert wait_until(
        lambda: proxy.state.recorder.rows and proxy.state.recorder.rows[-1].completion_tokens == 9
    )
    assert proxy.state.recorder.rows[-1].tokens_estimated is False


def test_stream_with_include_usage_keeps_it(proxy):
    chunks = list(
        client(proxy).chat.completions.create(
            model="local", messages=USER, stream=True, stream_options={"include_usage": True}
        )
    )
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 9


def test_cloud_stream_without_include_usage_matches_what_openai_sends(proxy, cloud_fake):
    with httpx.stream(
        "POST",
        proxy.base_url + "/chat/completions",
        json={"model": "cloud", "messages": USER, "stream": True},
        timeout=10,
    ) as response:
        body = b"".join(response.iter_bytes())
    assert b'"usage"' not in body  # neither the usage chunk nor the "usage":null padding
    assert body.endswith(b"data: [DONE]\n\n")
    events = [e for e in body.split(b"\n\n") if e]
    assert all(e.startswith(b"data: ") for e in events)


def test_tool_call_deltas_reassemble(proxy):
    stream = client(proxy).chat.completions.create(model="local", messages=USER, tools=TOOLS, stream=True)
    calls: dict[int, dict] = {}
    finish = None
    for chunk in stream:
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or []:
                slot = calls.setdefault(call.index, {"id": None, "name": None, "arguments": ""})
                slot["id"] = slot["id"] or call.id
                if call.function and call.function.name:
                    slot["name"] = call.function.name
                if call.function and call.function.arguments:
                    slot["arguments"] += call.function.arguments
    assert finish == "tool_calls"
    assert calls[0]["name"] == "shell"
    assert calls[0]["id"].startswith("chatcmpl-tool-")
    assert json.loads(calls[0]["arguments"]) == {"cmd": "ls -la"}


def test_reasoning_deltas_pass_and_client_template_kwargs_win(proxy, local_fake):
    stream = client(proxy).chat.completions.create(
        model="local",
        messages=USER,
        stream=True,
        extra_body={"chat_template_kwargs": {"enable_thinking": True}, "top_k": 20},
    )
    reasoning = "".join(getattr(c.choices[0].delta, "reasoning", None) or "" for c in stream if c.choices)
    assert reasoning == "Let me think"
    sent = last_body(local_fake)
    assert sent["chat_template_kwargs"] == {"enable_thinking": True}
    assert sent["top_k"] == 20


def test_vllm_only_fields_never_reach_the_cloud(proxy, cloud_fake):
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello", "reasoning": "greeting", "reasoning_content": "greeting"},
        {"role": "user", "content": "prove that sqrt(2) is irrational"},
    ]
    completion = client(proxy).chat.completions.create(
        model="cloud",
        messages=messages,
        max_tokens=50,
        extra_body={
            "top_k": 5,
            "min_p": 0.1,
            "chat_template_kwargs": {"x": 1},
            "guided_json": {},
            "priority": 1,
        },
    )
    assert completion.choices[0].message.content  # the strict fake would have answered 400
    sent = last_body(cloud_fake)
    assert sent["model"] == "gpt-5.1"
    assert not {"top_k", "min_p", "chat_template_kwargs", "guided_json", "priority", "max_tokens"} & set(sent)
    assert sent["max_completion_tokens"] == 50
    assert all("reasoning" not in m and "reasoning_content" not in m for m in sent["messages"])


def test_completions_and_embeddings(proxy, cloud_fake):
    c = client(proxy)
    done = c.completions.create(model="local", prompt="def reverse(xs):")
    assert done.choices[0].text == "Hello there, I am a fake model."
    streamed = "".join(
        ch.choices[0].text for ch in c.completions.create(model="local", prompt="x", stream=True)
    )
    assert streamed == "Hello there, I am a fake model."
    emb = c.embeddings.create(model="whatever", input=["a", "b"])
    assert len(emb.data) == 2
    assert last_body(cloud_fake)["model"] == "text-embedding-3-small"


def test_models_lists_aliases_and_backend_models(proxy):
    ids = [m.id for m in client(proxy).models.list()]
    for expected in ("auto", "local", "cloud", "poolside/Laguna-S-2.1-NVFP4", "gpt-5.1"):
        assert expected in ids


def test_route_header_overrides(proxy):
    raw = client(proxy).chat.completions.with_raw_response.create(
        model="auto", messages=USER, extra_headers={"x-offload-route": "cloud"}
    )
    assert raw.headers["x-offload-route"] == "cloud"
    with pytest.raises(openai.BadRequestError, match="unknown route"):
        client(proxy).chat.completions.create(
            model="auto", messages=USER, extra_headers={"x-offload-route": "mars"}
        )


async def test_async_client_plain_and_stream(proxy):
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="unused")
    done = await c.chat.completions.create(model="local", messages=USER)
    assert done.usage is not None and done.usage.completion_tokens == 9
    stream = await c.chat.completions.create(model="cloud", messages=USER, stream=True)
    text = "".join([ch.choices[0].delta.content or "" async for ch in stream if ch.choices])
    assert text == "Hello there, I am a fake model."
    await c.close()


# ------------------------------------------------------------------ errors


def test_upstream_client_error_keeps_status_and_shape(proxy, cloud_fake):
    fake_config(cloud_fake, fail_status=429)
    with pytest.raises(openai.RateLimitError) as caught:
        client(proxy, max_retries=0).chat.completions.create(model="cloud", messages=USER)
    assert caught.value.status_code == 429
    assert caught.value.body["code"] == "rate_limit_exceeded"
    fake_config(cloud_fake, fail_status=400)
    with pytest.raises(openai.BadRequestError):
        client(proxy, max_retries=0).chat.completions.create(model="cloud", messages=USER)


def test_sdk_retries_through_the_proxy(local_fake, cloud_fake):
    # No fallback: a 503 reaches the SDK, which retries; the retry succeeds.
    server = ProxyServer(
        make_config(local_fake.url, cloud_fake.url, routing={"default": "local", "fallbacks": {}})
    )
    try:
        fake_config(local_fake, fail_status=503, fail_count=1)
        done = client(server, max_retries=2).chat.completions.create(model="local", messages=USER)
        assert done.choices[0].message.content
        assert len(fake_state(local_fake)["received"]) == 2
        fake_config(local_fake, fail_status=500, fail_count=-1)
        with pytest.raises(openai.InternalServerError):
            client(server, max_retries=1).chat.completions.create(model="local", messages=USER)
        assert len(fake_state(local_fake)["received"]) == 4  # 1 try + 1 SDK retry
    finally:
        server.stop()


def test_dead_upstream_is_a_clear_502(cloud_fake):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    server = ProxyServer(make_config(dead, cloud_fake.url, routing={"default": "local", "fallbacks": {}}))
    try:
        response = server.post("/v1/chat/completions", json={"model": "local", "messages": USER})
        assert response.status_code in (502, 503)
        error = response.json()["error"]
        assert "local" in error["message"] and "Traceback" not in response.text
    finally:
        server.stop()


def test_dead_local_falls_back_to_cloud(cloud_fake):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    server = ProxyServer(make_config(dead, cloud_fake.url))
    try:
        raw = client(server).chat.completions.with_raw_response.create(model="auto", messages=USER)
        assert raw.headers["x-offload-route"] == "cloud"
        assert raw.headers["x-offload-fallback"] == "1"
        row = server.state.recorder.rows[-1]
        assert row.fallback and row.fallback_reason in ("connect_error", "backend_down")
    finally:
        server.stop()


def test_mid_stream_death_raises_in_the_sdk(proxy, local_fake):
    fake_config(local_fake, die_after_chunks=4)
    with pytest.raises(openai.APIError):
        for _ in client(proxy).chat.completions.create(model="local", messages=USER, stream=True):
            pass
    with httpx.stream(
        "POST",
        proxy.base_url + "/chat/completions",
        json={"model": "local", "messages": USER, "stream": True},
    ) as response:
        body = b"".join(response.iter_bytes())
    assert b'data: {"error"' in body and body.endswith(b"data: [DONE]\n\n")


@pytest.mark.parametrize(
    ("method", "path", "payload", "status"),
    [
        ("POST", "/v1/chat/completions", b"{not json", 400),
        ("POST", "/v1/chat/completions", b"[1, 2, 3]", 400),
        ("POST", "/v1/chat/completions", b'{"model": "auto"}', 400),
        ("POST", "/v1/chat/completions", b'{"messages": [], "model": "auto"}', 400),
        (
            "POST",
            "/v1/chat/completions",
            b'{"messages": [{"role": "user", "content": "x"}], "stream": "yes"}',
            400,
        ),
        ("POST", "/v1/chat/completions", b"\xff\xfe\x00garbage", 400),
        ("POST", "/v1/completions", b'{"model": "auto"}', 400),
        ("POST", "/v1/nothing-here", b"{}", 404),
        ("GET", "/v1/chat/completions", b"", 405),
        ("DELETE", "/v1/models", b"", 405),
    ],
)
def test_bad_input_gets_openai_shaped_4xx_and_server_keeps_serving(
    proxy, local_fake, method, path, payload, status
):
    before = len(fake_state(local_fake)["received"])
    response = httpx.request(
        method, proxy.url + path, content=payload, headers={"content-type": "application/json"}, timeout=10
    )
    assert response.status_code == status
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
    assert len(fake_state(local_fake)["received"]) == before  # nothing forwarded
    assert client(proxy).chat.completions.create(model="local", messages=USER).choices


# ---------------------------------------------------------- auth, secrets


def test_client_keys_required_and_upstream_key_stays_hidden(local_fake, cloud_fake):
    config = make_config(
        local_fake.url, cloud_fake.url, auth={"keys": [{"name": "ci-bot", "key": "client-key-1"}]}
    )
    server = ProxyServer(config)
    try:
        with pytest.raises(openai.AuthenticationError):
            client(server, max_retries=0).chat.completions.create(model="local", messages=USER)
        bad = openai.OpenAI(base_url=server.base_url, api_key="wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            bad.chat.completions.create(model="local", messages=USER)
        assert fake_state(local_fake)["received"] == []  # nothing forwarded without a key
        good = openai.OpenAI(base_url=server.base_url, api_key="client-key-1")
        assert good.chat.completions.create(model="cloud", messages=USER).choices
        assert good.chat.completions.create(model="local", messages=USER).choices
        cloud_seen = fake_state(cloud_fake)["received"][-1]["headers"]
        local_seen = fake_state(local_fake)["received"][-1]["headers"]
        assert cloud_seen["authorization"] == f"Bearer {CLOUD_KEY}"  # the proxy's key, not the client's
        assert CLOUD_KEY not in json.dumps(local_seen)  # never sent to the other backend
        fake_config(cloud_fake, fail_status=500)
        response = server.post(
            "/v1/chat/completions",
            json={"model": "cloud", "messages": USER},
            headers={"Authorization": "Bearer client-key-1"},
        )
        assert CLOUD_KEY not in response.text and CLOUD_KEY not in str(response.headers)
        assert "client-key-1" not in server.get("/readyz").text
    finally:
        server.stop()


def test_unconfigured_cloud_is_a_non_retryable_error_naming_the_variable(local_fake):
    from router.config import parse_config

    raw = {
        "database": {"enabled": False},
        "backends": {
            "local": {"kind": "vllm", "base_url": local_fake.url, "model": "m"},
            "cloud": {
                "kind": "openai",
                "base_url": "https://api.example.invalid/v1",
                "model": "g",
                "api_key": "${OPENAI_API_KEY}",
            },
        },
    }
    # By default the cloud falls back to the box, and the row says why.
    server = ProxyServer(parse_config(raw, env={}))
    try:
        response = server.post("/v1/chat/completions", json={"model": "cloud", "messages": USER})
        assert response.status_code == 200 and response.headers["x-offload-route"] == "local"
        row = server.state.recorder.rows[-1]
        assert (row.backend, row.fallback, row.fallback_reason) == ("local", True, "unconfigured")
    finally:
        server.stop()
    server = ProxyServer(parse_config({**raw, "routing": {"fallbacks": {}}}, env={}))
    try:
        response = server.post("/v1/chat/completions", json={"model": "cloud", "messages": USER})
        # Pinned to the cloud, whose key is unset, and no fallback: the operator's to fix.
        assert response.status_code == 400 and response.headers["x-should-retry"] == "false"
        assert "OPENAI_API_KEY" in response.json()["error"]["message"]
        ready = server.get("/readyz").json()
        assert ready["backends"]["cloud"]["configured"] is False
        assert ready["backends"]["cloud"]["missing_env"] == "OPENAI_API_KEY"
        assert (
            server.post("/v1/chat/completions", json={"model": "local", "messages": USER}).status_code == 200
        )
    finally:
        server.stop()


def test_client_disconnect_cancels_the_upstream(proxy, local_fake):
    fake_config(local_fake, first_byte_delay=5.0)
    for stream in (False, True):
        sock = socket.create_connection(("127.0.0.1", proxy.port))
        body = json.dumps({"model": "local", "messages": USER, "stream": stream}).encode()
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        assert wait_until(lambda: fake_state(local_fake)["active"] == 1)
        t = time.monotonic()
        sock.close()
        assert wait_until(lambda: fake_state(local_fake)["active"] == 0, timeout=2)
        assert time.monotonic() - t < 1.0
    assert fake_state(local_fake)["cancelled"] == 2
    assert wait_until(lambda: proxy.state.pool["local"].in_flight == 0)


def test_health_endpoints(proxy):
    assert proxy.get("/healthz").json() == {"status": "ok"}
    ready = proxy.get("/readyz")
    assert ready.status_code == 200 and set(ready.json()["backends"]) == {"local", "cloud"}


def test_concurrent_requests_all_answered(proxy):
    async def run() -> list[str]:
        c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="unused")
        results = await asyncio.gather(
            *(
                c.chat.completions.create(model=("local" if i % 2 else "cloud"), messages=USER)
                for i in range(40)
            )
        )
        await c.close()
        return [r.choices[0].message.content or "" for r in results]

    assert all(asyncio.run(run()))
