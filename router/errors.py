"""The error shapes, in one place: OpenAI's and Anthropic's.

* OpenAI (Chat Completions, completions, embeddings, Responses):
  ``{"error": {"message", "type", "param", "code"}}``.
* Anthropic (Messages, count_tokens):
  ``{"type": "error", "error": {"type", "message"}, "request_id"}``.

The proxy's own errors are raised as :class:`ProxyError` and rendered in the
shape of the API the client spoke (:data:`OPENAI` or :data:`ANTHROPIC`), so
the official SDKs raise their typed exceptions for the proxy's 401, 413 or
429 just as they would for the provider's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import orjson
from starlette.responses import Response

Shape = Literal["openai", "anthropic"]
OPENAI: Shape = "openai"
ANTHROPIC: Shape = "anthropic"

# Status → the `type` OpenAI uses, so the SDK's typed exceptions line up.
_OPENAI_TYPES = {
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
# Status → Anthropic's `error.type` (its documented table; 503 as vLLM maps it).
_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    408: "timeout_error",
    413: "request_too_large",
    415: "invalid_request_error",
    429: "rate_limit_error",
    500: "api_error",
    503: "overloaded_error",
    504: "timeout_error",
    529: "overloaded_error",
}

_ANTHROPIC_VOCABULARY = frozenset(_ANTHROPIC_TYPES.values())


def _type_for(status: int) -> str:
    """OpenAI's error ``type`` for an HTTP status."""
    return _OPENAI_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")


def anthropic_type(status: int) -> str:
    """Anthropic's ``error.type`` for an HTTP status."""
    return _ANTHROPIC_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")


def shape_for_path(path: str) -> Shape:
    """The error shape a client of ``path`` understands."""
    return ANTHROPIC if path.startswith("/v1/messages") else OPENAI


class ProxyError(Exception):
    """An error the proxy answers itself, in the shape of the client's API."""

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

    def body(self, shape: Shape = OPENAI) -> bytes:
        if shape == ANTHROPIC:
            return anthropic_error_body(self.status, self.message)
        return error_body(self.message, self.type, self.param, self.code)

    def response(self, extra_headers: dict[str, str] | None = None, shape: Shape = OPENAI) -> Response:
        headers = {**self.headers, **(extra_headers or {})}
        return Response(
            self.body(shape), status_code=self.status, media_type="application/json", headers=headers
        )


def configuration_error(message: str, code: str) -> ProxyError:
    """A problem only the operator can fix: a 400 that SDKs and agents do not retry
    (``x-should-retry: false``), never a 503 or Anthropic's ``overloaded_error``, which make
    Claude Code retry for minutes and call it temporary."""
    return ProxyError(
        400,
        f"offload-router is not configured to serve this: {message}",
        code=code,
        type="invalid_request_error",
        headers={"x-should-retry": "false"},
    )


def error_body(message: str, type: str, param: str | None = None, code: str | int | None = None) -> bytes:
    return orjson.dumps({"error": {"message": message, "type": type, "param": param, "code": code}})


def anthropic_error_body(status: int, message: str, type: str | None = None) -> bytes:
    return orjson.dumps(
        {"type": "error", "error": {"type": type or anthropic_type(status), "message": message}}
    )


def sse_error_event(message: str, type: str = "server_error", code: str | int | None = None) -> bytes:
    """The in-stream chat error that vLLM sends once headers are out, followed by ``[DONE]``."""
    return b"data: " + error_body(message, type, None, code) + b"\n\ndata: [DONE]\n\n"


class SecretMask:
    """Replaces the configured secrets in bytes the proxy relays from an upstream.

    Some upstreams echo the request's ``Authorization`` header in an error body;
    relayed verbatim it would hand the cloud key to the client. Only error
    bodies (small, rare) pass through here, never a successful answer.
    """

    def __init__(self, secrets: Iterable[str | None]) -> None:
        # Longest first, so a key that contains another is masked whole. Short
        # strings are no secret worth the false positives.
        found = {s.encode() for s in secrets if s and len(s) >= 8}
        self._secrets = sorted(found, key=len, reverse=True)

    def __call__(self, data: bytes) -> bytes:
        for secret in self._secrets:
            if secret in data:
                data = data.replace(secret, b"<redacted>")
        return data


def normalise_upstream_error(status: int, body: bytes, shape: Shape = OPENAI) -> bytes:
    """An upstream error body in the shape the client expects.

    Kept as it is when it already has that shape (with vLLM's integer ``code``
    made a string: Codex reads ``code`` as a string), else wrapped: vLLM's 401
    body is ``{"error": "Unauthorized"}``, vLLM's body-validation errors on
    ``/v1/messages`` come in OpenAI's shape, and a load balancer may answer HTML.
    """
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if shape == ANTHROPIC:
        if parsed is not None and parsed.get("type") == "error" and isinstance(error, dict):
            if error.get("type") in _ANTHROPIC_VOCABULARY:
                return body
            # vLLM 0.32 wraps its handler errors in Anthropic's envelope but keeps its own
            # Python-style type names ("BadRequestError"): give them Anthropic's word.
            return orjson.dumps({**parsed, "error": {**error, "type": anthropic_type(status)}})
        return anthropic_error_body(status, "upstream error: " + _message(error, body, status))
    if isinstance(error, dict) and "message" in error:
        if isinstance(error.get("code"), int):
            return error_body(
                str(error["message"]), str(error.get("type")), error.get("param"), str(error["code"])
            )
        return body
    return error_body("upstream error: " + _message(error, body, status), _type_for(status), None, None)


def _message(error: object, body: bytes, status: int) -> str:
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    if isinstance(error, str):
        return error
    return body[:500].decode("utf-8", "replace").strip() or f"upstream answered HTTP {status}"


def error_message(body: bytes) -> str:
    """The message of an error body in either shape (for the access log), else ''."""
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return ""
    error = parsed.get("error") if isinstance(parsed, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else ""
