"""The routing policy: each rule and its reason, the classifier, the floor, shadow mode."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from classifier import IntentModel
from router.errors import ProxyError
from router.policy import Decision, Policy
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


def test_a_tool_loop_stays_where_it_started(model):
    def loop(call_id: str) -> dict:
        return {
            "tools": TOOLS,
            "messages": [
                {"role": "system", "content": CODING_AGENT},
                {"role": "user", "content": "what is the integral of x^2 from 0 to 3?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "read_file", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": call_id, "content": "file contents"},
            ],
        }

    started_local = decide(policy(model), loop("chatcmpl-tool-0123"))
    started_cloud = decide(policy(model), loop("call_abc123"))
    unknown = decide(policy(model), loop("toolu_42"))
    assert (started_local.backend, started_local.reason, started_local.intent) == (
        "local",
        "tool_loop",
        "tools",
    )
    assert (started_cloud.backend, started_cloud.reason) == ("cloud", "tool_loop")
    assert unknown.backend == "local"  # where the tools intent goes by default


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


def test_below_the_confidence_floor_the_default_wins(model):
    d = decide(policy(model, confidence_floor=0.99999), chat("hello"))
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
    out = subprocess.run(
        [sys.executable, "-m", "router.cli", "classify", "--batch", str(batch)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    lines = [orjson.loads(line) for line in out]
    assert set(lines[0]) == {"id", "intent", "confidence", "route", "backend", "reason"}
    assert (lines[0]["id"], lines[0]["route"]) == ("a", "local")
    assert (lines[1]["id"], lines[1]["intent"], lines[1]["route"]) == (2, "writing", "cloud")
    assert lines[2]["id"] == 3 and "not valid JSON" in lines[2]["error"]
    single = subprocess.run(
        [sys.executable, "-m", "router.cli", "classify", "what is 17 * 23 exactly, show the steps"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert orjson.loads(single)["route"] in ("local", "cloud")
