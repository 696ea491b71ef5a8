"""What the real-vLLM tests send and read: request bodies per API and case, SSE, usage."""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

import httpx

from tests.harness import ProxyServer, sse_events, wait_until

APIS = ("chat", "responses", "messages")
PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "messages": "/v1/messages"}
ASK = "write a python function that reverses a list, then run it with the shell tool"
SHELL = {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}
CALL_ARGS = {"cmd": "python rev.py"}
RESULT = "[3, 2, 1]"
MAX_TOKENS = 256  # a reply runs past it with odds of 1e-18 (tiny_model.py: 0.15 per token to stop)


def unique(text: str = ASK) -> str:
    """A prompt no earlier request shares a cache block with (vLLM caches 16-token blocks)."""
    return f"[{uuid.uuid4().hex}] {text}"


def chat_body(case: str, text: str) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "local", "messages": [{"role": "user", "content": text}]}
    body["max_tokens"] = MAX_TOKENS
    tools = [{"type": "function", "function": {"name": "shell", "description": "run", "parameters": SHELL}}]
    if case in ("tools", "tool_loop"):
        body["tools"] = tools
    if case == "tool_loop":
        call = {"id": "call_1", "type": "function",
                "function": {"name": "shell", "arguments": json.dumps(CALL_ARGS)}}  # fmt: skip
        body["messages"] += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": RESULT},
        ]
    if case == "thinking":
        body["reasoning_effort"] = "high"  # as openai-python and most frameworks send it
    return body


def responses_body(case: str, text: str) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "local", "input": text, "max_output_tokens": MAX_TOKENS}
    if case in ("tools", "tool_loop"):
        body["tools"] = [{"type": "function", "name": "shell", "description": "run", "parameters": SHELL}]
    if case == "tool_loop":
        body["input"] = [
            {"role": "user", "content": text},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "shell",
                "arguments": json.dumps(CALL_ARGS),
            },
            {"type": "function_call_output", "call_id": "call_1", "output": RESULT},
        ]
    if case == "thinking":
        body["reasoning"] = {"effort": "high"}  # as Codex sends it for a model it knows
    return body


def messages_body(case: str, text: str) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "local", "max_tokens": MAX_TOKENS,
                            "messages": [{"role": "user", "content": text}]}  # fmt: skip
    if case in ("tools", "tool_loop"):
        body["tools"] = [{"name": "shell", "description": "run", "input_schema": SHELL}]
    if case == "tool_loop":
        body["messages"] += [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "shell", "input": CALL_ARGS}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": RESULT}]},
        ]  # fmt: skip
    if case == "thinking":
        body["max_tokens"] = 2048
        body["thinking"] = {"type": "enabled", "budget_tokens": 1024}  # the anthropic SDK's form
    return body


BODIES = {"chat": chat_body, "responses": responses_body, "messages": messages_body}


def body_for(api: str, case: str, stream: bool, text: str | None = None) -> dict[str, Any]:
    body = BODIES[api](case, text or unique())
    if stream:
        body["stream"] = True
        if api == "chat":
            body["stream_options"] = {"include_usage": True}
    return copy.deepcopy(body)


def events(raw: str) -> list[tuple[str | None, Any]]:
    """(event name, parsed data) of each SSE event; ``[DONE]`` stays a string."""
    return [(name, data if data == "[DONE]" else json.loads(data)) for name, data in sse_events(raw)]


def reported_usage(api: str, answer: Any, stream: bool) -> tuple[int, int, int]:
    """(prompt, completion, cached) as the server reported them, in each API's convention:
    chat and Responses count cached tokens inside the prompt, Messages outside it."""
    usage = _stream_usage(api, answer) if stream else answer["usage"]
    if api == "chat":
        details = usage.get("prompt_tokens_details") or {}
        return usage["prompt_tokens"], usage["completion_tokens"], details.get("cached_tokens", 0)
    if api == "responses":
        details = usage.get("input_tokens_details") or {}
        return usage["input_tokens"], usage["output_tokens"], details.get("cached_tokens", 0)
    read = usage.get("cache_read_input_tokens", 0)
    prompt = usage["input_tokens"] + usage.get("cache_creation_input_tokens", 0) + read
    return prompt, usage["output_tokens"], read


def _stream_usage(api: str, frames: list[tuple[str | None, Any]]) -> dict[str, Any]:
    if api == "chat":
        return next(d["usage"] for _, d in frames if isinstance(d, dict) and d.get("usage"))
    if api == "responses":
        return next(
            d["response"]["usage"] for n, d in frames if n in ("response.completed", "response.incomplete")
        )
    usage: dict[str, Any] = {}
    for name, data in frames:  # message_start, then each message_delta overwrites (last wins)
        if name == "message_start":
            usage.update(data["message"]["usage"])
        elif name == "message_delta":
            usage.update(data.get("usage") or {})
    return usage


def send(proxy: ProxyServer, api: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    hdrs = {"x-offload-route": "local", **headers}
    if api == "messages":
        hdrs["anthropic-version"] = "2023-06-01"
    return httpx.post(proxy.url + PATHS[api], json=body, headers=hdrs, timeout=300)


def answer_of(response: httpx.Response, stream: bool) -> Any:
    return events(response.text) if stream else response.json()


def row_for(proxy: ProxyServer, response: httpx.Response) -> Any:
    """The usage row the proxy recorded for this response (its x-request-id)."""
    request_id = response.headers["x-request-id"]

    def found() -> Any:
        return next((r for r in proxy.state.recorder.rows if r.request_id == request_id), None)

    assert wait_until(lambda: found() is not None, timeout=10), f"no row for {request_id}"
    return found()
