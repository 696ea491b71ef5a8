"""Hostile and broken input against the real proxy over a socket.

Every case checks three things: the answer is a 4xx in OpenAI's error shape,
nothing reached an upstream that should not have, and the server then serves
the next good request normally.
"""

from __future__ import annotations

import hmac
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.datastructures import Headers

from router.config import AuthConfig
from router.edge.auth import KeyStore
from router.edge.limits import RateLimits
from router.fake.upstream import RunningFake, start_in_thread
from tests.conftest import CLOUD_KEY, fake_state
from tests.harness import USER, ProxyServer, make_config, wait_until

CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
MESSAGES = "/v1/messages"
COUNT = "/v1/messages/count_tokens"
GOOD = json.dumps({"model": "local", "messages": USER}).encode()


# ---------------------------------------------------------------- helpers


def received(*fakes: RunningFake) -> int:
    return sum(len(fake_state(f)["received"]) for f in fakes)


def assert_openai_error(response: httpx.Response, status: int | tuple[int, ...]) -> dict[str, Any]:
    allowed = status if isinstance(status, tuple) else (status,)
    assert response.status_code in allowed, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["type"], str) and error["type"]
    return error


def assert_anthropic_error(response: httpx.Response, status: int) -> dict[str, Any]:
    """Anthropic's shape: what the anthropic SDK and Claude Code parse."""
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert body["type"] == "error" and set(body["error"]) == {"type", "message"}
    assert body["error"]["type"] == "invalid_request_error" and body["error"]["message"]
    return body["error"]


def assert_still_serves(server: ProxyServer, headers: dict[str, str] | None = None) -> None:
    response = server.post(
        CHAT, content=GOOD, headers={"content-type": "application/json", **(headers or {})}
    )
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"]


def raw_http(port: int, data: bytes, *, read_timeout: float = 5.0) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes; read one response (status, lower-cased headers, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=read_timeout) as sock:
        sock.sendall(data)
        return read_response(sock)


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    return read_from(sock.makefile("rb"))


def read_from(stream: Any) -> tuple[int, dict[str, str], bytes]:
    """One response from a buffered socket file (reuse it for pipelined answers)."""
    status_line = stream.readline()
    if not status_line:
        raise ConnectionError("closed before a response")
    status = int(status_line.split()[1])
    headers: dict[str, str] = {}
    while (line := stream.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    body = stream.read(int(headers.get("content-length", "0")))
    return status, headers, body


def request_head(path: str = CHAT, *extra: str, length: int | None = None, method: str = "POST") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: proxy", "Content-Type: application/json", *extra]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def shape_of(body: bytes) -> dict[str, Any]:
    error = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


@pytest.fixture
def keyed(local_fake: RunningFake, cloud_fake: RunningFake) -> Iterator[ProxyServer]:
    """A proxy with client keys: one limited to local, one rate-limited, and an admin."""
    auth = {
        "keys": [
            {"name": "dev", "key": "client-dev-key"},
            {"name": "local-only", "key": "client-local-key", "routes": ["local"]},
            {"name": "slow", "key": "client-slow-key", "requests_per_minute": 3},
            {"name": "thrifty", "key": "client-thrifty-key", "tokens_per_minute": 20},
        ],
        "admin_keys": [{"name": "ops", "key": "admin-ops-key"}],
    }
    server = ProxyServer(make_config(local_fake.url, cloud_fake.url, auth=auth))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def shared() -> Iterator[tuple[ProxyServer, RunningFake, RunningFake]]:
    """One open proxy and its fakes for the many table-driven cases (start-up is most of their cost)."""
    local = start_in_thread("vllm", model="poolside/Laguna-S-2.1-NVFP4")
    cloud = start_in_thread("cloud", api_key=CLOUD_KEY, model="gpt-5.1")
    server = ProxyServer(make_config(local.url, cloud.url))
    yield server, local, cloud
    server.stop()
    local.stop()
    cloud.stop()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


# --------------------------------------------------------- the bad-input corpus

MSG = {"role": "user", "content": "hi"}


def _chat(**fields: Any) -> bytes:
    return json.dumps({"model": "local", "messages": [MSG], **fields}).encode()


def _raw_chat(fragment: bytes) -> bytes:
    """A chat body with ``fragment`` (raw JSON text) as extra members."""
    return b'{"model": "local", "messages": [{"role": "user", "content": "hi"}], ' + fragment + b"}"


CORPUS: list[tuple[str, str, bytes, int]] = [
    # not JSON, not UTF-8, not an object
    ("empty body", CHAT, b"", 400),
    ("invalid json", CHAT, b"{not json", 400),
    ("truncated json", CHAT, b'{"model": "local", "messages": [', 400),
    ("trailing garbage", CHAT, _chat() + b" {}", 400),
    ("invalid utf-8", CHAT, b'{"model": "\xff\xfe", "messages": []}', 400),
    ("lone surrogate escape", CHAT, b'{"messages": [{"role": "user", "content": "\\ud800"}]}', 400),
    ("nan literal", CHAT, _raw_chat(b'"temperature": NaN'), 400),
    ("array body", CHAT, b"[1, 2, 3]", 400),
    ("string body", CHAT, b'"hello"', 400),
    ("number body", CHAT, b"42", 400),
    ("null body", CHAT, b"null", 400),
    ("true body", CHAT, b"true", 400),
    # wrong types for every top-level field the proxy reads
    ("model number", CHAT, _chat(model=7), 400),
    ("model array", CHAT, _chat(model=["local"]), 400),
    ("model object", CHAT, _chat(model={"name": "local"}), 400),
    ("stream string", CHAT, _chat(stream="yes"), 400),
    ("stream number", CHAT, _chat(stream=1), 400),
    ("stream_options string", CHAT, _chat(stream=True, stream_options="include_usage"), 400),
    ("stream_options array", CHAT, _chat(stream=True, stream_options=[True]), 400),
    ("max_tokens string", CHAT, _chat(max_tokens="100"), 400),
    ("max_tokens float", CHAT, _chat(max_tokens=1.5), 400),
    ("max_tokens bool", CHAT, _chat(max_tokens=True), 400),
    ("max_tokens negative", CHAT, _chat(max_tokens=-1), 400),
    ("max_tokens zero", CHAT, _chat(max_tokens=0), 400),
    ("max_completion_tokens negative", CHAT, _chat(max_completion_tokens=-5), 400),
    ("max_completion_tokens object", CHAT, _chat(max_completion_tokens={}), 400),
    ("messages missing", CHAT, b'{"model": "local"}', 400),
    ("messages empty", CHAT, _chat(messages=[]), 400),
    ("messages object", CHAT, _chat(messages={"role": "user"}), 400),
    ("messages string", CHAT, _chat(messages="hi"), 400),
    ("message not object", CHAT, _chat(messages=[1]), 400),
    ("message without role", CHAT, _chat(messages=[{"content": "hi"}]), 400),
    ("message role number", CHAT, _chat(messages=[{"role": 1, "content": "hi"}]), 400),
    ("content number", CHAT, _chat(messages=[{"role": "user", "content": 5}]), 400),
    ("content object", CHAT, _chat(messages=[{"role": "user", "content": {"text": "x"}}]), 400),
    ("content part not object", CHAT, _chat(messages=[{"role": "user", "content": ["hi"]}]), 400),
    ("content part without type", CHAT, _chat(messages=[{"role": "user", "content": [{"text": "x"}]}]), 400),
    ("content part type number", CHAT, _chat(messages=[{"role": "user", "content": [{"type": 3}]}]), 400),
    ("tools object", CHAT, _chat(tools={"type": "function"}), 400),
    ("tools string", CHAT, _chat(tools="shell"), 400),
    ("tools of numbers", CHAT, _chat(tools=[1, 2]), 400),
    ("tools of arrays", CHAT, _chat(tools=[[{"type": "function"}]]), 400),
    ("prompt missing", "/v1/completions", b'{"model": "local"}', 400),
    ("prompt number", "/v1/completions", b'{"model": "local", "prompt": 5}', 400),
    ("prompt empty array", "/v1/completions", b'{"model": "local", "prompt": []}', 400),
    ("prompt object", "/v1/completions", b'{"model": "local", "prompt": {"a": 1}}', 400),
    ("prompt null", "/v1/completions", b'{"model": "local", "prompt": null}', 400),
    ("completions stream string", "/v1/completions", b'{"prompt": "x", "stream": "true"}', 400),
    ("input missing", "/v1/embeddings", b'{"model": "x"}', 400),
    ("input number", "/v1/embeddings", b'{"model": "x", "input": 5}', 400),
    ("input empty array", "/v1/embeddings", b'{"model": "x", "input": []}', 400),
    ("input object", "/v1/embeddings", b'{"model": "x", "input": {"a": 1}}', 400),
    ("embeddings model number", "/v1/embeddings", b'{"model": 1, "input": "x"}', 400),
    # /offload/route reads the same fields (and forwards nothing anyway)
    ("route: stream string", "/offload/route", _chat(stream="yes"), 400),
    ("route: array body", "/offload/route", b"[]", 400),
    # nesting and counts
    ("nesting past max_json_depth", CHAT, _raw_chat(b'"x": ' + b"[" * 70 + b"]" * 70), 400),
    ("nesting past orjson's own limit", CHAT, _raw_chat(b'"x": ' + b"[" * 5000 + b"]" * 5000), 400),
    ("more than max_messages", CHAT, _chat(messages=[MSG] * 10_001), 400),
    # OpenAI Responses: the same refusals, in OpenAI's shape
    ("responses: empty body", RESPONSES, b"", 400),
    ("responses: invalid json", RESPONSES, b"{not json", 400),
    ("responses: array body", RESPONSES, b"[]", 400),
    ("responses: input missing", RESPONSES, b'{"model": "m"}', 400),
    ("responses: input empty", RESPONSES, b'{"input": []}', 400),
    ("responses: input number", RESPONSES, b'{"input": 5}', 400),
    ("responses: item not object", RESPONSES, b'{"input": ["hi"]}', 400),
    ("responses: instructions number", RESPONSES, b'{"input": "hi", "instructions": 3}', 400),
    ("responses: previous_response_id number", RESPONSES, b'{"input": "hi", "previous_response_id": 7}', 400),
    ("responses: stream string", RESPONSES, b'{"input": "hi", "stream": "yes"}', 400),
    ("responses: max_output_tokens zero", RESPONSES, b'{"input": "hi", "max_output_tokens": 0}', 400),
    ("responses: tools object", RESPONSES, b'{"input": "hi", "tools": {"type": "function"}}', 400),
    ("responses: nesting", RESPONSES, b'{"input": "hi", "x": ' + b"[" * 70 + b"]" * 70 + b"}", 400),
    # Anthropic Messages and count_tokens: the same refusals, in Anthropic's shape
    ("messages: empty body", MESSAGES, b"", 400),
    ("messages: invalid json", MESSAGES, b"{not json", 400),
    ("messages: string body", MESSAGES, b'"hi"', 400),
    ("messages: max_tokens missing", MESSAGES, b'{"messages": [{"role": "user", "content": "hi"}]}', 400),
    (
        "messages: max_tokens string",
        MESSAGES,
        b'{"max_tokens": "5", "messages": [{"role": "user", "content": "x"}]}',
        400,
    ),
    ("messages: messages missing", MESSAGES, b'{"max_tokens": 5}', 400),
    (
        "messages: content null",
        MESSAGES,
        b'{"max_tokens": 5, "messages": [{"role": "user", "content": null}]}',
        400,
    ),
    (
        "messages: block without type",
        MESSAGES,
        b'{"max_tokens": 5, "messages": [{"role": "user", "content": [{"text": "x"}]}]}',
        400,
    ),
    (
        "messages: system number",
        MESSAGES,
        b'{"max_tokens": 5, "system": 1, "messages": [{"role": "user", "content": "x"}]}',
        400,
    ),
    (
        "messages: tools of strings",
        MESSAGES,
        b'{"max_tokens": 5, "tools": ["Bash"], "messages": [{"role": "user", "content": "x"}]}',
        400,
    ),
    ("count_tokens: messages empty", COUNT, b'{"messages": []}', 400),
    (
        "count_tokens: model number",
        COUNT,
        b'{"model": 1, "messages": [{"role": "user", "content": "x"}]}',
        400,
    ),
]


@pytest.mark.parametrize(("name", "path", "body", "status"), CORPUS, ids=[c[0] for c in CORPUS])
def test_bad_body_gets_the_apis_4xx_forwards_nothing_and_server_keeps_serving(
    shared, name, path, body, status
):
    proxy, local_fake, cloud_fake = shared
    before = received(local_fake, cloud_fake)
    response = proxy.post(path, content=body, headers={"content-type": "application/json"})
    if path.startswith("/v1/messages"):
        assert_anthropic_error(response, status)
    else:
        assert_openai_error(response, status)
    assert received(local_fake, cloud_fake) == before, f"{name}: reached an upstream"
    assert_still_serves(proxy)


def test_errors_name_the_offending_field(proxy):
    cases = {
        "stream": _chat(stream="yes"),
        "max_tokens": _chat(max_tokens=-3),
        "tools": _chat(tools={}),
        "messages": _chat(messages=[]),
        "model": _chat(model=3),
        "stream_options": _chat(stream_options=1),
    }
    for field, body in cases.items():
        error = assert_openai_error(proxy.post(CHAT, content=body), 400)
        assert error["param"] == field and field in error["message"]


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/nothing", 404),
        ("POST", "/v1/chat/completions/", 404),  # no redirect built from the Host header
        ("GET", "/healthz/", 404),
        ("OPTIONS", "/v1/chat/completions", 405),
        ("GET", "/docs", 404),
        ("POST", "/v1/nothing-here", 404),
        ("POST", "/v2/chat/completions", 404),
        ("GET", "/v1/chat/completions", 405),
        ("PUT", "/v1/chat/completions", 405),
        ("DELETE", "/v1/completions", 405),
        ("PATCH", "/v1/embeddings", 405),
        ("DELETE", "/v1/models", 405),
        ("POST", "/healthz", 405),
        ("GET", "/offload/route", 405),
        ("PUT", "/offload/state", 405),
        ("GET", "/v1/chat/completions%00", 404),
        ("GET", "/../../etc/passwd", 404),
    ],
)
def test_unknown_paths_and_methods(shared, method, path, status):
    proxy, local_fake, cloud_fake = shared
    before = received(local_fake, cloud_fake)
    response = httpx.request(method, proxy.url + path, content=_chat(), timeout=10)
    error = assert_openai_error(response, status)
    assert "<" not in error["message"]  # no HTML, no echo of markup
    assert received(local_fake, cloud_fake) == before
    assert_still_serves(proxy)


def test_unknown_content_part_types_are_forwarded_untouched(proxy, local_fake):
    """The proxy does not decide what a part type means (new ones appear all the
    time: input_audio, video_url, file...). It checks only that each part is an
    object with a string ``type`` and leaves the verdict to the upstream, whose
    own 4xx the client then gets; never a 5xx from the proxy."""
    parts = [{"type": "text", "text": "hi"}, {"type": "hologram", "hologram": {"x": 1}}]
    body = _chat(messages=[{"role": "user", "content": parts}])
    response = proxy.post(CHAT, content=body)
    assert response.status_code == 200
    assert fake_state(local_fake)["received"][-1]["body"]["messages"][0]["content"] == parts


def test_tools_of_the_wrong_inner_shape_are_left_to_the_upstream(proxy, local_fake):
    # An array of objects is all the proxy needs (the policy reads nothing deeper).
    tools = [{"type": "function"}, {"function": "not an object"}]
    response = proxy.post(CHAT, content=_chat(tools=tools))
    assert response.status_code < 500
    assert fake_state(local_fake)["received"][-1]["body"]["tools"] == tools


# ------------------------------------------------------------- duplicate keys


def test_duplicate_keys_last_one_wins_and_upstream_sees_only_it(proxy, local_fake, cloud_fake):
    """orjson keeps the LAST of duplicate keys. The proxy re-serialises the body
    it parsed, so the upstream sees exactly the one value the proxy routed on:
    no parser differential between what was decided and what was sent."""
    body = (
        b'{"model": "cloud", "messages": [{"role": "user", "content": "first"}],'
        b' "stream": true, "model": "local", "stream": false,'
        b' "messages": [{"role": "user", "content": "second"}]}'
    )
    before_cloud = len(fake_state(cloud_fake)["received"])
    response = proxy.post(CHAT, content=body)
    assert response.status_code == 200
    assert response.headers["x-offload-route"] == "local"
    assert response.headers["content-type"].startswith("application/json")  # stream: false won
    sent = fake_state(local_fake)["received"][-1]["body"]
    assert sent["messages"] == [{"role": "user", "content": "second"}]
    assert "stream" in sent and sent["stream"] is False
    assert len(fake_state(cloud_fake)["received"]) == before_cloud
    # A duplicate that makes the body invalid is refused like any other.
    bad = b'{"messages": [{"role": "user", "content": "x"}], "stream": false, "stream": "yes"}'
    assert_openai_error(proxy.post(CHAT, content=bad), 400)


# -------------------------------------------------------------- size limits


@pytest.fixture
def small(local_fake: RunningFake, cloud_fake: RunningFake) -> Iterator[ProxyServer]:
    server = ProxyServer(
        make_config(
            local_fake.url,
            cloud_fake.url,
            server={"max_body_bytes": 4096, "max_messages": 5, "max_json_depth": 8},
        )
    )
    yield server
    server.stop()


def test_over_size_body_with_content_length_is_refused_before_reading(small, local_fake):
    # Declare 10 MB and send none of it: the 413 must come anyway.
    status, headers, body = raw_http(small.port, request_head(length=10_000_000), read_timeout=5)
    assert status == 413
    assert shape_of(body)["code"] == "request_too_large"
    assert headers.get("connection") == "close"
    assert fake_state(local_fake)["received"] == []
    assert_still_serves(small)


def test_over_size_chunked_body_stops_at_the_limit(small, local_fake):
    with socket.create_connection(("127.0.0.1", small.port), timeout=5) as sock:
        sock.sendall(request_head("/v1/chat/completions", "Transfer-Encoding: chunked"))
        piece = b"x" * 3000
        for _ in range(2):  # 6000 bytes: past the 4096 limit, and no terminating chunk
            sock.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        status, headers, body = read_response(sock)  # answered without the end of the body
    assert status == 413 and shape_of(body)["code"] == "request_too_large"
    assert fake_state(local_fake)["received"] == []
    assert_still_serves(small)


def test_body_at_the_limit_is_accepted_and_limits_come_from_config(small):
    padding = 4096 - len(_chat(user="")) - 0
    body = _chat(user="p" * padding)
    assert len(body) == 4096
    assert small.post(CHAT, content=body).status_code == 200
    assert_openai_error(small.post(CHAT, content=_chat(user="p" * (padding + 1))), 413)
    assert_openai_error(small.post(CHAT, content=_chat(messages=[MSG] * 6)), 400)
    assert small.post(CHAT, content=_chat(messages=[MSG] * 5)).status_code == 200
    deep = _raw_chat(b'"x": ' + b"[" * 8 + b"]" * 8)  # depth 9 with the body itself
    assert assert_openai_error(small.post(CHAT, content=deep), 400)["code"] == "too_deep"


@pytest.mark.parametrize("value", ["-1", "abc", "1e3", "\xb2"])
def test_invalid_content_length_is_refused(proxy, value):
    head = request_head(CHAT, f"Content-Length: {value}")
    status, headers, body = raw_http(proxy.port, head + b"{}")
    assert status == 400  # by uvicorn's parser (text/plain) or the proxy (OpenAI shape)
    if headers.get("content-type", "").startswith("application/json"):
        shape_of(body)
    assert_still_serves(proxy)


# ---------------------------------------------------------------- slow loris


QUICK_BODY_TIMEOUT = 1.0


@pytest.fixture
def slow_proxy(local_fake: RunningFake, cloud_fake: RunningFake) -> Iterator[ProxyServer]:
    """A proxy with server.body_read_timeout_s at one second."""
    config = make_config(local_fake.url, cloud_fake.url, server={"body_read_timeout_s": QUICK_BODY_TIMEOUT})
    server = ProxyServer(config)
    yield server
    server.stop()


def test_stalled_body_gets_408_and_others_are_served_meanwhile(slow_proxy, local_fake):
    proxy, quick_body_timeout = slow_proxy, QUICK_BODY_TIMEOUT
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        sock.sendall(request_head(length=len(GOOD)) + GOOD[:10])  # …and then nothing
        t = time.monotonic()
        assert_still_serves(proxy)  # while the stalled client waits
        assert time.monotonic() - t < quick_body_timeout
        status, headers, body = read_response(sock)
        waited = time.monotonic() - t
        assert status == 408 and shape_of(body)["type"] == "timeout_error"
        assert headers.get("connection") == "close"
        assert sock.recv(1) == b""  # closed
    assert 0.5 < waited < 5
    assert len(fake_state(local_fake)["received"]) == 1  # only the good one
    assert_still_serves(proxy)


def test_trickled_body_is_cut_off_by_a_total_deadline(slow_proxy, local_fake):
    """One byte at a time keeps an idle timer happy for ever; the deadline is for the whole body."""
    proxy = slow_proxy
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        sock.sendall(request_head(length=len(GOOD)))
        answer: list[tuple[int, dict[str, str], bytes]] = []

        def reader() -> None:
            answer.append(read_response(sock))

        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        t = time.monotonic()
        with pytest.raises(OSError):  # the server answers and closes on us mid-trickle
            for byte in GOOD:
                sock.sendall(bytes([byte]))
                time.sleep(0.1)
                if answer:
                    raise OSError("answered")
        thread.join(5)
    assert answer and answer[0][0] == 408
    assert time.monotonic() - t < 4
    assert fake_state(local_fake)["received"] == []
    assert_still_serves(proxy)


def test_many_stalled_clients_do_not_block_a_good_one(slow_proxy):
    """Headers that never end (uvicorn has no header timeout: these connections
    stay open until the client leaves) and bodies that never end."""
    proxy = slow_proxy
    socks = []
    try:
        for i in range(40):
            sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
            if i % 2:
                sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            else:
                sock.sendall(request_head(length=1000) + b'{"mod')
            socks.append(sock)
        t = time.monotonic()
        for _ in range(5):
            assert_still_serves(proxy)
        assert time.monotonic() - t < 5
    finally:
        for sock in socks:
            sock.close()
    assert_still_serves(proxy)


def test_client_leaving_mid_body_is_not_an_internal_error(proxy, caplog):
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=5) as sock:
        sock.sendall(request_head(length=5000) + b'{"model": "local"')
        time.sleep(0.2)
    time.sleep(0.3)
    assert not [r for r in caplog.records if "internal error" in r.getMessage()]
    assert_still_serves(proxy)


# ------------------------------------------------------------- header tricks


def test_two_authorization_headers_are_refused(proxy, keyed, local_fake):
    for server in (proxy, keyed):  # refused with or without keys configured
        head = request_head(
            CHAT,
            "Authorization: Bearer client-dev-key",
            "Authorization: Bearer client-local-key",
            length=len(GOOD),
        )
        status, _, body = raw_http(server.port, head + GOOD)
        assert status == 400 and shape_of(body)["code"] == "invalid_authorization"
    assert fake_state(local_fake)["received"] == []
    assert_still_serves(keyed, bearer("client-dev-key"))


def test_crlf_in_a_header_value_cannot_smuggle_a_header_or_request(keyed, local_fake, cloud_fake):
    # What a naive client library would send for a value "x\r\nAuthorization: ...":
    # it becomes a second header line, and two Authorization headers are refused.
    injected = request_head(
        CHAT,
        "Authorization: Bearer client-local-key",
        "X-Note: x\r\nAuthorization: Bearer admin-ops-key",
        length=len(GOOD),
    )
    status, _, body = raw_http(keyed.port, injected + GOOD)
    assert status == 400 and shape_of(body)["code"] == "invalid_authorization"
    # A bare CR or LF, a NUL, obs-fold, a smuggling pair of length headers:
    # refused by the HTTP parser (uvicorn's own text/plain 400) before the app.
    for trick in (
        "X-Note: a\rb",
        "X-Note: a\x00b",
        "X-Note: a\r\n folded",
        "Transfer-Encoding: chunked\r\nContent-Length: 5",
        "Bad Header: x",
    ):
        head = request_head(CHAT, "Authorization: Bearer client-dev-key", trick, length=len(GOOD))
        status, headers, body = raw_http(keyed.port, head + GOOD)
        assert 400 <= status < 500, trick
        if headers.get("content-type", "").startswith("application/json"):
            shape_of(body)
    # Two requests in one write with a CRLF-smuggled second one: the second is
    # parsed as its own request and must authenticate on its own.
    smuggled = (
        request_head("/v1/models", "Authorization: Bearer client-dev-key", length=0, method="GET")
        + request_head(CHAT, length=len(GOOD))
        + GOOD
    )
    with socket.create_connection(("127.0.0.1", keyed.port), timeout=5) as sock:
        sock.sendall(smuggled)
        answers = sock.makefile("rb")
        first, second = read_from(answers), read_from(answers)
    assert first[0] == 200 and second[0] == 401
    assert received(local_fake, cloud_fake) == 0
    assert_still_serves(keyed, bearer("client-dev-key"))


def test_odd_route_header_values_are_4xx(proxy, local_fake, cloud_fake):
    for value in ("mars", "\xff\xfe", "local\tcloud", "x" * 8000):
        head = request_head(CHAT, f"x-offload-route: {value}", length=len(GOOD))
        status, _, body = raw_http(proxy.port, head + GOOD)
        assert 400 <= status < 500, value
        if body.startswith(b"{"):
            shape_of(body)
    assert received(local_fake, cloud_fake) == 0
    assert_still_serves(proxy)


# ----------------------------------------------------------------------- auth


def test_keystore_holds_no_plaintext_key_and_compares_every_key():
    keys = {"a": "client-key-aaaaaaaa", "b": "client-key-bbbbbbbb", "root": "admin-key-cccccccc"}
    store = KeyStore(
        AuthConfig(
            keys=[{"name": "a", "key": keys["a"]}, {"name": "b", "key": keys["b"]}],  # type: ignore[list-item]
            admin_keys=[{"name": "root", "key": keys["root"]}],  # type: ignore[list-item]
        )
    )
    seen: list[Any] = []

    def walk(value: Any) -> None:
        seen.append(value)
        if isinstance(value, dict):
            for k, v in value.items():
                walk(k)
                walk(v)
        elif isinstance(value, list | tuple | frozenset | set):
            for v in value:
                walk(v)
        elif hasattr(value, "__slots__") or hasattr(value, "__dict__"):
            for name in getattr(value, "__slots__", ()) or vars(value):
                walk(getattr(value, name, None))

    walk(vars(store))
    for key in keys.values():
        assert all(key not in (v if isinstance(v, str) else repr(v)) for v in seen)
        assert all(key.encode() not in v for v in seen if isinstance(v, bytes))

    calls = []
    real = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        calls.append(1)
        return real(a, b)

    hmac.compare_digest, saved = counting, hmac.compare_digest  # type: ignore[assignment]
    try:
        headers = Headers({"authorization": f"Bearer {keys['a']}"})
        assert store.caller(headers).name == "a"  # type: ignore[union-attr]
        assert len(calls) == 3  # no early exit on the first match
    finally:
        hmac.compare_digest = saved  # type: ignore[assignment]


def test_key_restricted_to_routes(keyed, local_fake, cloud_fake):
    local_only = bearer("client-local-key")
    ok = keyed.post(CHAT, json={"model": "local", "messages": USER}, headers=local_only)
    assert ok.status_code == 200
    before = received(cloud_fake)
    refused = keyed.post(CHAT, json={"model": "cloud", "messages": USER}, headers=local_only)
    assert assert_openai_error(refused, 403)["code"] == "route_not_allowed"
    refused = keyed.post(
        CHAT, json={"model": "auto", "messages": USER}, headers={**local_only, "x-offload-route": "cloud"}
    )
    assert_openai_error(refused, 403)
    emb = keyed.post("/v1/embeddings", json={"input": "x"}, headers=local_only)  # embeddings live on cloud
    assert_openai_error(emb, 403)
    assert received(cloud_fake) == before
    # An unrestricted key reaches the cloud.
    assert keyed.post(
        CHAT, json={"model": "cloud", "messages": USER}, headers=bearer("client-dev-key")
    ).is_success


def test_admin_state_needs_an_admin_key_and_redacts_secrets(keyed):
    assert_openai_error(keyed.get("/offload/state"), 401)
    assert_openai_error(keyed.get("/offload/state", headers=bearer("wrong")), 401)
    denied = assert_openai_error(keyed.get("/offload/state", headers=bearer("client-dev-key")), 403)
    assert denied["code"] == "admin_required"
    response = keyed.get("/offload/state", headers=bearer("admin-ops-key"))
    assert response.status_code == 200
    state = response.json()
    assert set(state["backends"]) == {"local", "cloud"}
    assert state["backends"]["local"]["up"] in (True, False)
    assert state["config"]["backends"]["cloud"]["api_key"] == "<redacted>"
    assert state["config"]["auth"]["keys"][0]["key"] == "<redacted>"
    assert state["config"]["auth"]["keys"][2]["requests_per_minute"] == 3  # numbers are not secrets
    for secret in (CLOUD_KEY, "client-dev-key", "client-local-key", "admin-ops-key", "client-slow-key"):
        assert secret not in response.text
    # The admin key works on the ordinary endpoints too.
    assert_still_serves(keyed, bearer("admin-ops-key"))


def test_redaction_covers_urls_and_future_secret_fields():
    from router.redact import redact_secrets as _redact

    tree = {
        "database": {"url": "postgresql+psycopg://offload:hunter2@db:5432/offload"},
        "backends": {"x": {"api_key": "sk-1", "api_key_env": "OPENAI_API_KEY", "extra_body": {"token": "t"}}},
        "webhook": {"client_secret": "s", "password": "p", "tokens_per_minute": 5},
    }
    out = json.dumps(_redact(tree))
    for secret in ("hunter2", "sk-1", '"t"', '"s"', '"p"'):
        assert secret not in out
    assert "OPENAI_API_KEY" in out and "offload:<redacted>@db" in out and '"tokens_per_minute": 5' in out


def test_open_proxy_state_endpoint_is_local_only_by_design(proxy):
    # With no key configured the proxy binds to loopback (cli) and everyone is admin.
    assert proxy.get("/offload/state").status_code == 200


# ---------------------------------------------------------------- rate limits


def test_requests_per_minute_gives_429_with_retry_after(keyed, local_fake):
    slow = bearer("client-slow-key")
    for _ in range(3):
        assert keyed.post(CHAT, content=GOOD, headers=slow).status_code == 200
    before = received(local_fake)
    refused = keyed.post(CHAT, content=GOOD, headers=slow)
    error = assert_openai_error(refused, 429)
    assert error["type"] == "rate_limit_error" and error["code"] == "rate_limit_exceeded"
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert "client-slow-key" not in refused.text
    assert received(local_fake) == before  # refused before anything was forwarded
    assert_still_serves(keyed, bearer("client-dev-key"))  # other keys unaffected


def test_tokens_per_minute_refuses_once_the_budget_is_used(keyed, local_fake):
    thrifty = bearer("client-thrifty-key")
    # A stream is charged when it ends (the fake's usage: well over 20 tokens).
    body = {"model": "local", "messages": USER, "stream": True}
    with httpx.stream("POST", keyed.base_url + "/chat/completions", json=body, headers=thrifty) as first:
        assert first.status_code == 200
        assert first.read().endswith(b"data: [DONE]\n\n")
    assert wait_until(lambda: keyed.state.limits._windows["thrifty"].token_sum >= 20)
    refused = keyed.post(CHAT, content=GOOD, headers=thrifty)
    assert assert_openai_error(refused, 429)["param"] == "tokens"
    assert int(refused.headers["retry-after"]) >= 1
    assert len(fake_state(local_fake)["received"]) == 1
    assert_still_serves(keyed, bearer("client-dev-key"))


def test_rate_window_slides():
    from router.config import ClientKey

    now = [1000.0]
    limits = RateLimits(
        [ClientKey(name="k", key="x", requests_per_minute=2, tokens_per_minute=100)], clock=lambda: now[0]
    )
    limits.admit("k")
    now[0] += 30
    limits.admit("k")
    with pytest.raises(Exception) as caught:
        limits.admit("k")
    assert caught.value.status == 429 and caught.value.headers["Retry-After"] == "30"  # type: ignore[attr-defined]
    now[0] += 30.5  # the first request left the window
    limits.admit("k")
    limits.add_tokens("k", 60)
    now[0] += 10
    limits.add_tokens("k", 50)  # 110 of 100 used
    now[0] += 40  # the requests left; the tokens did not
    with pytest.raises(Exception) as caught:
        limits.admit("k")
    # The 60 tokens (charged at +60.5 s) leave the window at +120.5 s: 10 s from now.
    assert caught.value.headers["Retry-After"] == "10"  # type: ignore[attr-defined]
    now[0] += 10
    limits.admit("k")
    limits.admit(None)  # an open proxy is never limited
    limits.admit("unknown-name")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=40,
)


@given(body=st.dictionaries(st.text(max_size=2), _JSON, max_size=3), limit=st.integers(1, 12))
@settings(max_examples=300, deadline=None)
def test_depth_check_agrees_with_the_explicit_walk(body: dict[str, Any], limit: int) -> None:
    """The recursive depth check (fast, bounded by the limit) answers as the explicit-stack walk."""
    from router.edge.intake import _depth_exceeds, _depth_exceeds_iterative

    assert _depth_exceeds(body, limit) == _depth_exceeds_iterative(body, limit)


def test_depth_check_survives_a_nesting_far_beyond_any_limit() -> None:
    from router.edge.intake import _RECURSION_SAFE, _depth_exceeds

    hostile: Any = 1
    for _ in range(100_000):
        hostile = [hostile]
    for limit in (1, 64, _RECURSION_SAFE, _RECURSION_SAFE + 1):
        assert _depth_exceeds({"x": hostile}, limit)
