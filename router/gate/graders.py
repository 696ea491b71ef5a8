"""The graders: one answer and its case in, a :class:`Verdict` out.

Each follows smf-bench's reading of its evaluator: text graders read the answer's text, or
its reasoning when the text is empty (a thinking model that never left its reasoning);
``text_contains`` and ``tool_call`` compare case-insensitively; ``regex_match`` searches
case-insensitively across lines and fails when a ``metadata.must_not_match`` pattern is
found. ``programmatic`` runs the model's code through :mod:`router.gate.sandbox`; the
caller gives the sandbox, so that nothing here runs code by accident.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from router.gate.suites import Case

Status = Literal["pass", "fail", "error"]


@dataclass(frozen=True)
class Answer:
    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[dict[str, str], ...] = ()  # {"name", "arguments"} (JSON text)
    tokens: int = 0

    @property
    def readable(self) -> str:
        return self.text if self.text.strip() else self.reasoning


@dataclass(frozen=True)
class Verdict:
    status: Status
    score: float
    detail: str

    @staticmethod
    def of(passed: bool, detail: str, score: float | None = None) -> Verdict:
        return Verdict("pass" if passed else "fail", score if score is not None else float(passed), detail)

    @staticmethod
    def error(detail: str) -> Verdict:
        return Verdict("error", 0.0, detail)


@dataclass(frozen=True)
class RunOutcome:
    """What running a program said: its exit code, the end of its error output, and
    whether it ran out of time (an error of the gate, never a pass)."""

    returncode: int
    stderr: str
    timed_out: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)


CodeRunner = Callable[[str], RunOutcome]


def grade(case: Case, answer: Answer, run_code: CodeRunner | None = None) -> Verdict:
    if case.runs_code:
        if run_code is None:
            return Verdict.error("model-written code is run only with --allow-code")
        return unit_test(case, answer, run_code)
    return _GRADERS[case.evaluator](case, answer)


def regex_match(case: Case, answer: Answer) -> Verdict:
    text = answer.readable
    try:
        found = re.search(str(case.expected), text, re.IGNORECASE | re.DOTALL)
        banned = [
            p for p in case.option("must_not_match", []) if re.search(p, text, re.IGNORECASE | re.DOTALL)
        ]
    except re.error as exc:
        return Verdict.error(f"bad pattern in the case: {exc}")
    if banned:
        return Verdict.of(False, f"Regex {banned[0]!r} must not match")
    if found is None:
        return Verdict.of(False, f"Regex {case.expected!r} did not match")
    return Verdict.of(True, f"Regex matched: {found.group()[:100]}")


def text_match(case: Case, answer: Answer) -> Verdict:
    actual = answer.readable.strip().lower()
    expected = str(case.expected).strip().lower()
    if actual == expected:
        return Verdict.of(True, "Exact match")
    return Verdict.of(False, f"Expected {expected!r}, got {actual[:100]!r}")


def text_contains(case: Case, answer: Answer) -> Verdict:
    haystack = f"{answer.text} {answer.reasoning}".lower()
    keywords = case.option("expected_keywords")
    if case.expected is None and isinstance(keywords, list):
        found = [k for k in keywords if str(k).lower() in haystack]
        need = int(case.option("min_matches", len(keywords)))
        missing = [k for k in keywords if k not in found]
        detail = f"Matched {len(found)}/{len(keywords)} keywords (need {need})"
        detail += f"; missing: {missing}" if missing else ""
        return Verdict.of(len(found) >= need, detail, len(found) / len(keywords) if keywords else 0.0)
    wanted = case.expected if isinstance(case.expected, list) else [case.expected]
    missing = [w for w in wanted if str(w).lower() not in haystack]
    return Verdict.of(not missing, f"Missing: {missing}" if missing else "All expected substrings found")


_UNITS: dict[str, Callable[[str], int]] = {
    "line": lambda text: sum(1 for line in text.splitlines() if line.strip()),
    "stanza": lambda text: sum(1 for block in re.split(r"\n\s*\n", text.strip()) if block.strip()),
    "paragraph": lambda text: sum(1 for block in re.split(r"\n\s*\n", text.strip()) if block.strip()),
    # A sentence ends at a run of . ! or ? followed by a space, a closing quote or the end.
    "sentence": lambda text: len(re.findall(r"[.!?]+(?=[\"'”’)\]]*(?:\s|$))", text.strip())),
}
_OPS: dict[str, Callable[[int, int], bool]] = {
    "==": lambda a, b: a == b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
}


def structural_count(case: Case, answer: Answer) -> Verdict:
    unit, op = case.option("unit"), case.option("op", "==")
    if op not in _OPS:
        return Verdict.error(f"unknown op {op!r} in the case")
    count = _UNITS[unit](answer.readable)
    passed = _OPS[op](count, int(case.expected))
    return Verdict.of(passed, f"{count} {unit}(s), expected {op} {case.expected}")


def tool_call(case: Case, answer: Answer) -> Verdict:
    if not answer.tool_calls:
        return Verdict.of(False, "No tool call in response")
    expected = case.expected if isinstance(case.expected, dict) else {}
    call = answer.tool_calls[0]
    checks: list[tuple[bool, str]] = []
    if "tool" in expected:
        same = call["name"] == expected["tool"]
        checks.append(
            (same, f"tool={call['name']} {'ok' if same else 'wrong, expected ' + str(expected['tool'])}")
        )
    arguments = call.get("arguments", "")
    for key, value in (expected.get("args_contains") or {}).items():
        found = str(value).lower() in arguments.lower()
        checks.append((found, f"arg {key}={value} {'ok' if found else 'missing'}"))
    if "args_json" in expected:
        try:
            same = orjson.loads(arguments or "{}") == expected["args_json"]
        except orjson.JSONDecodeError:
            same = False
        checks.append((same, f"args JSON {'ok' if same else 'differs'}"))
    if not checks:
        return Verdict.of(True, f"Tool call made: {call['name']}")
    good = sum(ok for ok, _ in checks)
    return Verdict.of(good == len(checks), "; ".join(d for _, d in checks), good / len(checks))


_FENCE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


def extract_code(text: str) -> str:
    """The answer's Python: its first fenced block (the largest if several are python),
    else the whole answer."""
    blocks = _FENCE.findall(text)
    if not blocks:
        return text.strip()
    return str(max(blocks, key=len))


def unit_test(case: Case, answer: Answer, run_code: CodeRunner) -> Verdict:
    code = extract_code(answer.readable)
    if not code:
        return Verdict.of(False, "No code in response")
    outcome = run_code(code + "\n\n# --- unit tests (from the case) ---\n" + str(case.expected) + "\n")
    if outcome.timed_out:
        return Verdict.error("timed out: " + (outcome.stderr or "the code ran out of time"))
    if outcome.returncode == 0:
        return Verdict.of(True, "All assertions passed")
    last = next((line for line in reversed(outcome.stderr.splitlines()) if line.strip()), "")
    return Verdict.of(False, f"Assertion failed: {last[:150] or f'exit {outcome.returncode}'}")


_GRADERS: dict[str, Callable[[Case, Answer], Verdict]] = {
    "regex_match": regex_match,
    "text_match": text_match,
    "text_contains": text_contains,
    "structural_count": structural_count,
    "tool_call": tool_call,
}


def answer_from_chat(body: dict[str, Any]) -> Answer:
    """The answer in a (non-streamed) Chat Completions response."""
    choices = body.get("choices") or [{}]
    message = choices[0].get("message") or {}
    calls = tuple(
        {
            "name": str((c.get("function") or {}).get("name", "")),
            "arguments": str((c.get("function") or {}).get("arguments", "")),
        }
        for c in message.get("tool_calls") or ()
    )
    usage = body.get("usage") or {}
    reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
    return Answer(message.get("content") or "", reasoning, calls, int(usage.get("completion_tokens") or 0))
