"""A fake LLM upstream: a real HTTP server that answers like vLLM, OpenAI or Anthropic.

Tests, the benchmarks and ``offload demo`` put it behind the proxy instead of
a GPU box or a paid cloud, so it has to be wrong in the same ways the real
servers are. One :class:`Fake` plays one upstream, chosen by ``mode``:

``vllm``
    A vLLM 0.33 box: Chat Completions, completions, embeddings, Responses and
    Anthropic Messages (with ``count_tokens``), plus ``/health``, ``/metrics``
    and ``/v1/models``. Lenient the way vLLM is: unknown fields are ignored.
    Errors carry an *integer* ``code``; a key is checked as a Bearer token
    only and refused with vLLM's bare ``{"error": "Unauthorized"}``. On
    ``/v1/messages`` its handler errors are Anthropic-shaped, but body
    validation errors (missing ``max_tokens``, a server tool, a ``document``
    block) come back OpenAI-shaped, as vLLM's do.
``cloud``
    OpenAI: Chat Completions, completions, embeddings and Responses, strict
    about fields it does not know (400 with a *string* ``code``).
``anthropic``
    Anthropic: only Messages and ``count_tokens``. It needs an
    ``anthropic-version`` header, takes the key as ``x-api-key`` or Bearer,
    and refuses unknown top-level fields, ``metadata`` keys other than
    ``user_id`` and ``thinking`` blocks whose signature it did not mint.

What is faithful: the JSON shapes and ids of each API and mode; SSE framing
(``data:`` only and ``[DONE]`` for chat; an ``event:`` line on every event
and no ``[DONE]`` for Responses and Messages); the usage chunk only when
``stream_options.include_usage`` asks; tool-call deltas carrying ``id`` and
``name`` only in the first fragment; Responses' ``sequence_number`` from 0, one
``response.id`` across lifecycle events, ``response.incomplete`` when
``max_output_tokens`` cuts the reply; Messages' cumulative ``message_delta``
usage and Anthropic's ``ping``; where cached tokens are counted (inside
``input_tokens`` for Responses, outside it for Anthropic); the in-stream error
of each API; and a dying vLLM, which drops the connection with no terminal
event.

What is not: there is no model. The reply is :attr:`Behaviour.reply_tokens`,
or one tool call when the request offers tools and its last item is not a
tool result (the tool named by :attr:`Behaviour.tool_call`, else the first
offered one with arguments made from its JSON schema, so that a real agent
can run it). Token counts are deterministic functions of the body, so tests
can recompute them: :func:`prompt_tokens` and :func:`cache_split` for the
input, ``within_limit(api, body, plan_reply(...)).output_tokens`` for the
output of Responses and Messages.

Run it as a process (``python -m router.fakeupstream --port P --mode vllm``)
so tests can kill it, or in a thread with :func:`start_in_thread`. Tests steer
it through ``POST /_fake/config`` (fields of :class:`Behaviour`) and read what
it received (path, query string, headers, body) from ``GET /_fake/state``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import hmac
import os
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

MODES = ("vllm", "cloud", "anthropic")

# The field lists below are written apart from router/dialects on purpose: the fake stands for
# the real APIs, so a field the proxy forgets to strip fails here as it would upstream, instead
# of agreeing with the proxy's own list.
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
# Responses fields only vLLM knows: OpenAI answers each with "Unknown parameter".
RESPONSES_VLLM_ONLY_FIELDS = frozenset(
    {
        "top_k", "min_p", "repetition_penalty", "presence_penalty", "frequency_penalty", "logit_bias",
        "seed", "stop", "stop_token_ids", "ignore_eos", "include_stop_str_in_output",
        "skip_special_tokens", "spaces_between_special_tokens", "include_reasoning", "request_id",
        "session_id", "priority", "cache_salt", "chat_template_kwargs", "structured_outputs",
        "vllm_xargs", "kv_transfer_params", "ec_transfer_params", "mm_processor_kwargs",
        "media_io_kwargs", "mm_payload", "return_mm_kwargs", "enable_response_messages",
        "previous_input_messages", "watermarking",
    }
)  # fmt: skip
# The Responses input items vLLM turns into chat messages; any other type is a 400 there.
VLLM_RESPONSES_INPUT_ITEMS = frozenset(
    {"message", "function_call", "custom_tool_call", "function_call_output", "custom_tool_call_output",
     "reasoning"}
)  # fmt: skip
TOOL_RESULT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})
# Top-level fields Anthropic's Messages API takes (beta ones included); others are "Extra inputs".
ANTHROPIC_MESSAGES_FIELDS = frozenset(
    {
        "model", "messages", "max_tokens", "system", "metadata", "stop_sequences", "stream",
        "temperature", "top_p", "top_k", "tools", "tool_choice", "thinking", "service_tier",
        "container", "mcp_servers", "context_management", "output_config", "cache_control",
        "inference_geo", "speed", "diagnostics",
    }
)  # fmt: skip
ANTHROPIC_COUNT_FIELDS = frozenset(
    {"model", "messages", "system", "tools", "tool_choice", "thinking", "output_config", "cache_control",
     "speed", "context_management", "mcp_servers"}
)  # fmt: skip
# Content blocks vLLM's Messages endpoint refuses (validation error, OpenAI-shaped).
VLLM_REFUSED_BLOCKS = frozenset(
    {"document", "search_result", "server_tool_use", "web_search_tool_result", "container_upload"}
)
ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "overloaded_error",  # vLLM's translation; Anthropic itself says 529
    504: "timeout_error",
    529: "overloaded_error",
}
VLLM_ERROR_TYPES = {400: "BadRequestError", 404: "NotFoundError", 503: "ServiceUnavailableError"}
REASONING = ("Let", " me", " think")  # the thinking a vLLM reasoning parser would return
LEGACY_CHAT_ARGUMENTS = '{"cmd": "ls -la"}'
FINGERPRINT = "vllm-0.33.0-fake"


@dataclass
class Behaviour:
    """What the fake does next; every field can be set through ``POST /_fake/config``."""

    reply_tokens: list[str] = field(
        default_factory=lambda: ["Hello", " there", ",", " I", " am", " a", " fake", " model", "."]
    )
    # The call to make when the turn calls a tool: {"name": ..., "arguments": <JSON text>}.
    # None: the first offered tool, with arguments made from its JSON schema.
    tool_call: dict[str, str] | None = None
    # Chat's rule from before the other APIs: every request offering tools gets a call of
    # the first tool with arguments {"cmd": "ls -la"}, even after a tool result. False: the
    # rule of the other APIs.
    chat_always_calls: bool = True
    header_delay: float = 0.0  # seconds between reading the request and sending status and headers
    first_byte_delay: float = 0.0  # seconds before the first SSE event / the whole response
    chunk_delay: float = 0.0  # seconds between SSE events
    fail_status: int = 0  # answer this status instead, in the API's and mode's error shape
    fail_count: int = -1  # how many requests fail (-1: all while fail_status is set)
    fail_headers: dict[str, str] = field(default_factory=dict)  # added to those failures
    echo_auth_in_error: bool = False  # error messages quote the Authorization / x-api-key received
    die_after_chunks: int = -1  # drop the connection after N stream events, no terminal event
    stream_error_after_chunks: int = -1  # after N stream events, the API's own in-stream error
    body_bytes: int = 0  # pad a whole (non-streamed) success body to about this many bytes
    waiting: float = 0.0  # vllm:num_requests_waiting in /metrics
    metrics_without: list[str] = field(default_factory=list)  # families /metrics leaves out (a renamed one)
    health_status: int = 200


# ------------------------------------------------------------- the reply


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str  # JSON text, as Chat Completions and Responses carry it


@dataclass(frozen=True)
class Reply:
    """What the "model" says, before any API shapes it: thinking, then text or one call."""

    reasoning: tuple[str, ...]
    text: tuple[str, ...]
    call: ToolCall | None

    @property
    def output_tokens(self) -> int:
        """One token per reasoning or text piece and per streamed argument fragment."""
        call = len(fragments(self.call.arguments)) if self.call else 0
        return len(self.reasoning) + len(self.text) + call


@dataclass(frozen=True)
class Limited:
    reply: Reply  # what is left of the reply
    output_tokens: int  # what usage reports: a cut reply used the whole limit
    truncated: bool


def within_limit(api: str, body: dict[str, Any], reply: Reply) -> Limited:
    """The reply left by the request's length limit, and the output tokens usage reports.

    The limit is ``max_output_tokens`` (Responses) or ``max_tokens``
    (Messages). A call that does not fit is lost whole: a tool parser
    extracts nothing from half a call.
    """
    limit = body.get("max_output_tokens" if api == "responses" else "max_tokens")
    if not isinstance(limit, int) or limit >= reply.output_tokens:
        return Limited(reply, reply.output_tokens, False)
    reasoning = reply.reasoning[:limit]
    room = limit - len(reasoning)
    call = reply.call if reply.call and len(fragments(reply.call.arguments)) <= room else None
    return Limited(Reply(reasoning, reply.text[:room], call), limit, True)


def fragments(arguments: str, size: int = 8) -> list[str]:
    """How a call's arguments are streamed: pieces of a few characters, never empty."""
    return [arguments[i : i + size] for i in range(0, len(arguments), size)] or [""]


def example_arguments(schema: Any, depth: int = 0) -> Any:
    """A value satisfying a tool's JSON schema that an agent can really run.

    Strings become ``echo hello`` and string arrays ``["bash", "-lc", "echo
    hello"]``, so a shell tool (Claude Code's ``command: str``, Codex's
    ``command: list[str]``) executes something harmless. Objects get their
    required properties only: optional ones such as timeouts are best left to
    the agent's defaults.
    """
    if not isinstance(schema, dict) or depth > 8:
        return {}
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return example_arguments(schema[key][0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "string":
        return "echo hello"
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, dict) and items.get("type") == "string":
            return ["bash", "-lc", "echo hello"]
        return [example_arguments(items, depth + 1)]
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    props: dict[str, Any] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
    required: list[Any] = schema["required"] if isinstance(schema.get("required"), list) else []
    return {name: example_arguments(props.get(name), depth + 1) for name in required if isinstance(name, str)}


def offered_tools(api: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    """The (name, JSON schema) of each tool the model could call, after ``tool_choice``.

    Built-in and server tools (no schema) are left out: vLLM drops them and
    the fake has nothing to run them with.
    """
    tools = body.get("tools")
    if not isinstance(tools, list):
        return []
    out: list[tuple[str, Any]] = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        if api == "chat":
            fn = tool.get("function")
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                out.append((fn["name"], fn.get("parameters")))
        elif api == "responses":
            if tool.get("type") == "function" and isinstance(tool.get("name"), str):
                out.append((tool["name"], tool.get("parameters")))
        elif isinstance(tool.get("name"), str) and "input_schema" in tool:
            out.append((tool["name"], tool["input_schema"]))
    choice = body.get("tool_choice")
    if choice == "none" or (isinstance(choice, dict) and choice.get("type") == "none"):
        return []
    if isinstance(choice, dict):
        named = choice.get("name") or (choice.get("function") or {}).get("name")
        if named:
            return [t for t in out if t[0] == named]
    return out


def ends_with_tool_result(api: str, body: dict[str, Any]) -> bool:
    """Whether the conversation's last item hands a tool's result back to the model."""
    if api == "chat":
        items = body.get("messages")
        return isinstance(items, list) and bool(items) and _get(items[-1], "role") == "tool"
    if api == "responses":
        items = body.get("input")
        return isinstance(items, list) and bool(items) and _get(items[-1], "type") in TOOL_RESULT_ITEMS
    items = body.get("messages")
    if not isinstance(items, list) or not items or _get(items[-1], "role") != "user":
        return False
    content = items[-1].get("content")
    return isinstance(content, list) and any(_get(block, "type") == "tool_result" for block in content)


def wants_thinking(api: str, mode: str, body: dict[str, Any]) -> bool:
    """Whether the reply starts with reasoning: only vLLM returns it, and Anthropic on request.

    vLLM thinks when ``chat_template_kwargs.enable_thinking`` says so, else
    (Responses) when a reasoning effort other than ``none`` is asked, else
    (Messages) when ``thinking`` is enabled or adaptive.
    """
    thinking = body.get("thinking")
    asked = isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
    if mode == "anthropic":
        return asked
    if mode != "vllm" or api == "completions":
        return False
    kwargs = body.get("chat_template_kwargs")
    if isinstance(kwargs, dict) and "enable_thinking" in kwargs:
        return bool(kwargs["enable_thinking"])
    if api == "responses":
        effort = _get(body.get("reasoning"), "effort")
        return effort is not None and effort != "none"
    return api == "messages" and asked


def plan_reply(api: str, mode: str, body: dict[str, Any], behaviour: Behaviour) -> Reply:
    """The one rule for what every API answers: a tool call or text, maybe after thinking."""
    reasoning = REASONING if wants_thinking(api, mode, body) else ()
    call = None
    if api == "chat" and behaviour.chat_always_calls:
        tools = body.get("tools")
        if tools:
            first = tools[0] if isinstance(tools, list) and isinstance(tools[0], dict) else {}
            fn = first.get("function")
            name = fn.get("name", "tool") if isinstance(fn, dict) else "tool"
            call = _configured_call(behaviour) or ToolCall(name, LEGACY_CHAT_ARGUMENTS)
    elif api != "completions" and not ends_with_tool_result(api, body):
        tools = offered_tools(api, body)
        if tools:
            name, schema = tools[0]
            derived = orjson.dumps(example_arguments(schema)).decode()
            call = _configured_call(behaviour) or ToolCall(name, derived)
    text = () if call else tuple(behaviour.reply_tokens)
    return Reply(reasoning, text, call)


def _configured_call(behaviour: Behaviour) -> ToolCall | None:
    spec = behaviour.tool_call
    if not spec:
        return None
    return ToolCall(str(spec.get("name", "tool")), str(spec.get("arguments", "{}")))


# ------------------------------------------------------------- token counts


def prompt_tokens(api: str, body: dict[str, Any]) -> int:
    """The prompt's size in tokens: a quarter of the JSON bytes of what the model reads.

    Chat and completions count ``messages`` (or ``prompt``); Responses counts
    ``instructions``, ``input`` and ``tools``; Messages and ``count_tokens``
    count ``system``, ``messages`` and ``tools``, so that ``count_tokens`` of a
    conversation equals the total input of the Messages call that carries it.
    """
    if api in ("chat", "completions"):
        part: Any = body.get("messages") or body.get("prompt") or ""
    elif api == "responses":
        part = [body.get("instructions"), body.get("input"), body.get("tools")]
    else:
        part = [body.get("system"), body.get("messages"), body.get("tools")]
    return max(1, len(orjson.dumps(part)) // 4)


def cache_split(api: str, mode: str, body: dict[str, Any]) -> tuple[int, int]:
    """How many prompt tokens were read from and written to the prompt cache.

    Responses reads half the prompt from cache when the request has a
    ``prompt_cache_key``. Anthropic reads half and writes a quarter when a
    ``system`` block has ``cache_control``. vLLM's Messages endpoint reports
    no cache (it would only with ``--enable-prompt-tokens-details``).
    """
    total = prompt_tokens(api, body)
    if api == "responses" and body.get("prompt_cache_key"):
        return total // 2, 0
    system = body.get("system")
    blocks = system if mode == "anthropic" and isinstance(system, list) else []
    if any(isinstance(b, dict) and b.get("cache_control") for b in blocks):
        return total // 2, total // 4
    return 0, 0


# ------------------------------------------------------------- the fake


class Rejected(Exception):
    """A request refused before generation; carries the finished error response."""

    def __init__(self, response: web.Response) -> None:
        super().__init__(response.status)
        self.response = response


Frame = tuple[str | None, Any]  # (SSE event name or None, data: JSON-able or raw bytes)


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
        # vLLM answers 404 for a model it does not serve; tests that call the fake directly
        # name any model, so the fake checks only when asked to (the proxy always rewrites it).
        self.strict_model = False
        self.prefix_queries = 0
        self.prefix_hits = 0

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
            text = "".join(line for line in text.splitlines(keepends=True) if not _names_family(line, gone))
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
            return _json({"data": [card], "has_more": False, "first_id": self.model, "last_id": self.model})
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
        return _json({"object": "list", "data": [card]})

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
                    body=_padded(answer.whole(), b.body_bytes), content_type="application/json"
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
            raise Rejected(_json({"error": "Unauthorized"}, 401))  # vLLM's (non-object) shape
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
                    await response.write(_sse(*error))
                await response.write_eof()
                return response
            await response.write(_sse(*frame))
            if b.chunk_delay:
                await asyncio.sleep(b.chunk_delay)
        for frame in answer.tail:
            await response.write(_sse(*frame))
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
            self._check_vllm_limits(request, api, body)

    def _check_vllm_limits(self, request: web.Request, api: str, body: dict[str, Any]) -> None:
        """vLLM's model check (404) and context check (400), after body validation."""
        model = body.get("model")
        if self.strict_model and model is not None and model != self.model:
            message = f"The model `{model}` does not exist. Valid aliases: {self.model}."
            raise Rejected(self._error(request, api, 404, message, param="model"))
        if api == "count_tokens":
            return
        limit = self.max_model_len
        if prompt_tokens(api, body) > limit:
            message = (
                f"This model's maximum context length is {limit} tokens. However, your prompt contains "
                f"at least {limit + 1} input tokens, which exceeds this limit even without any output "
                f"tokens. Please reduce the length of the input prompt. (parameter=input_tokens, "
                f"value={limit + 1})"
            )
            raise Rejected(self._error(request, api, 400, message, param="input_tokens"))

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
                kind = _get(item, "type") or ("message" if _get(item, "role") else None)
                if kind == "reasoning" and item.get("encrypted_content"):
                    raise refuse(400, "Encrypted content is not supported.")
                if not isinstance(kind, str) or kind not in VLLM_RESPONSES_INPUT_ITEMS:  # a list or dict too
                    raise refuse(400, f"Unsupported input item type: {kind}")
            tools = body.get("tools")
            for tool in tools if isinstance(tools, list) else []:
                if _get(tool, "type") == "custom" and _get(tool.get("format"), "type") == "grammar":
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
        for i, j, block in _blocks(body):
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
        for i, j, block in _blocks(body):
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
            message = f"{message} {_echo_auth(request)}".rstrip()
        if self.mode == "anthropic" or (api in ("messages", "count_tokens") and openai_shape is None):
            return _json(self._anthropic_error(status, message), status)
        return _json(self._openai_error(status, message, code, param, openai_shape), status)

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
            return _Embeddings(body)
        if api == "count_tokens":
            return _CountTokens(self, body)
        reply = plan_reply(api, self.mode, body, self.behaviour)
        if api == "responses":
            answer: Answer = _Responses(self, body, reply)
            if body.get("store", True):
                self._mint(answer.id)
            return answer
        if api == "messages":
            return _Messages(self, body, reply)
        return _Chat(self, body, reply, api)

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


# ------------------------------------------------------------- answer shapes


class Answer:
    """One API's rendering of a reply: the whole body, or the stream's events."""

    id = ""
    frames: list[Frame] | None = None  # counted by die_after_chunks / stream_error_after_chunks
    tail: tuple[Frame, ...] = ()  # sent after the counted frames (chat's usage chunk and [DONE])

    def whole(self) -> dict[str, Any]:
        raise NotImplementedError

    def stream_error(self, sent: int) -> list[Frame]:
        """The API's own in-stream error, after ``sent`` frames went out."""
        raise NotImplementedError


class _Embeddings(Answer):
    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body

    def whole(self) -> dict[str, Any]:
        raw = self.body.get("input")
        inputs = raw if isinstance(raw, list) else [raw]
        data = [{"index": i, "object": "embedding", "embedding": [0.1, 0.2, 0.3]} for i in range(len(inputs))]
        tokens = sum(len(str(x)) // 4 + 1 for x in inputs)
        return {
            "id": f"embd-{uuid.uuid4().hex}",
            "object": "list",
            "created": int(time.time()),
            "model": self.body.get("model"),
            "data": data,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


class _CountTokens(Answer):
    def __init__(self, fake: Fake, body: dict[str, Any]) -> None:
        self.mode = fake.mode
        self.body = body

    def whole(self) -> dict[str, Any]:
        tokens = prompt_tokens("count_tokens", self.body)
        if self.mode == "vllm":
            return {"input_tokens": tokens, "context_management": {"original_input_tokens": tokens}}
        return {"input_tokens": tokens}


class _Chat(Answer):
    """Chat Completions and completions, as vLLM or OpenAI sends them."""

    def __init__(self, fake: Fake, body: dict[str, Any], reply: Reply, api: str) -> None:
        self.fake, self.body, self.reply, self.api = fake, body, reply, api
        self.vllm = fake.mode == "vllm"
        self.call_id = fake.call_id() if reply.call else ""
        completions = api == "completions"
        self.base = {
            "id": fake.new_id("cmpl-" if completions else "chatcmpl-"),
            "object": "text_completion" if completions else "chat.completion.chunk",
            "created": int(time.time()),
            "model": fake.model,
        }
        if body.get("stream"):
            self.frames, self.tail = self._frames(), self._tail()

    def _usage(self) -> dict[str, Any]:
        # The completion count predates the tool rule: the reply tokens, even when a call replaced them.
        reasoning = len(self.reply.reasoning)
        completion = len(self.fake.behaviour.reply_tokens) + reasoning
        prompt = prompt_tokens(self.api, self.body)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "total_tokens": prompt + completion,
            "completion_tokens": completion,
        }
        if self.vllm:  # as with --enable-prompt-tokens-details and a reasoning parser (the recipes)
            usage["prompt_tokens_details"] = {
                "cached_tokens": 0,
                "created_cache_tokens": 0,
                "multimodal_tokens": None,
            }
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
        else:
            usage["prompt_tokens_details"] = {"cached_tokens": 0, "audio_tokens": 0}
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning, "audio_tokens": 0}
        return usage

    def whole(self) -> dict[str, Any]:
        created = int(time.time())
        text = "".join(self.fake.behaviour.reply_tokens)
        if self.api == "completions":
            return {
                "id": self.fake.new_id("cmpl-"),
                "object": "text_completion",
                "created": created,
                "model": self.fake.model,
                "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": "stop"}],
                "usage": self._usage(),
            }
        call = self.reply.call
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
        if self.vllm and not text and self.reply.reasoning:
            message["content"] = None  # a reply that is all reasoning has no content
        finish = "stop"
        if call:
            message["content"] = None
            function = {"name": call.name, "arguments": call.arguments}
            message["tool_calls"] = [{"id": self.call_id, "type": "function", "function": function}]
            finish = "tool_calls"
        if self.vllm:
            message.update({"annotations": None, "audio": None, "function_call": None})
            message["reasoning"] = "".join(self.reply.reasoning) or None
        out: dict[str, Any] = {
            "id": self.fake.new_id("chatcmpl-"),
            "object": "chat.completion",
            "created": created,
            "model": self.fake.model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": self._usage(),
        }
        if self.vllm:
            out["choices"][0].update({"stop_reason": None, "token_ids": None, "routed_experts": None})
            out.update({"service_tier": None, "system_fingerprint": FINGERPRINT, "prompt_logprobs": None})
            out.update(dict.fromkeys(("prompt_token_ids", "prompt_text", "kv_transfer_params"), None))
            out.update(dict.fromkeys(("ec_transfer_params", "metrics"), None))
        return out

    def _include_usage(self) -> bool:
        return bool(_get(self.body.get("stream_options"), "include_usage"))

    def _frames(self) -> list[Frame]:
        null_usage = {"usage": None} if (not self.vllm and self._include_usage()) else {}
        frames: list[Frame] = []
        for choice in self._choices():
            if self.vllm and self.api == "chat":  # vLLM's chunks carry its own null fields
                choice = {"logprobs": None, "finish_reason": None, **choice}
                if "role" not in choice["delta"]:
                    choice["token_ids"] = None
            chunk = {**self.base, "choices": [choice], **null_usage}
            if self.vllm and self.api == "chat" and not frames:
                chunk.update(prompt_token_ids=None, prompt_text=None)
            if self.vllm and choice.get("finish_reason") and not self._include_usage():
                chunk["system_fingerprint"] = FINGERPRINT  # else it rides on the usage chunk
            frames.append((None, chunk))
        return frames

    def _choices(self) -> list[dict[str, Any]]:
        tokens = self.fake.behaviour.reply_tokens
        if self.api == "completions":
            out: list[dict[str, Any]] = [
                {"index": 0, "text": t, "logprobs": None, "finish_reason": None} for t in tokens
            ]
            out[-1]["finish_reason"] = "stop"
            return out
        role_delta: dict[str, Any] = {"role": "assistant", "content": ""}
        if not self.vllm:
            role_delta["refusal"] = None
        out = [{"index": 0, "delta": role_delta, "logprobs": None, "finish_reason": None}]  # same list type
        out += [{"index": 0, "delta": {"reasoning": t}} for t in self.reply.reasoning]
        finish = "stop"
        if call := self.reply.call:
            first = {
                "id": self.call_id,
                "type": "function",
                "index": 0,
                "function": {"name": call.name, "arguments": ""},
            }
            out.append({"index": 0, "delta": {"tool_calls": [first]}})
            for piece in fragments(call.arguments):
                out.append(
                    {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}}
                )
            finish = "tool_calls"
        else:
            out += [{"index": 0, "delta": {"content": t}} for t in tokens]
        # vLLM ends a reply that is still reasoning with an empty reasoning delta.
        last: dict[str, Any] = {"reasoning": ""} if self.vllm and self.reply.reasoning and not tokens else {}
        out.append({"index": 0, "delta": last, "finish_reason": finish, "stop_reason": None})
        return out

    def _tail(self) -> tuple[Frame, ...]:
        if not self._include_usage():
            return ((None, b"[DONE]"),)
        usage_chunk: dict[str, Any] = {**self.base, "choices": [], "usage": self._usage()}
        if self.vllm:
            usage_chunk["usage"] = _without_none(usage_chunk["usage"])
            usage_chunk["system_fingerprint"] = FINGERPRINT
        return ((None, usage_chunk), (None, b"[DONE]"))

    def stream_error(self, sent: int) -> list[Frame]:
        """vLLM's in-stream error: an ``error`` object, then ``[DONE]`` all the same."""
        if self.vllm:
            error = {
                "message": "Internal server error",
                "type": "InternalServerError",
                "param": None,
                "code": 500,
            }
        else:
            message = "The server had an error while processing your request. Sorry about that!"
            error = {"message": message, "type": "server_error", "param": None, "code": None}
        return [(None, {"error": error}), (None, b"[DONE]")]


class _Responses(Answer):
    """A Responses response object, or its event stream (vLLM's order)."""

    def __init__(self, fake: Fake, body: dict[str, Any], reply: Reply) -> None:
        self.fake, self.body = fake, body
        limited = within_limit("responses", body, reply)
        self.reply, self.output, self.truncated = limited.reply, limited.output_tokens, limited.truncated
        self.id = fake.new_id("resp_")
        self.created = int(time.time())
        self.items = self._items()
        self.frames = self._frames() if body.get("stream") else None

    def _items(self) -> list[dict[str, Any]]:
        reply, items = self.reply, []
        status = "incomplete" if self.truncated else "completed"
        if reply.reasoning:
            text = "".join(reply.reasoning)
            items.append(
                {
                    "id": self.fake.new_id("rs_"),
                    "type": "reasoning",
                    "summary": [],
                    "content": [{"type": "reasoning_text", "text": text}],
                    "encrypted_content": None,
                    "status": "completed",
                }
            )
        if reply.text:
            part: dict[str, Any] = {
                "type": "output_text",
                "text": "".join(reply.text),
                "annotations": [],
                "logprobs": None if self.fake.mode == "vllm" else [],
            }
            items.append(
                {
                    "id": self.fake.new_id("msg_"),
                    "type": "message",
                    "role": "assistant",
                    "status": status,
                    "content": [part],
                    **({"phase": None} if self.fake.mode == "vllm" else {}),
                }
            )
        if call := reply.call:
            items.append(
                {
                    "id": self.fake.new_id("fc_"),
                    "type": "function_call",
                    "call_id": f"call_{uuid.uuid4().hex[:24]}",
                    "name": call.name,
                    "arguments": call.arguments,
                    "status": "completed",
                }
            )
        return items

    def usage(self) -> dict[str, Any]:
        prompt = prompt_tokens("responses", self.body)
        cached, written = cache_split("responses", self.fake.mode, self.body)
        usage: dict[str, Any] = {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": written},
            "output_tokens": self.output,
            "output_tokens_details": {"reasoning_tokens": len(self.reply.reasoning)},
            "total_tokens": prompt + self.output,
        }
        if self.fake.mode == "vllm":  # vLLM's per-turn counts (one turn: no built-in tools run)
            usage["input_tokens_details"].update(input_tokens_per_turn=[], cached_tokens_per_turn=[])
            usage["output_tokens_details"].update(
                tool_output_tokens=0, output_tokens_per_turn=[], tool_output_tokens_per_turn=[]
            )
        return usage

    def response(
        self, status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None
    ) -> dict[str, Any]:
        body = self.body
        reasoning: dict[str, Any] = body["reasoning"] if isinstance(body.get("reasoning"), dict) else {}
        if self.fake.mode == "vllm":
            return self._vllm_response(status, output, usage)
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "background": False,
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "max_tool_calls": None,
            "model": self.fake.model,
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "prompt_cache_key": body.get("prompt_cache_key"),
            "reasoning": {"effort": reasoning.get("effort"), "summary": None},
            "service_tier": body.get("service_tier", "auto"),
            "store": body.get("store", True),
            "temperature": body.get("temperature", 1.0),
            "text": body.get("text") or {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools", []),
            "top_p": body.get("top_p", 1.0),
            "truncation": body.get("truncation", "disabled"),
            "usage": usage,
            "user": body.get("user"),
            "metadata": body.get("metadata") or {},
        }

    def _vllm_response(
        self, status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None
    ) -> dict[str, Any]:
        """vLLM 0.32's response object: its own field set, unset settings null."""
        body = self.body
        reasoning = body.get("reasoning")
        if isinstance(reasoning, dict):
            reasoning = {**dict.fromkeys(("context", "generate_summary", "mode", "summary")), **reasoning}
        return {
            "id": self.id,
            "created_at": self.created,
            "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
            "instructions": body.get("instructions"),
            "metadata": body.get("metadata"),
            "model": self.fake.model,
            "object": "response",
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "temperature": body.get("temperature", 1.0),
            "tool_choice": body.get("tool_choice", "auto" if body.get("tools") else "none"),
            "tools": body.get("tools", []),
            "top_p": body.get("top_p", 1.0),
            "background": False,
            "max_output_tokens": body.get("max_output_tokens", self.fake.max_model_len),
            "max_tool_calls": None,
            "previous_response_id": body.get("previous_response_id"),
            "prompt": None,
            "reasoning": reasoning if isinstance(reasoning, dict) else None,
            "service_tier": body.get("service_tier", "auto"),
            "status": status,
            "text": body.get("text"),
            "top_logprobs": None,
            "truncation": body.get("truncation", "disabled"),
            "usage": usage,
            "user": body.get("user"),
            "presence_penalty": 0.0,
            "frequency_penalty": 0.0,
            **dict.fromkeys(
                ("kv_transfer_params", "ec_transfer_params", "input_messages", "output_messages")
            ),
        }

    def _final_status(self) -> str:
        return "incomplete" if self.truncated else "completed"

    def whole(self) -> dict[str, Any]:
        items = self.items
        if self.fake.mode == "vllm":  # its whole response leaves a reasoning item's status unset
            items = [{**i, "status": None} if i["type"] == "reasoning" else i for i in items]
        return self.response(self._final_status(), items, self.usage())

    def _frames(self) -> list[Frame]:
        frames: list[Frame] = []

        def emit(kind: str, **fields: Any) -> None:
            frames.append((kind, {"type": kind, "sequence_number": len(frames), **fields}))

        started = self.response("in_progress", [], None)
        emit("response.created", response=started)
        emit("response.in_progress", response=started)
        pieces = {"reasoning": self.reply.reasoning, "message": self.reply.text}
        for index, item in enumerate(self.items):
            ref = {"item_id": item["id"], "output_index": index}
            if item["type"] == "function_call":
                emit(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "arguments": "", "status": "in_progress"},
                )
                for piece in fragments(item["arguments"]):
                    emit("response.function_call_arguments.delta", **ref, delta=piece)
                emit(
                    "response.function_call_arguments.done",
                    **ref,
                    arguments=item["arguments"],
                    name=item["name"],
                )
                emit("response.output_item.done", output_index=index, item=item)
                continue
            reasoning = item["type"] == "reasoning"
            extra: dict[str, Any] = {} if reasoning else {"logprobs": []}
            kind = "reasoning_text" if reasoning else "output_text"
            part = item["content"][0]
            empty = {**part, "text": ""}
            added = {**item, "status": "in_progress", "content": []}
            if reasoning and self.fake.mode == "vllm":
                added["content"] = None
            elif reasoning:
                added.pop("content")
            elif self.fake.mode == "vllm":
                empty["logprobs"] = []  # [] while streaming, null once done
            emit("response.output_item.added", output_index=index, item=added)
            emit("response.content_part.added", **ref, content_index=0, part=empty)
            for piece in pieces[item["type"]]:
                emit(f"response.{kind}.delta", **ref, content_index=0, delta=piece, **extra)
            emit(f"response.{kind}.done", **ref, content_index=0, text=part["text"], **extra)
            emit("response.content_part.done", **ref, content_index=0, part=part)
            emit("response.output_item.done", output_index=index, item=item)
        status = self._final_status()
        emit(f"response.{status}", response=self.response(status, self.items, self.usage()))
        return frames

    def stream_error(self, sent: int) -> list[Frame]:
        failed = self.response("failed", [], None)
        failed["error"] = {"code": "server_error", "message": "The model failed to generate a response."}
        kind = "response.failed"
        return [(kind, {"type": kind, "sequence_number": sent, "response": failed})]


class _Messages(Answer):
    """An Anthropic Message, or its event stream, as Anthropic or vLLM sends it."""

    def __init__(self, fake: Fake, body: dict[str, Any], reply: Reply) -> None:
        self.fake, self.body = fake, body
        self.anthropic = fake.mode == "anthropic"
        limited = within_limit("messages", body, reply)
        self.reply, self.output, self.truncated = limited.reply, limited.output_tokens, limited.truncated
        self.id = f"msg_01{uuid.uuid4().hex[:22]}" if self.anthropic else fake.new_id("chatcmpl-")
        self.blocks = self._blocks()
        self.frames = self._frames() if body.get("stream") else None

    def _blocks(self) -> list[dict[str, Any]]:
        reply, blocks = self.reply, []
        if reply.reasoning:
            thinking = "".join(reply.reasoning)
            signature = self.fake.sign(thinking) if self.anthropic else uuid.uuid4().hex
            blocks.append({"type": "thinking", "thinking": thinking, "signature": signature})
        if reply.text or not (reply.call or (reply.reasoning and not self.anthropic)):
            blocks.append({"type": "text", "text": "".join(reply.text)})
        if call := reply.call:
            tool_id = f"toolu_01{uuid.uuid4().hex[:22]}" if self.anthropic else self.fake.call_id()
            blocks.append(
                {"type": "tool_use", "id": tool_id, "name": call.name, "input": orjson.loads(call.arguments)}
            )
        return blocks

    def _stop_reason(self) -> str:
        if self.truncated:
            return "max_tokens"
        return "tool_use" if self.reply.call else "end_turn"

    def _input_usage(self, start: bool = False) -> dict[str, Any]:
        """Anthropic counts cache outside ``input_tokens``; vLLM (with the recipe's
        --enable-prompt-tokens-details) too, but its message_start has the full prompt only."""
        total = prompt_tokens("messages", self.body)
        if not self.anthropic:
            cache = {} if start else {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
            return {"input_tokens": total, **cache}
        read, written = cache_split("messages", self.fake.mode, self.body)
        return {
            "input_tokens": total - read - written,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        }

    def usage(self) -> dict[str, Any]:
        usage = {**self._input_usage(), "output_tokens": self.output}
        if self.anthropic:
            ttl = {
                "ephemeral_5m_input_tokens": usage["cache_creation_input_tokens"],
                "ephemeral_1h_input_tokens": 0,
            }
            usage.update({"cache_creation": ttl, "service_tier": "standard"})
        return usage

    def _message(
        self,
        content: list[dict[str, Any]],
        stop_reason: str | None,
        usage: dict[str, Any],
        whole: bool = True,
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.fake.model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }
        if not self.anthropic and whole:  # vLLM serializes the whole message with exclude_none
            message = {k: v for k, v in message.items() if v is not None}
        return message

    def whole(self) -> dict[str, Any]:
        return self._message(self.blocks, self._stop_reason(), self.usage())

    def _frames(self) -> list[Frame]:
        frames: list[Frame] = []

        def emit(kind: str, **fields: Any) -> None:
            frames.append((kind, {"type": kind, **fields}))

        # message_start: the input counts and a small output count, which message_delta then replaces.
        start_usage = self.usage() if self.anthropic else {**self._input_usage(start=True)}
        start_usage["output_tokens"] = 1 if self.anthropic else 0
        emit("message_start", message=self._message([], None, start_usage, whole=False))
        if self.anthropic:
            emit("ping")
        for index, block in enumerate(self.blocks):
            if block["type"] == "thinking":
                emit(
                    "content_block_start",
                    index=index,
                    content_block={
                        "type": "thinking",
                        "thinking": "",
                        **({"signature": ""} if self.anthropic else {}),
                    },
                )
                for piece in self.reply.reasoning:
                    emit(
                        "content_block_delta",
                        index=index,
                        delta={"type": "thinking_delta", "thinking": piece},
                    )
                emit(
                    "content_block_delta",
                    index=index,
                    delta={"type": "signature_delta", "signature": block["signature"]},
                )
            elif block["type"] == "text":
                emit("content_block_start", index=index, content_block={"type": "text", "text": ""})
                for piece in self.reply.text:
                    emit("content_block_delta", index=index, delta={"type": "text_delta", "text": piece})
            else:
                emit("content_block_start", index=index, content_block={**block, "input": {}})
                assert self.reply.call is not None
                for piece in fragments(self.reply.call.arguments):
                    emit(
                        "content_block_delta",
                        index=index,
                        delta={"type": "input_json_delta", "partial_json": piece},
                    )
            emit("content_block_stop", index=index)
        final = {**self._input_usage(), "output_tokens": self.output}
        emit("message_delta", delta={"stop_reason": self._stop_reason(), "stop_sequence": None}, usage=final)
        emit("message_stop")
        return frames

    def stream_error(self, sent: int) -> list[Frame]:
        """Close the open block, then ``event: error``; never ``message_stop``."""
        assert self.frames is not None
        open_index = None
        for kind, data in self.frames[:sent]:
            if kind == "content_block_start":
                open_index = data["index"]
            elif kind == "content_block_stop":
                open_index = None
        frames: list[Frame] = []
        if open_index is not None:
            frames.append(("content_block_stop", {"type": "content_block_stop", "index": open_index}))
        if self.anthropic:
            error = {"type": "overloaded_error", "message": "Overloaded"}
        else:
            error = {"type": "api_error", "message": "Internal server error"}
        frames.append(("error", {"type": "error", "error": error}))
        return frames


# ------------------------------------------------------------- helpers


def _names_family(line: str, families: tuple[str, ...]) -> bool:
    """Whether a line of Prometheus text is a sample, HELP or TYPE of one of ``families``."""
    name = line.removeprefix("# HELP ").removeprefix("# TYPE ")
    return any(name.startswith((f + "{", f + " ", f + "_total")) for f in families)


def _without_none(value: dict[str, Any]) -> dict[str, Any]:
    """A dict without its None values, nested dicts too (vLLM's stream usage chunk)."""
    return {k: _without_none(v) if isinstance(v, dict) else v for k, v in value.items() if v is not None}


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def _blocks(body: dict[str, Any]) -> Iterable[tuple[int, int, dict[str, Any]]]:
    """Every content block of a Messages conversation, with its message and block index."""
    messages = body.get("messages")
    for i, message in enumerate(messages if isinstance(messages, list) else []):
        content = _get(message, "content")
        for j, block in enumerate(content if isinstance(content, list) else []):
            if isinstance(block, dict):
                yield i, j, block


def _echo_auth(request: web.Request) -> str:
    """What some upstreams do: quote the credential they were sent back in the error."""
    seen = [
        f"{name}: {request.headers[name]}"
        for name in ("Authorization", "x-api-key")
        if name in request.headers
    ]
    return f"(received {'; '.join(seen)})" if seen else ""


def _sse(event: str | None, data: Any) -> bytes:
    payload = data if isinstance(data, bytes) else orjson.dumps(data)
    head = b"event: " + event.encode() + b"\n" if event else b""
    return head + b"data: " + payload + b"\n\n"


def _padded(payload: dict[str, Any], size: int) -> bytes:
    """The body, grown to about ``size`` bytes by a ``fake_padding`` field clients ignore."""
    raw = orjson.dumps(payload)
    room = size - len(raw) - len(b',"fake_padding":""')
    return orjson.dumps({**payload, "fake_padding": "x" * room}) if room > 0 else raw


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
        """The OpenAI-style base URL (``…/v1``); Anthropic clients take :attr:`root`."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

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
        """Close the listening socket and every connection; a second call does nothing."""
        if not self._thread.is_alive():
            return

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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake vLLM / OpenAI / Anthropic upstream")
    parser.add_argument("--mode", choices=MODES, default="vllm")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--api-key")
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--first-byte-delay", type=float, default=0.0)
    opts = parser.parse_args(argv)
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
