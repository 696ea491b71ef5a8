"""Anthropic Messages (Claude Code, the anthropic SDK), as vLLM and Anthropic serve it.

What differs, and why the proxy cares:

* Clients use the host root as their base URL and post ``/v1/messages``
  (Claude Code adds ``?beta=true``, passed on). They send ``anthropic-version``
  and ``anthropic-beta``, which travel upstream unchanged; the key comes as
  ``x-api-key`` or as a Bearer token.
* Errors, the proxy's own included, are ``{"type":"error","error":{...}}``.
* Tool results are ``tool_result`` blocks inside a user turn: in the view for
  the policy they become ``role: tool`` turns, so a tool loop is one here too.
* Thinking blocks carry a signature that only their maker can verify: vLLM's
  are random UUIDs, which Anthropic rejects, so they are removed on the way to
  Anthropic (and Anthropic's on the way to vLLM): never sent to another backend.
* Usage: ``input_tokens`` excludes the cache, so the prompt is
  ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens``. In a
  stream, ``message_start`` carries the first counts and each ``message_delta``
  overwrites them field by field (last wins, never summed).
* A stream ends with ``message_stop``; one that breaks after its first byte
  closes the open content block and ends with ``event: error``, never with a
  ``message_stop`` that would make a truncated message look complete.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import orjson

from router.dialects.base import (
    MAX_EVENT_BYTES,
    UNREADABLE,
    Adapted,
    Dialect,
    StreamRelay,
    Usage,
    Whole,
    event_data,
    event_name,
    events_of,
    sane_usage,
    sse_event,
    type_of,
    upstream_model,
)
from router.edge.intake import check_messages
from router.errors import ANTHROPIC
from router.sessions import without_billing_header

if TYPE_CHECKING:
    from router.config import ServerConfig
    from router.forward.backends import Backend

# Fields vLLM accepts and Anthropic answers 400 ("Extra inputs are not permitted") for.
VLLM_ONLY_FIELDS = frozenset(
    {
        "chat_template_kwargs", "cache_salt", "watermarking", "kv_transfer_params",
        "ec_transfer_params", "vllm_xargs", "mm_payload", "return_mm_kwargs",
    }
)  # fmt: skip
# Content blocks vLLM answers 400 for.
_VLLM_REFUSED_BLOCKS = frozenset(
    {
        "document", "search_result", "server_tool_use", "web_search_tool_result",
        "web_fetch_tool_result", "code_execution_tool_result", "container_upload", "mcp_tool_use",
        "mcp_tool_result",
    }
)  # fmt: skip
_THINKING_BLOCKS = frozenset({"thinking", "redacted_thinking"})
# vLLM signs its thinking blocks with a random UUID; Anthropic's signatures are long opaque blobs.
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")


class Messages(Dialect):
    api = endpoint = "messages"
    path = "/messages"
    shape = ANTHROPIC
    forwards_headers = ("anthropic-version", "anthropic-beta")
    reasoning_field = "thinking"

    def check(self, body: dict[str, Any], limits: ServerConfig) -> None:
        check_messages(body, limits)

    def view(self, body: dict[str, Any]) -> dict[str, Any]:
        """Chat-shaped: ``system`` first, tool results as ``role: tool`` turns."""
        messages: list[dict[str, Any]] = []
        system = body.get("system")
        if system:
            messages.append({"role": "system", "content": system})
        for message in body.get("messages") or []:
            if isinstance(message, dict):
                messages.extend(_as_chat(message))
        view: dict[str, Any] = {"messages": messages}
        if body.get("tools"):
            view["tools"] = body["tools"]
        return view

    def for_backend(self, out: dict[str, Any], backend: Backend) -> bool:
        if backend.kind == "vllm":
            _for_vllm(out)
            if backend.config.strip_billing_header:
                _strip_billing_header(out)
        else:
            _for_anthropic(out)
        return False

    def client_effort(self, body: dict[str, Any]) -> str | None:
        thinking = body.get("thinking")
        asked = thinking.get("type") if isinstance(thinking, dict) else None
        return asked if isinstance(asked, str) else None

    def thinking_on_by_default(self, out: dict[str, Any]) -> None:
        out["thinking"] = {"type": "adaptive"}

    def whole(self, data: bytes, want_text: bool) -> Whole:
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError:
            return UNREADABLE
        if not isinstance(doc, dict):
            return UNREADABLE
        usage = doc.get("usage")
        return Whole(
            messages_usage(usage) if isinstance(usage, dict) else None,
            None,
            _content_text(doc.get("content")) if want_text else None,
        )

    def relay(self, backend: Backend, client_wants_usage: bool, want_text: bool) -> StreamRelay:
        return MessagesRelay(want_text, backend.config.max_event_bytes)


class CountTokens(Messages):
    """``/v1/messages/count_tokens``: a Messages body without ``max_tokens``; answers
    ``{"input_tokens": N}`` from the backend that the turn itself would go to."""

    endpoint = "count_tokens"
    path = "/messages/count_tokens"

    def check(self, body: dict[str, Any], limits: ServerConfig) -> None:
        check_messages(body, limits, count_tokens=True)

    def adapt(self, body: dict[str, Any], backend: Backend, client_model: str | None) -> Adapted:
        out = dict(body)  # counting: no thinking, no extras, only what the target refuses
        out["model"] = upstream_model(backend, client_model)
        self.for_backend(out, backend)
        return Adapted(orjson.dumps(out), False, None, "default")

    def whole(self, data: bytes, want_text: bool) -> Whole:
        return Whole(Usage(0, 0))  # counting bills nothing

    def streams(self, body: dict[str, Any]) -> bool:
        return False


def messages_usage(usage: dict[str, Any]) -> Usage | None:
    """Anthropic counts input in three parts (uncached, cache writes, cache reads); the
    report's prompt is their sum, with the reads as its cached part and the writes as its
    cache writes. No ``cache_read_input_tokens`` at all: the cached count is unknown."""
    tokens = sane_usage(usage.get("input_tokens"), usage.get("output_tokens"))
    read = usage.get("cache_read_input_tokens")
    cache = sane_usage(read, usage.get("cache_creation_input_tokens"))
    if tokens is None or cache is None:
        return None
    reads, writes = cache.prompt, cache.completion
    prompt = tokens.prompt + writes + reads
    return Usage(prompt, tokens.completion, reads, cache_write=writes, cache_counted=read is not None)


# ------------------------------------------------------------ the view


def _as_chat(message: dict[str, Any]) -> list[dict[str, Any]]:
    role = message.get("role")
    content = message.get("content")
    if not isinstance(content, list):
        return [{"role": role, "content": content}]
    if role == "assistant":
        text = "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
        calls = [
            {"id": b.get("id"), "type": "function", "function": {"name": b.get("name")}}
            for b in content
            if isinstance(b, dict) and b.get("type") == "tool_use"
        ]
        out: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            out["tool_calls"] = calls
        return [out]
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not results:
        return [{"role": role, "content": content}]
    # A user turn that carries tool results answers a tool call: tool turns. Text that rides
    # along (Claude Code's reminders) goes with the last one rather than posing as a new ask.
    turns = [
        {"role": "tool", "tool_call_id": b.get("tool_use_id"), "content": b.get("content")} for b in results
    ]
    extra = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
    if extra:
        last = turns[-1]["content"]
        parts = (
            last
            if isinstance(last, list)
            else [{"type": "text", "text": last if isinstance(last, str) else ""}]
        )
        turns[-1]["content"] = [*parts, *extra]
    return turns


# ------------------------------------------------------------ per backend kind


def _for_vllm(out: dict[str, Any]) -> None:
    tools = out.get("tools")
    if isinstance(tools, list) and not all(_client_tool(t) for t in tools):
        out["tools"] = [t for t in tools if _client_tool(t)]  # server tools: a 400 on vLLM
    _filter_blocks(
        out, lambda block: type_of(block) in _VLLM_REFUSED_BLOCKS or _foreign_thinking(block, True)
    )


def _strip_billing_header(out: dict[str, Any]) -> None:
    """The billing header out of ``system``."""
    system = out.get("system")
    kept = without_billing_header(system)
    if kept is not system:
        out["system"] = kept


def _for_anthropic(out: dict[str, Any]) -> None:
    for key in VLLM_ONLY_FIELDS.intersection(out):
        del out[key]
    metadata = out.get("metadata")
    if isinstance(metadata, dict) and set(metadata) - {"user_id"}:
        out["metadata"] = {k: v for k, v in metadata.items() if k == "user_id"}
    _filter_blocks(out, lambda block: _foreign_thinking(block, False))


def _client_tool(tool: Any) -> bool:
    return not isinstance(tool, dict) or "input_schema" in tool


def _foreign_thinking(block: dict[str, Any], to_vllm: bool) -> bool:
    """A thinking block that the target did not sign."""
    if type_of(block) not in _THINKING_BLOCKS:
        return False
    signature = block.get("signature")
    made_by_vllm = isinstance(signature, str) and _UUID.match(signature) is not None
    return made_by_vllm != to_vllm


def _filter_blocks(out: dict[str, Any], drop: Any) -> None:
    """Remove the content blocks ``drop`` names, copying only the messages that change."""
    messages = out.get("messages")
    if not isinstance(messages, list):
        return
    changed = False
    kept_messages = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(isinstance(b, dict) and drop(b) for b in content):
            kept = [b for b in content if not (isinstance(b, dict) and drop(b))]
            message = {**message, "content": kept or [{"type": "text", "text": ""}]}
            changed = True
        kept_messages.append(message)
    if changed:
        out["messages"] = kept_messages


# ------------------------------------------------------------ answers


def _content_text(content: Any) -> str:
    lines: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            lines.append(block["text"])
        elif block.get("type") == "tool_use":
            lines.append(f"tool_call: {block.get('name')}({orjson.dumps(block.get('input')).decode()})")
    return "\n".join(lines)


class MessagesRelay(StreamRelay):
    """A Messages stream: events pass through as they are; lifecycle events are read."""

    def __init__(self, want_text: bool, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        super().__init__(want_text, max_event_bytes)
        self.open_block: int | None = None  # index of a content block started and not stopped
        self._usage: dict[str, Any] = {}
        self._blocks: dict[int, list[str]] = {}  # stored text: index -> [name or "", pieces...]

    def _complete(self, complete: bytes) -> bytes:
        for event in events_of(complete):
            self._inspect(event)
        return complete

    def _inspect(self, event: bytes) -> None:
        name = event_name(event)
        if name == b"content_block_delta":
            self.events += 1
            if self.want_text:
                self._delta(event_data(event))
            return
        if name == b"ping" or not name:
            return
        data = event_data(event)
        if not isinstance(data, dict):
            return
        if name == b"message_start":
            message = data.get("message")
            usage = message.get("usage") if isinstance(message, dict) else None
            if isinstance(usage, dict):
                self._usage.update(usage)
                self.usage = messages_usage(self._usage)
        elif name == b"message_delta":
            usage = data.get("usage")
            if isinstance(usage, dict):
                self._usage.update((k, v) for k, v in usage.items() if v is not None)  # last wins
                self.usage = messages_usage(self._usage)
        elif name == b"content_block_start":
            index = data.get("index")
            self.open_block = index if isinstance(index, int) else None
            block = data.get("content_block")
            if self.want_text and isinstance(block, dict) and self.open_block is not None:
                head = block.get("name") if block.get("type") == "tool_use" else None
                self._blocks[self.open_block] = [head or "", block.get("text") or ""]
        elif name == b"content_block_stop":
            self.open_block = None
        elif name == b"message_stop":
            self.done = True
        elif name == b"error":
            self.done = self.errored = True

    def _delta(self, data: Any) -> None:
        if not isinstance(data, dict) or not isinstance(data.get("index"), int):
            return
        delta = data.get("delta")
        if isinstance(delta, dict):
            piece = delta.get("text") if delta.get("type") == "text_delta" else delta.get("partial_json")
            if isinstance(piece, str):
                self._blocks.setdefault(data["index"], ["", ""]).append(piece)

    def text(self) -> str | None:
        if not self.want_text:
            return None
        lines = []
        for _, (name, *pieces) in sorted(self._blocks.items()):
            body = "".join(pieces)
            lines.append(f"tool_call: {name}({body})" if name else body)
        return "\n".join(line for line in lines if line)

    def abort(self, message: str, code: str = "api_error") -> bytes:
        """Close the open block (as vLLM does), then ``event: error``; never ``message_stop``."""
        if self.done:
            return b""
        self.done = self.errored = True
        out = b""
        if self.open_block is not None:
            out = sse_event("content_block_stop", {"type": "content_block_stop", "index": self.open_block})
        kind = "overloaded_error" if code in ("overloaded_error", "server_is_overloaded") else "api_error"
        return out + sse_event("error", {"type": "error", "error": {"type": kind, "message": message}})
