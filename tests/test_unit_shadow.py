"""router/shadow/runs.py without a network: which calls get a copy, and that off means off."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from router.config import parse_config
from router.decide.policy import Decision
from router.dialects import CHAT, COUNT_TOKENS
from router.forward.backends import Pool
from router.forward.call import Call, Facts, Outcome
from router.ledger.models import UsageRow
from router.shadow.runs import ShadowRuns

RAW: dict[str, Any] = {
    "database": {"enabled": False},
    "backends": {
        "local": {"kind": "vllm", "base_url": "http://127.0.0.1:1/v1", "model": "m"},
        "local-thinking": {"variant_of": "local", "thinking": "on"},
        "cloud": {"kind": "openai", "base_url": "http://127.0.0.1:2/v1", "model": "c", "api_key": "k"},
    },
    "routing": {"shadow_runs": {"intents": {"math": {"arm": "local-thinking", "rate": 1.0}}}},
}
MATHS = Decision("math", 0.9, "cloud", "cloud", "classifier")


def shadow_runs(**shadow: Any) -> tuple[ShadowRuns, list[UsageRow]]:
    raw = {**RAW, "routing": {"shadow_runs": {**RAW["routing"]["shadow_runs"], **shadow}}}
    config = parse_config(raw, env={})
    rows: list[UsageRow] = []
    runs = ShadowRuns(config.routing.shadow_runs, Pool(config), None, rows.append, lambda arm, outcome: None)  # type: ignore[arg-type]
    return runs, rows


def test_a_cloud_bound_request_of_a_shadowed_intent_gets_the_arm() -> None:
    runs, _ = shadow_runs()
    assert runs.arm_for(MATHS, CHAT, None) == "local-thinking"
    assert runs.arm_for(MATHS._replace(intent="coding"), CHAT, None) is None  # not a shadowed intent
    assert runs.arm_for(MATHS._replace(route="local", backend="local"), CHAT, None) is None  # already local
    assert runs.arm_for(MATHS, COUNT_TOKENS, None) is None  # nothing to compare
    assert runs.arm_for(MATHS, CHAT, frozenset({"cloud"})) is None  # a key kept to the cloud
    assert runs.arm_for(MATHS, CHAT, frozenset({"cloud", "local"})) == "local-thinking"


def test_the_per_minute_bound_holds() -> None:
    runs, _ = shadow_runs(max_per_minute=2)
    assert [runs.arm_for(MATHS, CHAT, None) for _ in range(3)] == ["local-thinking", "local-thinking", None]


async def test_switched_off_nothing_is_sampled_or_started() -> None:
    runs, rows = shadow_runs()
    facts = Facts("req-1", datetime.now(UTC), 0.0, "chat", "chat", None, "auto", False, 10, None)
    call = Call(facts, CHAT, {"messages": []}, MATHS, shadow_arm=runs.arm_for(MATHS, CHAT, None))
    runs.switch(False)
    assert runs.arm_for(MATHS, CHAT, None) is None
    runs.start(call, Outcome(status=200, latency_ms=1.0, text="42"))  # sampled before the switch
    assert not runs._tasks and rows == []
    await runs.stop()
