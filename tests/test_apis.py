"""OpenAI Responses and Anthropic Messages through the proxy, with the official SDKs as callers.

Three fake upstreams speak their APIs as the real servers do: a vLLM box (every API),
OpenAI (Responses, strict) and Anthropic (Messages, strict). Each test checks what a user
of that SDK would notice: the answer, the route it took, the usage rows, the error shape.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from classifier import IntentModel
from router.fake.upstream import RunningFake, start_in_thread
from tests.conftest import fake_config, fake_state
from tests.harness import CLOUD_KEY, CLOUD_MODEL, LOCAL_MODEL, ProxyServer, make_config, wait_until

ANTHROPIC_KEY = "sk-ant-cloud-secret-0123456789"
CLAUDE_MODEL = "claude-sonnet-4-6"
CLIENT_KEY = "sk-offload-client-0123456789"
CODING = "Write a Python function that parses ISO 8601 dates and add a unit test for it."
MATHS = "Evaluate the integral of x^3 * e^(-x^2) from 0 to infinity and give the exact value."
SHELL_TOOL = {
    "type": "function",
    "name": "shell",
    "description": "run a shell command",
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
}
BASH_TOOL = {
    "name": "Bash",
    "description": "Run a bash command",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    },
}


@pytest.fixture(scope="module")
def model() -> IntentModel:
    return IntentModel.load()


@pytest.fixture
def claude_fake() -> Iterator[RunningFake]:
    fake = start_in_thread("anthropic", api_key=ANTHROPIC_KEY, model=CLAUDE_MODEL)
    yield fake
    fake.stop()


def three_backends(local: RunningFake, cloud: RunningFake, claude: RunningFake, **overrides: Any) -> Any:
    """The design's config: a vLLM box, OpenAI, and Anthropic for Messages' cloud turns."""
    backends = {
        "local": {
            "kind": "vllm",
            "base_url": local.url,
            "model": LOCAL_MODEL,
            "max_concurrency": 32,
            "extra_body": {"chat_template_kwargs": {"enable_thinking": False}},
        },
        "cloud": {"kind": "openai", "base_url": cloud.url, "model": CLOUD_MODEL, "api_key": CLOUD_KEY},
        "claude": {
            "kind": "anthropic",
            "base_url": f"http://127.0.0.1:{claude.port}",  # the host root, as Anthropic's is given
            "model": CLAUDE_MODEL,
            "api_key": ANTHROPIC_KEY,
            "keep_client_model": True,
        },
    }
    for name, changes in overrides.pop("backend_changes", {}).items():
        backends[name] = {**backends[name], **changes}
    return make_config(local.url, cloud.url, backends=backends, **overrides)


@pytest.fixture
def server(
    local_fake: RunningFake, cloud_fake: RunningFake, claude_fake: RunningFake, model: IntentModel
) -> Iterator[ProxyServer]:
    proxy = ProxyServer(three_backends(local_fake, cloud_fake, claude_fake), classifier=model)
    yield proxy
    proxy.stop()


def rows(proxy: ProxyServer) -> list[Any]:
    return proxy.state.recorder.rows


def last_body(fake: RunningFake, path: str) -> dict[str, Any]:
    received = [r for r in fake_state(fake)["received"] if r["path"] == path]
    assert received, f"the fake received nothing on {path}"
    return received[-1]


def oai(proxy: ProxyServer, **kw: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=proxy.base_url, api_key=kw.pop("api_key", "unused"), max_retries=0, **kw)


def claude(proxy: ProxyServer, **kw: Any) -> anthropic.Anthropic:
    if "auth_token" not in kw:
        kw.setdefault("api_key", "unused")
    return anthropic.Anthropic(base_url=proxy.url, max_retries=0, **kw)


# ------------------------------------------------------------------ Responses


def test_responses_plain_streamed_and_json_schema_route_by_content(server, local_fake, cloud_fake):
    client = oai(server)
    coding = client.responses.create(model="gpt-5.1-codex", input=CODING)
    assert coding.output_text == "Hello there, I am a fake model."
    maths = client.responses.create(model="gpt-5.1-codex", input=MATHS, instructions="Be precise.")
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    fmt = {"format": {"type": "json_schema", "name": "answer", "schema": schema, "strict": True}}
    with client.responses.stream(model="gpt-5.1-codex", input=CODING, text=fmt) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == final.output_text == coding.output_text
    assert last_body(local_fake, "/v1/responses")["body"]["text"] == fmt  # passed on untouched

    wait_until(lambda: len(rows(server)) == 3)
    plain, cloud, streamed = rows(server)
    assert (plain.api, plain.endpoint, plain.backend, plain.stream) == (
        "responses",
        "responses",
        "local",
        False,
    )
    assert (cloud.backend, cloud.intent) == ("cloud", "math")
    assert (streamed.backend, streamed.stream) == ("local", True)
    # Token counts in SQL are the upstream's own usage, streamed or not.
    for row, usage in ((plain, coding.usage), (cloud, maths.usage), (streamed, final.usage)):
        assert usage is not None and not row.tokens_estimated
        assert (row.prompt_tokens, row.completion_tokens) == (usage.input_tokens, usage.output_tokens)
        assert row.cached_tokens == usage.input_tokens_details.cached_tokens
    # The strict cloud got no vLLM field, though the local backend's extras carry one.
    assert "chat_template_kwargs" not in last_body(cloud_fake, "/v1/responses")["body"]


def test_responses_tool_round_trip(server, local_fake):
    client = oai(server)
    first = client.responses.create(model="gpt-5.1-codex", input=CODING, tools=[SHELL_TOOL])
    call = next(item for item in first.output if item.type == "function_call")
    history = [
        {"role": "user", "content": CODING},
        {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
        {"type": "function_call_output", "call_id": call.call_id, "output": "tests passed"},
    ]
    second = client.responses.create(model="gpt-5.1-codex", input=history, tools=[SHELL_TOOL])
    assert second.output_text == "Hello there, I am a fake model."
    wait_until(lambda: len(rows(server)) == 2)
    assert [(r.backend, r.reason) for r in rows(server)] == [("local", "classifier"), ("local", "tool_loop")]
    sent = last_body(local_fake, "/v1/responses")["body"]
    assert sent["input"][-1]["output"] == "tests passed"


def test_a_codex_turn_is_adapted_for_vllm(server, local_fake):
    """What Codex sends after an OpenAI turn, and what vLLM would answer 400 for."""
    body = {
        "model": "gpt-5.1-codex",
        "instructions": "You are Codex, a coding agent.",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": CODING}]},
            {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAB-opaque-openai-state"},
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go on"}]},
        ],
        "tools": [
            SHELL_TOOL,
            {
                "type": "custom",
                "name": "apply_patch",
                "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"},
            },
        ],
        "tool_choice": "auto",
        "store": False,
        "stream": True,
        "include": ["reasoning.encrypted_content", "web_search_call.results"],
        "service_tier": "fast",
        "prompt_cache_key": "conv-1",
    }
    with httpx.stream("POST", server.base_url + "/responses", json=body, timeout=30) as response:
        assert response.status_code == 200
        text = response.read().decode()
    assert "response.completed" in text and "[DONE]" not in text
    sent = last_body(local_fake, "/v1/responses")["body"]
    assert [i.get("type") for i in sent["input"]] == ["message", "message"]
    assert sent["include"] == ["reasoning.encrypted_content"]
    assert "service_tier" not in sent
    assert "format" not in sent["tools"][1]  # served as a text-format custom tool
    assert sent["max_output_tokens"] == 32768  # Codex sends none; vLLM would use the whole context
    assert sent["model"] == LOCAL_MODEL


def test_previous_response_id_stays_with_the_backend_that_minted_it(server, local_fake):
    client = oai(server)
    first = client.responses.create(model="gpt-5.1-codex", input=CODING, store=True)
    # A maths follow-up would go to the cloud, but its state lives on the local box.
    second = client.responses.create(model="gpt-5.1-codex", input=MATHS, previous_response_id=first.id)
    assert second.output_text
    wait_until(lambda: len(rows(server)) == 2)
    assert (rows(server)[1].backend, rows(server)[1].reason) == ("local", "previous_response")
    assert rows(server)[0].response_id == first.id
    # With that backend down the turn fails rather than reaching a cloud that never saw the id.
    fake_config(local_fake, fail_status=503)
    with pytest.raises(openai.InternalServerError):
        client.responses.create(model="gpt-5.1-codex", input=MATHS, previous_response_id=first.id)


def test_responses_stream_broken_mid_way_ends_with_response_failed(server, local_fake):
    fake_config(local_fake, die_after_chunks=5)
    client = oai(server)
    events = list(client.responses.create(model="gpt-5.1-codex", input=CODING, stream=True))
    types = [e.type for e in events]
    assert types[0] == "response.created" and types[-1] == "response.failed"
    assert "response.completed" not in types
    assert events[-1].response.id == events[0].response.id  # the same response fails
    numbers = [e.sequence_number for e in events]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    with (
        pytest.raises(Exception, match="response.completed"),
        client.responses.stream(model="x", input=CODING) as stream,
    ):
        stream.get_final_response()
    wait_until(lambda: len(rows(server)) == 2)
    assert rows(server)[0].error_type == "stream_error" and rows(server)[0].tokens_estimated


def test_responses_fall_back_before_the_first_byte(server, local_fake, cloud_fake):
    fake_config(local_fake, fail_status=503, fail_count=1)
    answer = oai(server).responses.create(model="gpt-5.1-codex", input=CODING, stream=False)
    assert answer.output_text
    wait_until(lambda: len(rows(server)) == 1)
    row = rows(server)[0]
    assert (row.backend, row.fallback, row.fallback_reason) == ("cloud", True, "http_503")
    assert row.prompt_tokens == answer.usage.input_tokens


# ------------------------------------------------------------------ Messages


# Claude Code with ANTHROPIC_API_KEY sends x-api-key; the SDK 2.x and ANTHROPIC_AUTH_TOKEN send Bearer.
AUTH_STYLES = {
    "x-api-key": {"api_key": None, "default_headers": {"x-api-key": CLIENT_KEY}},
    "bearer": {"auth_token": CLIENT_KEY},
}


@pytest.mark.parametrize("auth", sorted(AUTH_STYLES))
def test_messages_with_both_auth_styles(local_fake, cloud_fake, claude_fake, model, auth):
    config = three_backends(
        local_fake, cloud_fake, claude_fake, auth={"keys": [{"name": "claude-code", "key": CLIENT_KEY}]}
    )
    proxy = ProxyServer(config, classifier=model)
    try:
        seen: list[Any] = []  # the requests the SDK really sent
        http = anthropic.DefaultHttpxClient(event_hooks={"request": [seen.append]})
        client = anthropic.Anthropic(base_url=proxy.url, max_retries=0, http_client=http, **AUTH_STYLES[auth])
        message = client.messages.create(
            model="claude-sonnet-4-6", max_tokens=256, messages=[{"role": "user", "content": CODING}]
        )
        assert message.content[0].text == "Hello there, I am a fake model."
        sent = seen[-1].headers
        assert ("x-api-key" in sent, "authorization" in sent) == (
            (True, False) if auth == "x-api-key" else (False, True)
        )
        with pytest.raises(anthropic.AuthenticationError) as caught:
            claude(proxy, api_key="sk-wrong-key").messages.create(
                model="claude-sonnet-4-6", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            )
        assert caught.value.body["type"] == "error"  # Anthropic's shape, from the proxy itself
        assert caught.value.body["error"]["type"] == "authentication_error"
        wait_until(lambda: len(rows(proxy)) == 1)
        assert (rows(proxy)[0].client, rows(proxy)[0].api, rows(proxy)[0].backend) == (
            "claude-code",
            "messages",
            "local",
        )
    finally:
        proxy.stop()


def test_messages_tool_use_round_trip_streamed(server, local_fake):
    client = claude(server)
    conversation: list[dict[str, Any]] = [{"role": "user", "content": CODING}]
    with client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=512, messages=conversation, tools=[BASH_TOOL]
    ) as stream:
        first = stream.get_final_message()
    use = next(block for block in first.content if block.type == "tool_use")
    conversation += [
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "2 passed"}]},
    ]
    with client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=512, messages=conversation, tools=[BASH_TOOL]
    ) as stream:
        second = stream.get_final_message()
    assert second.content[0].text == "Hello there, I am a fake model." and second.stop_reason == "end_turn"
    wait_until(lambda: len(rows(server)) == 2)
    assert [(r.backend, r.reason) for r in rows(server)] == [("local", "classifier"), ("local", "tool_loop")]
    for row, message in zip(rows(server), (first, second), strict=True):
        assert (row.prompt_tokens, row.completion_tokens) == (
            message.usage.input_tokens,
            message.usage.output_tokens,
        )


def test_a_hard_maths_turn_goes_to_anthropic_with_cache_usage_added_up(server, claude_fake):
    client = claude(server)
    system = [
        {"type": "text", "text": "You are a careful mathematician.", "cache_control": {"type": "ephemeral"}}
    ]
    with client.messages.stream(
        model="claude-opus-4-1", max_tokens=512, system=system, messages=[{"role": "user", "content": MATHS}]
    ) as stream:
        message = stream.get_final_message()
    usage = message.usage
    assert usage.cache_read_input_tokens or usage.cache_creation_input_tokens
    wait_until(lambda: len(rows(server)) == 1)
    row = rows(server)[0]
    assert (row.backend, row.route, row.intent) == ("claude", "cloud", "math")
    total_input = (
        usage.input_tokens + (usage.cache_creation_input_tokens or 0) + (usage.cache_read_input_tokens or 0)
    )
    assert (row.prompt_tokens, row.cached_tokens) == (total_input, usage.cache_read_input_tokens or 0)
    assert row.completion_tokens == usage.output_tokens  # the last cumulative count, not a sum
    sent = last_body(claude_fake, "/v1/messages")
    assert sent["body"]["model"] == "claude-opus-4-1"  # keep_client_model: Claude Code's own choice
    assert sent["headers"]["x-api-key"] == ANTHROPIC_KEY and "authorization" not in sent["headers"]
    assert sent["headers"]["anthropic-version"]


def test_vllm_thinking_signatures_never_reach_anthropic(server, claude_fake):
    forged = {
        "type": "thinking",
        "thinking": "let me see",
        "signature": "0b9f6c1e-5d2a-4c1b-9e7f-2a3b4c5d6e7f",
    }
    history = [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": [forged, {"type": "text", "text": "Hi."}]},
        {"role": "user", "content": MATHS},
    ]
    message = claude(server).messages.create(model="claude-sonnet-4-6", max_tokens=256, messages=history)
    assert message.content
    sent = last_body(claude_fake, "/v1/messages")["body"]
    assert all(
        b.get("type") != "thinking"
        for m in sent["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
    )


def test_count_tokens_is_answered_by_the_backend_the_turn_would_go_to(server, local_fake, claude_fake):
    client = claude(server)
    local = client.messages.count_tokens(
        model="claude-sonnet-4-6", messages=[{"role": "user", "content": CODING}]
    )
    cloud = client.messages.count_tokens(
        model="claude-sonnet-4-6", messages=[{"role": "user", "content": MATHS}]
    )
    assert local.input_tokens > 0 and cloud.input_tokens > 0
    assert last_body(local_fake, "/v1/messages/count_tokens")["body"]["model"] == LOCAL_MODEL
    assert last_body(claude_fake, "/v1/messages/count_tokens")["body"]["model"] == "claude-sonnet-4-6"
    wait_until(lambda: len(rows(server)) == 2)
    assert [(r.endpoint, r.api, r.prompt_tokens) for r in rows(server)] == [
        ("count_tokens", "messages", 0)
    ] * 2


def test_claude_codes_probes_and_beta_query(server, local_fake):
    assert httpx.head(server.url + "/", timeout=5).status_code == 200
    response = server.post(
        "/v1/messages?beta=true",
        json={
            "model": "claude-haiku-4-5",
            "max_tokens": 50,
            "messages": [{"role": "user", "content": CODING}],
        },
        headers={
            "anthropic-version": "2023-06-01",
            "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
        },
    )
    assert response.status_code == 200 and response.json()["type"] == "message"
    sent = last_body(local_fake, "/v1/messages")
    assert sent["query"] in ("beta=true", {"beta": "true"})
    assert sent["headers"]["anthropic-beta"] == "claude-code-20250219,interleaved-thinking-2025-05-14"


def test_messages_stream_broken_mid_way_ends_with_an_error_event(server, local_fake):
    fake_config(local_fake, die_after_chunks=4)
    with httpx.stream(
        "POST",
        server.url + "/v1/messages",
        json={
            "model": "m",
            "max_tokens": 100,
            "stream": True,
            "messages": [{"role": "user", "content": CODING}],
        },
        timeout=30,
    ) as response:
        text = response.read().decode()
    names = [line[7:] for line in text.splitlines() if line.startswith("event: ")]
    assert names[0] == "message_start" and names[-1] == "error" and "message_stop" not in names
    if "content_block_start" in names:  # the open block is closed before the error, as vLLM does
        assert names[-2] == "content_block_stop"
    client = claude(server)
    with (
        pytest.raises(anthropic.APIStatusError),
        client.messages.stream(
            model="m", max_tokens=100, messages=[{"role": "user", "content": CODING}]
        ) as stream,
    ):
        stream.get_final_message()


def test_messages_fall_back_to_anthropic_when_the_box_is_down(server, local_fake, claude_fake):
    fake_config(local_fake, fail_status=503)
    message = claude(server).messages.create(
        model="claude-sonnet-4-6", max_tokens=64, messages=[{"role": "user", "content": CODING}]
    )
    assert message.content[0].text
    wait_until(lambda: len(rows(server)) == 1)
    assert (rows(server)[0].backend, rows(server)[0].fallback) == ("claude", True)


def test_an_api_no_candidate_serves_is_one_non_retryable_error_that_names_the_fix(
    local_fake, cloud_fake, model
):
    """A configuration problem, not overload: a 400 the SDK does not retry (its default is two
    retries of a 5xx), in Anthropic's shape, whose message names the kind of backend to add."""
    config = make_config(local_fake.url, cloud_fake.url)  # no backend speaks Messages on the cloud route
    proxy = ProxyServer(config, classifier=model)
    try:
        with pytest.raises(anthropic.BadRequestError) as caught:
            claude(proxy).messages.create(
                model="m", max_tokens=64, messages=[{"role": "user", "content": MATHS}]
            )
        assert caught.value.status_code == 400
        assert caught.value.response.headers["x-should-retry"] == "false"
        error = caught.value.body["error"]
        assert error["type"] == "invalid_request_error" and "overloaded" not in str(caught.value.body)
        assert "kind: anthropic" in error["message"] and "messages" in error["message"]
        wait_until(lambda: len(rows(proxy)) == 1)
        assert [(r.status, r.backend, r.error_type) for r in rows(proxy)] == [(400, None, "api_not_served")]
        assert proxy.get("/healthz").status_code == 200
    finally:
        proxy.stop()


# ------------------------------------------------------------------ thinking


def test_the_clients_explicit_reasoning_request_reaches_vllm_and_is_reported(server, local_fake):
    client = oai(server)
    response = client.chat.completions.with_raw_response.create(
        model="auto", messages=[{"role": "user", "content": CODING}], reasoning_effort="high"
    )
    assert response.headers["x-offload-thinking"] == "on; by=client"
    assert last_body(local_fake, "/v1/chat/completions")["body"]["chat_template_kwargs"] == {
        "enable_thinking": True
    }
    plain = client.chat.completions.with_raw_response.create(
        model="auto", messages=[{"role": "user", "content": CODING}]
    )
    assert plain.headers["x-offload-thinking"] == "off; by=backend"
    wait_until(lambda: len(rows(server)) == 2)
    assert [r.thinking for r in rows(server)] == ["on", "off"]


def test_a_backend_may_decide_thinking_and_says_it_overrode_the_client(local_fake, cloud_fake, claude_fake):
    config = three_backends(
        local_fake, cloud_fake, claude_fake, backend_changes={"local": {"thinking": "off"}}
    )
    proxy = ProxyServer(config)
    try:
        response = oai(proxy).responses.with_raw_response.create(
            model="auto", input=CODING, reasoning={"effort": "high"}
        )
        assert response.headers["x-offload-thinking"] == "off; by=config; client-asked=high"
        assert (
            last_body(local_fake, "/v1/responses")["body"]["chat_template_kwargs"]["enable_thinking"] is False
        )
    finally:
        proxy.stop()


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "path, body, param",
    [
        ("/v1/responses", {"model": "m"}, "input"),
        ("/v1/responses", {"input": []}, "input"),
        ("/v1/responses", {"input": "hi", "stream": "yes"}, "stream"),
        ("/v1/responses", {"input": "hi", "max_output_tokens": 0}, "max_output_tokens"),
        ("/v1/messages", {"messages": [{"role": "user", "content": "hi"}]}, "max_tokens"),
        ("/v1/messages", {"max_tokens": 5, "messages": "hi"}, "messages"),
        (
            "/v1/messages",
            {"max_tokens": 5, "messages": [{"role": "user", "content": [{"text": "x"}]}]},
            "messages[0].content",
        ),
        ("/v1/messages/count_tokens", {"messages": []}, "messages"),
    ],
)
def test_bad_input_gets_the_apis_own_400_and_nothing_is_forwarded(server, local_fake, path, body, param):
    response = server.post(path, json=body)
    assert response.status_code == 400
    error = response.json()
    if path.startswith("/v1/messages"):
        assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
        assert param in error["error"]["message"]
    else:
        assert error["error"]["param"] == param
    assert fake_state(local_fake)["received"] == []
    assert (
        server.post("/v1/messages", content=b"{not json").json()["error"]["type"] == "invalid_request_error"
    )
    assert server.get("/healthz").status_code == 200


def test_the_proxys_own_413_on_messages_is_anthropic_shaped(local_fake, cloud_fake, claude_fake):
    config = three_backends(local_fake, cloud_fake, claude_fake, server={"max_body_bytes": 1000})
    proxy = ProxyServer(config)
    try:
        with pytest.raises(anthropic.APIStatusError) as caught:
            claude(proxy).messages.create(
                model="m", max_tokens=5, messages=[{"role": "user", "content": "x" * 5000}]
            )
        assert caught.value.status_code == 413
        assert caught.value.body["error"]["type"] == "request_too_large"
    finally:
        proxy.stop()


def test_usage_rows_are_valid_json_for_every_api(server):
    """Smoke: one request of each API and every row settles with its API."""
    oai(server).chat.completions.create(model="auto", messages=[{"role": "user", "content": CODING}])
    oai(server).responses.create(model="auto", input=CODING)
    claude(server).messages.create(model="m", max_tokens=16, messages=[{"role": "user", "content": CODING}])
    wait_until(lambda: len(rows(server)) == 3)
    assert [r.api for r in rows(server)] == ["chat", "responses", "messages"]


# ------------------------------------------------------------------ tool loops come home


def test_a_tool_loop_that_fell_back_during_an_outage_comes_home(server, local_fake, cloud_fake):
    """The box goes down mid-loop: the cloud serves a turn (its tool-call ids are OpenAI's
    call_…). Once the box is back, the same loop's next turn is local again."""
    client = oai(server)
    tools = [
        {"type": "function", "function": {k: SHELL_TOOL[k] for k in ("name", "description", "parameters")}}
    ]
    history: list[Any] = [{"role": "user", "content": CODING}]
    fake_config(local_fake, health_status=503)  # the probe sees the box down
    assert wait_until(lambda: not server.state.pool.backends["local"].up)
    first = client.chat.completions.create(model="auto", messages=history, tools=tools)
    call = first.choices[0].message.tool_calls[0]
    assert call.id.startswith("call_")  # made by the cloud
    history += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "1 failed"},
    ]
    fake_config(local_fake, health_status=200)  # the box is back
    assert wait_until(lambda: server.state.pool.backends["local"].up)
    second = client.chat.completions.with_raw_response.create(model="auto", messages=history, tools=tools)
    assert second.headers["x-offload-route"] == "local"
    wait_until(lambda: len(rows(server)) == 2)
    assert [(r.backend, r.fallback, r.reason) for r in rows(server)] == [
        ("cloud", True, "classifier"),
        ("local", False, "tool_loop"),
    ]


@pytest.mark.parametrize(
    "path, body",
    [
        ("/v1/responses", {"model": "m", "input": CODING, "stream": True}),
        (
            "/v1/messages",
            {
                "model": "m",
                "max_tokens": 64,
                "stream": True,
                "messages": [{"role": "user", "content": CODING}],
            },
        ),
    ],
)
def test_a_client_leaving_mid_stream_cancels_the_upstream(server, local_fake, path, body):
    fake_config(local_fake, chunk_delay=0.2)
    with httpx.stream("POST", server.url + path, json=body, timeout=30) as response:
        assert response.status_code == 200
        next(response.iter_bytes())  # the stream flows; the client goes away here
    assert wait_until(lambda: fake_state(local_fake)["cancelled"] == 1, timeout=10)
    assert wait_until(lambda: server.state.pool.backends["local"].in_flight == 0)
    wait_until(lambda: len(rows(server)) == 1)
    assert (rows(server)[0].status, rows(server)[0].error_type) == (499, "client_disconnected")
