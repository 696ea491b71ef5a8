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
_ITEM = {
    "type": "object",
    "properties": {
        "type": {"type": "string"},
        "role": {"type": "string", "enum": ["system", "developer", "user", "assistant"]},
        "content": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "object"}}]},
        "call_id": {"type": "string"},
        "output": {"type": "string"},
    },
}
RESPONSES = _body(
    {
        "type": "object",
        "required": ["input"],
        "properties": {
            "model": {"type": "string"},
            "stream": {"type": "boolean"},
            "instructions": {"type": "string"},
            "max_output_tokens": {"type": "integer", "minimum": 1},
            "input": {"anyOf": [{"type": "string"}, {"type": "array", "minItems": 1, "items": _ITEM}]},
        },
    }
)
_BLOCK = {
    "type": "object",
    "required": ["type"],
    "properties": {"type": {"type": "string"}, "text": {"type": "string"}},
}
_ANTHROPIC_MESSAGE = {
    "type": "object",
    "required": ["role", "content"],
    "properties": {
        "role": {"type": "string", "enum": ["user", "assistant"]},
        "content": {"anyOf": [{"type": "string"}, {"type": "array", "items": _BLOCK}]},
    },
}
_MESSAGES_PROPERTIES = {
    "model": {"type": "string"},
    "system": {"anyOf": [{"type": "string"}, {"type": "array", "items": _BLOCK}]},
    "messages": {"type": "array", "minItems": 1, "items": _ANTHROPIC_MESSAGE},
}
MESSAGES = _body(
    {
        "type": "object",
        "required": ["messages", "max_tokens"],
        "properties": {
            **_MESSAGES_PROPERTIES,
            "stream": {"type": "boolean"},
            "max_tokens": {"type": "integer", "minimum": 1},
        },
    }
)
COUNT_TOKENS = _body({"type": "object", "required": ["messages"], "properties": _MESSAGES_PROPERTIES})
STATE_SWITCHES = _body(
    {
        "type": "object",
        "required": ["shadow_runs"],
        "properties": {"shadow_runs": {"type": "boolean"}},
        "additionalProperties": False,
    }
)
