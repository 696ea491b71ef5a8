"""A faithful fake upstream: a real HTTP server speaking vLLM's or OpenAI's dialect.

It follows ``shared/docs/openai-vllm-protocol.md``: the same JSON shapes, the
same SSE framing (``data: <json>\\n\\n`` … ``data: [DONE]\\n\\n``), the usage
chunk only when ``stream_options.include_usage`` is set, tool-call deltas with
``id``/``name`` only in the first fragment, ``reasoning`` deltas from vLLM, and
in ``cloud`` mode OpenAI's strictness: unknown fields get a 400.

Run it as a process (``python -m tests.fakeupstream --port P --mode vllm``) so
tests can kill it, or in a thread with :func:`start_in_thread`. Tests steer it
and read what it received through ``/_fake/*``.
"""

from __future__ import annotations

import argparse
import asyncio
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

# What OpenAI's chat endpoint accepts (a subset is enough for strictness).
OPENAI_CHAT_FIELDS = frozenset(
    {
        "messages", "model", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs",
        "max_completion_tokens", "max_tokens", "n", "presence_penalty", "response_format", "seed",
        "stop", "stream", "stream_options", "temperature", "top_p", "tools", "tool_choice",
        "parallel_tool_calls", "user", "reasoning_effort", "metadata", "store", "modalities",
        "audio", "prediction", "service_tier", "web_search_options", "verbosity",
        "prompt_cache_key", "safety_identifier",
    }
)  # fmt: skip
OPENAI_MESSAGE_FIELDS = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "refusal", "audio", "function_call"}
)
OPENAI_COMPLETION_FIELDS = frozenset(
    {"model", "prompt", "max_tokens", "stream", "stream_options", "temperature", "top_p", "n", "stop",
     "echo", "logprobs", "user", "seed", "suffix", "best_of", "presence_penalty", "frequency_penalty",
     "logit_bias"}
)  # fmt: skip


@dataclass
class Behaviour:
    """What the fake does next; set through POST /_fake/config."""

    reply_tokens: list[str] = field(
        default_factory=lambda: ["Hello", " there", ",", " I", " am", " a", " fake", " model", "."]
    )
    first_byte_delay: float = 0.0  # seconds before the first SSE event / the whole response
    chunk_delay: float = 0.0  # seconds between SSE events
    fail_status: int = 0  # answer this status instead (vLLM/OpenAI error body)
    fail_count: int = -1  # how many requests fail (-1: all while fail_status is set)
    die_after_chunks: int = -1  # close the connection mid-stream after N events
    waiting: float = 0.0  # vllm:num_requests_waiting in /metrics
    health_status: int = 200


class Fake:
    def __init__(self, mode: str, api_key: str | None = None, model: str = "fake-model") -> None:
        assert mode in ("vllm", "cloud")
        self.mode = mode
        self.api_key = api_key
        self.model = model
        self.behaviour = Behaviour()
        self.received: list[dict[str, Any]] = []
        self.active = 0
        self.completed = 0
        self.cancelled = 0
        self.served_model = model

    # -------------------------------------------------------------- app

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_post("/v1/completions", self.completions)
        app.router.add_post("/v1/embeddings", self.embeddings)
        app.router.add_get("/v1/models", self.models)
        app.router.add_get("/health", self.health)
        app.router.add_get("/metrics", self.metrics)
        app.router.add_get("/_fake/state", self.state)
        app.router.add_post("/_fake/config", self.configure)
        app.router.add_post("/_fake/reset", self.reset)
        return app

    async def state(self, request: web.Request) -> web.Response:
        return _json(
            {
                "active": self.active,
                "completed": self.completed,
                "cancelled": self.cancelled,
                "received": self.received,
            }
        )

    async def configure(self, request: web.Request) -> web.Response:
        changes = await request.json()
        for key, value in changes.items():
            if not hasattr(self.behaviour, key):
                return _json({"error": f"unknown behaviour {key}"}, 400)
            setattr(self.behaviour, key, value)
        return _json({"ok": True})

    async def reset(self, request: web.Request) -> web.Response:
        self.behaviour = Behaviour()
        self.received.clear()
        self.completed = self.cancelled = 0
        return _json({"ok": True})

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(status=self.behaviour.health_status)

    async def metrics(self, request: web.Request) -> web.Response:
        labels = f'{{engine="0",model_name="{self.model}"}}'
        text = (
            "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
            "# TYPE vllm:num_requests_running gauge\n"
            f"vllm:num_requests_running{labels} {float(self.active)}\n"
            "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"
            "# TYPE vllm:num_requests_waiting gauge\n"
            f"vllm:num_requests_waiting{labels} {float(self.behaviour.waiting)}\n"
            "# TYPE vllm:kv_cache_usage_perc gauge\n"
            f"vllm:kv_cache_usage_perc{labels} 0.25\n"
        )
        return web.Response(text=text, content_type="text/plain")

    async def models(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request)) is not None:
            return denied
        card = {"id": self.model, "object": "model", "created": int(time.time()), "owned_by": "vllm"}
        if self.mode == "vllm":
            card.update({"root": self.model, "parent": None, "max_model_len": 262144, "permission": []})
        else:
            card["owned_by"] = "openai"
        return _json({"object": "list", "data": [card]})

    # ------------------------------------------------------- generation

    async def chat(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, "chat")

    async def completions(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, "completions")

    async def embeddings(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request)) is not None:
            return denied
        body = orjson.loads(await request.read())
        self._record(request, body)
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [{"index": i, "object": "embedding", "embedding": [0.1, 0.2, 0.3]} for i in range(len(inputs))]
        tokens = sum(len(str(x)) // 4 + 1 for x in inputs)
        return _json(
            {
                "id": f"embd-{uuid.uuid4().hex}",
                "object": "list",
                "created": int(time.time()),
                "model": body.get("model"),
                "data": data,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    async def _generate(self, request: web.Request, kind: str) -> web.StreamResponse:
        if (denied := self._auth(request)) is not None:
            return denied
        raw = await request.read()
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return self._error(400, "Invalid JSON", "invalid_json")
        self._record(request, body)
        b = self.behaviour
        if self.mode == "cloud" and (rejected := self._strict(body, kind)) is not None:
            return rejected
        if b.fail_status and b.fail_count != 0:
            if b.fail_count > 0:
                b.fail_count -= 1
            return self._error(b.fail_status, "injected failure", None)
        self.active += 1
        try:
            if body.get("stream"):
                response = await self._stream(request, body, kind)
            else:
                if b.first_byte_delay:
                    await asyncio.sleep(b.first_byte_delay)
                response = _json(self._whole(body, kind))
            self.completed += 1
            return response
        except (asyncio.CancelledError, ConnectionResetError):
            self.cancelled += 1
            raise
        finally:
            self.active -= 1

    def _record(self, request: web.Request, body: Any) -> None:
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.received.append({"path": request.path, "headers": headers, "body": body})
        del self.received[:-200]  # keep memory flat under benchmarks

    def _auth(self, request: web.Request) -> web.Response | None:
        if self.api_key is None:
            return None
        if request.headers.get("Authorization") == f"Bearer {self.api_key}":
            return None
        if self.mode == "vllm":
            return _json({"error": "Unauthorized"}, 401)  # vLLM's (non-object) shape
        return self._error(401, "Incorrect API key provided.", "invalid_api_key")

    def _strict(self, body: dict[str, Any], kind: str) -> web.Response | None:
        allowed = OPENAI_CHAT_FIELDS if kind == "chat" else OPENAI_COMPLETION_FIELDS
        for key in body:
            if key not in allowed:
                return self._error(400, f"Unrecognized request argument supplied: {key}", None)
        if kind == "chat":
            if "max_tokens" in body and self.model.startswith(("gpt-5", "o")):
                return self._error(
                    400,
                    "Unsupported parameter: 'max_tokens' is not supported with this model. "
                    "Use 'max_completion_tokens' instead.",
                    "unsupported_parameter",
                    param="max_tokens",
                )
            for i, message in enumerate(body.get("messages") or []):
                for key in message:
                    if key not in OPENAI_MESSAGE_FIELDS:
                        return self._error(
                            400,
                            f"Additional properties are not allowed ('{key}' was unexpected) - 'messages.{i}'",
                            None,
                        )
        return None

    def _error(self, status: int, message: str, code: str | None, param: str | None = None) -> web.Response:
        if self.mode == "vllm":
            kind = {400: "BadRequestError", 404: "NotFoundError", 503: "ServiceUnavailableError"}.get(
                status, "InternalServerError"
            )
            return _json(
                {"error": {"message": message, "type": kind, "param": param, "code": status}}, status
            )
        kind = "invalid_request_error" if status < 500 else "server_error"
        if status == 429:
            kind, code = "requests", "rate_limit_exceeded"
        return _json({"error": {"message": message, "type": kind, "param": param, "code": code}}, status)

    # ------------------------------------------------------------ shapes

    def _usage(self, body: dict[str, Any], completion: int, reasoning: int) -> dict[str, Any]:
        prompt = max(1, len(orjson.dumps(body.get("messages") or body.get("prompt") or "")) // 4)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "total_tokens": prompt + completion,
            "completion_tokens": completion,
        }
        if self.mode == "vllm":
            usage["prompt_tokens_details"] = None
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning} if reasoning else None
        else:
            usage["prompt_tokens_details"] = {"cached_tokens": 0, "audio_tokens": 0}
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning, "audio_tokens": 0}
        return usage

    def _thinking(self, body: dict[str, Any]) -> bool:
        kwargs = body.get("chat_template_kwargs")
        return self.mode == "vllm" and isinstance(kwargs, dict) and bool(kwargs.get("enable_thinking"))

    def _whole(self, body: dict[str, Any], kind: str) -> dict[str, Any]:
        tokens = self.behaviour.reply_tokens
        created = int(time.time())
        if kind == "completions":
            return {
                "id": f"cmpl-{uuid.uuid4().hex}",
                "object": "text_completion",
                "created": created,
                "model": self.model,
                "choices": [{"index": 0, "text": "".join(tokens), "logprobs": None, "finish_reason": "stop"}],
                "usage": self._usage(body, len(tokens), 0),
            }
        reasoning = ["Let", " me", " think"] if self._thinking(body) else []
        message: dict[str, Any] = {"role": "assistant", "content": "".join(tokens), "refusal": None}
        finish = "stop"
        if body.get("tools"):
            name = body["tools"][0].get("function", {}).get("name", "tool")
            message["content"] = None
            message["tool_calls"] = [
                {
                    "id": self._call_id(),
                    "type": "function",
                    "function": {"name": name, "arguments": '{"cmd": "ls -la"}'},
                }
            ]
            finish = "tool_calls"
        if self.mode == "vllm":
            message.update({"annotations": None, "audio": None, "function_call": None})
            message["reasoning"] = "".join(reasoning) if reasoning else None
        out: dict[str, Any] = {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": created,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": self._usage(body, len(tokens) + len(reasoning), len(reasoning)),
        }
        if self.mode == "vllm":
            out["choices"][0].update({"stop_reason": None, "token_ids": None})
            out.update(
                {"service_tier": None, "system_fingerprint": "vllm-0.33.0-fake", "prompt_logprobs": None}
            )
        return out

    def _call_id(self) -> str:
        return f"chatcmpl-tool-{uuid.uuid4().hex}" if self.mode == "vllm" else f"call_{uuid.uuid4().hex[:24]}"

    async def _stream(self, request: web.Request, body: dict[str, Any], kind: str) -> web.StreamResponse:
        b = self.behaviour
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)  # vLLM sends status and headers at once
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        cid = f"{'cmpl' if kind == 'completions' else 'chatcmpl'}-{uuid.uuid4().hex}"
        base = {
            "id": cid,
            "object": "text_completion" if kind == "completions" else "chat.completion.chunk",
            "created": int(time.time()),
            "model": self.model,
        }
        null_usage = {"usage": None} if (self.mode == "cloud" and include_usage) else {}
        events = self._events(body, kind)
        if b.first_byte_delay:
            await asyncio.sleep(b.first_byte_delay)
        for sent, choice in enumerate(events):
            if 0 <= b.die_after_chunks <= sent:
                assert request.transport is not None
                request.transport.abort()  # the upstream dies mid-stream
                raise ConnectionResetError("fake upstream died")
            await response.write(
                b"data: " + orjson.dumps({**base, "choices": [choice], **null_usage}) + b"\n\n"
            )
            if b.chunk_delay:
                await asyncio.sleep(b.chunk_delay)
        if include_usage:
            reasoning = 3 if self._thinking(body) else 0
            completion = len(b.reply_tokens) + reasoning
            usage_chunk = {**base, "choices": [], "usage": self._usage(body, completion, reasoning)}
            if self.mode == "vllm":
                usage_chunk["usage"] = {k: v for k, v in usage_chunk["usage"].items() if v is not None}
                usage_chunk["system_fingerprint"] = "vllm-0.33.0-fake"
            await response.write(b"data: " + orjson.dumps(usage_chunk) + b"\n\n")
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    def _events(self, body: dict[str, Any], kind: str) -> list[dict[str, Any]]:
        tokens = self.behaviour.reply_tokens
        if kind == "completions":
            out = [{"index": 0, "text": t, "logprobs": None, "finish_reason": None} for t in tokens]
            out[-1]["finish_reason"] = "stop"
            return out
        role_delta: dict[str, Any] = {"role": "assistant", "content": ""}
        if self.mode == "cloud":
            role_delta["refusal"] = None
        out = [{"index": 0, "delta": role_delta, "logprobs": None, "finish_reason": None}]
        if self._thinking(body):
            out += [{"index": 0, "delta": {"reasoning": t}} for t in ("Let", " me", " think")]
        finish = "stop"
        if body.get("tools"):
            name = body["tools"][0].get("function", {}).get("name", "tool")
            first = {
                "id": self._call_id(),
                "type": "function",
                "index": 0,
                "function": {"name": name, "arguments": ""},
            }
            out.append({"index": 0, "delta": {"tool_calls": [first]}})
            for piece in ('{"cmd": ', '"ls', ' -la"}'):
                out.append(
                    {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}}
                )
            finish = "tool_calls"
        else:
            out += [{"index": 0, "delta": {"content": t}} for t in tokens]
        out.append({"index": 0, "delta": {}, "finish_reason": finish, "stop_reason": None})
        return out


def _json(payload: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(payload), status=status, content_type="application/json")


# ------------------------------------------------------------- running


class RunningFake:
    """A fake upstream serving in a background thread with its own event loop."""

    def __init__(self, fake: Fake, port: int = 0) -> None:
        self.fake = fake
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self.port = port
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._start())
        self._ready.set()
        self._loop.run_forever()

    async def _start(self) -> None:
        self._runner = web.AppRunner(self.fake.app(), handler_cancellation=True, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def stop(self) -> None:
        async def shutdown() -> None:
            assert self._runner is not None
            await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def start_in_thread(
    mode: str, api_key: str | None = None, model: str = "fake-model", port: int = 0
) -> RunningFake:
    return RunningFake(Fake(mode, api_key, model), port)


def main() -> None:
    parser = argparse.ArgumentParser(description="Fake vLLM / OpenAI upstream")
    parser.add_argument("--mode", choices=["vllm", "cloud"], default="vllm")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--api-key")
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--first-byte-delay", type=float, default=0.0)
    opts = parser.parse_args()
    fake = Fake(opts.mode, opts.api_key, opts.model)
    fake.behaviour.first_byte_delay = opts.first_byte_delay
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    web.run_app(
        fake.app(), host="127.0.0.1", port=opts.port, access_log=None, print=None, handler_cancellation=True
    )


if __name__ == "__main__":
    main()
