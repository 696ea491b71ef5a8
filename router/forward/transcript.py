"""The completion text of an answer, for ``database.store_text``.

Only used when a team has turned text storage on (for example to label its own traffic and
retrain the classifier with ``offload train``): the normal request path never parses a
response beyond its usage. One :class:`Transcript` takes either a whole response body or the
chunks of a stream and renders the same text for both, so a streamed answer and the same
answer unstreamed are stored alike:

* the text of each choice (chat ``message.content`` / ``delta.content``, completions ``text``);
* each tool call on its own line as ``tool_call: name(arguments)`` (streamed calls are
  reassembled from their fragments by index, the way the OpenAI SDK does it);
* several choices (``n`` > 1) separated by a blank line, in index order.

Reasoning text (vLLM's ``reasoning`` deltas) is not stored: it is not the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class _Choice:
    text: list[str] = field(default_factory=list)
    calls: dict[int, list[str]] = field(default_factory=dict)  # index -> [name, arguments...]

    def render(self) -> str:
        text = "".join(self.text)
        lines = [text] if text else []
        for _, (name, *arguments) in sorted(self.calls.items()):
            lines.append(f"tool_call: {name}({''.join(arguments)})")
        return "\n".join(lines)


class Transcript:
    def __init__(self) -> None:
        self._choices: dict[int, _Choice] = {}

    def add_response(self, doc: Any) -> None:
        """A whole chat or completions response body (parsed)."""
        for choice in _choices(doc):
            message = choice.get("message")
            self._add(choice, message if isinstance(message, dict) else None)

    def add_chunk(self, chunk: Any) -> None:
        """One parsed ``data:`` event of a stream."""
        for choice in _choices(chunk):
            delta = choice.get("delta")
            self._add(choice, delta if isinstance(delta, dict) else None)

    def text(self) -> str:
        return "\n\n".join(c.render() for _, c in sorted(self._choices.items()))

    def _add(self, choice: dict[str, Any], message: dict[str, Any] | None) -> None:
        index = choice.get("index")
        into = self._choices.setdefault(index if isinstance(index, int) else 0, _Choice())
        text = message.get("content") if message is not None else choice.get("text")
        if isinstance(text, str):
            into.text.append(text)
        calls = message.get("tool_calls") if message is not None else None
        if isinstance(calls, list):
            for position, call in enumerate(calls):
                if isinstance(call, dict):
                    _add_call(into, call, position)


def _add_call(into: _Choice, call: dict[str, Any], position: int) -> None:
    # Streamed fragments carry their "index"; a whole message's calls are in list order.
    index = call.get("index")
    parts = into.calls.setdefault(index if isinstance(index, int) else position, [""])
    function = call.get("function")
    if isinstance(function, dict):
        if isinstance(function.get("name"), str):
            parts[0] += function["name"]
        if isinstance(function.get("arguments"), str):
            parts.append(function["arguments"])


def _choices(doc: Any) -> list[dict[str, Any]]:
    choices = doc.get("choices") if isinstance(doc, dict) else None
    return [c for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []
