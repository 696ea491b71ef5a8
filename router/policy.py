"""Where a request goes: ordered rules first, then the intent classifier.

Every request gets a :class:`Decision`. The rules are cheap checks on the
already-parsed body; the classifier reads a bounded window of text. Nothing
here does I/O, so deciding costs microseconds.
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple, Protocol

from router.config import Config
from router.errors import ProxyError

log = logging.getLogger("offload.policy")

# Content-part types the local text-only model cannot read.
_MEDIA_PARTS = frozenset({"image_url", "input_image", "image", "input_audio", "audio", "file", "input_file"})
# Bytes of request body per prompt token, erring on the high side of token
# count (code and JSON tokenise denser than prose), so that an over-long
# request goes to the cloud rather than to a certain 400 from vLLM.
_BYTES_PER_TOKEN = 3.0


class Decision(NamedTuple):
    # Immutable like a frozen dataclass, and built in C: 0.24 us against 0.79 us, on a path
    # that makes one per request (bench/README.md).
    intent: str | None
    confidence: float | None
    route: str  # "local" | "cloud": the kind of backend chosen
    backend: str  # the configured backend name
    reason: str  # short and machine-readable: override_header, media, classifier, ...
    shadow: Decision | None = None  # shadow mode: what the policy would have chosen

    def as_dict(self) -> dict[str, Any]:
        out = self._asdict()
        out["shadow"] = self.shadow.as_dict() if self.shadow else None
        return out


class Prediction(Protocol):
    intent: str
    confidence: float


class Classifier(Protocol):
    version: str

    def predict(self, request: dict[str, Any]) -> Prediction: ...


class Policy:
    """Rules + classifier → Decision, configured once at start-up."""

    def __init__(self, config: Config, classifier: Classifier | None = None) -> None:
        self.config = config
        self.routing = config.routing
        self.classifier = classifier
        self.classifier_version = classifier.version if classifier else None
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
        self._embeddings = [name for name, b in config.backends.items() if b.embeddings_model]
        local = config.backends.get(self._backend_of.get("local", ""))
        self._local_context = local.context_window if local else None
        self._local_media = local.accepts_media if local else True

    # ------------------------------------------------------------- public

    def decide(self, body: dict[str, Any], headers: Any = None, body_size: int = 0) -> Decision:
        """The decision for a chat or completions request body (already parsed)."""
        override = self._override(body, headers)
        if override is not None:
            return override
        decision = self._decide_by_content(body, body_size)
        if self._shadow is not None:
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

    # -------------------------------------------------------------- rules

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

    def _decide_by_content(self, body: dict[str, Any], body_size: int) -> Decision:
        messages = body.get("messages")
        if isinstance(messages, list):
            if not self._local_media and _has_media(messages):
                return self._cloud_or_default("media")
            if _in_tool_loop(body, messages):
                return self._tool_loop(messages)
        if self._local_context and body_size / _BYTES_PER_TOKEN > self._local_context:
            return self._cloud_or_default("context_overflow")
        if self.classifier is None:
            return self._make(None, None, self._default, "default")
        prediction = self.classifier.predict(body)
        if prediction.confidence < self.routing.confidence_floor:
            return self._make(prediction.intent, prediction.confidence, self._default, "low_confidence")
        backend = self._intents.get(prediction.intent, self._default)
        return self._make(prediction.intent, prediction.confidence, backend, "classifier")

    def _tool_loop(self, messages: list[Any]) -> Decision:
        """Keep a tool loop on the route that started it.

        The tool-call ids tell which kind of server made the call: vLLM names
        them ``chatcmpl-tool-…``, OpenAI ``call_…``. Without a hint the loop
        goes where the ``tools`` intent goes (by default local).
        """
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


# ------------------------------------------------------------ body checks


def _has_media(messages: list[Any]) -> bool:
    # O(messages), like intake's validation of the same list (bounded by server.max_messages):
    # ~70 ns a message, ~36 us for the 514 messages of the 1 MB benchmark request.
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") in _MEDIA_PARTS:
                    return True
    return False


def _in_tool_loop(body: dict[str, Any], messages: list[Any]) -> bool:
    """The request carries tools and is answering a tool call."""
    if not body.get("tools") or not messages:
        return False
    last = messages[-1]
    if not isinstance(last, dict):
        return False
    return last.get("role") == "tool" or (last.get("role") == "assistant" and bool(last.get("tool_calls")))


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
