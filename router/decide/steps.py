"""The steps of the policy, each a small object that decides a request or passes it on.

router/decide/policy.py lists them in their order; router/decide/rules.py holds the team's
rules, one more step. A step reads :class:`~router.decide.decision.Facts` and answers
with a :class:`~router.decide.decision.Decision` made by
:class:`~router.decide.decision.Targets`, or None. Nothing here does I/O: the checks
read the already-parsed body, through its API's dialect as one chat-shaped
view, so they work alike on Chat Completions, Responses and Messages.

After them, the two adjustments of a decision by content: a weighted split's
arm (:class:`Split`) and shadow mode (:class:`ShadowMode`).
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol

from router.config import BackendConfig, Config, RoutingConfig
from router.decide.decision import Decision, Facts, Targets
from router.decide.reasons import Reason
from router.dialects.base import type_of
from router.errors import ProxyError
from router.forward.response_ids import ResponseOwners
from router.tokens import prompt_tokens

# Content-part types the local text-only model cannot read.
_MEDIA_PARTS = frozenset({"image_url", "input_image", "image", "input_audio", "audio", "file", "input_file"})


class Prediction(Protocol):
    @property
    def intent(self) -> str: ...
    @property
    def confidence(self) -> float: ...
    @property
    def probabilities(self) -> tuple[float, ...]: ...


class Classifier(Protocol):
    version: str
    classes: tuple[str, ...]

    def predict(self, request: Any) -> Prediction: ...


# ------------------------------------------------------------ explicit choices


class Embeddings:
    """Embeddings are not classified: the backend named by ``x-offload-route``, else the
    first backend with an ``embeddings_model`` (404 when none has one)."""

    reasons = (Reason.EMBEDDINGS,)
    final = True

    def __init__(self, targets: Targets, config: Config) -> None:
        self.targets = targets
        self.serving = [name for name, b in config.backends.items() if b.embeddings_model]

    def decide(self, facts: Facts) -> Decision | None:
        if facts.dialect.decides:
            return None
        wanted = facts.header("x-offload-route")
        if wanted:
            name = self.targets.backend_of.get(wanted.strip().lower())
            if name is None or name not in self.serving:
                raise ProxyError(
                    400, f"x-offload-route: {wanted!r} does not serve embeddings", param="x-offload-route"
                )
            return self.targets.decision(None, None, name, Reason.EMBEDDINGS)
        if not self.serving:
            raise ProxyError(
                404,
                "no backend serves embeddings: set embeddings_model on a backend in the config",
                code="embeddings_not_configured",
            )
        return self.targets.decision(None, None, self.serving[0], Reason.EMBEDDINGS)


class Override:
    """The client's explicit choice: the ``x-offload-route`` header (400 for a name the
    config does not know), else a ``model`` that is a route or backend name."""

    reasons = (Reason.OVERRIDE_HEADER, Reason.OVERRIDE_MODEL)
    final = True

    def __init__(self, targets: Targets) -> None:
        self.targets = targets

    def decide(self, facts: Facts) -> Decision | None:
        wanted = facts.header("x-offload-route")
        if wanted:
            backend = self.targets.backend_of.get(wanted.strip().lower())
            if backend is None:
                raise ProxyError(
                    400,
                    f"x-offload-route: unknown route {wanted!r}; use local, cloud or a backend name",
                    param="x-offload-route",
                    code="unknown_route",
                )
            return self.targets.decision(None, None, backend, Reason.OVERRIDE_HEADER)
        model = facts.body.get("model")
        if isinstance(model, str) and model != "auto":
            backend = self.targets.backend_of.get(model)
            if backend is not None:
                return self.targets.decision(None, None, backend, Reason.OVERRIDE_MODEL)
        return None


class Pinned:
    """A turn that continues a stored response of its own key (``previous_response_id``)
    goes where that response lives: no other backend holds its state, so it must not fall
    back either. Another key's id passes, like an unknown one (router/forward/response_ids.py)."""

    reasons = (Reason.PREVIOUS_RESPONSE,)
    final = True

    def __init__(self, targets: Targets, owners: ResponseOwners) -> None:
        self.targets = targets
        self.owners = owners

    def decide(self, facts: Facts) -> Decision | None:
        previous = facts.body.get("previous_response_id")
        owner = self.owners.owner(previous, facts.client) if isinstance(previous, str) else None
        if owner is None or owner not in self.targets.route_of:
            return None
        return self.targets.decision(None, None, owner, Reason.PREVIOUS_RESPONSE)


# ------------------------------------------------------------ by content


class Media:
    """Images, audio or files the local model cannot read (``accepts_media: false``) go to
    the cloud."""

    reasons = (Reason.MEDIA,)
    final = False

    def __init__(self, targets: Targets, local: BackendConfig | None) -> None:
        self.targets = targets
        self.text_only = local is not None and not local.accepts_media

    def decide(self, facts: Facts) -> Decision | None:
        if not self.text_only:
            return None
        messages = facts.messages
        if messages is None or not _has_media(messages):
            return None
        return self.targets.decision(None, None, self.targets.cloud, Reason.MEDIA)


class ContextOverflow:
    """A prompt the local box cannot hold (estimated from the body's size) goes to the cloud,
    whatever its task: before the tool loop, so a long loop's turn is no exception."""

    reasons = (Reason.CONTEXT_OVERFLOW,)
    final = False

    def __init__(self, targets: Targets, local: BackendConfig | None) -> None:
        self.targets = targets
        self.context = local.context_window if local else None

    def decide(self, facts: Facts) -> Decision | None:
        if not self.context or prompt_tokens(facts.body_size) <= self.context:
            return None
        return self.targets.decision(None, None, self.targets.cloud, Reason.CONTEXT_OVERFLOW)


class Classification:
    """The classifier's label as a decision: where ``routing.intents`` sends it, or, below
    ``routing.confidence_floor``, where ``routing.low_confidence`` does. Shared by the
    tool-loop and the classifier steps."""

    def __init__(self, classifier: Classifier | None, targets: Targets, routing: RoutingConfig) -> None:
        self.classifier = classifier
        self.targets = targets
        self.floor = routing.confidence_floor
        self.low_confidence = routing.low_confidence
        # Each class's route, in the classifier's order (for low_confidence: route).
        classes = classifier.classes if classifier is not None else ()
        self.class_routes = tuple(targets.route_of[targets.of_intent(c)] for c in classes)

    def decide(self, request: dict[str, Any], reason: Reason) -> Decision:
        """``request`` (a chat-shaped view) classified; ``reason`` when the label is trusted."""
        if self.classifier is None:
            return self.targets.decision(None, None, self.targets.default, Reason.DEFAULT)
        prediction = self.classifier.predict(request)
        if prediction.confidence < self.floor:
            return self._below_floor(prediction)
        backend = self.targets.of_intent(prediction.intent)
        return self.targets.decision(prediction.intent, prediction.confidence, backend, reason)

    def _below_floor(self, prediction: Prediction) -> Decision:
        policy, targets = self.low_confidence, self.targets
        if policy == "route":
            backend = self._likelier_route(prediction)
        elif policy == "intent":
            backend = targets.of_intent(prediction.intent)
        elif policy == "cloud":
            backend = targets.cloud
        else:
            backend = targets.default
        return targets.decision(prediction.intent, prediction.confidence, backend, Reason.LOW_CONFIDENCE)

    def _likelier_route(self, prediction: Prediction) -> str:
        """A guess whose top intent is cloud work stays in the cloud: the top intent's backend
        (an uncertain call at maths is still answered better there; measured no worse in
        misroutes, ``bench/classifier_confidence.py``). Otherwise the route whose intents hold
        more of the probability (an uncertain coding-or-maths call that maths and reasoning
        together outweigh is still cloud work): the top intent's backend when that is the
        route, else the route's own backend."""
        targets = self.targets
        top = targets.of_intent(prediction.intent)
        if targets.route_of[top] == "cloud":
            return top
        mass: dict[str, float] = {}
        for route, p in zip(self.class_routes, prediction.probabilities, strict=False):
            mass[route] = mass.get(route, 0.0) + p
        if not mass:
            return targets.default
        route = max(mass, key=mass.__getitem__)
        return top if targets.route_of[top] == route else targets.backend_of.get(route, targets.default)


class ToolLoop:
    """A tool-loop turn (tools offered, the last turn a tool result or a tool call) takes the
    decision of its task: the conversation up to its last user turn. Stateless, so every
    replica agrees, and a loop that fell back during an outage comes home once the box is
    back (the ids of its calls prove nothing: clients and frameworks make their own).
    ``routing.tool_loops: call_id`` keeps a loop where its call ids say it started instead."""

    reasons = (Reason.TOOL_LOOP, Reason.LOW_CONFIDENCE)
    final = False

    def __init__(self, classification: Classification, targets: Targets, routing: RoutingConfig) -> None:
        self.classification = classification
        self.targets = targets
        self.by_call_id = routing.tool_loops == "call_id"

    def decide(self, facts: Facts) -> Decision | None:
        messages = facts.messages
        if messages is None or not _in_tool_loop(facts.view, messages):
            return None
        tools = self.targets.of_intent("tools")
        if self.by_call_id:
            started = _tool_call_origin(messages)
            backend = self.targets.backend_of.get(started, tools) if started is not None else tools
            return self.targets.decision("tools", 1.0, backend, Reason.TOOL_LOOP)
        decision = self.classification.decide(_up_to_last_user_turn(facts.view, messages), Reason.TOOL_LOOP)
        if decision.reason == Reason.DEFAULT:  # no classifier: where the tools intent goes
            return self.targets.decision("tools", None, tools, Reason.TOOL_LOOP)
        return decision


class Classify:
    """The last step, which always decides: the classifier's intent for the request."""

    reasons = (Reason.CLASSIFIER, Reason.LOW_CONFIDENCE, Reason.DEFAULT)
    final = False

    def __init__(self, classification: Classification) -> None:
        self.classification = classification

    def decide(self, facts: Facts) -> Decision:
        return self.classification.decide(facts.view, Reason.CLASSIFIER)


# ------------------------------------------------------------ adjustments

_SPLIT_REASONS = frozenset(
    {Reason.CLASSIFIER.text(), Reason.TOOL_LOOP.text()}
)  # plain strings, like a reason


class Split:
    """A weighted split (``routing.intents: {math: {cloud: 90, local-thinking: 10}}``): the
    arm of a classified intent, the same for every turn of one conversation, chosen by a
    hash of what identifies the conversation, so every replica agrees without state."""

    reasons = ()

    def __init__(self, targets: Targets, config: Config) -> None:
        self.targets = targets
        self.splits = config.intent_splits()

    def adjust(self, decision: Decision, facts: Facts) -> Decision:
        if decision.intent not in self.splits or decision.reason not in _SPLIT_REASONS:
            return decision
        point = _share((facts.session or "").encode())
        arms = self.splits[decision.intent or ""]
        backend = next((name for name, upto in arms if point < upto), arms[-1][0])
        return decision._replace(backend=backend, route=self.targets.route_of[backend], arm=backend)


class ShadowMode:
    """``routing.mode: shadow``: everything goes to ``routing.shadow_backend``, and the
    policy's own decision is kept beside it (validation requires the backend)."""

    reasons = (Reason.SHADOW,)

    def __init__(self, targets: Targets, routing: RoutingConfig) -> None:
        self.targets = targets
        self.backend = targets.backend_of[routing.shadow_backend or ""] if routing.mode == "shadow" else None

    def adjust(self, decision: Decision, facts: Facts) -> Decision:
        if self.backend is None:
            return decision
        return self.targets.decision(
            decision.intent, decision.confidence, self.backend, Reason.SHADOW, shadow=decision
        )


# ------------------------------------------------------------ conversations


def _share(key: bytes) -> float:
    """A point in [0, 1) that is a fixed function of ``key`` (not Python's salted hash())."""
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") / 2**64


# ------------------------------------------------------------ body checks


def _has_media(messages: list[Any]) -> bool:
    # O(messages), like intake's validation of the same list (bounded by server.max_messages):
    # ~70 ns a message, ~36 us for the 514 messages of the 1 MB benchmark request.
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and type_of(part) in _MEDIA_PARTS:
                    return True
    return False


def _in_tool_loop(view: dict[str, Any], messages: list[Any]) -> bool:
    """The request carries tools and is answering a tool call."""
    if not view.get("tools") or not messages:
        return False
    last = messages[-1]
    if not isinstance(last, dict):
        return False
    return last.get("role") == "tool" or (last.get("role") == "assistant" and bool(last.get("tool_calls")))


def _up_to_last_user_turn(view: dict[str, Any], messages: list[Any]) -> dict[str, Any]:
    """The conversation as it stood when the user last spoke: the loop's task."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, dict) and message.get("role") == "user":
            return {**view, "messages": messages[: i + 1]}
    return view


def _tool_call_origin(messages: list[Any]) -> str | None:
    """``local`` or ``cloud``: where the last assistant turn's first call id says it was made
    (vLLM's ``chatcmpl-tool-``, OpenAI's ``call_``). A weak signal, kept as an option."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "assistant":
            calls = message.get("tool_calls")
            if isinstance(calls, list) and calls and isinstance(calls[0], dict):
                call_id = calls[0].get("id")
                if isinstance(call_id, str):
                    if call_id.startswith("chatcmpl-tool-"):
                        return "local"
                    if call_id.startswith("call_"):
                        return "cloud"
            return None
    return None
