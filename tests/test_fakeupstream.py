"""The fake upstream is only worth its tests if real clients accept it: the SDKs talk to it directly.

No proxy here. Each test drives the openai or anthropic SDK (or raw httpx,
where the wire itself is the point) against one fake, and checks what a real
vLLM, OpenAI or Anthropic server would have made the client see.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from router.fake.protocol import REASONING, Behaviour
from router.fake.replies import cache_split, example_arguments, plan_reply, prompt_tokens, within_limit
from router.fake.upstream import RunningFake, start_in_thread
from tests.conftest import fake_config, fake_state
from tests.harness import CLOUD_KEY, LOCAL_MODEL, sse_events, wait_until

ANTHROPIC_KEY = "sk-ant-cloud-secret-0123456789"
VLLM_KEY = "vllm-box-key-0123456789"
REPLY = "".join(Behaviour().reply_tokens)
USER = [{"role": "user", "content": "list the files"}]
# Codex's shell tool (Responses) and Claude Code's Bash tool (Messages), as far as the schema goes.
CODEX_SHELL = {
    "type": "function",
    "name": "shell",
    "description": "Runs a shell command",
    "strict": False,
    "parameters": {
        "type": "object",
        "properties": {
            "command": {"type": "array", "items": {"type": "string"}},
            "workdir": {"type": "string"},
            "timeout_ms": {"type": "number"},
        },
        "required": ["command"],
    },
}
CLAUDE_BASH = {
    "name": "Bash",
    "description": "Executes a bash command",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
        "required": ["command"],
    },
}


def last_body(fake: RunningFake) -> dict[str, Any]:
    return fake_state(fake)["received"][-1]["body"]


# ------------------------------------------------------------- Responses


@pytest.fixture
def keyed_vllm() -> Iterator[RunningFake]:
    """A vLLM box started with ``--api-key``: only a Bearer token gets in."""
    fake = start_in_thread("vllm", api_key=VLLM_KEY, model=LOCAL_MODEL)
    yield fake
    fake.stop()


def openai_client(fake: RunningFake) -> openai.OpenAI:
    key = CLOUD_KEY if fake.fake.mode == "cloud" else "unused"
    return openai.OpenAI(base_url=fake.url, api_key=key, max_retries=0)


@pytest.fixture(params=["vllm", "cloud"])
def responses_fake(request: pytest.FixtureRequest) -> RunningFake:
    return request.getfixturevalue("local_fake" if request.param == "vllm" else "cloud_fake")


def test_responses_create_has_the_response_object_and_recomputable_usage(responses_fake: RunningFake) -> None:
    response = openai_client(responses_fake).responses.create(
        model="any", instructions="be brief", input="hello", prompt_cache_key="conv-1"
    )
    assert response.id.startswith("resp_") and response.object == "response"
    assert response.status == "completed" and response.output_text == REPLY
    [message] = response.output
    assert message.type == "message" and message.id.startswith("msg_")
    body = last_body(responses_fake)
    prompt = prompt_tokens("responses", body)
    cached, written = cache_split("responses", responses_fake.fake.mode, body)
    assert cached > 0  # a prompt_cache_key: half the prompt came from cache
    usage = response.usage
    assert usage is not None
    assert (usage.input_tokens, usage.input_tokens_details.cached_tokens) == (
        prompt,
        cached,
    )  # includes cached
    assert usage.input_tokens_details.cache_write_tokens == written
    assert usage.output_tokens == len(Behaviour().reply_tokens)
    assert usage.total_tokens == prompt + usage.output_tokens


def test_vllm_responses_reasoning_comes_first_and_counts_in_output(local_fake: RunningFake) -> None:
    response = openai_client(local_fake).responses.create(
        model="any", input="hi", reasoning={"effort": "low"}
    )
    reasoning, message = response.output
    assert reasoning.type == "reasoning" and reasoning.id.startswith("rs_")
    assert reasoning.content is not None and reasoning.content[0].text == "".join(REASONING)
    assert response.usage is not None
    assert response.usage.output_tokens_details.reasoning_tokens == len(REASONING)
    assert response.usage.output_tokens == len(REASONING) + len(Behaviour().reply_tokens)


def test_responses_stream_is_framed_like_vllm(local_fake: RunningFake) -> None:
    """``event:`` lines, sequence numbers from 0, one response id, usage at the end, no [DONE]."""
    events = list(openai_client(local_fake).responses.create(model="any", input="hi", stream=True))
    types = [e.type for e in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[2:5] == [
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
    ]
    assert types[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    lifecycle = [e.response for e in events if e.type in ("response.created", "response.completed")]
    assert lifecycle[0].id == lifecycle[1].id
    assert lifecycle[0].usage is None and lifecycle[1].usage is not None
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == REPLY

    raw = httpx.post(f"{local_fake.url}/responses", json={"model": "any", "input": "hi", "stream": True}).text
    framed = sse_events(raw)
    assert all(name == json.loads(data)["type"] for name, data in framed)
    assert "[DONE]" not in raw


def test_responses_stream_helper_gets_the_final_response(responses_fake: RunningFake) -> None:
    """openai-python's strict accumulator (one id, no repeated output_index, a completed event)."""
    with openai_client(responses_fake).responses.stream(model="any", input="hi") as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == final.output_text == REPLY
    assert final.usage is not None and final.usage.total_tokens > final.usage.output_tokens


def test_responses_tool_round_trip(responses_fake: RunningFake) -> None:
    """Codex's loop: a call it can run, its output sent back, then text; previous_response_id works."""
    client = openai_client(responses_fake)
    with client.responses.stream(model="any", input="list the files", tools=[CODEX_SHELL]) as stream:
        first = stream.get_final_response()
    [call] = first.output
    assert call.type == "function_call" and call.name == "shell" and call.call_id.startswith("call_")
    assert json.loads(call.arguments) == {"command": ["bash", "-lc", "echo hello"]}
    history: list[Any] = [
        {"role": "user", "content": "list the files"},
        {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
        {"type": "function_call_output", "call_id": call.call_id, "output": "hello\n"},
    ]
    second = client.responses.create(model="any", input=history, tools=[CODEX_SHELL])
    assert second.output_text == REPLY
    # The same follow-up as a continuation of the stored first response.
    chained = client.responses.create(
        model="any", input=history[2:], tools=[CODEX_SHELL], previous_response_id=first.id
    )
    assert chained.output_text == REPLY


def test_responses_previous_response_id_must_be_minted_here(
    local_fake: RunningFake, cloud_fake: RunningFake
) -> None:
    with pytest.raises(openai.NotFoundError) as vllm_error:
        openai_client(local_fake).responses.create(
            model="any", input="hi", previous_response_id="resp_elsewhere"
        )
    assert vllm_error.value.body == {
        "message": "Response with id 'resp_elsewhere' not found.",
        "type": "NotFoundError",
        "param": None,
        "code": 404,
    }
    with pytest.raises(openai.BadRequestError) as cloud_error:
        openai_client(cloud_fake).responses.create(
            model="any", input="hi", previous_response_id="resp_elsewhere"
        )
    assert cloud_error.value.code == "previous_response_not_found"
    # store: false keeps nothing to chain onto.
    unstored = openai_client(local_fake).responses.create(model="any", input="hi", store=False)
    with pytest.raises(openai.NotFoundError):
        openai_client(local_fake).responses.create(model="any", input="hi", previous_response_id=unstored.id)


def test_responses_incomplete_when_max_output_tokens_cuts_the_reply(local_fake: RunningFake) -> None:
    client = openai_client(local_fake)
    whole = client.responses.create(model="any", input="hi", max_output_tokens=3)
    assert whole.status == "incomplete" and whole.incomplete_details is not None
    assert whole.incomplete_details.reason == "max_output_tokens"
    assert whole.output_text == "".join(Behaviour().reply_tokens[:3])
    assert whole.usage is not None and whole.usage.output_tokens == 3
    body = last_body(local_fake)
    limited = within_limit("responses", body, plan_reply("responses", "vllm", body, Behaviour()))
    assert (limited.output_tokens, limited.truncated) == (3, True)  # the helper tests recompute with
    events = list(client.responses.create(model="any", input="hi", max_output_tokens=3, stream=True))
    assert events[-1].type == "response.incomplete" and events[-1].response.usage is not None
    helper = client.responses.stream(model="any", input="hi", max_output_tokens=3)
    with helper as stream, pytest.raises(RuntimeError, match="response.completed"):
        stream.get_final_response()  # as openai-python treats a length-capped turn


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"input": [{"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}]},
            "Encrypted content is not supported.",
        ),
        (
            {
                "input": [
                    {
                        "type": "local_shell_call",
                        "id": "x",
                        "call_id": "c",
                        "action": {},
                        "status": "completed",
                    }
                ]
            },
            "Unsupported input item type: local_shell_call",
        ),
        (  # a malformed item type is refused like any other, never a 500
            {"input": [{"type": {"x": 1}, "content": "hi"}]},
            "Unsupported input item type: {'x': 1}",
        ),
        (
            {
                "input": "patch it",
                "tools": [
                    {"type": "custom", "name": "apply_patch", "format": {"type": "grammar", "syntax": "lark"}}
                ],
            },
            "Custom tools with a grammar format are not supported",
        ),
    ],
)
def test_vllm_responses_refuses_what_vllm_refuses(local_fake: RunningFake, extra: dict, message: str) -> None:
    with pytest.raises(openai.BadRequestError) as error:
        openai_client(local_fake).responses.create(model="any", **extra)
    assert error.value.body == {"message": message, "type": "BadRequestError", "param": None, "code": 400}


@pytest.mark.parametrize("field", ["chat_template_kwargs", "top_k"])
def test_cloud_responses_refuses_vllm_only_fields(cloud_fake: RunningFake, field: str) -> None:
    with pytest.raises(openai.BadRequestError) as error:
        openai_client(cloud_fake).responses.create(model="any", input="hi", extra_body={field: {}})
    assert error.value.code == "unknown_parameter" and error.value.param == field
    assert error.value.message.endswith(f"Unknown parameter: '{field}'.")


# ------------------------------------------------------------- Messages


@pytest.fixture(params=["vllm", "anthropic"])
def messages_fake(request: pytest.FixtureRequest) -> RunningFake:
    return request.getfixturevalue("keyed_vllm" if request.param == "vllm" else "anthropic_fake")


def anthropic_client(fake: RunningFake, **auth: Any) -> anthropic.Anthropic:
    """The SDK on the host root, as Claude Code is configured; api_key unless told otherwise."""
    key = ANTHROPIC_KEY if fake.fake.mode == "anthropic" else VLLM_KEY
    return anthropic.Anthropic(base_url=fake.root, max_retries=0, **(auth or {"api_key": key}))


def total_input(usage: Any) -> int:
    return (
        usage.input_tokens + (usage.cache_creation_input_tokens or 0) + (usage.cache_read_input_tokens or 0)
    )


def test_messages_create_has_the_message_and_its_usage(messages_fake: RunningFake) -> None:
    system = [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]
    message = anthropic_client(messages_fake).messages.create(
        model="claude-sonnet-4-6", max_tokens=200, system=system, messages=USER
    )
    anthropic_mode = messages_fake.fake.mode == "anthropic"
    assert message.id.startswith("msg_" if anthropic_mode else "chatcmpl-")
    assert [b.type for b in message.content] == ["text"] and message.content[0].text == REPLY
    assert message.stop_reason == "end_turn"
    body = last_body(messages_fake)
    assert total_input(message.usage) == prompt_tokens("messages", body)
    if anthropic_mode:  # cache_control on the system block: read and written, outside input_tokens
        read, written = cache_split("messages", "anthropic", body)
        assert read > 0 and written > 0
        assert (message.usage.cache_read_input_tokens, message.usage.cache_creation_input_tokens) == (
            read,
            written,
        )
        assert message.usage.input_tokens == prompt_tokens("messages", body) - read - written
    else:  # vLLM with the recipes' --enable-prompt-tokens-details: cache fields, nothing cached here
        assert (message.usage.cache_read_input_tokens, message.usage.cache_creation_input_tokens) == (0, 0)
        assert message.usage.input_tokens == prompt_tokens("messages", body)


def test_messages_stream_tool_use_then_tool_result(messages_fake: RunningFake) -> None:
    """Claude Code's loop: thinking and a Bash call it can run, the result, then an answer."""
    client = anthropic_client(messages_fake)
    thinking = {"type": "enabled", "budget_tokens": 1024}
    with client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=4096, messages=USER, tools=[CLAUDE_BASH], thinking=thinking
    ) as stream:
        first = stream.get_final_message()
    assert [b.type for b in first.content] == ["thinking", "tool_use"] and first.stop_reason == "tool_use"
    reasoning, call = first.content
    assert reasoning.type == "thinking" and reasoning.thinking == "".join(REASONING) and reasoning.signature
    assert call.type == "tool_use" and call.name == "Bash" and call.input == {"command": "echo hello"}
    assert call.id.startswith("toolu_" if messages_fake.fake.mode == "anthropic" else "chatcmpl-tool-")
    follow_up: list[Any] = [
        *USER,
        {"role": "assistant", "content": first.content},  # the thinking block goes back, signature and all
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "hello"}]},
    ]
    with client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=4096, messages=follow_up, tools=[CLAUDE_BASH]
    ) as stream:
        second = stream.get_final_message()
    assert [b.type for b in second.content] == ["text"] and second.stop_reason == "end_turn"
    assert second.content[0].text == REPLY


def test_messages_stream_usage_is_cumulative_last_wins(messages_fake: RunningFake) -> None:
    """message_start holds the input and a small output count; message_delta the final totals."""
    system = [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]
    body = {"model": "m", "max_tokens": 100, "system": system, "messages": USER, "stream": True}
    headers = {"x-api-key": ANTHROPIC_KEY, "anthropic-version": "2023-06-01"}
    if messages_fake.fake.mode == "vllm":
        headers = {"Authorization": f"Bearer {VLLM_KEY}"}
    raw = httpx.post(f"{messages_fake.root}/v1/messages", json=body, headers=headers).text
    events = sse_events(raw)
    assert all(name is not None for name, _ in events)  # the SDK skips unnamed events
    names = [name for name, _ in events]
    pinged = messages_fake.fake.mode == "anthropic"  # Anthropic pings after message_start; vLLM never
    head = (
        ["message_start", "ping", "content_block_start"]
        if pinged
        else ["message_start", "content_block_start"]
    )
    assert names[: len(head)] == head and names.count("ping") == int(pinged)
    assert names[-2:] == ["message_delta", "message_stop"] and "[DONE]" not in raw
    start = json.loads(events[0][1])["message"]["usage"]
    final = json.loads(events[-2][1])["usage"]
    assert final["output_tokens"] == len(Behaviour().reply_tokens) != start["output_tokens"]
    assert total_input(anthropic.types.Usage(**final)) == prompt_tokens("messages", last_body(messages_fake))

    with anthropic_client(messages_fake).messages.stream(
        model="m", max_tokens=100, system=system, messages=USER
    ) as stream:
        usage = stream.get_final_message().usage
    assert usage.output_tokens == final["output_tokens"]
    assert total_input(usage) == prompt_tokens("messages", last_body(messages_fake))  # not doubled


def test_count_tokens_equals_the_input_of_the_same_conversation(messages_fake: RunningFake) -> None:
    client = anthropic_client(messages_fake)
    conversation: dict[str, Any] = {"system": "You are terse.", "messages": USER, "tools": [CLAUDE_BASH]}
    counted = client.messages.count_tokens(model="claude-sonnet-4-6", **conversation)
    created = client.messages.create(model="claude-sonnet-4-6", max_tokens=100, **conversation)
    assert counted.input_tokens == total_input(created.usage) == prompt_tokens("count_tokens", conversation)
    raw = client.messages.with_raw_response.count_tokens(model="claude-sonnet-4-6", **conversation)
    if messages_fake.fake.mode == "vllm":
        assert raw.http_response.json()["context_management"] == {
            "original_input_tokens": counted.input_tokens
        }
    else:
        assert raw.http_response.json() == {"input_tokens": counted.input_tokens}


def test_anthropic_takes_the_key_as_bearer_or_x_api_key(anthropic_fake: RunningFake) -> None:
    """SDK 2.x sends api_key and auth_token both as Bearer; Claude Code and SDK 1.x send x-api-key."""
    ways = [
        {"api_key": ANTHROPIC_KEY},
        {"auth_token": ANTHROPIC_KEY},
        {"api_key": None, "default_headers": {"x-api-key": ANTHROPIC_KEY}},
    ]
    for auth in ways:
        reply = anthropic_client(anthropic_fake, **auth).messages.create(
            model="m", max_tokens=10, messages=USER
        )
        assert reply.content[0].type == "text"
    seen = [r["headers"] for r in fake_state(anthropic_fake)["received"]]
    assert seen[0]["authorization"] == seen[1]["authorization"] == f"Bearer {ANTHROPIC_KEY}"
    assert seen[2]["x-api-key"] == ANTHROPIC_KEY and "authorization" not in seen[2]
    with pytest.raises(anthropic.AuthenticationError) as error:
        anthropic_client(anthropic_fake, api_key="wrong").messages.create(
            model="m", max_tokens=10, messages=USER
        )
    assert error.value.body["error"]["type"] == "authentication_error"  # type: ignore[index]


def test_vllm_messages_reads_only_a_bearer_key(keyed_vllm: RunningFake) -> None:
    for auth in ({"api_key": VLLM_KEY}, {"auth_token": VLLM_KEY}):
        anthropic_client(keyed_vllm, **auth).messages.create(model="m", max_tokens=10, messages=USER)
    client = anthropic_client(keyed_vllm, api_key=None, default_headers={"x-api-key": VLLM_KEY})
    with pytest.raises(anthropic.AuthenticationError) as error:
        client.messages.create(model="m", max_tokens=10, messages=USER)
    assert error.value.body == {"error": "Unauthorized"}


def anthropic_error(response: httpx.Response) -> str:
    """The message of an Anthropic-shaped error, checking the shape on the way."""
    body = response.json()
    assert body["type"] == "error" and body["request_id"].startswith("req_"), body
    assert body["error"]["type"] == "invalid_request_error"
    return body["error"]["message"]


def test_anthropic_is_strict(anthropic_fake: RunningFake) -> None:
    url, key = f"{anthropic_fake.root}/v1/messages", {"x-api-key": ANTHROPIC_KEY}
    headers = {**key, "anthropic-version": "2023-06-01"}
    body = {"model": "m", "max_tokens": 10, "messages": USER}
    no_version = httpx.post(url, json=body, headers=key)
    assert no_version.status_code == 400 and "anthropic-version" in anthropic_error(no_version)
    extra = httpx.post(url, json={**body, "chat_template_kwargs": {}}, headers=headers)
    assert anthropic_error(extra) == "chat_template_kwargs: Extra inputs are not permitted"
    metadata = httpx.post(url, json={**body, "metadata": {"user_id": "u", "session": "s"}}, headers=headers)
    assert anthropic_error(metadata) == "metadata: Extra inputs are not permitted"
    assert httpx.post(url, json={**body, "metadata": {"user_id": "u"}}, headers=headers).status_code == 200
    # A thinking block signed by someone else (vLLM signs with a random uuid).
    forged = [
        *USER,
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm", "signature": "0b5e-uuid"}]},
        {"role": "user", "content": "go on"},
    ]
    with pytest.raises(anthropic.BadRequestError, match="Invalid `signature`"):
        anthropic_client(anthropic_fake).messages.create(model="m", max_tokens=10, messages=forged)  # type: ignore[arg-type]
    assert httpx.get(f"{anthropic_fake.url}/chat/completions").status_code == 404  # Messages only


@pytest.mark.parametrize(
    ("change", "param"),
    [
        ({"tools": [{"type": "web_search_20250305", "name": "web_search"}]}, "tools.0.input_schema"),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "document",
                                "source": {"type": "text", "media_type": "text/plain", "data": "x"},
                            }
                        ],
                    }
                ]
            },
            "messages.0.content.0.type",
        ),
    ],
)
def test_vllm_messages_validation_errors_are_openai_shaped(
    local_fake: RunningFake, change: dict, param: str
) -> None:
    client = anthropic.Anthropic(base_url=local_fake.root, api_key="unused", max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as error:
        client.messages.create(**{"model": "m", "max_tokens": 10, "messages": USER, **change})
    body = error.value.body
    assert isinstance(body, dict) and body["error"]["code"] == 400 and body["error"]["type"] == "Bad Request"
    assert body["error"]["param"] == f"body.{param}"  # vLLM 0.32: the loc, dotted
    missing = httpx.post(f"{local_fake.root}/v1/messages", json={"model": "m", "messages": USER})
    assert missing.status_code == 400 and missing.json()["error"]["param"] == "body.max_tokens"


# ------------------------------------------------------------- failures, all APIs


@pytest.mark.parametrize(
    ("mode", "path", "body"),
    [
        ("vllm", "/v1/chat/completions", {"model": "m", "messages": USER}),
        ("cloud", "/v1/chat/completions", {"model": "m", "messages": USER}),
        ("vllm", "/v1/responses", {"model": "m", "input": "hi"}),
        ("cloud", "/v1/responses", {"model": "m", "input": "hi"}),
        ("vllm", "/v1/messages", {"model": "m", "max_tokens": 9, "messages": USER}),
        ("anthropic", "/v1/messages", {"model": "m", "max_tokens": 9, "messages": USER}),
    ],
)
def test_injected_failure_speaks_each_api_and_mode(mode: str, path: str, body: dict) -> None:
    fake = start_in_thread(mode, api_key="k" if mode != "vllm" else None)
    try:
        limits = {"retry-after": "7", "retry-after-ms": "7000", "x-ratelimit-remaining-requests": "0"}
        fake_config(fake, fail_status=429, fail_count=1, fail_headers=limits, echo_auth_in_error=True)
        headers = {"Authorization": "Bearer k", "anthropic-version": "2023-06-01"}
        failed = httpx.post(fake.root + path, json=body, headers=headers)
        assert failed.status_code == 429
        assert {k: failed.headers[k] for k in limits} == limits
        assert "Bearer k" in failed.text  # the upstream echoed the credential it received
        error = failed.json()
        if path == "/v1/messages":
            assert error["type"] == "error" and error["error"]["type"] == "rate_limit_error"
            assert ("request_id" in error) == (mode == "anthropic")
        else:
            assert isinstance(error["error"]["code"], int if mode == "vllm" else str)
        assert httpx.post(fake.root + path, json=body, headers=headers).status_code == 200  # fail_count=1
    finally:
        fake.stop()


def test_sdks_raise_their_typed_errors(local_fake: RunningFake, anthropic_fake: RunningFake) -> None:
    fake_config(local_fake, fail_status=429, fail_count=1)
    with pytest.raises(openai.RateLimitError):
        openai_client(local_fake).responses.create(model="any", input="hi")
    fake_config(local_fake, fail_status=503, fail_count=1)
    with pytest.raises(anthropic.InternalServerError) as vllm_busy:  # vLLM translates 503 to overloaded_error
        anthropic.Anthropic(base_url=local_fake.root, api_key="x", max_retries=0).messages.create(
            model="m", max_tokens=9, messages=USER
        )
    assert vllm_busy.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
    fake_config(anthropic_fake, fail_status=529, fail_count=1)
    with pytest.raises(anthropic.OverloadedError):
        anthropic_client(anthropic_fake).messages.create(model="m", max_tokens=9, messages=USER)


def test_mid_stream_death_is_a_transport_error(local_fake: RunningFake) -> None:
    """vLLM's failure mode: the socket closes, no terminal event, nothing an SDK could mistake for an end."""
    fake_config(local_fake, die_after_chunks=4)
    with pytest.raises(openai.APIConnectionError) as error:
        list(openai_client(local_fake).responses.create(model="any", input="hi", stream=True))
    assert type(error.value.__cause__).__name__ == "RemoteProtocolError"  # the SDK's transport (httpx2)
    client = anthropic.Anthropic(base_url=local_fake.root, api_key="x", max_retries=0)
    with pytest.raises(Exception) as cut:  # noqa: PT011 - the SDK lets its transport's error through
        list(client.messages.create(model="m", max_tokens=99, messages=USER, stream=True))
    assert type(cut.value).__name__ == "RemoteProtocolError"
    assert wait_until(lambda: fake_state(local_fake)["active"] == 0)


def test_in_stream_errors_are_each_apis_own(local_fake: RunningFake, anthropic_fake: RunningFake) -> None:
    fake_config(local_fake, stream_error_after_chunks=5)
    with pytest.raises(openai.APIError, match="Internal server error"):  # chat: the error object, then [DONE]
        list(openai_client(local_fake).chat.completions.create(model="m", messages=USER, stream=True))

    events = list(openai_client(local_fake).responses.create(model="any", input="hi", stream=True))
    assert events[-1].type == "response.failed" and events[-1].sequence_number == 5
    assert events[-1].response.id == events[0].response.id and events[-1].response.error is not None

    fake_config(anthropic_fake, stream_error_after_chunks=5)
    with pytest.raises(anthropic.APIStatusError) as error:
        list(
            anthropic_client(anthropic_fake).messages.create(
                model="m", max_tokens=99, messages=USER, stream=True
            )
        )
    assert error.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
    raw = httpx.post(
        f"{anthropic_fake.root}/v1/messages",
        json={"model": "m", "max_tokens": 99, "messages": USER, "stream": True},
        headers={"x-api-key": ANTHROPIC_KEY, "anthropic-version": "2023-06-01"},
    ).text
    names = [name for name, _ in sse_events(raw)]
    assert names[-2:] == ["content_block_stop", "error"] and "message_stop" not in names


def test_header_delay_holds_the_status_line(local_fake: RunningFake) -> None:
    fake_config(local_fake, header_delay=0.4)
    started = time.monotonic()
    with httpx.stream(
        "POST", f"{local_fake.url}/responses", json={"model": "m", "input": "hi", "stream": True}
    ):
        assert time.monotonic() - started >= 0.4  # nothing, not even headers, before the delay


def test_body_bytes_pads_a_whole_body(local_fake: RunningFake) -> None:
    fake_config(local_fake, body_bytes=200_000)
    raw = openai_client(local_fake).responses.with_raw_response.create(model="any", input="hi")
    assert 199_000 <= len(raw.http_response.content) <= 200_000
    assert raw.parse().output_text == REPLY


def test_client_disconnect_cancels_the_generation(local_fake: RunningFake) -> None:
    fake_config(local_fake, chunk_delay=0.2)
    with httpx.stream(
        "POST",
        f"{local_fake.root}/v1/messages?beta=true",
        json={"model": "m", "max_tokens": 99, "messages": USER, "stream": True},
    ) as response:
        next(response.iter_bytes())
    assert wait_until(lambda: fake_state(local_fake)["cancelled"] == 1)
    assert fake_state(local_fake)["active"] == 0
    [seen] = fake_state(local_fake)["received"]
    assert (seen["path"], seen["query"], seen["body"]["max_tokens"]) == ("/v1/messages", "beta=true", 99)


# ------------------------------------------------------------- the tool rule


def test_schema_arguments_are_runnable() -> None:
    assert example_arguments(CODEX_SHELL["parameters"]) == {"command": ["bash", "-lc", "echo hello"]}
    assert example_arguments(CLAUDE_BASH["input_schema"]) == {"command": "echo hello"}
    nested = {
        "type": "object",
        "properties": {
            "mode": {"enum": ["fast", "slow"]},
            "n": {"type": "integer"},
            "opts": {"type": ["object", "null"]},
        },
        "required": ["mode", "n", "opts"],
    }
    assert example_arguments(nested) == {"mode": "fast", "n": 1, "opts": {}}


def test_chat_follows_the_tool_rule_when_asked(local_fake: RunningFake) -> None:
    tool = {"type": "function", "function": {"name": "shell", "parameters": CLAUDE_BASH["input_schema"]}}
    call = {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}
    after_result = [
        *USER,
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    client = openai_client(local_fake)
    legacy = client.chat.completions.create(model="m", messages=after_result, tools=[tool])  # type: ignore[list-item]
    assert legacy.choices[0].finish_reason == "tool_calls"  # the old rule: always a call
    fake_config(local_fake, chat_always_calls=False)
    answered = client.chat.completions.create(model="m", messages=after_result, tools=[tool])  # type: ignore[list-item]
    assert answered.choices[0].message.content == REPLY
    fresh = client.chat.completions.create(model="m", messages=USER, tools=[tool])  # type: ignore[list-item]
    [made] = fresh.choices[0].message.tool_calls or []
    assert json.loads(made.function.arguments) == {"command": "echo hello"}  # type: ignore[union-attr]


def test_configured_tool_call_is_used_by_every_api(local_fake: RunningFake) -> None:
    fake_config(local_fake, tool_call={"name": "Read", "arguments": '{"file_path": "README.md"}'})
    responses = openai_client(local_fake).responses.create(model="any", input="hi", tools=[CODEX_SHELL])  # type: ignore[list-item]
    assert (responses.output[0].name, responses.output[0].arguments) == ("Read", '{"file_path": "README.md"}')  # type: ignore[union-attr]
    client = anthropic.Anthropic(base_url=local_fake.root, api_key="x", max_retries=0)
    message = client.messages.create(model="m", max_tokens=99, messages=USER, tools=[CLAUDE_BASH])  # type: ignore[list-item]
    assert message.content[-1].type == "tool_use" and message.content[-1].input == {"file_path": "README.md"}
    tool = {"type": "function", "function": {"name": "shell", "parameters": {}}}
    chat = openai_client(local_fake).chat.completions.create(model="m", messages=USER, tools=[tool])  # type: ignore[list-item]
    assert chat.choices[0].message.tool_calls[0].function.name == "Read"  # type: ignore[index,union-attr]
