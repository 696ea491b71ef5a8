"""OpenAI Responses (Codex, the Agents SDK, pydantic-ai's ``openai:``), as vLLM and OpenAI serve it.

What differs from chat, and why the proxy cares:

* The body is ``instructions`` plus ``input`` items (messages, ``function_call``,
  ``function_call_output``, ``reasoning``...). vLLM answers 400 for several item
  and tool types OpenAI accepts (encrypted reasoning that an OpenAI turn left in
  the history, built-in tool calls, grammar-format custom tools), and OpenAI
  answers 400 for vLLM's own fields: each is stripped for the backend it would
  break, and nothing else is touched.
* Without ``max_output_tokens`` vLLM generates up to the whole remaining
  context; Codex never sends one, so a backend's ``max_output_tokens`` caps it.
* Streams are ``event:``/``data:`` pairs with a ``sequence_number`` and no
  ``[DONE]``: the end is ``response.completed`` (or ``incomplete``/``failed``),
  which carries the usage. ``input_tokens`` already includes cached tokens.
* A stream that breaks after its first byte ends with an ``error`` event and
  ``response.failed`` for the same response id, with increasing sequence
  numbers, so openai-python's strict stream helper and Codex both see a failure
  and never a silently truncated answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from router.dialects.base import (
    MAX_EVENT_BYTES,
    UNREADABLE,
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
)
from router.edge.intake import check_responses

if TYPE_CHECKING:
    from router.config import ServerConfig
    from router.forward.backends import Backend

# vLLM-only request fields on Responses: OpenAI answers 400 "Unknown parameter" for each.
VLLM_ONLY_FIELDS = frozenset(
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
# Input items vLLM turns into chat messages; any other type is a 400 there.
_VLLM_ITEMS = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "reasoning",
    }
)
_VLLM_SERVICE_TIERS = frozenset({"auto", "default", "flex", "scale", "priority"})
_VLLM_DROPPED = ("prompt", "background")  # a 400 on vLLM whatever their value (no store)
_TERMINAL = {b"response.completed", b"response.incomplete", b"response.failed"}


class Responses(Dialect):
    api = endpoint = "responses"
    path = "/responses"
    reasoning_field = "reasoning"

    def check(self, body: dict[str, Any], limits: ServerConfig) -> None:
        check_responses(body, limits)

    def view(self, body: dict[str, Any]) -> dict[str, Any]:
        """Chat-shaped: ``instructions`` as the system turn, items as messages, outputs as tool turns."""
        messages: list[dict[str, Any]] = []
        instructions = body.get("instructions")
        if isinstance(instructions, str) and instructions:
            messages.append({"role": "system", "content": instructions})
        items = body.get("input")
        if isinstance(items, str):
            messages.append({"role": "user", "content": items})
        elif isinstance(items, list):
            for item in items:
                message = _as_message(item)
                if message is not None:
                    messages.append(message)
        view: dict[str, Any] = {"messages": messages}
        if body.get("tools"):
            view["tools"] = body["tools"]
        return view

    def for_backend(self, out: dict[str, Any], backend: Backend) -> bool:
        cap = backend.config.output_cap
        if cap is not None and out.get("max_output_tokens") is None:
            out["max_output_tokens"] = cap
        if backend.kind == "vllm":
            _for_vllm(out)
        else:
            _for_openai(out)
        return False

    def client_effort(self, body: dict[str, Any]) -> str | None:
        reasoning = body.get("reasoning")
        effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
        return effort if isinstance(effort, str) else None

    def whole(self, data: bytes, want_text: bool) -> Whole:
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError:
            return UNREADABLE
        if not isinstance(doc, dict):
            return UNREADABLE
        response_id = doc.get("id")
        return Whole(
            responses_usage(doc.get("usage")),
            response_id if isinstance(response_id, str) else None,
            _output_text(doc.get("output")) if want_text else None,
        )

    def relay(self, backend: Backend, client_wants_usage: bool, want_text: bool) -> StreamRelay:
        return ResponsesRelay(want_text, backend.config.max_event_bytes)


def responses_usage(usage: Any) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    input_details = usage.get("input_tokens_details")
    output_details = usage.get("output_tokens_details")
    return sane_usage(
        usage.get("input_tokens"),
        usage.get("output_tokens"),
        input_details.get("cached_tokens") if isinstance(input_details, dict) else None,
        output_details.get("reasoning_tokens") if isinstance(output_details, dict) else None,
    )


# ------------------------------------------------------------ the view


def _as_message(item: Any) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind in (None, "message"):
        role = item.get("role")
        if not isinstance(role, str):
            return None
        content = item.get("content")
        if role == "assistant" and isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("text"))
        return {"role": role, "content": content}
    if kind in ("function_call", "custom_tool_call"):
        call_id = item.get("call_id")
        name = item.get("name")
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name}}],
        }
    if kind in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        if isinstance(output, list):
            output = "\n".join(p.get("text", "") for p in output if isinstance(p, dict))
        return {"role": "tool", "tool_call_id": item.get("call_id"), "content": output}
    return None  # reasoning and built-in tool items say nothing about the task


# ------------------------------------------------------------ per backend kind


def _for_vllm(out: dict[str, Any]) -> None:
    """Strip what vLLM answers 400 for; leave everything it accepts or ignores."""
    for key in _VLLM_DROPPED:
        out.pop(key, None)
    if "service_tier" in out and out["service_tier"] not in _VLLM_SERVICE_TIERS:
        del out["service_tier"]
    include = out.get("include")
    if isinstance(include, list) and any(_web_search(i) for i in include):
        out["include"] = [i for i in include if not _web_search(i)]
    items = out.get("input")
    if isinstance(items, list) and not all(_vllm_accepts(item) for item in items):
        out["input"] = [item for item in items if _vllm_accepts(item)]
    tools = out.get("tools")
    if isinstance(tools, list) and any(_grammar_tool(t) for t in tools):
        # vLLM refuses grammar-format custom tools (Codex's freeform apply_patch) but
        # serves the same tool in text format: the model writes the input as text.
        out["tools"] = [_as_text_tool(t) if _grammar_tool(t) else t for t in tools]


def _vllm_accepts(item: Any) -> bool:
    if not isinstance(item, dict):
        return True  # not ours to judge: vLLM answers for it
    kind = type_of(item, "message")
    if not kind:
        return True  # malformed: vLLM answers for it
    if kind not in _VLLM_ITEMS:
        return False
    # Encrypted reasoning is another provider's state: vLLM cannot read it and refuses it.
    return not (kind == "reasoning" and item.get("encrypted_content"))


def _web_search(include: Any) -> bool:
    return isinstance(include, str) and include.startswith("web_search_call.")


def _grammar_tool(tool: Any) -> bool:
    fmt = tool.get("format") if isinstance(tool, dict) and tool.get("type") == "custom" else None
    return isinstance(fmt, dict) and fmt.get("type") == "grammar"


def _as_text_tool(tool: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in tool.items() if k != "format"}


def _for_openai(out: dict[str, Any]) -> None:
    for key in VLLM_ONLY_FIELDS.intersection(out):
        del out[key]
    items = out.get("input")
    if not isinstance(items, list):
        return
    if any(_local_reasoning(item) for item in items):
        items = [item for item in items if not _local_reasoning(item)]
    if out.get("store") is not True and any(_replayed_id(item) for item in items):
        # Without a store, OpenAI cannot resolve an item id and refuses ids it did not
        # persist (a turn begun on vLLM carries vLLM's msg_/fc_ ids). The items are whole,
        # so their ids add nothing.
        items = [
            {k: v for k, v in item.items() if k != "id"} if _replayed_id(item) else item for item in items
        ]
    out["input"] = items


def _replayed_id(item: Any) -> bool:
    """A whole item that also carries an id (an ``item_reference`` is nothing but its id)."""
    return isinstance(item, dict) and "id" in item and item.get("type") != "item_reference"


def _local_reasoning(item: Any) -> bool:
    """A reasoning item OpenAI did not make (no encrypted content): another model's thoughts."""
    return isinstance(item, dict) and item.get("type") == "reasoning" and not item.get("encrypted_content")


# ------------------------------------------------------------ answers


def _output_text(output: Any) -> str:
    lines: list[str] = []
    for item in output if isinstance(output, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            parts = item.get("content")
            text = "".join(
                p.get("text", "")
                for p in parts or []
                if isinstance(p, dict) and p.get("type") == "output_text"
            )
            if text:
                lines.append(text)
        elif item.get("type") in ("function_call", "custom_tool_call"):
            arguments = item.get("arguments", item.get("input", ""))
            lines.append(f"tool_call: {item.get('name')}({arguments})")
    return "\n".join(lines)


class ResponsesRelay(StreamRelay):
    """A Responses stream: events pass through as they are; the lifecycle events are read."""

    def __init__(self, want_text: bool, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        super().__init__(want_text, max_event_bytes)
        self.sequence = -1  # the last sequence_number relayed
        self._response: dict[str, Any] | None = None  # from response.created, for response.failed
        self._items: list[Any] = []  # output items, for the stored text

    def _complete(self, complete: bytes) -> bytes:
        for event in events_of(complete):
            self._inspect(event)
        return complete

    def _inspect(self, event: bytes) -> None:
        if event.startswith(b":"):
            return  # a keep-alive comment: not a token
        self.events += 1
        at = event.rfind(b'"sequence_number":')
        if at >= 0:
            digits = event[at + 18 : at + 30].split(b",", 1)[0].split(b"}", 1)[0]
            if digits.strip().isdigit():
                self.sequence = int(digits)
        name = event_name(event)
        if not name:
            data = event_data(event)
            name = str(data.get("type", "")).encode() if isinstance(data, dict) else b""
        if name == b"response.created":
            data = event_data(event)
            response = data.get("response") if isinstance(data, dict) else None
            if isinstance(response, dict):
                self._response = response
                rid = response.get("id")
                self.response_id = rid if isinstance(rid, str) else None
        elif name in _TERMINAL:
            self.done = True
            self.errored = name == b"response.failed"
            data = event_data(event)
            response = data.get("response") if isinstance(data, dict) else None
            if isinstance(response, dict):
                self.usage = responses_usage(response.get("usage"))
                if self.want_text:
                    self._items = response.get("output") or self._items
        elif name == b"error":
            self.errored = True
        elif self.want_text and name == b"response.output_item.done":
            data = event_data(event)
            if isinstance(data, dict):
                self._items.append(data.get("item"))

    def text(self) -> str | None:
        return _output_text(self._items) if self.want_text else None

    def abort(self, message: str, code: str = "server_error") -> bytes:
        """``error`` then ``response.failed`` for the same response, with increasing sequence numbers."""
        if self.done:
            return b""
        self.done = self.errored = True
        error = {"code": code, "message": message}
        response = dict(self._response or {"id": "resp_offload_failed", "object": "response", "output": []})
        response.update(status="failed", error=error, usage=None)
        first = self.sequence + 1
        return sse_event(
            "error",
            {"type": "error", "code": code, "message": message, "param": None, "sequence_number": first},
        ) + sse_event(
            "response.failed", {"type": "response.failed", "sequence_number": first + 1, "response": response}
        )
