"""Where a request goes: ordered rules first, then the intent classifier.

Every request gets a :class:`Decision`. The rules are cheap checks on the
already-parsed body, read through its API's dialect as one chat-shaped view,
so they work alike on Chat Completions, Responses and Messages; the
classifier reads a bounded window of text. Nothing here does I/O, so deciding
costs microseconds.

The order: an explicit override (``x-offload-route``, or a route or backend
name as ``model``); the team's ``routing.rules``; state that lives in one
backend (``previous_response_id``); media the local model cannot read; a
prompt beyond the local context window; a tool-loop turn, which takes the
decision of its task (the conversation up to its last user turn), whatever
its tool-call ids look like; then the classifier.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any, NamedTuple, Protocol

from router.config import Config
from router.decide.rules import Rules
from router.dialects import CHAT, Dialect
from router.dialects.base import type_of
from router.errors import ProxyError
from router.forward.response_ids import ResponseOwners
from router.tokens import prompt_tokens

log = logging.getLogger("offload.policy")

# Content-part types the local text-only model cannot read.
_MEDIA_PARTS = frozenset({"image_url", "input_image", "image", "input_audio", "audio", "file", "input_file"})
PINNED = "previous_response"  # the reason of a decision that must not fall back


class Decision(NamedTuple):
    # Immutable like a frozen dataclass, and built in C: 0.24 us against 0.79 us, on a path
    # that makes one per request (bench/README.md).
    intent: str | None
    confidence: float | None
    route: str  # "local" | "cloud": the kind of backend chosen
    backend: str  # the configured backend name
    reason: str  # short and machine-readable: override_header, media, classifier, rule:<name>, ...
    shadow: Decision | None = None  # shadow mode: what the policy would have chosen
    arm: str | None = None  # the arm a weighted split chose (routing.intents: {a: w, b: w})

    def as_dict(self) -> dict[str, Any]:
        out = self._asdict()
        out["shadow"] = self.shadow.as_dict() if self.shadow else None
        return out


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


class Policy:
    """Rules + classifier → Decision, configured once at start-up."""

    def __init__(
        self, config: Config, classifier: Classifier | None = None, owners: ResponseOwners | None = None
    ) -> None:
        self.config = config
        self.routing = config.routing
        self.classifier = classifier
        self.classifier_version = classifier.version if classifier else None
        self.owners = owners if owners is not None else ResponseOwners()
        # Names and aliases resolved once: resolving per request through the config's
        # pydantic properties adds up.
        self._backend_of = config.route_table()
        self._route_of = {name: b.route_name for name, b in config.backends.items()}
        self._default = self._backend_of[self.routing.default]
        self._cloud = self._backend_of.get("cloud", self._default)
        # Shadow mode: everything goes to shadow_backend (validation requires one).
        self._shadow = (
            self._backend_of[self.routing.shadow_backend or ""] if self.routing.mode == "shadow" else None
        )
        self._intents = config.intent_backends()
        self._splits = config.intent_splits()
        # Each class's route, in the classifier's order (for low_confidence: route).
        classes = classifier.classes if classifier is not None else ()
        self._class_routes = tuple(self._route_of[self._intents.get(c, self._default)] for c in classes)
        self._rules = Rules(self.routing.rules, self._backend_of, self._intents)
        self._embeddings = [name for name, b in config.backends.items() if b.embeddings_model]
        local = config.backends.get(self._backend_of.get("local", ""))
        self._local_context = local.context_window if local else None
        self._local_media = local.accepts_media if local else True

    # ------------------------------------------------------------- public

    def decide(
        self,
        body: dict[str, Any],
        headers: Any = None,
        body_size: int = 0,
        dialect: Dialect = CHAT,
        client: str | None = None,
    ) -> Decision:
        """The decision for a request body (already parsed) of ``dialect``'s API."""
        if not dialect.decides:
            return self.embeddings(headers)
        override = self._override(body, headers)
        if override is not None:
            return override
        view = dialect.view(body)
        if self._rules:
            ruled = self._rules.match(view, body, headers, client)
            if ruled is not None:
                name, backend, intent = ruled
                return self._make(intent, None, backend, f"rule:{name}")
        decision = self._pinned(body, client) or self._decide_by_content(view, body_size)
        if decision.intent in self._splits and decision.reason in _SPLIT_REASONS:
            decision = self._split(decision, body, view, headers)
        if self._shadow is not None and decision.reason != PINNED:
            return self._make(decision.intent, decision.confidence, self._shadow, "shadow", shadow=decision)
        return decision

    def embeddings(self, headers: Any = None) -> Decision:
        """Embeddings are not classified: the backend named by ``x-offload-route``, else the
        first backend with an ``embeddings_model``."""
        wanted = headers.get("x-offload-route") if headers is not None else None
        if wanted:
            name = self._backend_of.get(wanted.strip().lower())
            if name is None or name not in self._embeddings:
                raise ProxyError(
                    400, f"x-offload-route: {wanted!r} does not serve embeddings", param="x-offload-route"
                )
            return self._make(None, None, name, "embeddings")
        if not self._embeddings:
            raise ProxyError(
                404,
                "no backend serves embeddings: set embeddings_model on a backend in the config",
                code="embeddings_not_configured",
            )
        return self._make(None, None, self._embeddings[0], "embeddings")

    def knows_model(self, model: str) -> bool:
        """Is ``model`` a name the proxy routes by (``auto``, a route, a backend, a served model)?"""
        return model == "auto" or model in self._backend_of

    # -------------------------------------------------------------- rules

    def _split(
        self, decision: Decision, body: dict[str, Any], view: dict[str, Any], headers: Any
    ) -> Decision:
        """The arm of a split intent, the same for every turn of one conversation: chosen by
        a hash of what identifies the conversation, so every replica agrees without state."""
        point = _share(conversation_key(body, view, headers))
        arms = self._splits[decision.intent or ""]
        backend = next((name for name, upto in arms if point < upto), arms[-1][0])
        return decision._replace(backend=backend, route=self._route_of[backend], arm=backend)

    def _override(self, body: dict[str, Any], headers: Any) -> Decision | None:
        wanted = headers.get("x-offload-route") if headers is not None else None
        if wanted:
            backend = self._backend_of.get(wanted.strip().lower())
            if backend is None:
                raise ProxyError(
                    400,
                    f"x-offload-route: unknown route {wanted!r}; use local, cloud or a backend name",
                    param="x-offload-route",
                    code="unknown_route",
                )
            return self._make(None, None, backend, "override_header")
        model = body.get("model")
        if isinstance(model, str) and model != "auto":
            backend = self._backend_of.get(model)
            if backend is not None:
                return self._make(None, None, backend, "override_model")
        return None

    def _pinned(self, body: dict[str, Any], client: str | None) -> Decision | None:
        """A turn that continues a stored response of its own key goes where it lives."""
        previous = body.get("previous_response_id")
        owner = self.owners.owner(previous, client) if isinstance(previous, str) else None
        return self._make(None, None, owner, PINNED) if owner in self._route_of else None

    def _decide_by_content(self, view: dict[str, Any], body_size: int) -> Decision:
        messages = view.get("messages")
        if isinstance(messages, list) and not self._local_media and _has_media(messages):
            return self._cloud_or_default("media")
        # Before the tool loop: a turn the local box cannot hold goes to the cloud whatever its task.
        if self._local_context and prompt_tokens(body_size) > self._local_context:
            return self._cloud_or_default("context_overflow")
        if isinstance(messages, list) and _in_tool_loop(view, messages):
            return self._tool_loop(view, messages)
        return self._classify(view, "classifier")

    def _classify(self, request: dict[str, Any], reason: str) -> Decision:
        if self.classifier is None:
            return self._make(None, None, self._default, "default")
        prediction = self.classifier.predict(request)
        if prediction.confidence < self.routing.confidence_floor:
            return self._low_confidence(prediction)
        backend = self._intents.get(prediction.intent, self._default)
        return self._make(prediction.intent, prediction.confidence, backend, reason)

    def _low_confidence(self, prediction: Prediction) -> Decision:
        """``routing.low_confidence``: where a guess below the floor goes."""
        policy = self.routing.low_confidence
        if policy == "route":
            backend = self._likelier_route(prediction)
        elif policy == "intent":
            backend = self._intents.get(prediction.intent, self._default)
        elif policy == "cloud":
            backend = self._cloud
        else:
            backend = self._default
        return self._make(prediction.intent, prediction.confidence, backend, "low_confidence")

    def _likelier_route(self, prediction: Prediction) -> str:
        """The route whose intents hold more of the probability (an uncertain maths-or-reasoning
        call is still cloud work): the top intent's backend when that is the route, else the
        route's own backend."""
        mass: dict[str, float] = {}
        for route, p in zip(self._class_routes, prediction.probabilities, strict=False):
            mass[route] = mass.get(route, 0.0) + p
        if not mass:
            return self._default
        route = max(mass, key=mass.__getitem__)
        top = self._intents.get(prediction.intent, self._default)
        return top if self._route_of[top] == route else self._backend_of.get(route, self._default)

    def _tool_loop(self, view: dict[str, Any], messages: list[Any]) -> Decision:
        """A tool-loop turn takes the decision of its task: the conversation up to its last
        user turn. Stateless, so every replica agrees, and a loop that fell back during an
        outage comes home once the box is back (the ids of its calls prove nothing: clients
        and frameworks make their own)."""
        if self.routing.tool_loops == "call_id":
            return self._by_call_id(messages)
        task = _up_to_last_user_turn(view, messages)
        decision = self._classify(task, "tool_loop")
        if decision.reason == "default":  # no classifier: where the tools intent goes
            return self._make("tools", None, self._intents.get("tools", self._default), "tool_loop")
        return decision

    def _by_call_id(self, messages: list[Any]) -> Decision:
        """``routing.tool_loops: call_id``: keep a loop where its call ids say it started
        (vLLM's ``chatcmpl-tool-``, OpenAI's ``call_``). A weak signal, kept as an option."""
        backend = self._intents.get("tools", self._default)
        started = _tool_call_origin(messages)
        if started is not None:
            backend = self._backend_of.get(started, backend)
        return self._make("tools", 1.0, backend, "tool_loop")

    def _cloud_or_default(self, reason: str) -> Decision:
        return self._make(None, None, self._cloud, reason)

    def _make(
        self,
        intent: str | None,
        confidence: float | None,
        backend: str,
        reason: str,
        shadow: Decision | None = None,
    ) -> Decision:
        return Decision(intent, confidence, self._route_of[backend], backend, reason, shadow)


# ------------------------------------------------------------ conversations

_SPLIT_REASONS = frozenset({"classifier", "tool_loop"})
# Headers that name a conversation: Codex's session id, Claude Code's.
_SESSION_HEADERS = ("session_id", "session-id", "x-claude-code-session-id")


def conversation_key(body: dict[str, Any], view: dict[str, Any], headers: Any) -> bytes:
    """What stays the same across the turns of one conversation: the client's session id
    (Codex's ``session-id``/``prompt_cache_key``, Claude Code's session header or
    ``metadata.user_id``), else its first user turn and the head of its system prompt."""
    for name in _SESSION_HEADERS:
        value = headers.get(name) if headers is not None else None
        if value:
            return value.encode()
    cache_key = body.get("prompt_cache_key")
    if isinstance(cache_key, str) and cache_key:
        return cache_key.encode()
    metadata = body.get("metadata")
    user = metadata.get("user_id") if isinstance(metadata, dict) else None
    if isinstance(user, str) and user:
        return user.encode()
    messages = view.get("messages")
    first = system = ""
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict):
            role = message.get("role")
            if role in ("system", "developer") and not system:
                system = str(message.get("content"))[:512]
            elif role == "user":
                first = str(message.get("content"))[:2048]
                break
    return (system + "\x00" + first).encode("utf-8", "surrogatepass")


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


def load_classifier(path: str | None) -> Classifier | None:
    """The packaged intent model (or ``path``); None if it cannot be loaded."""
    try:
        from classifier import IntentModel
    except ImportError:
        log.warning("classifier package not available: every request takes routing.default")
        return None
    try:
        return IntentModel.load(path)
    except FileNotFoundError:
        if path:
            raise
        log.warning("no packaged classifier weights: every request takes routing.default")
        return None
