"""The one place a usage row is built: from the request's facts, its decision and its outcome.

Real requests and shadow runs alike; nothing else assigns a row's fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from router.ledger.models import UsageRow

if TYPE_CHECKING:
    from router.decide.policy import Decision
    from router.forward.call import Facts, Outcome


def usage_row(
    facts: Facts,
    decision: Decision,
    outcome: Outcome,
    *,
    shadow_of: str | None = None,
    agreement: str | None = None,
) -> UsageRow:
    """The usage row of one request (or of a shadow run: ``shadow_of`` the real request).

    Tokens: the upstream's usage when it reported some; else, for a request that reached
    a model, the prompt estimate and ``completion_estimate``, flagged as estimated; for
    one that generated nothing, none. The cached count is NULL where nobody counted it (the
    upstream reported none, or the tokens are estimated). Text only when
    ``database.store_text`` is on."""
    usage, served, shadow = outcome.usage, outcome.served, decision.shadow
    prompt, completion, cached, reasoning, written = _tokens(facts, outcome)
    return UsageRow(
        request_id=facts.request_id,
        started_at=facts.started_at,
        endpoint=facts.endpoint,
        api=facts.api,
        client=facts.client,
        model_requested=facts.model_requested,
        stream=facts.stream,
        status=outcome.status,
        error_type=outcome.error_type,
        intent=decision.intent,
        confidence=decision.confidence,
        reason=decision.reason,
        decided_route=decision.route,
        decided_backend=decision.backend,
        backend=served.backend if served else None,
        route=served.route if served else None,
        fallback=served.fallback if served else False,
        fallback_reason=outcome.fallback_reason,
        shadow_backend=shadow.backend if shadow else None,
        shadow_route=shadow.route if shadow else None,
        shadow_intent=shadow.intent if shadow else None,
        classifier_version=facts.classifier_version,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cached_tokens=cached,
        cache_write_tokens=written,
        reasoning_tokens=reasoning,
        tokens_estimated=usage is None and outcome.billed,
        latency_ms=outcome.latency_ms,
        ttft_ms=outcome.ttft_ms,
        expected_ttft_ms=outcome.expected_ttft_ms,
        thinking=served.thinking if served else None,
        response_id=outcome.response_id,
        arm=decision.arm,
        shadow_of=shadow_of,
        agreement=agreement,
        gate_run=facts.gate_run,
        session_id=facts.session,
        prompt_text=facts.prompt_text if facts.store_text else None,
        completion_text=outcome.text if facts.store_text else None,
    )


def _tokens(facts: Facts, outcome: Outcome) -> tuple[int, int, int | None, int, int]:
    """``(prompt, completion, cached, reasoning, cache_write)`` of the row."""
    usage = outcome.usage
    if usage is not None:
        cached = usage.cached if usage.cache_counted else None
        return usage.prompt, usage.completion, cached, usage.reasoning, usage.cache_write
    if outcome.billed:
        # An estimate says nothing about the cache: no cached count (NULL), not 0 hits.
        return facts.prompt_estimate, outcome.completion_estimate, None, 0, 0
    return 0, 0, 0, 0, 0
