"""router/ledger/rows.py and router/forward/call.py: a usage row is built in one place, from values."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from router.decide.policy import Decision
from router.dialects import CHAT, Usage
from router.forward.call import Call, Facts, Outcome, Served
from router.ledger.rows import usage_row

FACTS = Facts(
    request_id="req-1",
    started_at=datetime(2026, 12, 1, 20, 0, tzinfo=UTC),
    t0=0.0,
    endpoint="chat",
    api="chat",
    client="ci-bot",
    model_requested="auto",
    stream=True,
    prompt_estimate=250,
    classifier_version="v7",
    store_text=True,
    prompt_text='{"messages": []}',
)
DECISION = Decision(
    "coding", 0.9, "local", "local", "classifier", Decision("math", 0.6, "cloud", "cloud", "c")
)


def test_a_served_request_carries_its_facts_decision_and_outcome() -> None:
    outcome = Outcome(
        status=200,
        latency_ms=12.5,
        served=Served("cloud", "cloud", "off", "off", fallback=True),
        usage=Usage(100, 20, 30, 5),
        fallback_reason="backend_down",
        ttft_ms=3.0,
        response_id="resp_1",
        text="done",
    )
    row = usage_row(FACTS, DECISION, outcome)
    assert (row.request_id, row.client, row.stream, row.classifier_version) == ("req-1", "ci-bot", True, "v7")
    assert (row.intent, row.reason, row.decided_route, row.decided_backend) == (
        "coding",
        "classifier",
        "local",
        "local",
    )
    assert (row.shadow_backend, row.shadow_route, row.shadow_intent) == ("cloud", "cloud", "math")
    assert (row.backend, row.route, row.fallback, row.fallback_reason, row.thinking) == (
        "cloud",
        "cloud",
        True,
        "backend_down",
        "off",
    )
    assert (row.prompt_tokens, row.completion_tokens, row.cached_tokens, row.reasoning_tokens) == (
        100,
        20,
        30,
        5,
    )
    assert not row.tokens_estimated
    assert (row.status, row.latency_ms, row.ttft_ms, row.response_id) == (200, 12.5, 3.0, "resp_1")
    assert (row.prompt_text, row.completion_text) == ('{"messages": []}', "done")


def test_without_usage_a_billed_request_is_estimated_and_a_refused_one_counts_nothing() -> None:
    estimated = usage_row(FACTS, DECISION, Outcome(status=499, latency_ms=1.0, completion_estimate=7))
    assert (estimated.prompt_tokens, estimated.completion_tokens, estimated.tokens_estimated) == (
        250,
        7,
        True,
    )
    assert estimated.cached_tokens is None  # an estimate counts no cache hits: unknown, not 0
    refused = usage_row(FACTS, DECISION, Outcome(status=503, latency_ms=1.0, billed=False, error_type="x"))
    assert (refused.prompt_tokens, refused.completion_tokens, refused.tokens_estimated) == (0, 0, False)
    assert (refused.backend, refused.route, refused.fallback, refused.error_type) == (None, None, False, "x")


def test_text_is_kept_only_when_the_database_stores_text() -> None:
    quiet = FACTS._replace(store_text=False)
    row = usage_row(quiet, DECISION, Outcome(status=200, latency_ms=1.0, text="secret answer"))
    assert (row.prompt_text, row.completion_text) == (None, None)


def test_a_shadow_run_row_names_the_request_it_copied() -> None:
    copy = FACTS._replace(request_id="req-2", stream=False, prompt_text=None)
    decision = Decision("math", 0.6, "local", "local-thinking", "shadow_run", arm="local-thinking")
    outcome = Outcome(
        status=200, latency_ms=9.0, served=Served("local-thinking", "local"), billed=False, text="41"
    )
    row = usage_row(copy, decision, outcome, shadow_of="req-1", agreement="disagree")
    assert (row.shadow_of, row.agreement, row.arm, row.reason) == (
        "req-1",
        "disagree",
        "local-thinking",
        "shadow_run",
    )
    assert (row.prompt_text, row.completion_text, row.prompt_tokens) == (None, "41", 0)


def test_a_call_is_a_value() -> None:
    call = Call(FACTS, CHAT, {"messages": []}, DECISION)
    with pytest.raises(AttributeError):
        call.shadow_arm = "local-thinking"  # type: ignore[misc]
    assert call.wants_text  # store_text
    quiet = FACTS._replace(store_text=False)
    assert not call._replace(facts=quiet).wants_text
    assert call._replace(facts=quiet, shadow_arm="local-thinking").wants_text
