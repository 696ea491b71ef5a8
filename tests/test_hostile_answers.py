"""Answers that are not what they claim: nonsense usage is not stored as truth, and a
success status with a body that is no answer is never relayed as a success.

The local box here is a real HTTP server (aiohttp, on loopback) that answers each API
with whatever a test scripts: the shared fake upstream speaks the APIs correctly, and
these are exactly the ways a broken server or a proxy in between does not."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import orjson
import pytest
from aiohttp import web

from router.fake.upstream import RunningFake
from tests.harness import USER, ProxyServer, make_config, wait_until

JSON = "application/json"


async def _empty(_request: web.Request) -> web.Response:
    return web.Response(text="")


class ScriptedBox:
    """A vLLM-shaped server whose answers the test sets: ``usage`` goes into every answer
    as given, ``body`` (with ``content_type``) replaces the whole answer."""

    def __init__(self) -> None:
        self.usage: Any = None
        self.body: bytes | None = None
        self.huge_event_bytes = 0  # stream one event of about this size first (never ended)
        self.content_type = JSON
        self.requests = 0
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._started.wait(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_get("/health", _empty)
        app.router.add_get("/metrics", _empty)
        app.router.add_post("/v1/{path:.*}", self._answer)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._started.set()
        self._loop.run_forever()

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        body = await request.json()
        if self.body is not None:
            return web.Response(body=self.body, content_type=self.content_type.split(";")[0])
        path = request.match_info["path"]
        if body.get("stream"):
            return await self._stream(request, path)
        if path == "messages":
            doc: dict[str, Any] = {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [{"type": "text", "text": "hi"}],
                "stop_reason": "end_turn",
                "usage": self.usage,
            }
        elif path == "responses":
            doc = {
                "id": "resp_1",
                "object": "response",
                "status": "completed",
                "output": [
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "hi"}],
                    }
                ],
                "usage": self.usage,
            }
        else:
            doc = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
                ],
                "usage": self.usage,
            }
        return web.Response(body=orjson.dumps(doc), content_type=JSON)

    async def _stream(self, request: web.Request, path: str) -> web.StreamResponse:
        assert path == "chat/completions"
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        if self.huge_event_bytes:
            await response.write(b'data: {"id": "c", "choices": [{"index": 0, "delta": {"content": "')
            piece = b"x" * 65536
            for _ in range(self.huge_event_bytes // len(piece)):
                try:
                    await response.write(piece)
                except ConnectionResetError:
                    return response  # the proxy gave up on it, as it should
            return response
        chunk = {
            "id": "c",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": "hi"}}],
        }
        await response.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
        last = {"id": "c", "object": "chat.completion.chunk", "choices": [], "usage": self.usage}
        await response.write(b"data: " + orjson.dumps(last) + b"\n\ndata: [DONE]\n\n")
        return response

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@pytest.fixture
def box() -> Iterator[ScriptedBox]:
    server = ScriptedBox()
    yield server
    server.stop()


def _proxy(box: ScriptedBox, cloud: RunningFake, *, fallbacks: bool = True) -> ProxyServer:
    routing = {"default": "local", "fallbacks": {"local": ["cloud"]} if fallbacks else {}}
    return ProxyServer(make_config(box.url, cloud.url, routing=routing))


NONSENSE = [-5, "12", 1.5, True, 2**63, 10**9]


@pytest.mark.parametrize("value", NONSENSE, ids=["negative", "string", "float", "bool", "2^63", "1e9"])
def test_nonsense_usage_is_estimated_and_marked_not_stored_as_truth(box, cloud_fake, value) -> None:
    proxy = _proxy(box, cloud_fake)
    try:
        client = openai.OpenAI(base_url=proxy.base_url, api_key="none", max_retries=0)
        box.usage = {"prompt_tokens": value, "completion_tokens": 7, "total_tokens": 9}
        client.chat.completions.create(model="local", messages=USER)  # type: ignore[arg-type]
        box.usage = {"input_tokens": 11, "output_tokens": value}
        client.responses.create(model="local", input="write a python function that reverses a list")
        box.usage = {"input_tokens": 11, "output_tokens": 3, "cache_read_input_tokens": value}
        messages = anthropic.Anthropic(base_url=proxy.url, api_key="none", max_retries=0)
        messages.messages.create(model="local", max_tokens=32, messages=USER)  # type: ignore[arg-type]
        box.usage = {"prompt_tokens": 5, "completion_tokens": value}
        stream = client.chat.completions.create(model="local", messages=USER, stream=True)  # type: ignore[arg-type]
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "hi"
        assert wait_until(lambda: len(proxy.state.recorder.rows) == 4)
        rows = proxy.state.recorder.rows
        for row in rows:
            assert row.tokens_estimated, (row.api, row.stream, row.prompt_tokens, row.completion_tokens)
            assert 0 < row.prompt_tokens < 10_000  # the proxy's own estimate of a short prompt
            assert row.completion_tokens < 10_000
            assert row.status == 200
    finally:
        proxy.stop()


def test_sane_usage_is_stored_as_reported(box, cloud_fake) -> None:
    proxy = _proxy(box, cloud_fake)
    try:
        box.usage = {"input_tokens": 11, "output_tokens": 3, "cache_read_input_tokens": 40}
        anthropic.Anthropic(base_url=proxy.url, api_key="none", max_retries=0).messages.create(
            model="local",
            max_tokens=32,
            messages=USER,  # type: ignore[arg-type]
        )
        assert wait_until(lambda: len(proxy.state.recorder.rows) == 1)
        row = proxy.state.recorder.rows[0]
        assert (row.prompt_tokens, row.cached_tokens, row.completion_tokens) == (51, 40, 3)
        assert not row.tokens_estimated
    finally:
        proxy.stop()


def test_no_cached_count_is_stored_as_unknown_and_cache_writes_as_writes(box, cloud_fake) -> None:
    """vLLM without --enable-prompt-tokens-details says nothing of its cache: the row says it
    does not know (NULL), where a reported 0 is 0 hits; Anthropic's cache writes are kept."""
    proxy = _proxy(box, cloud_fake)
    try:
        client = openai.OpenAI(base_url=proxy.base_url, api_key="none", max_retries=0)
        box.usage = {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}
        client.chat.completions.create(model="local", messages=USER)  # type: ignore[arg-type]
        assert wait_until(lambda: len(proxy.state.recorder.rows) == 1)
        box.usage = {
            "prompt_tokens": 5,
            "completion_tokens": 1,
            "prompt_tokens_details": {"cached_tokens": 0},
        }
        client.chat.completions.create(model="local", messages=USER)  # type: ignore[arg-type]
        assert wait_until(lambda: len(proxy.state.recorder.rows) == 2)
        box.usage = {
            "input_tokens": 11, "output_tokens": 3, "cache_read_input_tokens": 40, "cache_creation_input_tokens": 8,
        }  # fmt: skip
        messages = anthropic.Anthropic(base_url=proxy.url, api_key="none", max_retries=0)
        messages.messages.create(model="local", max_tokens=32, messages=USER)  # type: ignore[arg-type]
        assert wait_until(lambda: len(proxy.state.recorder.rows) == 3)
        unreported, zero, written = proxy.state.recorder.rows
        assert (unreported.prompt_tokens, unreported.cached_tokens) == (5, None)
        assert (zero.prompt_tokens, zero.cached_tokens) == (5, 0)
        assert (written.prompt_tokens, written.cached_tokens, written.cache_write_tokens) == (59, 40, 8)
        assert not any(r.tokens_estimated for r in (unreported, zero, written))
    finally:
        proxy.stop()


BROKEN = {
    "truncated_json": (b'{"id": "chatcmpl-1", "choices": [{"index": 0, "mess', JSON),
    "html": (b"<html><body><h1>502 Bad Gateway</h1>nginx</body></html>", "text/html"),
    "not_an_object": (b'["hi"]', JSON),
}


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_a_broken_success_answer_falls_back_before_anything_is_sent(box, cloud_fake, broken) -> None:
    proxy = _proxy(box, cloud_fake)
    try:
        box.body, box.content_type = BROKEN[broken]
        client = openai.OpenAI(base_url=proxy.base_url, api_key="none", max_retries=0)
        answer = client.chat.completions.with_raw_response.create(model="local", messages=USER)  # type: ignore[arg-type]
        assert answer.headers["x-offload-route"] == "cloud" and answer.headers["x-offload-fallback"] == "1"
        assert answer.parse().choices[0].message.content
        assert wait_until(lambda: len(proxy.state.recorder.rows) == 1)
        row = proxy.state.recorder.rows[0]
        assert (row.backend, row.fallback, row.fallback_reason) == ("cloud", True, "malformed_answer")
    finally:
        proxy.stop()


def test_with_nowhere_to_fall_back_a_broken_answer_is_a_502_in_the_clients_shape(box, cloud_fake) -> None:
    proxy = _proxy(box, cloud_fake, fallbacks=False)
    try:
        box.body, box.content_type = BROKEN["html"]
        with pytest.raises(openai.APIStatusError) as chat_error:
            openai.OpenAI(base_url=proxy.base_url, api_key="none", max_retries=0).chat.completions.create(
                model="local",
                messages=USER,  # type: ignore[arg-type]
            )
        assert chat_error.value.status_code == 502
        assert chat_error.value.body["code"] == "upstream_unavailable"  # type: ignore[index]
        with pytest.raises(anthropic.APIStatusError) as messages_error:
            anthropic.Anthropic(base_url=proxy.url, api_key="none", max_retries=0).messages.create(
                model="local",
                max_tokens=32,
                messages=USER,  # type: ignore[arg-type]
            )
        assert messages_error.value.status_code == 502
        assert messages_error.value.body["type"] == "error"  # type: ignore[index]
        assert wait_until(lambda: len(proxy.state.recorder.rows) == 2)
        assert [r.status for r in proxy.state.recorder.rows] == [502, 502]
        assert "nginx" not in str(chat_error.value.body)  # the page is not relayed as an answer
    finally:
        proxy.stop()


def test_a_runaway_stream_event_ends_the_stream_honestly_and_the_proxy_keeps_serving(box, cloud_fake) -> None:
    routing = {"default": "local", "fallbacks": {"local": ["cloud"]}}
    backends = make_config(box.url, cloud_fake.url).model_dump(mode="json", exclude_none=True)["backends"]
    backends["local"]["max_event_bytes"] = 1024 * 1024
    proxy = ProxyServer(make_config(box.url, cloud_fake.url, routing=routing, backends=backends))
    try:
        box.huge_event_bytes = 64 * 1024 * 1024
        client = openai.OpenAI(base_url=proxy.base_url, api_key="none", max_retries=0)
        stream = client.chat.completions.create(model="local", messages=USER, stream=True)  # type: ignore[arg-type]
        with pytest.raises(openai.APIError) as error:
            for _ in stream:
                pass
        assert "larger than 1048576 bytes" in str(error.value)
        assert wait_until(lambda: len(proxy.state.recorder.rows) == 1)
        row = proxy.state.recorder.rows[0]
        assert row.error_type == "upstream_event_too_large"
        assert proxy.get("/healthz").status_code == 200
        box.huge_event_bytes = 0
        box.usage = {"prompt_tokens": 5, "completion_tokens": 1}
        again = client.chat.completions.create(model="local", messages=USER, stream=True)  # type: ignore[arg-type]
        assert "".join(c.choices[0].delta.content or "" for c in again if c.choices) == "hi"
    finally:
        proxy.stop()
