"""Why a request went where it went: every reason a usage row can carry, in one place.

A reason is a plain string wherever it leaves the policy (the usage row, the
``offload_decisions_total`` metric, ``POST /offload/route``, ``offload
classify``): one of :class:`Reason`'s values, or, for a kind that names what
matched, the kind and that name joined by a colon (``rule:marketing``: the
team rule ``marketing``). :meth:`Reason.of` reads such a string back.

The members are in the order the policy tries its steps (tests/test_reasons.py
holds the policy to it) and each carries the sentence that explains it: the
console shows it beside every reason and the README's table is that sentence,
word for word (checked by the same tests).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Reason(StrEnum):
    meaning: str  # one sentence, for the console and the README's table (backticks: code)

    def __new__(cls, value: str, meaning: str) -> Reason:
        member = str.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        return member

    EMBEDDINGS = (
        "embeddings",
        "an embeddings request, not classified: the backend named by `x-offload-route`, "
        "else the first backend with an `embeddings_model`",
    )
    OVERRIDE_HEADER = "override_header", "the `x-offload-route` header named a route or a backend"
    OVERRIDE_MODEL = "override_model", "`model` was a route or backend name (`local`, `cloud`, …)"
    RULE = "rule", "the first of the team's `routing.rules` that matched, by its name"
    PREVIOUS_RESPONSE = (
        "previous_response",
        "`previous_response_id` names a response a backend minted: that backend, with no fallback",
    )
    MEDIA = "media", "images, audio or files in the messages and the local model is text-only: the cloud"
    CONTEXT_OVERFLOW = (
        "context_overflow",
        "the prompt, estimated from the body's size, is beyond the local `context_window`: the cloud",
    )
    TOOL_LOOP = (
        "tool_loop",
        "a tool-loop turn (`tools` offered, the last turn a tool result or a tool call) takes the "
        "decision of its task: the conversation up to its last user turn, classified",
    )
    CLASSIFIER = "classifier", "the classifier's intent, sent where `routing.intents` says"
    LOW_CONFIDENCE = (
        "low_confidence",
        "the classifier's confidence was below `routing.confidence_floor`: `routing.low_confidence` decides",
    )
    DEFAULT = "default", "no classifier is loaded: `routing.default`"
    SWITCH_COST = (
        "switch_cost",
        "a turn of a session that would have changed route stays where the session's last turn ran: "
        "the move's cost (`routing.switch_cost`) outweighed the classifier's confidence",
    )
    SHADOW = (
        "shadow",
        "shadow mode (`routing.mode: shadow`): a decision by content served by `routing.shadow_backend` "
        "instead, the policy's own decision stored beside it",
    )
    SHADOW_RUN = (
        "shadow_run",
        "a background copy of a cloud-bound request, answered again by a local arm "
        "(`routing.shadow_runs`); never in the month's report",
    )

    @property
    def named(self) -> bool:
        """Does this kind carry the name of what matched (``rule:<name>``)?"""
        return self is Reason.RULE

    @property
    def shown(self) -> str:
        """How the docs and the console write the kind: ``rule:<name>`` for a named one."""
        return f"{self.value}:<name>" if self.named else self.value

    def text(self, name: str | None = None) -> str:
        """The plain string of a reason of this kind (with ``name`` for a named kind)."""
        # _value_, not .value: the property costs 0.4 us, on a path that makes one per request.
        value: str = self._value_
        return value if name is None else f"{value}:{name}"

    @classmethod
    def of(cls, text: str | None) -> Reason | None:
        """The kind of a reason string (``rule:marketing`` is :attr:`RULE`); None if unknown."""
        if not text:
            return None
        kind, colon, _ = text.partition(":")
        reason = cls._value2member_map_.get(kind)
        if not isinstance(reason, Reason) or bool(colon) != reason.named:
            return None
        return reason


# What a routing decision can say: every reason but a shadow run's (its own usage row,
# never a decision), the label values of ``offload_decisions_total``.
DECIDED = tuple(r for r in Reason if r is not Reason.SHADOW_RUN)


def all_texts(kinds: Iterable[Reason], names: Iterable[str]) -> list[str]:
    """Every reason string of ``kinds`` when ``names`` are the config's rule names: a named
    kind once per name (``rule:<name>`` for each of ``routing.rules``), in the kinds' order."""
    names = list(names)
    return [text for r in kinds for text in ([r.text(n) for n in names] if r.named else [r.text()])]
