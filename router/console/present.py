"""What a person reads of a stored request, and how far the labels agree with the router.

Pure functions over rows that ``router.console.queries`` returned: no SQL, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from router.config import INTENTS, Config
from router.ledger.export import as_training_line

SYSTEM_HEAD = 2_000  # characters of the system prompt shown
TURN_HEAD = 8_000  # characters of the last user turn shown
NONE = "none"  # the router gave no intent (an override, a rule, embeddings)
# What export.as_training_line reads of a row selected for export (select_rows' columns).
_TRAINING_FIELDS = (
    "request_id",
    "started_at",
    "endpoint",
    "api",
    "intent",
    "confidence",
    "reason",
    "route",
    "shadow_route",
    "prompt_text",
)


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str


@dataclass(frozen=True, slots=True)
class RequestParts:
    """The request as the router read it: its API's dialect view (router.dialects),
    the same view ``offload export`` writes for training."""

    system: str
    last_user: str
    tools: list[Tool]
    turns: int


def request_parts(row: dict[str, Any]) -> RequestParts | None:
    """The parts of a row's stored body, or None when it was not stored or is not a JSON object."""
    if not row.get("prompt_text"):
        return None
    line = as_training_line({k: row[k] for k in _TRAINING_FIELDS})
    if line is None:
        return None
    view = line["request"]
    messages = [m for m in view.get("messages") or [] if isinstance(m, dict)]
    system = next((m for m in messages if m.get("role") in ("system", "developer")), None)
    users = [m for m in messages if m.get("role") == "user"]
    prompt = view.get("prompt")  # completions
    last_user = _text(users[-1].get("content")) if users else _text(prompt)
    return RequestParts(
        system=_head(_text(system.get("content")) if system else "", SYSTEM_HEAD),
        last_user=_head(last_user, TURN_HEAD),
        tools=[_tool(t) for t in view.get("tools") or [] if isinstance(t, dict)],
        turns=len(messages),
    )


def _text(content: Any) -> str:
    """A message content's text: a string, or its text parts with other parts named."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_part(p) for p in content)
    return "" if content is None else str(content)


def _part(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict):
        text = part.get("text")
        if isinstance(text, str):
            return text
        return f"[{part.get('type', 'part')}]"
    return str(part)


def _head(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… ({len(text) - limit:,} more characters)"


def _tool(tool: dict[str, Any]) -> Tool:
    function: dict[str, Any] = tool["function"] if isinstance(tool.get("function"), dict) else tool
    name = function.get("name") or tool.get("type") or "?"
    return Tool(str(name), _head(str(function.get("description") or ""), 200))


# ------------------------------------------------------------------ agreement


@dataclass(slots=True)
class Agreement:
    """How the router's decisions compare with the labels people set on them."""

    labelled: int = 0
    same_intent: int = 0
    same_route: int = 0  # the label's intent would have gone where the policy sent it
    with_text: int = 0  # exportable for training (`offload export --select labelled`)
    # label → router's intent → how many
    matrix: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def intent_share(self) -> float | None:
        return self.same_intent / self.labelled if self.labelled else None

    @property
    def route_share(self) -> float | None:
        return self.same_route / self.labelled if self.labelled else None

    @property
    def columns(self) -> list[str]:
        """The router's intents that occur, in the classifier's order."""
        seen = {i for row in self.matrix.values() for i in row}
        return [i for i in (*INTENTS, NONE) if i in seen]


def route_of_intents(config: Config) -> dict[str, str]:
    """intent → the route the config sends it to (what a label's intent would have chosen)."""
    return {i: config.backends[b].route_name for i, b in config.intent_backends().items()}


def agreement(pairs: Iterable[dict[str, Any]], route_of: dict[str, str]) -> Agreement:
    """From ``queries.label_pairs``: counts per (label, router's intent, policy route, has text)."""
    out = Agreement()
    for p in pairs:
        n = int(p["n"])
        router = p["intent"] or NONE
        out.labelled += n
        out.same_intent += n if p["label"] == p["intent"] else 0
        out.same_route += n if route_of.get(p["label"]) == p["policy_route"] else 0
        out.with_text += n if p["has_text"] else 0
        row = out.matrix.setdefault(p["label"], {})
        row[router] = row.get(router, 0) + n
    out.matrix = {label: out.matrix[label] for label in INTENTS if label in out.matrix}
    return out
