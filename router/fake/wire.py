"""The simulated upstream's wire pieces: SSE frames, JSON answers, and the :class:`Answer` every
API's rendering of a reply is."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

import orjson
from aiohttp import web

from router.fake.protocol import Behaviour

Frame = tuple[str | None, Any]  # (SSE event name or None, data: JSON-able or raw bytes)


class Upstream(Protocol):
    """What an answer reads of the fake that renders it (``router.fake.server.Fake``)."""

    mode: str
    model: str
    behaviour: Behaviour
    max_model_len: int

    def call_id(self) -> str: ...

    def new_id(self, prefix: str) -> str: ...

    def sign(self, thinking: str) -> str: ...


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


def names_family(line: str, families: tuple[str, ...]) -> bool:
    """Whether a line of Prometheus text is a sample, HELP or TYPE of one of ``families``."""
    name = line.removeprefix("# HELP ").removeprefix("# TYPE ")
    return any(name.startswith((f + "{", f + " ", f + "_total")) for f in families)


def without_none(value: dict[str, Any]) -> dict[str, Any]:
    """A dict without its None values, nested dicts too (vLLM's stream usage chunk)."""
    return {k: without_none(v) if isinstance(v, dict) else v for k, v in value.items() if v is not None}


def member(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def body_blocks(body: dict[str, Any]) -> Iterable[tuple[int, int, dict[str, Any]]]:
    """Every content block of a Messages conversation, with its message and block index."""
    messages = body.get("messages")
    for i, message in enumerate(messages if isinstance(messages, list) else []):
        content = member(message, "content")
        for j, block in enumerate(content if isinstance(content, list) else []):
            if isinstance(block, dict):
                yield i, j, block


def echo_auth(request: web.Request) -> str:
    """What some upstreams do: quote the credential they were sent back in the error."""
    seen = [
        f"{name}: {request.headers[name]}"
        for name in ("Authorization", "x-api-key")
        if name in request.headers
    ]
    return f"(received {'; '.join(seen)})" if seen else ""


def sse(event: str | None, data: Any) -> bytes:
    payload = data if isinstance(data, bytes) else orjson.dumps(data)
    head = b"event: " + event.encode() + b"\n" if event else b""
    return head + b"data: " + payload + b"\n\n"


def padded(payload: dict[str, Any], size: int) -> bytes:
    """The body, grown to about ``size`` bytes by a ``fake_padding`` field clients ignore."""
    raw = orjson.dumps(payload)
    room = size - len(raw) - len(b',"fake_padding":""')
    return orjson.dumps({**payload, "fake_padding": "x" * room}) if room > 0 else raw


def json_response(payload: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(payload), status=status, content_type="application/json")
