"""OpenAI-shaped errors: ``{"error": {"message", "type", "param", "code"}}``."""

from __future__ import annotations

import orjson
from starlette.responses import Response

# Status → the `type` OpenAI uses, so the SDK's typed exceptions line up.
_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    408: "timeout_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
}


def _type_for(status: int) -> str:
    """OpenAI's error ``type`` for an HTTP status."""
    return _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")


class ProxyError(Exception):
    """An error the proxy answers itself, already in OpenAI's shape."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: str | None = None,
        param: str | None = None,
        type: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param
        self.type = type or _type_for(status)
        self.headers = headers or {}

    def body(self) -> bytes:
        return error_body(self.message, self.type, self.param, self.code)

    def response(self, extra_headers: dict[str, str] | None = None) -> Response:
        headers = {**self.headers, **(extra_headers or {})}
        return Response(self.body(), status_code=self.status, media_type="application/json", headers=headers)


def error_body(message: str, type: str, param: str | None = None, code: str | int | None = None) -> bytes:
    return orjson.dumps({"error": {"message": message, "type": type, "param": param, "code": code}})


def sse_error_event(message: str, type: str = "server_error", code: str | int | None = None) -> bytes:
    """The in-stream error that vLLM sends once headers are out, followed by ``[DONE]``."""
    return b"data: " + error_body(message, type, None, code) + b"\n\ndata: [DONE]\n\n"


def normalise_upstream_error(status: int, body: bytes) -> bytes:
    """Keep an upstream error's body if it already has OpenAI's shape, else wrap it.

    vLLM's 401 body is ``{"error": "Unauthorized"}`` (not an object), and a
    load balancer may answer with HTML; the client should always get the shape.
    """
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict) and "message" in parsed["error"]:
        return body
    text = body[:500].decode("utf-8", "replace").strip() or f"upstream answered HTTP {status}"
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), str):
        text = parsed["error"]
    return error_body(f"upstream error: {text}", _type_for(status), None, None)
