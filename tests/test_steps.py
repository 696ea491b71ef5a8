"""Each step of the policy on its own (router/decide/steps.py, router/decide/rules.py): what it decides,
with which reason, and when it passes the request on. Direct calls, no server, no model:
the classifier is a stand-in that says what it was given. tests/test_policy.py checks the
steps together, in their order, with the packaged model."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from classifier.model import Prediction
from router.config import Config
from router.decide.decision import Decision, Facts, Targets
from router.decide.policy import Policy
from router.decide.reasons import Reason
from router.decide.rules import Rules
from router.decide.steps import (
    Classification,
    Classify,
    ContextOverflow,
    Embeddings,
    Media,
    Override,
    Pinned,
    ShadowMode,
    Split,
    ToolLoop,
)
from router.decide.switch import SwitchCost
from router.dialects import CHAT, EMBEDDINGS, RESPONSES, Dialect
from router.errors import ProxyError
from router.forward.response_ids import ResponseOwners
from router.sessions import Seen
from router.tokens import TOKENS_PER_BYTE, prompt_tokens
from tests.harness import make_config

LOCAL, CLOUD = "http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]
CLASSES = ("coding", "instruction", "math", "reasoning", "tools", "writing")


def config(**routing: Any) -> Config:
    return make_config(
        LOCAL, CLOUD, routing={"default": "local", "fallbacks": {"local": ["cloud"]}, **routing}
    )


def facts(
    body: dict[str, Any],
    headers: dict[str, str] | None = None,
    dialect: Dialect = CHAT,
    seen: Seen | None = None,
) -> Facts:
    return Facts(body, headers or {}, len(orjson.dumps(body)), dialect, None, seen=seen)


def chat(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "auto", "messages": [{"role": "user", "content": text}], **extra}


class Says:
    """A classifier that gives one intent at one confidence and keeps what it was asked."""

    version = "says"
    classes = CLASSES

    def __init__(self, intent: str, confidence: float = 0.9, **probabilities: float) -> None:
        self.intent, self.confidence = intent, confidence
        self.probabilities = tuple(probabilities.get(c, 0.0) for c in CLASSES)
        self.asked: list[dict[str, Any]] = []

    def predict(self, request: dict[str, Any]) -> Prediction:
        self.asked.append(request)
        return Prediction(self.intent, self.confidence, self.probabilities)


def classification(classifier: Says | None, **routing: Any) -> Classification:
    c = config(**routing)
    return Classification(classifier, Targets(c), c.routing)


def summary(d: Decision | None) -> tuple[Any, ...] | None:
    return None if d is None else (d.backend, d.route, d.intent, d.reason)


# ------------------------------------------------------------ explicit choices


def test_embeddings_go_to_the_named_or_the_first_embeddings_backend() -> None:
    step = Embeddings(Targets(config()), config())
    body = {"model": "text-embedding-3-small", "input": "hello"}
    assert step.decide(facts(chat("x"))) is None  # a chat request is for the later steps
    assert summary(step.decide(facts(body, dialect=EMBEDDINGS))) == ("cloud", "cloud", None, "embeddings")
    assert step.decide(facts(body, {"x-offload-route": "CLOUD"}, EMBEDDINGS)).backend == "cloud"  # type: ignore[union-attr]
    with pytest.raises(ProxyError) as refused:
        step.decide(facts(body, {"x-offload-route": "local"}, EMBEDDINGS))  # local serves none
    assert (refused.value.status, refused.value.param) == (400, "x-offload-route")
    bare = make_config(
        LOCAL, CLOUD, backends__cloud={"kind": "openai", "base_url": CLOUD, "model": "gpt-5.1"}
    )
    with pytest.raises(ProxyError) as missing:
        Embeddings(Targets(bare), bare).decide(facts(body, dialect=EMBEDDINGS))
    assert (missing.value.status, missing.value.code) == (404, "embeddings_not_configured")


def test_override_by_header_or_by_a_route_name_as_model() -> None:
    step = Override(Targets(config()))
    assert summary(step.decide(facts(chat("x"), {"x-offload-route": " Cloud "}))) == (
        "cloud", "cloud", None, "override_header",
    )  # fmt: skip
    assert summary(step.decide(facts({**chat("x"), "model": "local"}))) == (
        "local",
        "local",
        None,
        "override_model",
    )
    assert step.decide(facts(chat("x"))) is None  # "auto"
    assert (
        step.decide(facts({**chat("x"), "model": "gpt-4o-mini"})) is None
    )  # a model the proxy does not route by
    with pytest.raises(ProxyError) as refused:
        step.decide(facts(chat("x"), {"x-offload-route": "gpu-farm"}))
    assert (refused.value.status, refused.value.code) == (400, "unknown_route")


def test_team_rules_decide_by_name_or_pass() -> None:
    rules = [
        {"name": "marketing", "match": {"client": "marketing"}, "route": "cloud"},
        {"name": "research", "match": {"header": {"x-team": "research"}}, "intent": "math"},
    ]
    c = config(rules=rules)
    step = Rules(c.routing.rules, Targets(c))
    body = chat("write a function")
    marketing = Facts(body, {}, 100, CHAT, "marketing")
    assert summary(step.decide(marketing)) == ("cloud", "cloud", None, "rule:marketing")
    assert summary(step.decide(facts(body, {"x-team": "research"}))) == (
        "cloud",
        "cloud",
        "math",
        "rule:research",
    )
    assert step.decide(facts(body)) is None
    assert Rules([], Targets(c)).decide(marketing) is None


def test_a_continued_response_of_its_own_key_goes_where_it_lives() -> None:
    owners = ResponseOwners()
    owners.remember("resp_local", "local", "ci-bot")
    owners.remember("resp_gone", "spark-retired", "ci-bot")  # a backend no longer configured
    step = Pinned(Targets(config()), owners)
    turn = {"model": "auto", "input": "and now?", "previous_response_id": "resp_local"}
    decided = step.decide(Facts(turn, {}, 100, RESPONSES, "ci-bot"))
    assert summary(decided) == ("local", "local", None, "previous_response")
    assert step.decide(Facts(turn, {}, 100, RESPONSES, "marketing")) is None  # another key's id
    for previous in ("resp_unknown", "resp_gone", None, 42):
        assert (
            step.decide(Facts({**turn, "previous_response_id": previous}, {}, 100, RESPONSES, "ci-bot"))
            is None
        )


# ------------------------------------------------------------ by content

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}


def test_media_goes_to_the_cloud_only_when_the_local_model_is_text_only() -> None:
    c = config()
    step = Media(Targets(c), c.backends["local"])
    with_image = {"messages": [{"role": "user", "content": [{"type": "text", "text": "match this"}, IMAGE]}]}
    assert summary(step.decide(facts(with_image))) == ("cloud", "cloud", None, "media")
    assert step.decide(facts(chat("no pictures here"))) is None
    seeing = make_config(
        LOCAL, CLOUD, backends__local={"kind": "vllm", "base_url": LOCAL, "model": "m", "multimodal": True}
    )
    assert Media(Targets(seeing), seeing.backends["local"]).decide(facts(with_image)) is None


def test_a_prompt_beyond_the_local_context_goes_to_the_cloud() -> None:
    c = config()
    step = ContextOverflow(Targets(c), c.backends["local"])
    window = c.backends["local"].context_window or 0
    size = int(window / TOKENS_PER_BYTE)  # a body the one token estimate puts at the window exactly
    assert prompt_tokens(size) == window
    assert step.decide(Facts(chat("x"), {}, size, CHAT, None)) is None
    over = Facts(chat("x"), {}, size + int(1 / TOKENS_PER_BYTE), CHAT, None)
    assert summary(step.decide(over)) == ("cloud", "cloud", None, "context_overflow")
    assert ContextOverflow(Targets(c), None).decide(over) is None  # no local backend: nothing to overflow


def loop(task: str, call_id: str = "call_1") -> dict[str, Any]:
    call = {"id": call_id, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
    return {
        "model": "auto",
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": task},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": "def parse(): ..."},
        ],
    }


def test_a_tool_loop_turn_is_classified_by_its_task() -> None:
    says = Says("math")
    step = ToolLoop(classification(says), Targets(config()), config().routing)
    d = step.decide(facts(loop("prove the bound holds for every n")))
    assert summary(d) == ("cloud", "cloud", "math", "tool_loop")
    (asked,) = says.asked  # the conversation up to its last user turn, not the tool output
    assert [m["role"] for m in asked["messages"]] == ["user"]
    assert step.decide(facts(chat("no tools, no loop"))) is None
    assert step.decide(facts({**chat("tools offered, no call yet"), "tools": TOOLS})) is None


def test_a_tool_loop_without_a_classifier_or_below_the_floor() -> None:
    c = config()
    bare = ToolLoop(classification(None), Targets(c), c.routing)
    assert summary(bare.decide(facts(loop("x")))) == ("local", "local", "tools", "tool_loop")
    unsure = ToolLoop(classification(Says("math", 0.2), low_confidence="default"), Targets(c), c.routing)
    assert summary(unsure.decide(facts(loop("x")))) == ("local", "local", "math", "low_confidence")
    assert set(ToolLoop.reasons) == {Reason.TOOL_LOOP, Reason.LOW_CONFIDENCE}


def test_tool_loops_by_call_id_stay_where_their_ids_say() -> None:
    c = config(tool_loops="call_id")
    step = ToolLoop(classification(Says("math"), tool_loops="call_id"), Targets(c), c.routing)
    assert summary(step.decide(facts(loop("x", "chatcmpl-tool-1")))) == (
        "local",
        "local",
        "tools",
        "tool_loop",
    )
    assert summary(step.decide(facts(loop("x", "call_1")))) == ("cloud", "cloud", "tools", "tool_loop")
    assert step.decide(facts(loop("x", "functions.read_file:0"))).backend == "local"  # type: ignore[union-attr]


def test_the_classifier_step_always_decides() -> None:
    assert summary(Classify(classification(Says("writing", 0.8))).decide(facts(chat("x")))) == (
        "cloud", "cloud", "writing", "classifier",
    )  # fmt: skip
    assert summary(Classify(classification(None)).decide(facts(chat("x")))) == (
        "local",
        "local",
        None,
        "default",
    )


@pytest.mark.parametrize(
    "low_confidence, backend",
    [("default", "local"), ("intent", "local"), ("cloud", "cloud"), ("route", "cloud")],
)
def test_below_the_floor_routing_low_confidence_decides(low_confidence: str, backend: str) -> None:
    # Top intent coding (local) at 0.4, but maths and reasoning hold more: cloud work.
    says = Says("coding", 0.4, coding=0.4, math=0.3, reasoning=0.3)
    step = Classify(classification(says, confidence_floor=0.5, low_confidence=low_confidence))
    assert summary(step.decide(facts(chat("x")))) == (backend, backend, "coding", "low_confidence")


# ------------------------------------------------------------ adjustments


def test_a_split_gives_one_arm_per_conversation() -> None:
    c = config(intents={"math": {"local": 50, "cloud": 50}})
    split = Split(Targets(c), c)
    decided = Decision("math", 0.9, "cloud", "cloud", "classifier")
    arms = {split.adjust(decided, facts(chat(f"integral number {i}"))).arm for i in range(40)}
    assert arms == {"local", "cloud"}  # 40 conversations: both arms (a 2^-39 chance to fail)
    session = {"session-id": "s-1"}
    same = {split.adjust(decided, facts(chat(f"integral number {i}"), session)).arm for i in range(20)}
    assert len(same) == 1
    for untouched in (decided._replace(reason="low_confidence"), decided._replace(intent="coding")):
        assert split.adjust(untouched, facts(chat("x"))) is untouched


def test_shadow_mode_serves_one_backend_and_keeps_the_choice() -> None:
    c = config(mode="shadow", shadow_backend="cloud")
    decided = Decision("coding", 0.9, "local", "local", "classifier")
    shadowed = ShadowMode(Targets(c), c.routing).adjust(decided, facts(chat("x")))
    assert summary(shadowed) == ("cloud", "cloud", "coding", "shadow") and shadowed.shadow == decided
    assert ShadowMode(Targets(config()), config().routing).adjust(decided, facts(chat("x"))) is decided


def seen_on(route: str, tokens: int) -> Seen:
    return Seen(route, route, tokens, f"http://{route}.test/v1" if route == "local" else None)


def test_a_session_that_would_change_route_moves_only_when_confident_enough() -> None:
    c = config()
    switch = SwitchCost(Targets(c), c)
    price = c.backends["cloud"].price.input_per_mtok
    to_cloud = Decision("math", 0.6, "cloud", "cloud", "classifier")
    history = 120_000  # the move resends it uncached: history x price, against half_usd
    usd = history * price / 1e6
    needed = usd / (usd + c.routing.switch_cost.half_usd)
    assert 0.6 < needed < 0.95, "the figures of this test: a move that 0.6 does not pay for"
    kept = switch.adjust(to_cloud, facts(chat("x"), seen=seen_on("local", history)))
    assert summary(kept) == ("local", "local", "math", "switch_cost") and kept.confidence == 0.6
    confident = to_cloud._replace(confidence=0.95)
    assert switch.adjust(confident, facts(chat("x"), seen=seen_on("local", history))) is confident
    cheap = switch.adjust(to_cloud, facts(chat("x"), seen=seen_on("local", 2_000)))  # a short history
    assert cheap is to_cloud
    # Back onto the box: the history's re-prefill time at prefill_tps, against half_s.
    to_local = Decision("coding", 0.6, "local", "local", "tool_loop")
    seconds = history / c.backends["local"].prefill_tps
    assert seconds / (seconds + c.routing.switch_cost.half_s) > 0.6
    assert summary(switch.adjust(to_local, facts(chat("x"), seen=seen_on("cloud", history)))) == (
        "cloud", "cloud", "coding", "switch_cost",
    )  # fmt: skip


def test_the_switch_cost_holds_back_only_classified_turns_with_session_history() -> None:
    c = config()
    switch = SwitchCost(Targets(c), c)
    to_cloud = Decision("math", 0.6, "cloud", "cloud", "classifier")
    assert switch.adjust(to_cloud, facts(chat("x"))) is to_cloud  # no history: as before
    assert switch.adjust(to_cloud, facts(chat("x"), seen=seen_on("cloud", 60_000))) is to_cloud
    for explicit in ("media", "context_overflow", "rule:maths", "override_header"):
        decided = to_cloud._replace(reason=explicit)
        assert switch.adjust(decided, facts(chat("x"), seen=seen_on("local", 60_000))) is decided
    off = config(switch_cost={"enabled": False})
    assert (
        SwitchCost(Targets(off), off).adjust(to_cloud, facts(chat("x"), seen=seen_on("local", 60_000)))
        is to_cloud
    )


# ------------------------------------------------------------ the list


def test_only_a_decision_by_content_is_adjusted() -> None:
    """In shadow mode an override, a team rule or a pinned turn is served as chosen."""
    owners = ResponseOwners()
    owners.remember("resp_1", "local", None)
    rules = [{"name": "ci", "match": {"client": "ci"}, "route": "local"}]
    p = Policy(config(mode="shadow", shadow_backend="cloud", rules=rules), Says("coding"), owners)
    explicit = [
        p.decide(chat("x"), {"x-offload-route": "local"}),
        p.decide(chat("x"), {}, 10, CHAT, "ci"),
        p.decide({"input": "x", "previous_response_id": "resp_1"}, {}, 10, RESPONSES),
    ]
    assert [(d.backend, d.reason, d.shadow) for d in explicit] == [
        ("local", "override_header", None), ("local", "rule:ci", None), ("local", "previous_response", None),
    ]  # fmt: skip
    by_content = p.decide(chat("x"))
    assert (by_content.backend, by_content.reason, by_content.shadow.reason) == (
        "cloud",
        "shadow",
        "classifier",
    )  # type: ignore[union-attr]
    assert [type(s).__name__ for s in p.steps if s.final] == ["Embeddings", "Override", "Rules", "Pinned"]
