"""Do two answers to the same request agree? Judged only where a machine can judge it.

Shadow runs (``router/shadow/runs.py``) pair a cloud answer with a local arm's answer to the
same request. Most answers cannot be compared mechanically; three kinds can:

* **maths**: the final answer, the last ``\\boxed{...}`` or else the last number, equal
  as numbers (fractions and decimals compared exactly, within 1e-9 otherwise);
* **tool turns**: the same tool calls with the same arguments (compared as JSON);
* **extraction**: both answers are JSON, and equal.

Anything else is ``not_judged``, never guessed.
"""

from __future__ import annotations

import re
from fractions import Fraction

import orjson

AGREE, DISAGREE, NOT_JUDGED = "agree", "disagree", "not_judged"

_BOXED = re.compile(r"\\boxed\{")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:\s*/\s*\d+)?")
_TOOL_LINE = "tool_call: "


def judge(intent: str | None, real: str | None, local: str | None) -> str:
    """``agree``, ``disagree`` or ``not_judged`` for a real answer and a local arm's answer."""
    if not real or not local:
        return NOT_JUDGED
    real_calls, local_calls = tool_calls(real), tool_calls(local)
    if real_calls or local_calls:
        return AGREE if real_calls == local_calls else DISAGREE
    if intent == "math":
        a, b = final_answer(real), final_answer(local)
        if a is None or b is None:
            return NOT_JUDGED
        return AGREE if _same_number(a, b) else DISAGREE
    real_json, local_json = _json(real), _json(local)
    if real_json is not _NOT_JSON and local_json is not _NOT_JSON:
        return AGREE if real_json == local_json else DISAGREE
    return NOT_JUDGED


def final_answer(text: str) -> str | None:
    """The last ``\\boxed{...}`` (braces balanced), else the last number in the text."""
    starts = [m.end() for m in _BOXED.finditer(text)]
    if starts:
        depth, start = 1, starts[-1]
        for i in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                return text[start:i].strip()
    numbers = _NUMBER.findall(text)
    return numbers[-1] if numbers else None


def tool_calls(text: str) -> list[tuple[str, object]]:
    """The ``tool_call: name(arguments)`` lines of a stored answer, arguments parsed as JSON."""
    calls = []
    for line in text.splitlines():
        if line.startswith(_TOOL_LINE) and line.endswith(")") and "(" in line:
            name, _, arguments = line[len(_TOOL_LINE) : -1].partition("(")
            parsed = _json(arguments)
            calls.append((name, arguments if parsed is _NOT_JSON else parsed))
    return sorted(calls, key=repr)


def _same_number(a: str, b: str) -> bool:
    x, y = _number(a), _number(b)
    if x is None or y is None:
        return a.replace(" ", "") == b.replace(" ", "")  # e.g. two identical boxed expressions
    return x == y or abs(float(x) - float(y)) <= 1e-9 * max(1.0, abs(float(x)))


def _number(text: str) -> Fraction | None:
    cleaned = text.replace(",", "").replace(" ", "").rstrip(".")
    try:
        return Fraction(cleaned)
    except (ValueError, ZeroDivisionError):
        return None


_NOT_JSON = object()


def _json(text: str) -> object:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return _NOT_JSON
    try:
        return orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return _NOT_JSON
