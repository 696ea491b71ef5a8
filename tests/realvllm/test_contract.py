"""Each API through the proxy to a real vLLM, streamed and not: plain turns, tools
offered, a tool loop in history, thinking as each client asks for it, count_tokens.
The official SDKs parse what comes back, and the row carries the usage vLLM reported."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest

from tests.harness import ProxyServer
from tests.realvllm.wire import (
    APIS,
    answer_of,
    body_for,
    messages_body,
    reported_usage,
    row_for,
    send,
    unique,
)

CASES = ("plain", "tools", "tool_loop", "thinking")


def _check_whole(api: str, answer: dict[str, Any], thinking: bool) -> None:
    if api == "chat":
        assert answer["object"] == "chat.completion" and answer["id"].startswith("chatcmpl-")
        choice = answer["choices"][0]
        assert choice["finish_reason"] == "stop"  # the tiny model ends its turns; never a tool call
        message = choice["message"]
        assert message["role"] == "assistant" and "tool_calls" not in message
        # With thinking on, the template opens <think> and the reply never closes it: all reasoning.
        assert (bool(message["reasoning"]), bool(message["content"])) == (thinking, not thinking)
    elif api == "responses":
        assert answer["object"] == "response" and answer["status"] == "completed"
        kinds = [item["type"] for item in answer["output"]]
        assert kinds == (["reasoning"] if thinking else ["message"])
    else:
        assert answer["type"] == "message" and answer["stop_reason"] == "end_turn"
        kinds = [block["type"] for block in answer["content"]]
        assert kinds[0] == ("thinking" if thinking else "text")


def _check_stream(api: str, frames: list[tuple[str | None, Any]], thinking: bool) -> None:
    names = [name for name, _ in frames]
    if api == "chat":
        assert set(names) == {None} and frames[-1][1] == "[DONE]"
        chunks = [data for _, data in frames[:-1]]
        assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
        assert chunks[-1]["choices"] == [] and "usage" in chunks[-1]  # include_usage: last chunk
        assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
        deltas = [c["choices"][0]["delta"] for c in chunks[1:-2]]
        field = "reasoning" if thinking else "content"
        assert deltas and all(set(d) == {field} for d in deltas), deltas
        assert len({c["id"] for c in chunks}) == 1
    elif api == "responses":
        assert names[:2] == ["response.created", "response.in_progress"]
        assert names[-1] == "response.completed"
        assert [data["sequence_number"] for _, data in frames] == list(range(len(frames)))
        ids = {
            data["response"]["id"]
            for name, data in frames
            if name.startswith("response.") and "response" in data
        }
        assert len(ids) == 1
        delta = "response.reasoning_text.delta" if thinking else "response.output_text.delta"
        assert delta in names
    else:
        assert names[0] == "message_start" and names[-1] == "message_stop" and names[-2] == "message_delta"
        starts = [data["content_block"]["type"] for name, data in frames if name == "content_block_start"]
        assert starts[0] == ("thinking" if thinking else "text")
        assert names.count("content_block_start") == names.count("content_block_stop")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("api", APIS)
def test_api_through_proxy(real_proxy: ProxyServer, api: str, case: str, stream: bool) -> None:
    response = send(real_proxy, api, body_for(api, case, stream))
    assert response.status_code == 200, response.text
    assert response.headers["x-offload-route"] == "local"
    answer = answer_of(response, stream)
    thinking = case == "thinking"
    if stream:
        _check_stream(api, answer, thinking)
    else:
        _check_whole(api, answer, thinking)
    row = row_for(real_proxy, response)
    assert (row.status, row.backend, row.api, row.stream) == (200, "local", api, stream)
    assert (row.prompt_tokens, row.completion_tokens, row.cached_tokens) == reported_usage(
        api, answer, stream
    )
    assert row.tokens_estimated is False and row.completion_tokens > 0
    # The backend's default is off (the Spark's extra_body); the client's ask turns it on.
    assert row.thinking == ("on" if thinking else "off")


def test_thinking_changes_what_vllm_renders(real_proxy: ProxyServer) -> None:
    """The switch reaches the template: the same turn with thinking on is one token longer
    (the <think> that opens the reply), for each client's way of asking."""
    text = unique()
    for api in APIS:
        off = send(real_proxy, api, body_for(api, "plain", False, text))
        on = send(real_proxy, api, body_for(api, "thinking", False, text))
        prompt_off = reported_usage(api, off.json(), False)[0]
        prompt_on = reported_usage(api, on.json(), False)[0]
        assert prompt_on == prompt_off + 1, api


def test_claude_codes_adaptive_thinking_is_accepted(real_proxy: ProxyServer) -> None:
    """Claude Code sends ``thinking: adaptive`` with ``output_config.effort``: vLLM takes both."""
    body = messages_body("plain", unique())
    body.update(thinking={"type": "adaptive"}, output_config={"effort": "high"})
    response = send(real_proxy, "messages", body)
    assert response.status_code == 200, response.text
    assert response.json()["stop_reason"] == "end_turn"


@pytest.mark.parametrize("case", ["plain", "tools", "tool_loop"])
def test_count_tokens_equals_the_messages_prompt(real_proxy: ProxyServer, case: str) -> None:
    """What Claude Code's context accounting rests on: count_tokens of a conversation is the
    prompt the Messages call of that conversation is billed for."""
    body = messages_body(case, unique())
    counted = send_count(real_proxy, body)
    assert counted.status_code == 200, counted.text
    answer = counted.json()
    assert set(answer) >= {"input_tokens"} and answer["input_tokens"] > 0
    billed = send(real_proxy, "messages", body)
    assert answer["input_tokens"] == reported_usage("messages", billed.json(), False)[0]
    row = row_for(real_proxy, counted)
    assert (row.status, row.backend, row.api) == (200, "local", "messages")


def send_count(proxy: ProxyServer, body: dict[str, Any]) -> Any:
    import httpx

    counted = {k: v for k, v in body.items() if k not in ("max_tokens", "stream")}
    return httpx.post(
        proxy.url + "/v1/messages/count_tokens",
        json=counted,
        headers={"x-offload-route": "local", "anthropic-version": "2023-06-01"},
        timeout=60,
    )


# ------------------------------------------------------------------ the official SDKs


def test_openai_sdk_chat_and_responses(real_proxy: ProxyServer) -> None:
    client = openai.OpenAI(
        base_url=real_proxy.base_url, api_key="x", default_headers={"x-offload-route": "local"}
    )
    chat = client.chat.completions.create(
        model="local", messages=[{"role": "user", "content": unique()}], max_tokens=256
    )
    assert chat.choices[0].finish_reason == "stop" and chat.usage and chat.usage.prompt_tokens > 0
    chunks = list(
        client.chat.completions.create(
            model="local", messages=[{"role": "user", "content": unique()}], max_tokens=256,
            stream=True, stream_options={"include_usage": True},
        )
    )  # fmt: skip
    assert chunks[-1].usage and chunks[-1].usage.completion_tokens > 0
    whole = client.responses.create(model="local", input=unique(), max_output_tokens=256)
    assert whole.status == "completed" and whole.output_text
    with client.responses.stream(model="local", input=unique(), max_output_tokens=256) as stream:
        final = stream.get_final_response()  # strict: one id, response.created first, completed last
    assert final.status == "completed" and final.usage and final.usage.output_tokens > 0


def test_anthropic_sdk_messages(real_proxy: ProxyServer) -> None:
    client = anthropic.Anthropic(
        base_url=real_proxy.url, api_key="x", default_headers={"x-offload-route": "local"}
    )
    message = client.messages.create(
        model="local", max_tokens=256, messages=[{"role": "user", "content": unique()}]
    )
    assert message.stop_reason == "end_turn" and message.content[0].type == "text"
    with client.messages.stream(
        model="local", max_tokens=256, messages=[{"role": "user", "content": unique()}]
    ) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "end_turn" and final.usage.output_tokens > 0
    counted = client.messages.count_tokens(model="local", messages=[{"role": "user", "content": unique()}])
    assert counted.input_tokens > 0
