"""Reading a request body: size limit, one parse, the few checks routing needs.

The body is parsed exactly once (orjson) into a dict that everything later
works on. Only the fields the proxy itself reads are checked; everything else
passes through untouched for the upstream to judge.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import orjson
from starlette.requests import Request

from router.config import ServerConfig
from router.errors import ProxyError

# server.body_read_timeout_s bounds the time to send a whole request body.
# uvicorn times out neither headers nor bodies, so without it a client that
# sends headers and then stalls (slow loris) holds a connection and its
# coroutine for ever. 8 MiB in 60 s needs only ~140 KB/s.
# Answers that leave part of the body unread must close the connection: the
# unread bytes would otherwise still have to be received and thrown away.
_CLOSE = {"Connection": "close"}


def declared_length(headers: Mapping[str, str]) -> int | None:
    """The body's declared Content-Length, or None when there is none or it is not a
    decimal number (the one reading of the header: the body's limit and the token estimate)."""
    value = headers.get("content-length")
    # isascii: str.isdigit() is also true for "²", which int() rejects.
    return int(value) if value is not None and value.isascii() and value.isdigit() else None


async def read_body(request: Request, limits: ServerConfig) -> bytes:
    """The raw body, refusing (413) as soon as it passes ``max_body_bytes``.

    A declared Content-Length over the limit is refused before reading a byte;
    a chunked body is read up to the limit and no further. A body that takes
    longer than the read timeout to arrive gets 408.
    """
    declared = declared_length(request.headers)
    if declared is None and "content-length" in request.headers:
        raise ProxyError(400, "invalid Content-Length header", code="invalid_content_length", headers=_CLOSE)
    if declared is not None and declared > limits.max_body_bytes:
        raise _too_large(limits)
    timeout = limits.body_read_timeout_s
    try:
        async with asyncio.timeout(timeout):
            return await _receive_body(request, limits)
    except TimeoutError:
        raise ProxyError(
            408, f"request body not received within {timeout:g} s", code="request_timeout", headers=_CLOSE
        ) from None


async def _receive_body(request: Request, limits: ServerConfig) -> bytes:
    # The ASGI messages directly: Request.stream()'s generator costs more than
    # the whole read when the body came in one piece, as it nearly always does.
    receive = request.receive
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            # Nobody is left to answer; 499 keeps it out of the internal-error log.
            raise ProxyError(499, "client disconnected while sending the body", code="client_disconnected")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limits.max_body_bytes:
            raise _too_large(limits)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _too_large(limits: ServerConfig) -> ProxyError:
    return ProxyError(
        413,
        f"request body is larger than server.max_body_bytes ({limits.max_body_bytes} bytes)",
        code="request_too_large",
        headers=_CLOSE,
    )


def parse_json_object(raw: bytes, limits: ServerConfig) -> dict[str, Any]:
    if not raw:
        raise ProxyError(400, "request body is empty: send a JSON object", code="invalid_json")
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ProxyError(400, f"request body is not valid JSON: {exc.msg}", code="invalid_json") from None
    if not isinstance(body, dict):
        raise ProxyError(400, "request body must be a JSON object", code="invalid_json")
    if _depth_exceeds(body, limits.max_json_depth):
        raise ProxyError(
            400,
            f"request JSON nests deeper than server.max_json_depth ({limits.max_json_depth})",
            code="too_deep",
        )
    return body


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Does ``value`` nest deeper than ``limit`` (the body itself is level 1)? Recursive, which
    is 3-4x faster than an explicit stack (bench/README.md), and safe: it descends at most
    ``limit`` levels before it answers, and a limit beyond ``_RECURSION_SAFE`` takes the
    iterative walk, so a hostile body cannot blow the Python stack."""
    if limit > _RECURSION_SAFE:
        return _depth_exceeds_iterative(value, limit)
    return _too_deep(value, limit)


_RECURSION_SAFE = 256  # well inside CPython's default recursion limit of 1000
_CONTAINERS = (dict, list)


def _too_deep(node: Any, budget: int) -> bool:
    """``node`` (a dict or list) needs more than ``budget`` levels."""
    if budget <= 0:
        return True
    for child in node.values() if type(node) is dict else node:
        if type(child) in _CONTAINERS and _too_deep(child, budget - 1):
            return True
    return False


def _depth_exceeds_iterative(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node if isinstance(v, dict | list))
    return False


def check_common(body: dict[str, Any]) -> None:
    """Fields the proxy itself reads must have the right type."""
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise _bad("model", "must be a string")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise _bad("stream", "must be a boolean")
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise _bad("stream_options", "must be an object")
    for key in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        value = body.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise _bad(key, "must be a positive integer")


def check_chat(body: dict[str, Any], limits: ServerConfig) -> None:
    check_common(body)
    _check_turns(body, limits, null_content=True)
    _check_tools(body)


def check_completions(body: dict[str, Any]) -> None:
    check_common(body)
    prompt = body.get("prompt")
    if not isinstance(prompt, str | list) or (isinstance(prompt, list) and not prompt):
        raise _bad("prompt", "is required: a string or a non-empty array")


def check_embeddings(body: dict[str, Any]) -> None:
    check_common(body)
    value = body.get("input")
    if not isinstance(value, str | list) or (isinstance(value, list) and not value):
        raise _bad("input", "is required: a string or a non-empty array")


def check_responses(body: dict[str, Any], limits: ServerConfig) -> None:
    check_common(body)
    items = body.get("input")
    if not isinstance(items, str | list) or (isinstance(items, list) and not items):
        raise _bad("input", "is required: a string or a non-empty array of items")
    if isinstance(items, list):
        if len(items) > limits.max_messages:
            raise _bad("input", f"has more than server.max_messages ({limits.max_messages}) items")
        if not all(isinstance(item, dict) for item in items):
            raise _bad("input", "items must be objects")
    for key in ("instructions", "previous_response_id"):
        value = body.get(key)
        if value is not None and not isinstance(value, str):
            raise _bad(key, "must be a string")
    _check_tools(body)


def check_messages(body: dict[str, Any], limits: ServerConfig, *, count_tokens: bool = False) -> None:
    check_common(body)
    if not count_tokens and body.get("max_tokens") is None:
        raise _bad("max_tokens", "is required")
    _check_turns(body, limits, null_content=False)
    system = body.get("system")
    if system is not None and not isinstance(system, str | list):
        raise _bad("system", "must be a string or an array of text blocks")
    _check_tools(body)


def _check_turns(body: dict[str, Any], limits: ServerConfig, *, null_content: bool) -> None:
    """``messages``: a bounded non-empty array of turns with a string role and content that is
    a string or an array of typed parts (or null, where the API allows it: chat)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad("messages", "is required and must be a non-empty array")
    if len(messages) > limits.max_messages:
        raise _bad("messages", f"has more than server.max_messages ({limits.max_messages}) entries")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise _bad(f"messages[{i}]", "must be an object with a string 'role'")
        content = message.get("content")
        if content is None and null_content:
            continue
        if not isinstance(content, str | list):
            allowed = (
                "a string, an array of parts, or null" if null_content else "a string or an array of parts"
            )
            raise _bad(f"messages[{i}].content", f"must be {allowed}")
        if isinstance(content, list) and not all(
            isinstance(part, dict) and isinstance(part.get("type"), str) for part in content
        ):
            raise _bad(f"messages[{i}].content", "parts must be objects with a string 'type'")


def _check_tools(body: dict[str, Any]) -> None:
    tools = body.get("tools")
    if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools)):
        raise _bad("tools", "must be an array of objects")


def _bad(param: str, problem: str) -> ProxyError:
    return ProxyError(400, f"'{param}' {problem}", param=param, code="invalid_request")
