"""Agent frameworks through the real proxy: openai-agents, pydantic-ai, LangChain, the anthropic SDK.

Each framework is used the way its documentation connects it to an OpenAI- or
Anthropic-compatible server, on each API it can speak, against the proxy with a fake
vLLM box (local) and a fake cloud behind it. Every test does what a user of the
framework does and checks what that user would notice:

* a plain turn: a coding task, answered by the local box;
* a streamed turn: a hard maths question, routed by its content to the cloud, whose
  text arrives in several pieces;
* a tool round trip: the fake model calls the framework's tool with arguments the test
  chose, the framework runs the tool, sends its result back and prints the answer;

and then the usage rows: one per upstream call, in that call's API, on the backend
the content called for, with the token counts the fake upstream reported (recomputed
here from the very bodies the fake received).

Nothing may leave 127.0.0.1: a socket guard fails the test on any other address (the
Agents SDK's trace export is disabled, as the README says to do).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest
from agents import Agent as OpenAIAgent
from agents import (
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    ToolCallItem,
    ToolCallOutputItem,
    function_tool,
    set_tracing_disabled,
)
from langchain_core.messages import AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.openai import OpenAIResponsesModel as PydanticResponsesModel
from pydantic_ai.providers.openai import OpenAIProvider

from classifier import IntentModel
from router.fake.protocol import REASONING, Behaviour
from router.fake.replies import plan_reply, prompt_tokens, within_limit
from router.fake.upstream import RunningFake, start_in_thread
from tests.conftest import fake_config, fake_state
from tests.harness import CLOUD_KEY, CLOUD_MODEL, LOCAL_MODEL, ProxyServer, make_config, wait_until

CLIENT_KEY = "sk-offload-frameworks-0123456789"
ANTHROPIC_KEY = "sk-ant-cloud-secret-0123456789"
CLAUDE_MODEL = "claude-sonnet-4-6"
CODING = "Write a Python function that parses ISO 8601 dates and add a unit test for it."
MATHS = "Evaluate the integral of x^3 * e^(-x^2) from 0 to infinity and give the exact value."
INSTRUCTIONS = "You are a careful software engineer."
FAKE_TEXT = "".join(Behaviour().reply_tokens)  # "Hello there, I am a fake model."
# The call the fake model makes whenever a tool is offered: arguments no schema default would produce.
TOOL_ARGS = {"path": "tests/test_dates.py"}
TOOL_CALL = {"name": "run_tests", "arguments": json.dumps(TOOL_ARGS)}
TOOL_RESULT = "2 passed in 0.03s"
# A model that answers text after a tool result (the fake's legacy chat rule would call the tool forever).
BEHAVIOUR = {"chat_always_calls": False, "tool_call": TOOL_CALL}
API_BY_PATH = {"/v1/chat/completions": "chat", "/v1/responses": "responses", "/v1/messages": "messages"}
ENVIRONMENT = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_DEFAULT_MODEL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


# ------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def model() -> IntentModel:
    return IntentModel.load()


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Refuse, and fail the test on, any connection to an address other than loopback."""
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    set_tracing_disabled(True)
    reached: list[Any] = []
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guard(address: Any) -> None:
        if not isinstance(address, tuple):  # a Unix socket
            return
        try:
            loopback = ipaddress.ip_address(address[0]).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            reached.append(address)
            raise OSError(f"this test is offline: connection to {address} refused")

    def connect(self: socket.socket, address: Any) -> None:
        guard(address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        guard(address)
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    yield reached
    assert reached == [], f"a framework tried to reach {reached}"


@pytest.fixture
def fakes(local_fake: RunningFake, cloud_fake: RunningFake) -> dict[str, RunningFake]:
    for fake in (local_fake, cloud_fake):
        fake_config(fake, **BEHAVIOUR)
    return {"local": local_fake, "cloud": cloud_fake}


@pytest.fixture
def server(fakes: dict[str, RunningFake], model: IntentModel) -> Iterator[ProxyServer]:
    config = make_config(
        fakes["local"].url, fakes["cloud"].url, auth={"keys": [{"name": "frameworks", "key": CLIENT_KEY}]}
    )
    proxy = ProxyServer(config, classifier=model)
    yield proxy
    proxy.stop()


# ------------------------------------------------------------------ checks


def upstream_usage(fake: RunningFake) -> list[tuple[str, int, int]]:
    """(api, input tokens, output tokens) the fake reported for each request it answered.

    Recomputed from the body the fake received, with the fake's own rules: Responses
    and Messages count the reply as sent; Chat Completions counts the reply tokens
    even when a tool call replaced them.
    """
    behaviour = Behaviour(chat_always_calls=False, tool_call=TOOL_CALL)
    usage = []
    for received in fake_state(fake)["received"]:
        api, body = API_BY_PATH[received["path"]], received["body"]
        reply = plan_reply(api, fake.fake.mode, body, behaviour)
        if api == "chat":
            output = len(behaviour.reply_tokens) + len(reply.reasoning)
        else:
            output = within_limit(api, body, reply).output_tokens
        usage.append((api, prompt_tokens(api, body), output))
    return usage


def settled_rows(proxy: ProxyServer, fakes: dict[str, RunningFake], expected: list[tuple[Any, ...]]) -> Any:
    """Wait for one row per turn, check route and tokens against the fakes, return the rows."""
    rows = proxy.state.recorder.rows
    wait_until(lambda: len(rows) >= len(expected))
    assert [(r.api, r.backend, r.reason, r.stream) for r in rows] == expected
    assert all(r.status == 200 and r.error_type is None and not r.tokens_estimated for r in rows)
    assert all(r.client == "frameworks" for r in rows)
    for backend, fake in fakes.items():
        recorded = [(r.api, r.prompt_tokens, r.completion_tokens) for r in rows if r.backend == backend]
        assert recorded == upstream_usage(fake), f"{backend}: usage rows differ from the upstream's usage"
    # Routed by content: the coding task to the local box, the maths question to the cloud.
    for row in rows:
        if row.reason == "classifier":
            wanted = ("local", "coding") if row.backend == "local" else ("cloud", "math")
            assert (row.route, row.intent) == wanted
    return rows


def tool_results_sent(fake: RunningFake) -> list[str]:
    """The tool results the agent handed back to the model, in any of the three APIs."""
    results = []
    for received in fake_state(fake)["received"]:
        body = received["body"]
        for item in body.get("input") if isinstance(body.get("input"), list) else []:
            if item.get("type") == "function_call_output":
                results.append(item["output"])
        for message in body.get("messages", []):
            if message.get("role") == "tool":
                results.append(message["content"])
            for block in message["content"] if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    results.append(content if isinstance(content, str) else content[0]["text"])
    return results


def expected_rows(api: str) -> list[tuple[str, str, str, bool]]:
    """(api, backend, reason, stream) of the six calls: plain, streamed maths, two tool round trips."""
    return [
        (api, "local", "classifier", False),
        (api, "cloud", "classifier", True),
        (api, "local", "classifier", False),
        (api, "local", "tool_loop", False),
        (api, "local", "classifier", True),
        (api, "local", "tool_loop", True),
    ]


# ------------------------------------------------------------------ openai-agents


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_openai_agents(server, fakes, monkeypatch, api):
    """The Agents SDK: its default model (Responses, set up from the environment) and its chat model."""
    tool_runs: list[str] = []

    @function_tool
    def run_tests(path: str) -> str:
        """Run the unit tests in a file and report the result."""
        tool_runs.append(path)
        return TOOL_RESULT

    if api == "responses":
        # No model given: the SDK's default model and provider, pointed at the proxy from the environment.
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", CLIENT_KEY)
        settings: dict[str, Any] = {}
    else:
        client = AsyncOpenAI(base_url=server.base_url, api_key=CLIENT_KEY, max_retries=0)
        settings = {"model": OpenAIChatCompletionsModel(model="auto", openai_client=client)}
    agent = OpenAIAgent(name="coder", instructions=INSTRUCTIONS, **settings)
    with_tool = agent.clone(tools=[run_tests])

    async def streamed(agent: OpenAIAgent, prompt: str) -> tuple[Any, list[str]]:
        run = Runner.run_streamed(agent, prompt, run_config=RunConfig(tracing_disabled=True))
        deltas = [
            event.data.delta
            async for event in run.stream_events()
            if event.type == "raw_response_event" and event.data.type == "response.output_text.delta"
        ]
        return run, deltas

    async def session() -> None:
        plain = await Runner.run(agent, CODING)
        assert plain.final_output == FAKE_TEXT
        assert plain.context_wrapper.usage.requests == 1

        maths, deltas = await streamed(agent, MATHS)
        assert len(deltas) > 1 and "".join(deltas) == maths.final_output == FAKE_TEXT

        for run in (await Runner.run(with_tool, CODING), (await streamed(with_tool, CODING))[0]):
            assert run.final_output == FAKE_TEXT
            kinds = [type(item) for item in run.new_items]
            assert kinds[:2] == [ToolCallItem, ToolCallOutputItem]
            assert run.new_items[1].output == TOOL_RESULT

    asyncio.run(session())
    assert tool_runs == [TOOL_ARGS["path"]] * 2
    assert tool_results_sent(fakes["local"]) == [TOOL_RESULT] * 2
    settled_rows(server, fakes, expected_rows(api))


# ------------------------------------------------------------------ pydantic-ai


@pytest.mark.parametrize(
    "how, api",
    [
        ("openai:auto", "responses"),
        ("OpenAIResponsesModel", "responses"),
        ("openai-chat:auto", "chat"),
        ("OpenAIChatModel", "chat"),
    ],
)
def test_pydantic_ai(server, fakes, monkeypatch, how, api):
    """pydantic-ai by model string (provider from the environment) and by model class with a provider."""
    if ":" in how:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", CLIENT_KEY)
        chosen: Any = how
    else:
        provider = OpenAIProvider(base_url=server.base_url, api_key=CLIENT_KEY)
        model_class = PydanticResponsesModel if api == "responses" else OpenAIChatModel
        chosen = model_class("auto", provider=provider)
    tool_runs: list[str] = []

    def run_tests(path: str) -> str:
        """Run the unit tests in a file and report the result."""
        tool_runs.append(path)
        return TOOL_RESULT

    agent = PydanticAgent(chosen, instructions=INSTRUCTIONS)
    with_tool = PydanticAgent(chosen, instructions=INSTRUCTIONS, tools=[run_tests])

    plain = agent.run_sync(CODING)
    assert plain.output == FAKE_TEXT

    async def streamed(agent: PydanticAgent, prompt: str) -> tuple[list[str], Any]:
        async with agent.run_stream(prompt) as result:
            deltas = [d async for d in result.stream_text(delta=True, debounce_by=None)]
            return deltas, result.usage

    deltas, _ = asyncio.run(streamed(agent, MATHS))
    assert len(deltas) > 1 and "".join(deltas) == FAKE_TEXT

    called = with_tool.run_sync(CODING)
    assert called.output == FAKE_TEXT and called.usage.tool_calls == 1
    deltas, usage = asyncio.run(streamed(with_tool, CODING))
    assert "".join(deltas) == FAKE_TEXT and usage.requests == 2

    assert tool_runs == [TOOL_ARGS["path"]] * 2
    assert tool_results_sent(fakes["local"]) == [TOOL_RESULT] * 2
    rows = settled_rows(server, fakes, expected_rows(api))
    # What pydantic-ai counted for the plain run is what the proxy recorded.
    assert (plain.usage.input_tokens, plain.usage.output_tokens) == (
        rows[0].prompt_tokens,
        rows[0].completion_tokens,
    )


# ------------------------------------------------------------------ LangChain


def joined(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    assert chunks, "the stream was empty"
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


@pytest.mark.parametrize("use_responses_api", [True, False], ids=["responses", "chat"])
def test_langchain(server, fakes, use_responses_api):
    """langchain-openai's ChatOpenAI on Responses and on its default Chat Completions path."""
    api = "responses" if use_responses_api else "chat"
    llm = ChatOpenAI(
        model="auto",
        base_url=server.base_url,
        api_key=CLIENT_KEY,
        use_responses_api=use_responses_api,
        stream_usage=True,  # off by default for a base URL other than OpenAI's
        max_retries=0,
    )

    @tool
    def run_tests(path: str) -> str:
        """Run the unit tests in a file and report the result."""
        return TOOL_RESULT

    plain = llm.invoke(CODING)
    assert plain.text == FAKE_TEXT

    chunks = list(llm.stream(MATHS))
    pieces = [c.text for c in chunks if c.text]
    maths = joined(chunks)
    assert len(pieces) > 1 and maths.text == FAKE_TEXT

    bound = llm.bind_tools([run_tests])
    for stream in (False, True):
        history: list[BaseMessage] = [HumanMessage(CODING)]
        call = joined(list(bound.stream(history))) if stream else bound.invoke(history)
        assert [(c["name"], c["args"]) for c in call.tool_calls] == [("run_tests", TOOL_ARGS)]
        history += [call, run_tests.invoke(call.tool_calls[0])]  # a ToolMessage with the call's id
        answer = joined(list(bound.stream(history))) if stream else bound.invoke(history)
        assert answer.text == FAKE_TEXT and not answer.tool_calls

    assert tool_results_sent(fakes["local"]) == [TOOL_RESULT] * 2
    rows = settled_rows(server, fakes, expected_rows(api))
    # The usage LangChain reports, streamed or not, is the usage recorded.
    for message, row in ((plain, rows[0]), (maths, rows[1])):
        assert message.usage_metadata is not None
        assert (message.usage_metadata["input_tokens"], message.usage_metadata["output_tokens"]) == (
            row.prompt_tokens,
            row.completion_tokens,
        )


# ------------------------------------------------------------------ a thinking local model


@pytest.fixture
def thinking_server(fakes: dict[str, RunningFake], model: IntentModel) -> Iterator[ProxyServer]:
    """The local box thinks on every turn (``thinking: on``): its replies carry reasoning items."""
    backends = {
        "local": {"kind": "vllm", "base_url": fakes["local"].url, "model": LOCAL_MODEL, "thinking": "on"},
        "cloud": {
            "kind": "openai",
            "base_url": fakes["cloud"].url,
            "model": CLOUD_MODEL,
            "api_key": CLOUD_KEY,
        },
    }
    config = make_config(
        fakes["local"].url,
        fakes["cloud"].url,
        backends=backends,
        auth={"keys": [{"name": "frameworks", "key": CLIENT_KEY}]},
    )
    proxy = ProxyServer(config, classifier=model)
    yield proxy
    proxy.stop()


def agents_conversation(proxy: ProxyServer) -> str:
    @function_tool
    def run_tests(path: str) -> str:
        """Run the unit tests in a file and report the result."""
        return TOOL_RESULT

    async def conversation() -> str:
        client = AsyncOpenAI(base_url=proxy.base_url, api_key=CLIENT_KEY, max_retries=0)
        model = OpenAIResponsesModel(model="auto", openai_client=client)
        agent = OpenAIAgent(name="coder", instructions=INSTRUCTIONS, model=model, tools=[run_tests])
        first = await Runner.run(agent, CODING)
        assert first.final_output == FAKE_TEXT
        second = await Runner.run(agent, first.to_input_list() + [{"role": "user", "content": MATHS}])
        return second.final_output

    return asyncio.run(conversation())


def pydantic_ai_conversation(proxy: ProxyServer) -> str:
    def run_tests(path: str) -> str:
        """Run the unit tests in a file and report the result."""
        return TOOL_RESULT

    provider = OpenAIProvider(base_url=proxy.base_url, api_key=CLIENT_KEY)
    agent = PydanticAgent(
        PydanticResponsesModel("auto", provider=provider), instructions=INSTRUCTIONS, tools=[run_tests]
    )
    first = agent.run_sync(CODING)
    assert first.output == FAKE_TEXT
    return agent.run_sync(MATHS, message_history=first.all_messages()).output


def langchain_conversation(proxy: ProxyServer) -> str:
    @tool
    def run_tests(path: str) -> str:
        """Run the unit tests in a file and report the result."""
        return TOOL_RESULT

    llm = ChatOpenAI(model="auto", base_url=proxy.base_url, api_key=CLIENT_KEY, use_responses_api=True)
    bound = llm.bind_tools([run_tests])
    history: list[BaseMessage] = []
    for prompt in (CODING, MATHS):  # each turn: the call, the tool's result, the answer
        history.append(HumanMessage(prompt))
        call = bound.invoke(history)
        history += [call, run_tests.invoke(call.tool_calls[0])]
        history.append(bound.invoke(history))
    return history[-1].text


@pytest.mark.parametrize(
    "conversation",
    [agents_conversation, pydantic_ai_conversation, langchain_conversation],
    ids=["openai-agents", "pydantic-ai", "langchain"],
)
def test_reasoning_goes_back_to_the_box_that_thought_it_and_no_further(thinking_server, fakes, conversation):
    """A coding task with a tool on a thinking local model, then a maths follow-up with that history.

    The frameworks hand vLLM's reasoning items back with the tool result (vLLM takes them:
    no ``encrypted_content``), and the follow-up, routed to the cloud, carries none of them.
    """
    assert conversation(thinking_server) == FAKE_TEXT

    local = fake_state(fakes["local"])["received"]
    handed_back = local[1]["body"]["input"]
    kinds = [item.get("type") for item in handed_back]
    assert kinds.index("reasoning") < kinds.index("function_call") < kinds.index("function_call_output")
    thought = handed_back[kinds.index("reasoning")]
    assert thought["content"][0]["text"] == "".join(REASONING) and not thought.get("encrypted_content")
    assert local[1]["body"]["chat_template_kwargs"] == {"enable_thinking": True}
    for received in fake_state(fakes["cloud"])["received"]:
        kinds = [item.get("type") for item in received["body"]["input"]]
        assert "reasoning" not in kinds and "function_call_output" in kinds
    assert tool_results_sent(fakes["cloud"]).count(TOOL_RESULT) >= 2  # the whole history went along

    expected = [
        ("responses", "local", "classifier", False),
        ("responses", "local", "tool_loop", False),
        ("responses", "cloud", "classifier", False),
        ("responses", "cloud", "tool_loop", False),
    ]
    rows = settled_rows(thinking_server, fakes, expected)
    assert [r.thinking for r in rows[:2]] == ["on", "on"]
    assert rows[0].reasoning_tokens == len(REASONING)


# ------------------------------------------------------------------ anthropic SDK auth styles

RUN_TESTS_TOOL = {
    "name": "run_tests",
    "description": "Run the unit tests in a file and report the result.",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}


@pytest.fixture
def claude_fake() -> Iterator[RunningFake]:
    fake = start_in_thread("anthropic", api_key=ANTHROPIC_KEY, model=CLAUDE_MODEL)
    fake_config(fake, **BEHAVIOUR)
    yield fake
    fake.stop()


@pytest.fixture
def messages_server(fakes, claude_fake, model) -> Iterator[ProxyServer]:
    """The vLLM box and, on the cloud route, OpenAI and Anthropic; only Anthropic serves Messages there."""
    backends = {
        "local": {
            "kind": "vllm",
            "base_url": fakes["local"].url,
            "model": LOCAL_MODEL,
            "extra_body": {"chat_template_kwargs": {"enable_thinking": False}},
        },
        "cloud": {
            "kind": "openai",
            "base_url": fakes["cloud"].url,
            "model": CLOUD_MODEL,
            "api_key": CLOUD_KEY,
        },
        "claude": {
            "kind": "anthropic",
            "base_url": claude_fake.root,
            "model": CLAUDE_MODEL,
            "api_key": ANTHROPIC_KEY,
        },
    }
    config = make_config(
        fakes["local"].url,
        fakes["cloud"].url,
        backends=backends,
        auth={"keys": [{"name": "frameworks", "key": CLIENT_KEY}]},
    )
    proxy = ProxyServer(config, classifier=model)
    yield proxy
    proxy.stop()


def claude_client(proxy: ProxyServer, auth: str, key: str, sent: list[httpx.Headers] | None = None) -> Any:
    """The anthropic SDK with the key as ``x-api-key`` (a default header) or as a Bearer token.

    SDK 2.x sends even ``api_key`` as ``Authorization: Bearer``; clients built for
    Anthropic's own header (and Claude Code) send ``x-api-key``.
    """
    hooks = {"request": [lambda request: sent.append(request.headers)]} if sent is not None else {}
    http = anthropic.DefaultHttpxClient(event_hooks=hooks)
    if auth == "x-api-key":
        return anthropic.Anthropic(
            base_url=proxy.url, default_headers={"x-api-key": key}, http_client=http, max_retries=0
        )
    return anthropic.Anthropic(base_url=proxy.url, auth_token=key, http_client=http, max_retries=0)


@pytest.mark.parametrize("auth", ["x-api-key", "bearer"])
def test_anthropic_sdk_with_either_auth_header(messages_server, fakes, claude_fake, auth):
    sent: list[httpx.Headers] = []
    client = claude_client(messages_server, auth, CLIENT_KEY, sent)

    plain = client.messages.create(
        model=CLAUDE_MODEL,
        max_tokens=512,
        system=INSTRUCTIONS,
        messages=[{"role": "user", "content": CODING}],
    )
    assert plain.content[0].type == "text" and plain.content[0].text == FAKE_TEXT

    with client.messages.stream(
        model=CLAUDE_MODEL, max_tokens=512, messages=[{"role": "user", "content": MATHS}]
    ) as stream:
        pieces = list(stream.text_stream)
        maths = stream.get_final_message()
    assert len(pieces) > 1 and "".join(pieces) == FAKE_TEXT == maths.content[0].text

    conversation: list[dict[str, Any]] = [{"role": "user", "content": CODING}]
    first = client.messages.create(
        model=CLAUDE_MODEL, max_tokens=512, messages=conversation, tools=[RUN_TESTS_TOOL]
    )
    use = next(block for block in first.content if block.type == "tool_use")
    assert (first.stop_reason, use.name, use.input) == ("tool_use", "run_tests", TOOL_ARGS)
    conversation += [
        {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": TOOL_RESULT}]},
    ]
    second = client.messages.create(
        model=CLAUDE_MODEL, max_tokens=512, messages=conversation, tools=[RUN_TESTS_TOOL]
    )
    assert (second.stop_reason, second.content[0].text) == ("end_turn", FAKE_TEXT)

    # The key went as this test said it would, and every call was accepted with it.
    assert len(sent) == 4
    for headers in sent:
        if auth == "x-api-key":
            assert headers["x-api-key"] == CLIENT_KEY and "authorization" not in headers
        else:
            assert headers["authorization"] == f"Bearer {CLIENT_KEY}" and "x-api-key" not in headers

    # A wrong key in the same header is refused by the proxy, in Anthropic's shape.
    with pytest.raises(anthropic.AuthenticationError) as refused:
        claude_client(messages_server, auth, "sk-not-a-client-key").messages.create(
            model=CLAUDE_MODEL, max_tokens=16, messages=[{"role": "user", "content": CODING}]
        )
    assert refused.value.body["type"] == "error"
    assert refused.value.body["error"]["type"] == "authentication_error"

    assert tool_results_sent(fakes["local"]) == [TOOL_RESULT]
    expected = [
        ("messages", "local", "classifier", False),
        ("messages", "claude", "classifier", True),
        ("messages", "local", "classifier", False),
        ("messages", "local", "tool_loop", False),
    ]
    fakes_by_backend = {"local": fakes["local"], "claude": claude_fake, "cloud": fakes["cloud"]}
    rows = settled_rows(messages_server, fakes_by_backend, expected)
    assert rows[1].route == "cloud"
    for message, row in ((plain, rows[0]), (first, rows[2]), (second, rows[3])):
        assert (message.usage.input_tokens, message.usage.output_tokens) == (
            row.prompt_tokens,
            row.completion_tokens,
        )
    # The client's key stays at the proxy: upstreams get their own credentials or none.
    for fake in fakes_by_backend.values():
        for received in fake_state(fake)["received"]:
            assert CLIENT_KEY not in json.dumps(received["headers"])
    # The refused call left no row, and (checked with the rows above) reached no upstream.
    assert len(messages_server.state.recorder.rows) == 4
