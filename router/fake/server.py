"""The fake upstream's HTTP server: one aiohttp app per mode (vllm, cloud, anthropic)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import os
import time
import uuid
from typing import Any

import orjson
from aiohttp import web

from router.fake.chat import ChatAnswer, CountTokensAnswer, EmbeddingsAnswer
from router.fake.messages import MessagesAnswer
from router.fake.protocol import (
    ANTHROPIC_COUNT_FIELDS,
    ANTHROPIC_ERROR_TYPES,
    ANTHROPIC_MESSAGES_FIELDS,
    MODES,
    OPENAI_CHAT_FIELDS,
    OPENAI_COMPLETION_FIELDS,
    OPENAI_MESSAGE_FIELDS,
    RESPONSES_VLLM_ONLY_FIELDS,
    VLLM_ERROR_TYPES,
    VLLM_REFUSED_BLOCKS,
    VLLM_RESPONSES_INPUT_ITEMS,
    Behaviour,
)
from router.fake.replies import cache_split, plan_reply, prompt_tokens, vllm_limits
from router.fake.responses import ResponsesAnswer
from router.fake.wire import Answer, body_blocks, echo_auth, json_response, member, names_family, padded, sse


class Rejected(Exception):
    """A request refused before generation; carries the finished error response."""

    def __init__(self, response: web.Response) -> None:
        super().__init__(response.status)
        self.response = response


class Fake:
    def __init__(self, mode: str, api_key: str | None = None, model: str = "fake-model") -> None:
        assert mode in MODES, mode
        self.mode = mode
        self.api_key = api_key
        self.model = model
        self.served_model = model
        self.behaviour = Behaviour()
        self.received: list[dict[str, Any]] = []
        self.active = 0
        self.completed = 0
        self.cancelled = 0
        self.minted: dict[str, None] = {}  # stored Responses ids, oldest first
        self._secret = os.urandom(32)  # signs the thinking blocks it hands out
        # vLLM mode: the server's --max-model-len (a longer prompt is vLLM's 400) and cache
        # blocks; the prefix-cache counters count prompt tokens looked up and found.
        self.max_model_len = 262144
        self.block_size = 16
        self.prefix_queries = 0
        self.prefix_hits = 0
        # vLLM answers 404 for a model it does not serve; tests that call the fake directly
        # name any model, so the fake checks only when asked to (the proxy always rewrites it).
        self.strict_model = False

    def new_id(self, prefix: str) -> str:
        """An id as this mode's server mints it: vLLM 0.32 uses 16 hex digits."""
        return prefix + uuid.uuid4().hex[: 16 if self.mode == "vllm" else 32]

    # -------------------------------------------------------------- app

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        routes = app.router
        if self.mode != "anthropic":
            routes.add_post("/v1/chat/completions", self.chat)
            routes.add_post("/v1/completions", self.completions)
            routes.add_post("/v1/embeddings", self.embeddings)
            routes.add_post("/v1/responses", self.responses)
        if self.mode != "cloud":
            routes.add_post("/v1/messages", self.messages)
            routes.add_post("/v1/messages/count_tokens", self.count_tokens)
        routes.add_get("/v1/models", self.models)
        routes.add_get("/health", self.health)
        routes.add_get("/metrics", self.metrics)
        routes.add_get("/_fake/state", self.state)
        routes.add_post("/_fake/config", self.configure)
        routes.add_post("/_fake/reset", self.reset)
        return app

    async def state(self, request: web.Request) -> web.Response:
        return json_response(
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
                return json_response({"error": f"unknown behaviour {key}"}, 400)
            setattr(self.behaviour, key, value)
        return json_response({"ok": True})

    async def reset(self, request: web.Request) -> web.Response:
        self.behaviour = Behaviour()
        self.received.clear()
        self.completed = self.cancelled = 0
        return json_response({"ok": True})

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
            "# TYPE vllm:prefix_cache_queries_total counter\n"
            f"vllm:prefix_cache_queries_total{labels} {float(self.prefix_queries)}\n"
            "# TYPE vllm:prefix_cache_hits_total counter\n"
            f"vllm:prefix_cache_hits_total{labels} {float(self.prefix_hits)}\n"
            "# TYPE vllm:cache_config_info gauge\n"
            f'vllm:cache_config_info{{block_size="{self.block_size}",cache_dtype="auto",'
            f'enable_prefix_caching="True",engine="0",num_gpu_blocks="8192"}} 1.0\n'
        )
        gone = tuple(self.behaviour.metrics_without)
        if gone:
            text = "".join(line for line in text.splitlines(keepends=True) if not names_family(line, gone))
        return web.Response(text=text, content_type="text/plain")

    async def models(self, request: web.Request) -> web.Response:
        try:
            self._check_auth(request, "models")
        except Rejected as rejected:
            return rejected.response
        created = int(time.time())
        card: dict[str, Any]
        if self.mode == "anthropic":
            card = {
                "type": "model",
                "id": self.model,
                "display_name": self.model,
                "created_at": "2025-09-29T00:00:00Z",
            }
            return json_response(
                {"data": [card], "has_more": False, "first_id": self.model, "last_id": self.model}
            )
        card = {"id": self.model, "object": "model", "created": created, "owned_by": "vllm"}
        if self.mode == "vllm":
            permission = {
                "id": self.new_id("modelperm-"),
                "object": "model_permission",
                "created": created,
                **dict.fromkeys(("allow_create_engine", "allow_search_indices", "allow_fine_tuning"), False),
                **dict.fromkeys(("allow_sampling", "allow_logprobs", "allow_view"), True),
                "organization": "*",
                "group": None,
                "is_blocking": False,
            }
            card.update(
                {
                    "root": self.model,
                    "parent": None,
                    "max_model_len": self.max_model_len,
                    "permission": [permission],
                }
            )
        else:
            card["owned_by"] = "openai"
        return json_response({"object": "list", "data": [card]})

    # ------------------------------------------------------- endpoints

    async def chat(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, "chat")

    async def completions(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, "completions")

    async def embeddings(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, "embeddings")

    async def responses(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, "responses")

    async def messages(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, "messages")

    async def count_tokens(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, "count_tokens")

    # ------------------------------------------------------- lifecycle

    async def _generate(self, request: web.Request, api: str) -> web.StreamResponse:
        """Admit (auth, parse, record, validate), then answer: the same steps for every API."""
        try:
            body = await self._admit(request, api)
        except Rejected as rejected:
            return rejected.response
        b = self.behaviour
        self.active += 1
        try:
            if b.header_delay:
                await asyncio.sleep(b.header_delay)
            if b.fail_status and b.fail_count != 0:
                if b.fail_count > 0:
                    b.fail_count -= 1
                failure = self._error(request, api, b.fail_status, "injected failure")
                failure.headers.update(b.fail_headers)
                return failure
            answer = self._answer(api, body)
            if api in ("chat", "completions", "responses", "messages"):
                self.prefix_queries += prompt_tokens(api, body)
                self.prefix_hits += cache_split(api, self.mode, body)[0]
            if body.get("stream") and answer.frames is not None:
                response = await self._stream(request, answer)
            else:
                if b.first_byte_delay:
                    await asyncio.sleep(b.first_byte_delay)
                response = web.Response(
                    body=padded(answer.whole(), b.body_bytes), content_type="application/json"
                )
            self.completed += 1
            return response
        except (asyncio.CancelledError, ConnectionResetError):
            self.cancelled += 1
            raise
        finally:
            self.active -= 1

    async def _admit(self, request: web.Request, api: str) -> dict[str, Any]:
        self._check_auth(request, api)
        raw = await request.read()
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise Rejected(self._error(request, api, 400, "Invalid JSON", code="invalid_json")) from None
        if not isinstance(body, dict):
            raise Rejected(self._error(request, api, 400, "The body must be a JSON object"))
        self._record(request, body)
        self._validate(request, api, body)
        return body

    def _record(self, request: web.Request, body: Any) -> None:
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.received.append(
            {"path": request.path, "query": request.query_string, "headers": headers, "body": body}
        )
        del self.received[:-200]  # keep memory flat under benchmarks

    def _check_auth(self, request: web.Request, api: str) -> None:
        """vLLM reads only a Bearer token; Anthropic also ``x-api-key``; OpenAI only Bearer."""
        if self.api_key is None:
            return
        if request.headers.get("Authorization") == f"Bearer {self.api_key}":
            return
        if self.mode == "anthropic":
            if request.headers.get("x-api-key") == self.api_key:
                return
            raise Rejected(self._error(request, api, 401, "invalid x-api-key"))
        if self.mode == "vllm":
            raise Rejected(json_response({"error": "Unauthorized"}, 401))  # vLLM's (non-object) shape
        raise Rejected(self._error(request, api, 401, "Incorrect API key provided.", code="invalid_api_key"))

    async def _stream(self, request: web.Request, answer: Answer) -> web.StreamResponse:
        """Send the events with the configured delays, deaths and in-stream errors."""
        b = self.behaviour
        assert answer.frames is not None
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)  # status and headers go out at once, as vLLM's do
        if b.first_byte_delay:
            await asyncio.sleep(b.first_byte_delay)
        for sent, frame in enumerate(answer.frames):
            if 0 <= b.die_after_chunks <= sent:
                assert request.transport is not None
                request.transport.abort()  # the upstream dies mid-stream
                raise ConnectionResetError("fake upstream died")
            if 0 <= b.stream_error_after_chunks <= sent:
                for error in answer.stream_error(sent):
                    await response.write(sse(*error))
                await response.write_eof()
                return response
            await response.write(sse(*frame))
            if b.chunk_delay:
                await asyncio.sleep(b.chunk_delay)
        for frame in answer.tail:
            await response.write(sse(*frame))
        await response.write_eof()
        return response

    # ------------------------------------------------------- validation

    def _validate(self, request: web.Request, api: str, body: dict[str, Any]) -> None:
        """Refuse what this mode's real server refuses, in its words."""
        if self.mode == "cloud" and api in ("chat", "completions"):
            self._strict_openai(request, api, body)
        elif api == "responses":
            self._check_responses(request, body)
        elif api in ("messages", "count_tokens"):
            if self.mode == "anthropic":
                self._check_anthropic(request, api, body)
            else:
                self._check_vllm_messages(request, api, body)
        if self.mode == "vllm" and api != "embeddings":
            refused = vllm_limits(api, body, self.model if self.strict_model else None, self.max_model_len)
            if refused is not None:
                raise Rejected(self._error(request, api, refused[0], refused[1], param=refused[2]))

    def _strict_openai(self, request: web.Request, api: str, body: dict[str, Any]) -> None:
        allowed = OPENAI_CHAT_FIELDS if api == "chat" else OPENAI_COMPLETION_FIELDS
        for key in body:
            if key not in allowed:
                raise Rejected(
                    self._error(request, api, 400, f"Unrecognized request argument supplied: {key}")
                )
        if api != "chat":
            return
        if "max_tokens" in body and self.model.startswith(("gpt-5", "o")):
            message = (
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead."
            )
            raise Rejected(
                self._error(request, api, 400, message, code="unsupported_parameter", param="max_tokens")
            )
        for i, message in enumerate(body.get("messages") or []):
            for key in message:
                if key not in OPENAI_MESSAGE_FIELDS:
                    text = f"Additional properties are not allowed ('{key}' was unexpected) - 'messages.{i}'"
                    raise Rejected(self._error(request, api, 400, text))

    def _check_responses(self, request: web.Request, body: dict[str, Any]) -> None:
        def refuse(status: int, message: str, code: str | None = None, param: str | None = None) -> Rejected:
            return Rejected(self._error(request, "responses", status, message, code=code, param=param))

        if self.mode == "cloud":
            for key in body:
                if key in RESPONSES_VLLM_ONLY_FIELDS:
                    raise refuse(400, f"Unknown parameter: '{key}'.", "unknown_parameter", key)
        else:
            items = body.get("input")
            for item in items if isinstance(items, list) else []:
                kind = member(item, "type") or ("message" if member(item, "role") else None)
                if kind == "reasoning" and item.get("encrypted_content"):
                    raise refuse(400, "Encrypted content is not supported.")
                if not isinstance(kind, str) or kind not in VLLM_RESPONSES_INPUT_ITEMS:  # a list or dict too
                    raise refuse(400, f"Unsupported input item type: {kind}")
            tools = body.get("tools")
            for tool in tools if isinstance(tools, list) else []:
                if member(tool, "type") == "custom" and member(tool.get("format"), "type") == "grammar":
                    raise refuse(400, "Custom tools with a grammar format are not supported")
        previous = body.get("previous_response_id")
        if previous is not None and previous not in self.minted:
            if self.mode == "vllm":
                raise refuse(404, f"Response with id '{previous}' not found.")
            raise refuse(
                400,
                f"Previous response with id '{previous}' not found.",
                "previous_response_not_found",
                "previous_response_id",
            )

    def _check_anthropic(self, request: web.Request, api: str, body: dict[str, Any]) -> None:
        def refuse(message: str) -> Rejected:
            return Rejected(self._error(request, api, 400, message))

        if not request.headers.get("anthropic-version"):
            raise refuse("anthropic-version: header is required")
        allowed = ANTHROPIC_MESSAGES_FIELDS if api == "messages" else ANTHROPIC_COUNT_FIELDS
        for key in body:
            if key not in allowed:
                raise refuse(f"{key}: Extra inputs are not permitted")
        for key in ("model", "messages") + (("max_tokens",) if api == "messages" else ()):
            if key not in body:
                raise refuse(f"{key}: Field required")
        metadata = body.get("metadata")
        if isinstance(metadata, dict) and any(key != "user_id" for key in metadata):
            raise refuse("metadata: Extra inputs are not permitted")
        for i, j, block in body_blocks(body):
            if block.get("type") == "thinking" and not self._signed(block):
                raise refuse(f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")

    def _check_vllm_messages(self, request: web.Request, api: str, body: dict[str, Any]) -> None:
        """vLLM's pydantic validation: a 400 in the OpenAI shape, not translated to Anthropic's."""

        def refuse(loc: tuple[Any, ...], kind: str, msg: str) -> Rejected:
            param = ".".join(str(part) for part in ("body", *loc))
            detail = {"type": kind, "loc": param, "msg": msg, "input": f"<dict of {len(body)} items>"}
            message = f"1 validation error:\n  {detail}"
            return Rejected(self._error(request, api, 400, message, param=param, openai_shape="Bad Request"))

        if api == "messages" and "max_tokens" not in body:
            raise refuse(("max_tokens",), "missing", "Field required")
        tools = body.get("tools")
        for i, tool in enumerate(tools if isinstance(tools, list) else []):
            if isinstance(tool, dict) and "input_schema" not in tool:
                raise refuse(("tools", i, "input_schema"), "missing", "Field required")
        for i, j, block in body_blocks(body):
            if block.get("type") in VLLM_REFUSED_BLOCKS:
                raise refuse(
                    ("messages", i, "content", j, "type"), "literal_error", "Input should be a known block"
                )

    # ------------------------------------------------------- errors

    def _error(
        self,
        request: web.Request,
        api: str,
        status: int,
        message: str,
        *,
        code: str | None = None,
        param: str | None = None,
        openai_shape: str | None = None,
    ) -> web.Response:
        """An error in the shape this API and mode use; ``openai_shape`` forces vLLM's validation shape."""
        if self.behaviour.echo_auth_in_error:
            message = f"{message} {echo_auth(request)}".rstrip()
        if self.mode == "anthropic" or (api in ("messages", "count_tokens") and openai_shape is None):
            return json_response(self._anthropic_error(status, message), status)
        return json_response(self._openai_error(status, message, code, param, openai_shape), status)

    def _anthropic_error(self, status: int, message: str) -> dict[str, Any]:
        """Anthropic's shape, typed by status; vLLM's translation of it has no ``request_id``."""
        fallback = "api_error" if status >= 500 else "invalid_request_error"
        kind = ANTHROPIC_ERROR_TYPES.get(status, fallback)
        if self.mode == "vllm" and status in (400, 404):
            # vLLM 0.32 keeps its own type names inside Anthropic's envelope (seen for these two)
            kind = VLLM_ERROR_TYPES[status]
        error = {"type": kind, "message": message}
        payload: dict[str, Any] = {"type": "error", "error": error}
        if self.mode == "anthropic":
            payload["request_id"] = f"req_{uuid.uuid4().hex[:24]}"
        return payload

    def _openai_error(
        self, status: int, message: str, code: str | None, param: str | None, kind: str | None
    ) -> dict[str, Any]:
        """OpenAI's shape: vLLM's ``code`` is the status as an int, OpenAI's a string or null."""
        if self.mode == "vllm":
            kind = kind or VLLM_ERROR_TYPES.get(status, "InternalServerError")
            return {"error": {"message": message, "type": kind, "param": param, "code": status}}
        kind = "invalid_request_error" if status < 500 else "server_error"
        if status == 429:
            kind, code = "requests", "rate_limit_exceeded"
        return {"error": {"message": message, "type": kind, "param": param, "code": code}}

    # ------------------------------------------------------- answers

    def _answer(self, api: str, body: dict[str, Any]) -> Answer:
        if api == "embeddings":
            return EmbeddingsAnswer(body)
        if api == "count_tokens":
            return CountTokensAnswer(self, body)
        reply = plan_reply(api, self.mode, body, self.behaviour)
        if api == "responses":
            answer: Answer = ResponsesAnswer(self, body, reply)
            if body.get("store", True):
                self._mint(answer.id)
            return answer
        if api == "messages":
            return MessagesAnswer(self, body, reply)
        return ChatAnswer(self, body, reply, api)

    def _mint(self, response_id: str) -> None:
        """Remember a stored response id, as vLLM's store does (bounded: benchmarks run long)."""
        self.minted[response_id] = None
        if len(self.minted) > 10_000:
            del self.minted[next(iter(self.minted))]

    def sign(self, thinking: str) -> str:
        """Anthropic's signature of a thinking block: verifiable later, meaningless elsewhere."""
        digest = hmac.new(self._secret, thinking.encode(), hashlib.sha256).digest()
        return base64.b64encode(digest).decode()

    def _signed(self, block: dict[str, Any]) -> bool:
        signature, thinking = block.get("signature"), block.get("thinking")
        if not isinstance(signature, str) or not isinstance(thinking, str):
            return False
        return hmac.compare_digest(signature, self.sign(thinking))

    def call_id(self) -> str:
        return f"chatcmpl-tool-{uuid.uuid4().hex}" if self.mode == "vllm" else f"call_{uuid.uuid4().hex[:24]}"
