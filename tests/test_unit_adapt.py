"""``Dialect.adapt``: the bytes each kind of backend gets for a client's body.

Per kind: what is stripped (fields the target answers 400 for), what is added (the
backend's model, its ``extra_body``, the usage request, an output cap), and that every
field the proxy has no rule for reaches the upstream exactly as the client sent it.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from router.config import parse_config
from router.dialects import CHAT, COUNT_TOKENS, EMBEDDINGS, MESSAGES, RESPONSES, Dialect
from router.dialects.chat import VLLM_ONLY_FIELDS as CHAT_VLLM_ONLY
from router.forward.backends import Backend

_CONFIG = parse_config(
    {
        "database": {"enabled": False},
        "backends": {
            "local": {
                "kind": "vllm",
                "base_url": "http://127.0.0.1:9/v1",
                "model": "poolside/Laguna-S-2.1-NVFP4",
                "extra_body": {"chat_template_kwargs": {"enable_thinking": False}, "top_k": 20},
            },
            "cloud": {
                "kind": "openai",
                "base_url": "http://127.0.0.1:9/v1",
                "model": "gpt-5.1",
                "api_key": "sk-test",
                "embeddings_model": "text-embedding-3-small",
            },
            "claude": {
                "kind": "anthropic",
                "base_url": "http://127.0.0.1:9",
                "model": "claude-sonnet-4-6",
                "api_key": "sk-ant-test",
            },
        },
        "routing": {"default": "local"},
    },
    env={},
)
BACKENDS = {name: Backend(name, cfg, _CONFIG.health) for name, cfg in _CONFIG.backends.items()}
LOCAL, CLOUD, CLAUDE = BACKENDS["local"], BACKENDS["cloud"], BACKENDS["claude"]
VLLM_SIGNATURE = "0b7c9e2a-1f3d-4c5b-8a6e-9d0f1e2a3b4c"  # vLLM signs thinking with a UUID
ANTHROPIC_SIGNATURE = "EqQBCkYIBxgCKkB" + "x" * 80


def adapt(dialect: Dialect, body: dict[str, Any], backend: Backend) -> tuple[dict[str, Any], bool]:
    """The upstream body (parsed) and whether the client asked for usage; the client's own
    body must come out untouched (a fallback adapts it again for the next backend)."""
    before = copy.deepcopy(body)
    adapted = dialect.adapt(body, backend, None)
    assert body == before, "adapt changed the client's body"
    return orjson.loads(adapted.payload), adapted.client_wants_usage


USER = [{"role": "user", "content": "fix the failing test"}]

# ------------------------------------------------------------------ unknown fields

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
# Field names no rule knows (the x_ prefix keeps them apart from every API's own fields).
_UNKNOWN = st.dictionaries(st.from_regex(r"x_[a-z_]{1,10}", fullmatch=True), _JSON, max_size=5)

_BODIES: dict[str, dict[str, Any]] = {
    "chat": {"model": "auto", "messages": USER, "stream": True},
    "responses": {"model": "auto", "input": "fix the failing test", "stream": True},
    "messages": {"model": "auto", "max_tokens": 512, "messages": USER},
}
_PAIRS = [
    (CHAT, "chat", LOCAL),
    (CHAT, "chat", CLOUD),
    (RESPONSES, "responses", LOCAL),
    (RESPONSES, "responses", CLOUD),
    (MESSAGES, "messages", LOCAL),
    (MESSAGES, "messages", CLAUDE),
]


@settings(max_examples=60, deadline=None)
@given(unknown=_UNKNOWN)
@pytest.mark.parametrize(("dialect", "api", "backend"), _PAIRS, ids=lambda x: getattr(x, "name", None))
def test_unknown_fields_reach_every_backend_untouched(
    dialect: Dialect, api: str, backend: Backend, unknown: dict[str, Any]
) -> None:
    sent, _ = adapt(dialect, {**_BODIES[api], **unknown}, backend)
    assert {k: sent[k] for k in unknown if k in sent} == unknown
    assert set(unknown) <= set(sent)


# ------------------------------------------------------------------ chat


def test_chat_to_vllm_gets_its_model_extras_and_the_usage_request() -> None:
    body = {"model": "auto", "messages": USER, "stream": True, "top_k": 5, "min_p": 0.1}
    sent, client_wants_usage = adapt(CHAT, body, LOCAL)
    assert sent["model"] == "poolside/Laguna-S-2.1-NVFP4"
    assert sent["chat_template_kwargs"] == {"enable_thinking": False}  # the backend's extra_body
    assert sent["top_k"] == 5 and sent["min_p"] == 0.1  # the client's own value wins over extra_body
    assert sent["stream_options"] == {"include_usage": True} and not client_wants_usage
    assert sent["messages"] == USER


def test_chat_client_that_asked_for_usage_is_told_apart() -> None:
    body = {"model": "auto", "messages": USER, "stream": True, "stream_options": {"include_usage": True}}
    _, client_wants_usage = adapt(CHAT, body, CLOUD)
    assert client_wants_usage
    sent, client_wants_usage = adapt(CHAT, {"model": "auto", "messages": USER}, CLOUD)
    assert "stream_options" not in sent and not client_wants_usage  # no stream, nothing to ask


def test_chat_to_openai_strips_what_openai_refuses() -> None:
    history = [
        *USER,
        {"role": "assistant", "content": "done", "reasoning_content": "let me think", "reasoning": "hm"},
        {"role": "user", "content": "thanks, now the docs"},
    ]
    body = {
        "model": "auto",
        "messages": history,
        "max_tokens": 300,
        "top_k": 5,
        "chat_template_kwargs": {"enable_thinking": True},
        "guided_json": {"type": "object"},
        "temperature": 0.2,
    }
    sent, _ = adapt(CHAT, body, CLOUD)
    assert not CHAT_VLLM_ONLY & set(sent)
    assert sent["max_completion_tokens"] == 300 and "max_tokens" not in sent  # gpt-5 refuses max_tokens
    assert sent["messages"][1] == {"role": "assistant", "content": "done"}  # another model's thoughts
    assert sent["messages"][0] == USER[0] and sent["messages"][2] == history[2]
    assert sent["temperature"] == 0.2 and sent["model"] == "gpt-5.1"


def test_chat_to_openai_keeps_an_explicit_max_completion_tokens() -> None:
    sent, _ = adapt(CHAT, {"messages": USER, "max_tokens": 10, "max_completion_tokens": 99}, CLOUD)
    assert sent["max_completion_tokens"] == 99


def test_chat_thinking_asked_by_the_client_reaches_vllm_as_its_switch() -> None:
    sent, _ = adapt(CHAT, {"messages": USER, "reasoning_effort": "high"}, LOCAL)
    assert sent["chat_template_kwargs"] == {"enable_thinking": True}


def test_embeddings_use_the_backends_embeddings_model() -> None:
    sent, _ = adapt(EMBEDDINGS, {"model": "auto", "input": ["a", "b"], "x_tag": 1}, CLOUD)
    assert sent == {"model": "text-embedding-3-small", "input": ["a", "b"], "x_tag": 1}


# ------------------------------------------------------------------ responses


def test_responses_to_vllm_caps_output_and_drops_what_vllm_refuses() -> None:
    body = {
        "model": "auto",
        "input": [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA...", "summary": []},
            {"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "local"}]},
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        ],
        "include": ["web_search_call.action.sources", "reasoning.encrypted_content"],
        "tools": [
            {"type": "custom", "name": "apply_patch", "format": {"type": "grammar", "syntax": "lark"}},
            {"type": "function", "name": "shell", "parameters": {}},
        ],
        "prompt": {"id": "pmpt_1"},
        "background": False,
        "service_tier": "turbo",
    }
    sent, _ = adapt(RESPONSES, body, LOCAL)
    assert sent["max_output_tokens"] == 32768  # vLLM's bound when the client gave none
    assert [i["type"] for i in sent["input"]] == ["message", "reasoning", "function_call_output"]
    assert sent["input"][1]["id"] == "rs_2"  # readable reasoning stays; encrypted goes
    assert sent["include"] == ["reasoning.encrypted_content"]
    assert sent["tools"] == [{"type": "custom", "name": "apply_patch"}, body["tools"][1]]
    assert not {"prompt", "background", "service_tier"} & set(sent)


def test_responses_keeps_the_clients_output_limit_and_a_known_tier() -> None:
    sent, _ = adapt(RESPONSES, {"input": "hi", "max_output_tokens": 77, "service_tier": "flex"}, LOCAL)
    assert sent["max_output_tokens"] == 77 and sent["service_tier"] == "flex"


def test_responses_to_openai_strips_vllm_fields_local_reasoning_and_replayed_ids() -> None:
    body = {
        "model": "auto",
        "input": [
            {
                "type": "message",
                "id": "msg_local1",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "x"}],
            },
            {"type": "reasoning", "id": "rs_local", "summary": []},
            {"type": "reasoning", "id": "rs_oai", "encrypted_content": "gAAA", "summary": []},
            {"type": "item_reference", "id": "msg_oai"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        ],
        "top_k": 3,
        "chat_template_kwargs": {},
        "seed": 1,
    }
    sent, _ = adapt(RESPONSES, body, CLOUD)
    assert not {"top_k", "chat_template_kwargs", "seed"} & set(sent)
    assert "max_output_tokens" not in sent  # no cap for a cloud backend unless configured
    kinds = [(i["type"], i.get("id")) for i in sent["input"]]
    assert kinds == [
        ("message", None),
        ("reasoning", None),
        ("item_reference", "msg_oai"),  # a reference is nothing but its id
        ("function_call_output", None),
    ]
    stored, _ = adapt(RESPONSES, {**body, "store": True}, CLOUD)
    assert [i.get("id") for i in stored["input"]] == ["msg_local1", "rs_oai", "msg_oai", None]


# ------------------------------------------------------------------ messages


def _thinking(signature: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": "hmm", "signature": signature}


def test_messages_to_vllm_drops_server_tools_refused_blocks_and_foreign_thinking() -> None:
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "tools": [
            {"name": "bash", "input_schema": {"type": "object"}},
            {"type": "web_search_20250305", "name": "web_search"},
        ],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "document", "source": {}}, {"type": "text", "text": "read"}],
            },
            {
                "role": "assistant",
                "content": [_thinking(ANTHROPIC_SIGNATURE), {"type": "text", "text": "ok"}],
            },
            {"role": "assistant", "content": [_thinking(VLLM_SIGNATURE)]},
            {"role": "user", "content": [{"type": "search_result", "content": []}]},
        ],
    }
    sent, _ = adapt(MESSAGES, body, LOCAL)
    assert sent["tools"] == [body["tools"][0]]
    contents = [m["content"] for m in sent["messages"]]
    assert contents[0] == [{"type": "text", "text": "read"}]
    assert contents[1] == [{"type": "text", "text": "ok"}]
    assert contents[2] == [_thinking(VLLM_SIGNATURE)]  # its own thinking goes back to vLLM
    assert contents[3] == [{"type": "text", "text": ""}]  # emptied, never an empty list


def test_messages_to_anthropic_drops_vllm_fields_metadata_and_vllm_thinking() -> None:
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "metadata": {"user_id": "u1", "session": "s"},
        "chat_template_kwargs": {"enable_thinking": True},
        "cache_salt": "x",
        "messages": [
            {"role": "assistant", "content": [_thinking(VLLM_SIGNATURE), {"type": "text", "text": "a"}]},
            {"role": "assistant", "content": [_thinking(ANTHROPIC_SIGNATURE)]},
        ],
    }
    sent, _ = adapt(MESSAGES, body, CLAUDE)
    assert not {"chat_template_kwargs", "cache_salt"} & set(sent)
    assert sent["metadata"] == {"user_id": "u1"}
    assert sent["messages"][0]["content"] == [{"type": "text", "text": "a"}]
    assert sent["messages"][1]["content"] == [_thinking(ANTHROPIC_SIGNATURE)]
    assert sent["model"] == "claude-sonnet-4-6"


def test_count_tokens_gets_no_extras_and_no_thinking() -> None:
    sent, _ = adapt(COUNT_TOKENS, {"model": "auto", "messages": USER, "cache_salt": "x"}, LOCAL)
    assert sent == {"model": "poolside/Laguna-S-2.1-NVFP4", "messages": USER, "cache_salt": "x"}
    sent, _ = adapt(COUNT_TOKENS, {"model": "auto", "messages": USER, "cache_salt": "x"}, CLAUDE)
    assert sent == {"model": "claude-sonnet-4-6", "messages": USER}
