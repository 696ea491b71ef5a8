"""Request-body schemas for the OpenAPI document (docs and schema testing only).

The handlers never validate against these: bodies are parsed once with orjson
and unknown fields pass through. These describe what a client may send.
"""

from __future__ import annotations

from typing import Any

_MESSAGE = {
    "type": "object",
    "required": ["role"],
    "properties": {
        "role": {"type": "string", "enum": ["system", "developer", "user", "assistant", "tool"]},
        "content": {
            "anyOf": [
                {"type": "string"},
                {"type": "null"},
                {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["type"],
                        "properties": {"type": {"type": "string"}, "text": {"type": "string"}},
                    },
                },
            ]
        },
    },
}
_COMMON = {
    "model": {"type": "string"},
    "stream": {"type": "boolean"},
    "max_tokens": {"type": "integer", "minimum": 1},
    "temperature": {"type": "number"},
}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


CHAT = _body(
    {
        "type": "object",
        "required": ["messages"],
        "properties": {**_COMMON, "messages": {"type": "array", "minItems": 1, "items": _MESSAGE}},
    }
)
COMPLETIONS = _body(
    {"type": "object", "required": ["prompt"], "properties": {**_COMMON, "prompt": {"type": "string"}}}
)
EMBEDDINGS = _body(
    {
        "type": "object",
        "required": ["input"],
        "properties": {"model": {"type": "string"}, "input": {"type": "string"}},
    }
)
