"""The routing policy: each rule and its reason, the classifier, the floor, shadow mode."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from classifier import IntentModel
from router.decide.policy import Decision, Policy
from router.errors import ProxyError
from tests.harness import ProxyServer, make_config

LOCAL, CLOUD = "http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"
CODING_AGENT = "You are a coding agent working in a git repository. Use the tools to read and edit files."
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]


@pytest.fixture(scope="module")
def model() -> IntentModel:
    return IntentModel.load()


def policy(model: IntentModel | None = None, **routing: object) -> Policy:
    return Policy(
        make_config(LOCAL, CLOUD, routing={"default": "local", "fallbacks": {"local": ["cloud"]}, **routing}),
        model,
    )


def chat(text: str, **extra: object) -> dict:
    return {"model": "auto", "messages": [{"role": "user", "content": text}], **extra}


def decide(p: Policy, body: dict, headers: dict | None = None) -> Decision:
    return p.decide(body, headers or {}, len(orjson.dumps(body)))


def test_explicit_overrides(model):
    p = policy(model)
    assert decide(p, chat("integrate x^2 dx"), {"x-offload-route": "local"}).reason == "override_header"
    assert decide(p, chat("integrate x^2 dx"), {"x-offload-route": "local"}).backend == "local"
    d = decide(p, {**chat("write a haiku"), "model": "local"})
    assert (d.backend, d.reason) == ("local", "override_model")
    assert decide(p, {**chat("x"), "model": "cloud"}).backend == "cloud"
    with pytest.raises(ProxyError) as caught:
        decide(p, chat("x"), {"x-offload-route": "gpu-farm"})
    assert caught.value.status == 400


def test_images_go_to_the_cloud_when_local_is_text_only(model):
    body = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "fix the CSS so this matches the mockup"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                ],
            }
        ]
    }
    d = decide(policy(model), body)
    assert (d.route, d.reason) == ("cloud", "media")


def test_prompt_beyond_the_local_context_window_goes_to_the_cloud(model):
    d = decide(
        policy(model), chat("refactor this module\n" + "x = 1\n" * 200_000)
    )  # ~1.2 MB > 262,144 tokens
    assert (d.route, d.reason) == ("cloud", "context_overflow")
    assert decide(policy(model), chat("refactor this module\n" + "x = 1\n" * 1000)).reason == "classifier"
    # A tool-loop turn the box cannot hold goes to the cloud too, whatever its task.
    loop = tool_loop("fix the failing test in parser.py", "call_1")
    loop["messages"][-1]["content"] = "x = 1\n" * 200_000
    assert decide(policy(model), loop).reason == "context_overflow"


def tool_loop(task: str, call_id: str) -> dict:
    return {
        "tools": TOOLS,
        "messages": [
            {"role": "system", "content": CODING_AGENT},
            {"role": "user", "content": task},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": "file contents"},
        ],
    }


MATH_TASK = "what is the integral of x^2 from 0 to 3?"
CODING_TASK = "fix the failing test in tests/test_parser.py: parse_date() drops the timezone"
# vLLM, OpenAI, a parser's own, Anthropic's and a client's ids: none of them says where the task belongs.
CALL_IDS = ("chatcmpl-tool-0123", "call_abc123", "functions.read_file:0", "toolu_42", "call_0")


def test_a_tool_loop_takes_the_decision_of_its_task_whatever_its_call_ids(model):
    for call_id in CALL_IDS:
        maths = decide(policy(model), tool_loop(MATH_TASK, call_id))
        coding = decide(policy(model), tool_loop(CODING_TASK, call_id))
        assert (maths.route, maths.reason) == ("cloud", "tool_loop"), call_id
        assert (coding.route, coding.reason) == ("local", "tool_loop"), call_id
        # The same decision as the task itself got when the user asked it.
        task_alone = decide(
            policy(model), {"tools": TOOLS, "messages": tool_loop(CODING_TASK, call_id)["messages"][:2]}
        )
        assert (coding.backend, coding.intent) == (task_alone.backend, task_alone.intent)


def test_call_id_stickiness_is_an_explicit_option(model):
    sticky = policy(model, tool_loops="call_id")
    assert decide(sticky, tool_loop(CODING_TASK, "call_abc123")).backend == "cloud"
    assert decide(sticky, tool_loop(MATH_TASK, "chatcmpl-tool-0123")).backend == "local"


def test_classifier_routes_by_intent(model):
    p = policy(model)
    coding = decide(
        p, chat("Traceback (most recent call last):\n  File \"app.py\", line 3\nKeyError: 'id'\nfix it")
    )
    maths = decide(p, chat("Evaluate the integral of x^3 * e^(-x^2) from 0 to infinity, exact value please."))
    writing = decide(
        p, chat("Write a 1200-word launch blog post in our brand voice: warm, witty, confident.")
    )
    assert (coding.intent, coding.route, coding.reason) == ("coding", "local", "classifier")
    assert (maths.intent, maths.route) == ("math", "cloud")
    assert (writing.intent, writing.route) == ("writing", "cloud")


def test_a_maths_question_inside_a_coding_conversation_is_maths(model):
    body = {
        "messages": [
            {"role": "system", "content": CODING_AGENT},
            {"role": "user", "content": "add a --verbose flag to cli.py"},
            {"role": "assistant", "content": "Done: added the flag and a test."},
            {
                "role": "user",
                "content": "unrelated: how many ways can 10 people sit at a round table if two refuse to sit together?",
            },
        ]
    }
    d = decide(policy(model), body)
    assert d.route == "cloud" and d.intent in ("math", "reasoning")


def test_below_the_confidence_floor_the_default_policy_takes_routing_default(model):
    d = decide(policy(model, confidence_floor=0.99999, low_confidence="default"), chat("hello"))
    assert (d.backend, d.reason) == ("local", "low_confidence")
    assert d.intent is not None and d.confidence is not None and d.confidence < 0.99999


def test_shadow_mode_serves_one_backend_and_records_the_choice(model):
    p = policy(model, mode="shadow", shadow_backend="cloud")
    d = decide(p, chat("Traceback (most recent call last): KeyError 'id' in app.py, fix it"))
    assert (d.backend, d.reason) == ("cloud", "shadow")
    assert d.shadow is not None and (d.shadow.backend, d.shadow.reason) == ("local", "classifier")


def test_no_classifier_means_the_default(model):
    d = decide(policy(None), chat("integrate x^2"))
    assert (d.backend, d.reason, d.intent) == ("local", "default", None)


def test_decision_endpoint_forwards_nothing_and_headers_carry_the_intent(model):
    server = ProxyServer(make_config(LOCAL, CLOUD), classifier=model)
    try:
        response = server.post("/offload/route", json=chat("Prove that there are infinitely many primes."))
        assert response.status_code == 200
        decision = response.json()
        assert decision["route"] == "cloud" and decision["reason"] == "classifier"
        assert response.headers["x-offload-intent"] == decision["intent"]
        assert server.post("/offload/route", json={"messages": "not a list"}).status_code == 400
    finally:
        server.stop()


def test_classify_cli_single_and_batch(tmp_path: Path):
    batch = tmp_path / "in.jsonl"
    batch.write_text(
        "\n".join(
            [
                orjson.dumps({"id": "a", "request": chat("write a unit test for parse_date()")}).decode(),
                orjson.dumps(chat("Write a press release announcing our Series B.")).decode(),
                "{broken",
            ]
        )
    )
    # The cloud configured: the route and backend are where the request would really go.
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-0123456789"}
    out = subprocess.run(
        [sys.executable, "-m", "router.ops.cli", "classify", "--batch", str(batch)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=env,
    ).stdout.splitlines()
    lines = [orjson.loads(line) for line in out]
    assert set(lines[0]) == {"id", "intent", "confidence", "route", "backend", "reason"}
    assert (lines[0]["id"], lines[0]["route"]) == ("a", "local")
    assert (lines[1]["id"], lines[1]["intent"], lines[1]["route"]) == (2, "writing", "cloud")
    assert lines[2]["id"] == 3 and "not valid JSON" in lines[2]["error"]
    single = subprocess.run(
        [sys.executable, "-m", "router.ops.cli", "classify", "what is 17 * 23 exactly, show the steps"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert orjson.loads(single)["route"] in ("local", "cloud")


class Unsure:
    """A classifier that is never sure: fixed probabilities, in IntentModel's class order."""

    version = "unsure"
    classes = ("coding", "instruction", "math", "reasoning", "tools", "writing")

    def __init__(self, **probabilities: float) -> None:
        self.probabilities = tuple(probabilities.get(c, 0.0) for c in self.classes)

    def predict(self, request: dict) -> Any:
        from classifier.model import Prediction

        best = max(range(len(self.classes)), key=self.probabilities.__getitem__)
        return Prediction(self.classes[best], self.probabilities[best], self.probabilities)


def test_low_confidence_goes_where_most_of_the_probability_lies():
    # Top intent coding (local), but maths and reasoning together say cloud work.
    split = Unsure(coding=0.36, math=0.33, reasoning=0.31)
    d = decide(policy(split), chat("x"))  # the default policy: route
    assert (d.route, d.backend, d.intent, d.reason) == ("cloud", "cloud", "coding", "low_confidence")
    # Top intent maths (cloud), coding and tools together more: the guess at maths stays cloud
    # work (a maths question answered by the local box is the costlier mistake).
    cloud = decide(policy(Unsure(math=0.40, coding=0.30, tools=0.30)), chat("x"))
    assert (cloud.route, cloud.intent, cloud.reason) == ("cloud", "math", "low_confidence")
    # Top intent tools (local), the rest spread over cloud intents that together hold less.
    local = decide(policy(Unsure(tools=0.45, coding=0.10, math=0.25, writing=0.20)), chat("x"))
    assert (local.route, local.intent) == ("local", "tools")
    assert decide(policy(split, low_confidence="default"), chat("x")).route == "local"
    assert decide(policy(split, low_confidence="intent"), chat("x")).route == "local"
    assert decide(policy(Unsure(coding=0.4, tools=0.6)), chat("x")).reason == "classifier"  # above the floor


def test_low_confidence_policy_is_a_choice(model):
    body = chat("Evaluate the integral of x^3 * e^(-x^2) from 0 to infinity, exact value please.")
    floor = {"confidence_floor": 0.99999}
    assert decide(policy(model, low_confidence="default", **floor), body).backend == "local"
    top = decide(policy(model, low_confidence="intent", **floor), body)
    assert (top.backend, top.intent, top.reason) == ("cloud", "math", "low_confidence")
    safe = decide(policy(model, low_confidence="cloud", **floor), chat("hello"))
    assert (safe.backend, safe.reason) == ("cloud", "low_confidence")


# ------------------------------------------------------------- team rules

RULES = [
    {"name": "marketing", "match": {"client": "marketing"}, "route": "cloud"},
    {"name": "titles", "match": {"system_contains": "Generate a concise title"}, "backend": "local"},
    {"name": "research", "match": {"header": {"x-team": "research"}, "tools": False}, "intent": "math"},
    {
        "name": "haiku",
        "match": {"model": ["claude-haiku-4-5"], "system_regex": r"^You are Claude Code"},
        "route": "local",
    },
]


def test_team_rules_decide_before_the_classifier(model):
    p = policy(model, rules=RULES)
    coding = chat("write a python function that reverses a list")
    d = p.decide(coding, {}, 100, client="marketing")
    assert (d.backend, d.reason) == ("cloud", "rule:marketing")
    assert p.decide(coding, {}, 100, client="ci-bot").reason == "classifier"
    title = {
        "messages": [{"role": "system", "content": "Generate a concise title for this chat."}, *USER_MATH]
    }
    assert (decide(p, title).backend, decide(p, title).reason) == ("local", "rule:titles")
    research = decide(p, coding, {"x-team": "research"})
    assert (research.backend, research.intent, research.reason) == ("cloud", "math", "rule:research")
    assert decide(p, {**coding, "tools": TOOLS}, {"x-team": "research"}).reason == "classifier"
    claude = {
        "model": "claude-haiku-4-5",
        "messages": [{"role": "system", "content": "You are Claude Code."}, *USER_MATH],
    }
    assert decide(p, claude).reason == "rule:haiku"
    assert decide(p, {**claude, "model": "claude-sonnet-4-6"}).reason == "classifier"


USER_MATH = [{"role": "user", "content": "Prove that the square root of 2 is irrational."}]


@pytest.mark.parametrize(
    "rule, complaint",
    [
        ({"name": "x", "match": {"client": "a"}}, "exactly one of route, backend or intent"),
        ({"name": "x", "match": {"client": "a"}, "route": "gpu"}, "unknown backend 'gpu'"),
        ({"name": "x", "match": {"client": "a"}, "intent": "poetry"}, "unknown intent 'poetry'"),
        (
            {"name": "x", "match": {"system_regex": "(unclosed"}, "route": "local"},
            "not a valid regular expression",
        ),
        ({"name": "x", "match": {}, "route": "local"}, "at least one condition"),
        ({"name": "x", "match": {"colour": "red"}, "route": "local"}, "unknown key"),
    ],
)
def test_bad_rules_are_refused_at_start_up_in_one_line(rule, complaint):
    from router.config import ConfigError

    with pytest.raises(ConfigError) as caught:
        policy(None, rules=[rule])
    message = str(caught.value)
    assert complaint in message and "\n" not in message and "rules" in message


# ------------------------------------------------------------- every API, one view


def test_responses_and_messages_are_decided_like_chat(model):
    from router.dialects import MESSAGES, RESPONSES

    p = policy(model)
    responses = {
        "model": "gpt-5.1-codex",
        "instructions": CODING_AGENT,
        "input": [{"role": "user", "content": MATH_TASK}],
    }
    messages = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "system": [{"type": "text", "text": CODING_AGENT}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": MATH_TASK}]}],
    }
    as_chat = decide(
        p, {"messages": [{"role": "system", "content": CODING_AGENT}, {"role": "user", "content": MATH_TASK}]}
    )
    for body, dialect in ((responses, RESPONSES), (messages, MESSAGES)):
        d = p.decide(body, {}, 300, dialect)
        assert (d.backend, d.intent, d.reason) == (as_chat.backend, as_chat.intent, "classifier")


def test_tool_loops_and_media_in_responses_and_messages(model):
    from router.dialects import MESSAGES, RESPONSES

    p = policy(model)
    responses_loop = {
        "input": [
            {"role": "user", "content": MATH_TASK},
            {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "ok"},
        ],
        "tools": [{"type": "function", "name": "read_file", "parameters": {"type": "object"}}],
    }
    messages_loop = {
        "max_tokens": 100,
        "tools": [{"name": "Bash", "description": "run a command", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": CODING_TASK},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "1 failed"},
                    {"type": "text", "text": "<system-reminder>keep going</system-reminder>"},
                ],
            },
        ],
    }
    assert (
        p.decide(responses_loop, {}, 300, RESPONSES).route,
        p.decide(responses_loop, {}, 300, RESPONSES).reason,
    ) == ("cloud", "tool_loop")
    assert (
        p.decide(messages_loop, {}, 300, MESSAGES).route,
        p.decide(messages_loop, {}, 300, MESSAGES).reason,
    ) == ("local", "tool_loop")
    image = {
        "max_tokens": 10,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is in this screenshot?"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
                    },
                ],
            }
        ],
    }
    assert p.decide(image, {}, 300, MESSAGES).reason == "media"
    picture = {
        "input": [
            {"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,AA"}]}
        ]
    }
    assert p.decide(picture, {}, 300, RESPONSES).reason == "media"


def test_malformed_part_and_item_types_do_not_raise(model):
    """A client's list where a part's or item's ``type`` string belongs is decided on and
    adapted (the backend refuses it), never a 500: the type sets are hashed, a list is not."""
    from router.dialects import MESSAGES, RESPONSES
    from router.forward.backends import Backend

    config = make_config(LOCAL, CLOUD)
    vllm = Backend("local", config.backends["local"], config.health)
    p = policy(model)
    odd = {"type": ["image_url"], "text": "fix the failing test"}
    assert decide(p, {"model": "auto", "messages": [{"role": "user", "content": [odd]}]}).route == "local"
    responses = {"model": "auto", "input": [{"type": ["message"], "role": "user", "content": "fix it"}]}
    assert p.decide(responses, {}, 100, RESPONSES).route == "local"
    assert orjson.loads(RESPONSES.adapt(responses, vllm, None).payload)["input"] == responses["input"]
    messages = {"model": "auto", "max_tokens": 10, "messages": [{"role": "user", "content": [odd]}]}
    assert p.decide(messages, {}, 100, MESSAGES).route == "local"
    assert orjson.loads(MESSAGES.adapt(messages, vllm, None).payload)["messages"] == messages["messages"]
